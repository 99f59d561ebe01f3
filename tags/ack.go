package tags

import (
	"context"
	"fmt"
)

// Delete acknowledges messages by receipt handle for the tags that received
// them. It returns one error (or nil) per handle; deleting twice, or with an
// older handle of the same message, is not an error (S3). The error return
// is for the whole call.
func (s *Store) Delete(ctx context.Context, queue string, handles []string) ([]error, error) {
	if e := checkName("queue", "queue", queue); e != nil {
		return nil, e
	}
	if len(handles) == 0 || len(handles) > MaxBatchEntries {
		return nil, invalid(ReasonBatchTooLarge, "entries", "a batch has 1-%d entries, got %d", MaxBatchEntries, len(handles))
	}
	errs := make([]error, len(handles))
	byTag := map[string][]int{}
	parsed := make([]handle, len(handles))
	for i, raw := range handles {
		h, e := s.parseHandle(queue, raw, "receipt_handle")
		if e != nil {
			errs[i] = e
			continue
		}
		parsed[i] = h
		byTag[h.Tag] = append(byTag[h.Tag], i)
	}
	k := s.qkeys(queue)
	for tag, idx := range byTag {
		tk := k.tag(tag)
		args := make([]any, 0, 1+len(idx))
		args = append(args, tag)
		for _, i := range idx {
			args = append(args, parsed[i].ID)
		}
		err := scriptDelete.Run(ctx, s.rdb, []string{k.meta, k.stream, tk.state, tk.visible, tk.counts, tk.last}, args...).Err()
		if err != nil {
			err = mapErr(err, queue, tag)
			if ReasonOf(err) == ReasonTagNotFound {
				for _, i := range idx {
					errs[i] = err
				}
				continue
			}
			return nil, err
		}
	}
	return errs, nil
}

// ChangeVisibility sets each message's deadline to now + seconds (0: visible
// at once). Only the handle of the latest receive may do it; an older one,
// or one of a deleted message, gets RECEIPT_HANDLE_STALE. One error (or nil)
// per change; the error return is for the whole call.
func (s *Store) ChangeVisibility(ctx context.Context, queue string, changes []VisibilityChange) ([]error, error) {
	if e := checkName("queue", "queue", queue); e != nil {
		return nil, e
	}
	if len(changes) == 0 || len(changes) > MaxBatchEntries {
		return nil, invalid(ReasonBatchTooLarge, "entries", "a batch has 1-%d entries, got %d", MaxBatchEntries, len(changes))
	}
	errs := make([]error, len(changes))
	byTag := map[string][]int{}
	parsed := make([]handle, len(changes))
	for i, c := range changes {
		h, e := s.parseHandle(queue, c.ReceiptHandle, "receipt_handle")
		if e == nil {
			v := c.VisibilitySeconds
			e = checkRange("visibility_seconds", &v, 0, MaxVisibilitySeconds)
		}
		if e != nil {
			errs[i] = e
			continue
		}
		parsed[i] = h
		byTag[h.Tag] = append(byTag[h.Tag], i)
	}
	k := s.qkeys(queue)
	for tag, idx := range byTag {
		tk := k.tag(tag)
		args := make([]any, 0, 1+3*len(idx))
		args = append(args, tag)
		for _, i := range idx {
			args = append(args, parsed[i].ID, parsed[i].Gen, int64(changes[i].VisibilitySeconds)*1000)
		}
		res, err := scriptVisibility.Run(ctx, s.rdb, []string{k.meta, tk.state, tk.visible, tk.counts, k.wake, tk.last}, args...).Int64Slice()
		if err != nil {
			err = mapErr(err, queue, tag)
			if ReasonOf(err) == ReasonTagNotFound {
				for _, i := range idx {
					errs[i] = err
				}
				continue
			}
			return nil, err
		}
		nacked := false
		for j, ok := range res {
			if ok == 0 {
				errs[idx[j]] = staleHandle(parsed[idx[j]])
			} else if changes[idx[j]].VisibilitySeconds == 0 {
				nacked = true
			}
		}
		if nacked {
			s.waiters.wakeOne(queue, tag) // local waiters at once; others through the wake stream
		}
	}
	return errs, nil
}

func staleHandle(h handle) *Error {
	return &Error{Kind: KindFailedPrecondition, Reason: ReasonReceiptHandleStale, Field: "receipt_handle",
		Message:  fmt.Sprintf("message %s was received again by tag %q, deleted, or expired since this handle was issued", h.ID, h.Tag),
		Metadata: map[string]string{"message_id": h.ID, "tag": h.Tag}}
}
