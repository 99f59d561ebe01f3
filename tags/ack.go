package tags

import (
	"context"
	"fmt"

	"github.com/tagq/tagq/tags/receipt"
)

// Delete acknowledges messages by receipt handle for the tags that received
// them. It returns one error (or nil) per handle; deleting twice, or with an
// older handle of the same message, is not an error (S3). The error return
// is for the whole call.
func (s *Store) Delete(ctx context.Context, queue string, handles []string) ([]error, error) {
	ctx = s.acked(ctx) // S20: acknowledged once replicated
	b, err := s.checkHandles(queue, len(handles), func(i int) string { return handles[i] }, nil)
	if err != nil {
		return nil, err
	}
	return b.errs, s.settleHandles(ctx, queue, b, func(_ int, d Delivery) Settlement {
		return Settlement{Kind: SettleAck, Delivery: d}
	})
}

// ChangeVisibility sets each message's deadline to now + seconds (0: visible
// at once). Only the handle of the latest receive may do it; an older one,
// or one of a deleted message, gets RECEIPT_HANDLE_STALE. One error (or nil)
// per change; the error return is for the whole call.
func (s *Store) ChangeVisibility(ctx context.Context, queue string, changes []VisibilityChange) ([]error, error) {
	ctx = s.acked(ctx) // S20: acknowledged once replicated
	b, err := s.checkHandles(queue, len(changes), func(i int) string { return changes[i].ReceiptHandle },
		func(i int) *Error {
			v := changes[i].VisibilitySeconds
			return checkRange("visibility_seconds", &v, 0, MaxVisibilitySeconds)
		})
	if err != nil {
		return nil, err
	}
	return b.errs, s.settleHandles(ctx, queue, b, func(i int, d Delivery) Settlement {
		return Settlement{Kind: SettleVisibility, Delivery: d, VisibilityMs: int64(changes[i].VisibilitySeconds) * 1000}
	})
}

// settleHandles settles a checked batch of receipt handles, one settlement
// each (op), through Settle: one script call per tag, all in one round
// trip. Per-handle outcomes go to b.errs; an error that is not about a
// handle or its tag (the queue is gone, the backend is down, the queue
// has no dead-letter queue) is the whole call's.
func (s *Store) settleHandles(ctx context.Context, queue string, b *handleBatch, op func(i int, d Delivery) Settlement) error {
	batches := make([]*SettleBatch, 0, len(b.byTag))
	idxs := make([][]int, 0, len(b.byTag))
	for tag, idx := range b.byTag {
		sb := &SettleBatch{Queue: queue, Tag: tag, Ops: make([]Settlement, len(idx))}
		for j, i := range idx {
			p := b.parsed[i]
			sb.Ops[j] = op(i, Delivery{Queue: queue, Tag: tag, ID: p.ID, Gen: p.Gen, FirstMs: p.FirstMs})
		}
		batches = append(batches, sb)
		idxs = append(idxs, idx)
	}
	if err := s.Settle(ctx, batches); err != nil {
		return err
	}
	for j, sb := range batches {
		for k, e := range sb.Errs {
			switch ReasonOf(e) {
			case "", ReasonTagNotFound, ReasonReceiptHandleStale:
				b.errs[idxs[j][k]] = e
			default:
				return e
			}
		}
	}
	return nil
}

func staleHandle(h receipt.Handle) *Error {
	return &Error{Kind: KindFailedPrecondition, Reason: ReasonReceiptHandleStale, Field: "receipt_handle",
		Message:  fmt.Sprintf("message %s was received again by tag %q, deleted, or expired since this handle was issued", h.ID, h.Tag),
		Metadata: map[string]string{"message_id": h.ID, "tag": h.Tag}}
}
