package server

import (
	"fmt"
	"regexp"

	"github.com/tagq/tagq/tags"
)

var entryIDRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,80}$`)

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
		field := fmt.Sprintf("entries[%d].id", i)
		if !entryIDRE.MatchString(id) {
			return fieldError(tags.ReasonInvalidName, field, "entry id %q must be 1-80 characters of A-Z a-z 0-9 _ -", echo(id))
		}
		if j, dup := seen[id]; dup {
			return fieldError(tags.ReasonDuplicateBatchEntryID, field, "entry id %q is also the id of entries[%d]", echo(id), j)
		}
		seen[id] = i
	}
	return nil
}
