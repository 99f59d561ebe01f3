package redisstore

import (
	"context"
	"slices"
	"time"

	"github.com/tagq/tagq/internal/rediserr"
	"github.com/tagq/tagq/tags"
)

// janitorBatch is how many stream entries one janitor script call examines.
const janitorBatch = 500

// QueueNames lists every queue's name and every partition queue's
// ("Q#k": partition.go), in name order: what background work walks (see
// redrive), each partition on its own.
func (s *Store) QueueNames(ctx context.Context) ([]string, error) {
	pipe := s.rdb.Pipeline()
	queues := pipe.ZRange(ctx, s.indexKey(), 0, -1)
	parts := pipe.ZRange(ctx, s.partsKey(), 0, -1)
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, rediserr.StorageError(err)
	}
	names := append(queues.Val(), parts.Val()...)
	if len(parts.Val()) > 0 {
		slices.Sort(names)
	}
	return names, nil
}

// TrimQueueLeased is the background janitor's work on queue q (see
// RunJanitor) under q's janitor lease, taken or renewed for lease: it says
// how many entries went, or, when another process holds the lease, how
// long that has left (and trims nothing). See JanitorPass for all it says.
func (s *Store) TrimQueueLeased(ctx context.Context, q string, lease time.Duration) (int64, time.Duration, error) {
	p, err := s.JanitorPass(ctx, q, lease)
	return p.Removed, p.Held, err
}

// JanitorPass is the background janitor's work on queue q (see
// RunJanitor) under q's janitor lease, taken or renewed for lease; redrive's
// worker calls it. A pass is several script calls, each bounded in the
// entries it touches, so no call holds Redis for long.
func (s *Store) JanitorPass(ctx context.Context, q string, lease time.Duration) (tags.JanitorResult, error) {
	return s.janitorPass(ctx, q, s.owner, lease)
}

// StalledRead is Config.StalledRead (after its default).
func (s *Store) StalledRead() time.Duration { return s.stalledRead }

// stalledSlack is how much longer than the stalled read a PEL entry must
// sit before the janitor recovers it: a delivery's batch is due by then
// (its visibility is at most the stalled read, counted from its receive
// script, which runs this much after the read at most: see receive.lua).
func (s *Store) stalledSlack() time.Duration {
	return min(500*time.Millisecond, s.stalledRead)
}

// RunJanitor makes one pass over every queue: it trims messages whose
// retention expired (counting the unfinished ones per tag) and, unless a
// queue retains acknowledged messages, messages every tag is done with.
// It is safe to run on several processes at once (redrive's worker runs
// the janitor in the background, queue by queue, with TrimQueueLeased).
func (s *Store) RunJanitor(ctx context.Context) error {
	names, err := s.QueueNames(ctx)
	if err != nil {
		return err
	}
	for _, q := range names {
		if err := s.trimQueue(ctx, q); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) trimQueue(ctx context.Context, q string) error {
	_, err := s.trimQueueCount(ctx, q)
	return err
}

// trimQueueCount trims q and says how many entries went.
func (s *Store) trimQueueCount(ctx context.Context, q string) (int64, error) {
	n, _, err := s.trimQueueLeased(ctx, q, "", 0)
	return n, err
}

// trimQueueLeased trims q as owner, taking or renewing its janitor lease
// for lease ("" owner: no lease, trim regardless). It says how many
// entries went, or, when another owner holds the lease, how long that
// lease has left (and trims nothing).
func (s *Store) trimQueueLeased(ctx context.Context, q, owner string, lease time.Duration) (int64, time.Duration, error) {
	p, err := s.janitorPass(ctx, q, owner, lease)
	return p.Removed, p.Held, err
}

// janitorPass runs janitor script calls on q as owner until one says
// there is no more to do now (within a bound on the calls of one pass).
func (s *Store) janitorPass(ctx context.Context, q, owner string, lease time.Duration) (tags.JanitorResult, error) {
	var p tags.JanitorResult
	for range 100 { // bounded work per pass
		step, more, err := s.janitorStep(ctx, q, owner, lease)
		p.Removed += step.Removed
		p.Held, p.Recheck = step.Held, step.Recheck
		if err != nil || step.Held > 0 || !more {
			return p, err
		}
	}
	return p, nil
}

// janitorStep is one janitor script call on q: what it did, and whether
// it stopped at a bound with more to do.
func (s *Store) janitorStep(ctx context.Context, q, owner string, lease time.Duration) (tags.JanitorResult, bool, error) {
	k := s.qkeys(q)
	var p tags.JanitorResult
	more := false
	err := s.withTags(ctx, q, func(names, tagKeys []string) error {
		keys := append(append([]string{k.meta, k.stream, k.tags, k.filters, k.delayed}, tagKeys...), k.sizes, k.holes,
			k.sendDedup, k.sendDedupExp)
		minIdle := s.stalledRead + s.stalledSlack()
		args := append([]any{janitorBatch, minIdle.Milliseconds(), owner, lease.Milliseconds()}, toAny(names)...)
		res, err := scriptJanitor.Run(ctx, s.rdb, keys, args...).Int64Slice()
		if err != nil {
			return mapErr(err, q, "")
		}
		if len(res) == 4 {
			p.Removed = res[0]
			more = res[1] == 1
			p.Held = time.Duration(res[2]) * time.Millisecond
			p.Recheck = time.Duration(res[3]) * time.Millisecond
		}
		return nil
	})
	return p, more, err
}
