package server

import (
	"fmt"

	"github.com/tagq/tagq/tags"
)

// echo is input quoted in an error: clipped to tags.MaxEcho.
func echo(s string) string { return tags.Clip(s, tags.MaxEcho) }

// missing is the error of a request without a message field it needs
// (CreateQueue without its queue, say): INVALID_ARGUMENT naming the field,
// before anything reads through the nil message.
func missing(field string) error {
	return fieldError(tags.ReasonInvalidArgumentRange, field, "%s is required", field)
}

// checkBatch validates a batch's size and entry ids (format, uniqueness)
// before anything is done with it.
func checkBatch(ids []string) error {
	if len(ids) == 0 || len(ids) > tags.MaxBatchEntries {
		return fieldError(tags.ReasonBatchTooLarge, "entries", "a batch has 1-%d entries, got %d", tags.MaxBatchEntries, len(ids))
	}
	seen := make(map[string]int, len(ids))
	for i, id := range ids {
		if !tags.ValidName(id) { // entry ids follow the rule of names
			return fieldError(tags.ReasonInvalidName, fmt.Sprintf("entries[%d].id", i),
				"entry id %q must be 1-80 characters of A-Z a-z 0-9 _ -", echo(id))
		}
		if j, dup := seen[id]; dup {
			return fieldError(tags.ReasonDuplicateBatchEntryID, fmt.Sprintf("entries[%d].id", i),
				"entry id %q is also the id of entries[%d]", echo(id), j)
		}
		seen[id] = i
	}
	return nil
}
