package tags

import (
	"context"
	"time"
)

// janitorBatch is how many stream entries one janitor script call examines.
const janitorBatch = 500

// LeaseGrace is how much longer than its holder's next visit a lease on a
// queue's background work lasts (DESIGN §8): one process does each
// queue's janitor work, and sweeps it, at a time; when the holder stops,
// another takes the work over at most this long after the holder's next
// visit was due (within seconds on a busy queue, whose holder visits every
// interval).
const LeaseGrace = 3 * time.Second

// QueueNames lists every queue's name, in name order (what background
// work walks: see redrive).
func (s *Store) QueueNames(ctx context.Context) ([]string, error) {
	names, err := s.rdb.ZRange(ctx, s.indexKey(), 0, -1).Result()
	if err != nil {
		return nil, StorageError(err)
	}
	return names, nil
}

// TrimQueueLeased is the background janitor's work on queue q (see
// RunJanitor) under q's janitor lease, taken or renewed for lease: it says
// how many entries went, or, when another process holds the lease, how
// long that has left (and trims nothing). redrive's worker calls it.
func (s *Store) TrimQueueLeased(ctx context.Context, q string, lease time.Duration) (int64, time.Duration, error) {
	return s.trimQueueLeased(ctx, q, s.owner, lease)
}

// RunJanitor makes one pass over every queue: it trims messages whose
// retention expired (counting the unfinished ones per tag) and, unless a
// queue retains acknowledged messages, messages every tag is done with.
// It is safe to run on several processes at once (redrive's worker runs
// the janitor in the background, queue by queue, with TrimQueueLeased).
func (s *Store) RunJanitor(ctx context.Context) error {
	names, err := s.rdb.ZRange(ctx, s.indexKey(), 0, -1).Result()
	if err != nil {
		return StorageError(err)
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
	k := s.qkeys(q)
	var removed int64
	for range 100 { // bounded work per pass
		more := false
		var held time.Duration
		err := s.withTags(ctx, q, func(names, tagKeys []string) error {
			keys := append(append([]string{k.meta, k.stream, k.tags, k.filters, k.delayed}, tagKeys...), k.sizes, k.holes,
				k.sendDedup, k.sendDedupExp)
			args := append([]any{janitorBatch, s.stalledRead.Milliseconds(), owner, lease.Milliseconds()}, toAny(names)...)
			res, err := scriptJanitor.Run(ctx, s.rdb, keys, args...).Int64Slice()
			if err != nil {
				return mapErr(err, q, "")
			}
			if len(res) == 3 {
				removed += res[0]
				more = res[1] == 1
				held = time.Duration(res[2]) * time.Millisecond
			}
			return nil
		})
		if err != nil || held > 0 || !more {
			return removed, held, err
		}
	}
	return removed, 0, nil
}
