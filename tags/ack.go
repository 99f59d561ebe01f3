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
	b, err := s.checkHandles(queue, len(handles), func(i int) string { return handles[i] }, nil)
	if err != nil {
		return nil, err
	}
	k := s.qkeys(queue)
	err = b.perTag(queue, func(tag string, idx []int) error {
		tk := k.tag(tag)
		args := make([]any, 0, 1+len(idx))
		args = append(args, tag)
		for _, i := range idx {
			args = append(args, b.parsed[i].ID, b.parsed[i].FirstMs)
		}
		return scriptDelete.Run(ctx, s.rdb, []string{k.meta, tk.state, tk.visible, tk.last}, args...).Err()
	})
	if err != nil {
		return nil, err
	}
	return b.errs, nil
}

// ChangeVisibility sets each message's deadline to now + seconds (0: visible
// at once). Only the handle of the latest receive may do it; an older one,
// or one of a deleted message, gets RECEIPT_HANDLE_STALE. One error (or nil)
// per change; the error return is for the whole call.
func (s *Store) ChangeVisibility(ctx context.Context, queue string, changes []VisibilityChange) ([]error, error) {
	b, err := s.checkHandles(queue, len(changes), func(i int) string { return changes[i].ReceiptHandle },
		func(i int) *Error {
			v := changes[i].VisibilitySeconds
			return checkRange("visibility_seconds", &v, 0, MaxVisibilitySeconds)
		})
	if err != nil {
		return nil, err
	}
	k := s.qkeys(queue)
	err = b.perTag(queue, func(tag string, idx []int) error {
		tk := k.tag(tag)
		args := make([]any, 0, 1+4*len(idx))
		args = append(args, tag)
		for _, i := range idx {
			p := b.parsed[i]
			args = append(args, p.ID, p.FirstMs, p.Gen, int64(changes[i].VisibilitySeconds)*1000)
		}
		res, err := scriptVisibility.Run(ctx, s.rdb, []string{k.meta, tk.state, tk.visible, k.wake, tk.last}, args...).Int64Slice()
		if err != nil {
			return err
		}
		s.forgetHint(queue, tag)
		nacked := false
		for j, ok := range res {
			if ok == 0 {
				b.errs[idx[j]] = staleHandle(b.parsed[idx[j]])
			} else if changes[idx[j]].VisibilitySeconds == 0 {
				nacked = true
			}
		}
		if nacked {
			s.waiters.wakeOne(queue, tag) // local waiters at once; others through the wake stream
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return b.errs, nil
}

func staleHandle(h handle) *Error {
	return &Error{Kind: KindFailedPrecondition, Reason: ReasonReceiptHandleStale, Field: "receipt_handle",
		Message:  fmt.Sprintf("message %s was received again by tag %q, deleted, or expired since this handle was issued", h.ID, h.Tag),
		Metadata: map[string]string{"message_id": h.ID, "tag": h.Tag}}
}
