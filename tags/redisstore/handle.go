package redisstore

import (
	"github.com/tagq/tagq/tags"
	"github.com/tagq/tagq/tags/receipt"
	"github.com/tagq/tagq/tags/streamid"
)

// Receipt handles are made and checked by package receipt (the layout and
// the key ring); here: the Store's checks of a request's handles, and
// stream ids.

// parseHandle decodes a handle and checks it belongs to queue. field names
// the request field for the error.
func (s *Store) parseHandle(queue, raw, field string) (receipt.Handle, *tags.Error) {
	if raw == "" {
		return receipt.Handle{}, tags.Invalid(tags.ReasonInvalidReceiptHandle, field, "receipt handle is empty")
	}
	h, err := s.handles.Decode(raw)
	if err != nil {
		return h, tags.Invalid(tags.ReasonInvalidReceiptHandle, field, "receipt handle is not one tagq issued")
	}
	if queueOf(h.Queue) != queue { // a partitioned queue's handle names its partition (partition.go)
		return h, tags.Invalid(tags.ReasonInvalidReceiptHandle, field, "receipt handle belongs to queue %q, not %q", tags.Echo(h.Queue), tags.Echo(queue))
	}
	return h, nil
}

// parseID, formatID and idAfter are package streamid's, short.
func parseID(id string) (ms, seq uint64, ok bool) { return streamid.Parse(id) }

func formatID(ms, seq uint64) string { return streamid.Format(ms, seq) }

func idAfter(a, b string) bool { return streamid.After(a, b) }

// handleBatch is a batch of receipt handles, checked and grouped by tag.
type handleBatch struct {
	errs   []error          // per entry: its error, or nil
	parsed []receipt.Handle // per entry: the decoded handle (when errs[i] is nil)
	byTag  map[tagKey][]int // (partition queue, tag) -> indexes of its valid entries
}

// checkHandles validates a batch of n receipt handles of queue: the batch
// size, each handle (handleOf(i)), and any further per-entry check.
func (s *Store) checkHandles(queue string, n int, handleOf func(i int) string, check func(i int) *tags.Error) (*handleBatch, error) {
	if e := tags.CheckName("queue", "queue", queue); e != nil {
		return nil, e
	}
	if n == 0 || n > tags.MaxBatchEntries {
		return nil, tags.Invalid(tags.ReasonBatchTooLarge, "entries", "a batch has 1-%d entries, got %d", tags.MaxBatchEntries, n)
	}
	b := &handleBatch{errs: make([]error, n), parsed: make([]receipt.Handle, n), byTag: map[tagKey][]int{}}
	for i := range n {
		h, e := s.parseHandle(queue, handleOf(i), "receipt_handle")
		if e == nil && check != nil {
			e = check(i)
		}
		if e != nil {
			b.errs[i] = e
			continue
		}
		b.parsed[i] = h
		k := tagKey{h.Queue, h.Tag}
		b.byTag[k] = append(b.byTag[k], i)
	}
	return b, nil
}
