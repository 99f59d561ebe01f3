package redisstore

import (
	"context"

	"github.com/tagq/tagq/tags"
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
	return b.errs, s.settleHandles(ctx, queue, b, func(_ int, d tags.Delivery) tags.Settlement {
		return tags.Settlement{Kind: tags.SettleAck, Delivery: d}
	})
}

// ChangeVisibility sets each message's deadline to now + seconds (0: visible
// at once). Only the handle of the latest receive may do it; an older one,
// or one of a deleted message, gets RECEIPT_HANDLE_STALE. One error (or nil)
// per change; the error return is for the whole call.
func (s *Store) ChangeVisibility(ctx context.Context, queue string, changes []tags.VisibilityChange) ([]error, error) {
	ctx = s.acked(ctx) // S20: acknowledged once replicated
	b, err := s.checkHandles(queue, len(changes), func(i int) string { return changes[i].ReceiptHandle },
		func(i int) *tags.Error {
			v := changes[i].VisibilitySeconds
			if changes[i].RetryBackoff && v != 0 {
				return tags.Invalid(tags.ReasonInvalidArgumentRange, "visibility_seconds",
					"a change with retry_backoff takes no visibility_seconds (got %d)", v)
			}
			return tags.CheckRange("visibility_seconds", &v, 0, tags.MaxVisibilitySeconds)
		})
	if err != nil {
		return nil, err
	}
	return b.errs, s.settleHandles(ctx, queue, b, func(i int, d tags.Delivery) tags.Settlement {
		return tags.Settlement{Kind: tags.SettleVisibility, Delivery: d, VisibilityMs: int64(changes[i].VisibilitySeconds) * 1000,
			Retry: changes[i].RetryBackoff}
	})
}

// settleHandles settles a checked batch of receipt handles, one settlement
// each (op), through Settle: one script call per tag, all in one round
// trip. Per-handle outcomes go to b.errs; an error that is not about a
// handle or its tag (the queue is gone, the backend is down, the queue
// has no dead-letter queue) is the whole call's.
func (s *Store) settleHandles(ctx context.Context, queue string, b *handleBatch, op func(i int, d tags.Delivery) tags.Settlement) error {
	batches := make([]*tags.SettleBatch, 0, len(b.byTag))
	idxs := make([][]int, 0, len(b.byTag))
	for qt, idx := range b.byTag {
		sb := &tags.SettleBatch{Queue: qt.queue, Tag: qt.tag, Ops: make([]tags.Settlement, len(idx))}
		for j, i := range idx {
			p := b.parsed[i]
			sb.Ops[j] = op(i, tags.Delivery{Queue: qt.queue, Tag: qt.tag, ID: p.ID, Gen: p.Gen, FirstMs: p.FirstMs})
		}
		batches = append(batches, sb)
		idxs = append(idxs, idx)
	}
	if err := s.Settle(ctx, batches); err != nil {
		return err
	}
	for j, sb := range batches {
		for k, e := range sb.Errs {
			switch tags.ReasonOf(e) {
			case "", tags.ReasonTagNotFound, tags.ReasonReceiptHandleStale:
				b.errs[idxs[j][k]] = e
			default:
				return e
			}
		}
	}
	return nil
}
