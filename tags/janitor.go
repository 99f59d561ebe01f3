package tags

import (
	"context"
	"time"
)

// janitorBatch is how many stream entries one janitor script call examines.
const janitorBatch = 500

// janitorIdleMax is the longest the background janitor leaves a queue
// where it found nothing to trim: the delay before retention expiry is
// counted, or a stalled read recovered, on a queue nobody uses.
const janitorIdleMax = 30 * time.Second

func (s *Store) janitorLoop() {
	defer s.done.Done()
	t := time.NewTicker(s.janitorEvery)
	defer t.Stop()
	idle := NewIdle(s.janitorEvery, janitorIdleMax)
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if err := s.janitorPass(ctx, idle); err != nil {
			s.log.Warn("janitor pass failed", "err", err)
		}
		cancel()
	}
}

// LeaseGrace is how much longer than its holder's next visit a lease on a
// queue's background work lasts (DESIGN §8): one process does each
// queue's janitor work, and sweeps it, at a time; when the holder stops,
// another takes the work over at most this long after the holder's next
// visit was due (within seconds on a busy queue, whose holder visits every
// interval).
const LeaseGrace = 3 * time.Second

// janitorPass trims the queues idle says are due, and notes which had
// work. Idle queues are visited ever more rarely (up to janitorIdleMax). A
// queue whose janitor lease another process holds is left to it until the
// lease would lapse.
func (s *Store) janitorPass(ctx context.Context, idle *Idle) error {
	names, err := s.rdb.ZRange(ctx, s.indexKey(), 0, -1).Result()
	if err != nil {
		return StorageError(err)
	}
	idle.Forget(names)
	for _, q := range names {
		now := time.Now()
		if !idle.Due(q, now) {
			continue
		}
		n, held, err := s.trimQueueLeased(ctx, q, s.owner, idle.IdleGap(q)+LeaseGrace)
		if err != nil {
			return err
		}
		if held > 0 {
			idle.Until(q, now.Add(held))
			continue
		}
		idle.Done(q, now, n > 0)
	}
	return nil
}

// RunJanitor makes one pass over every queue: it trims messages whose
// retention expired (counting the unfinished ones per tag) and, unless a
// queue retains acknowledged messages, messages every tag is done with.
// The background janitor calls it every JanitorInterval; it is safe to run
// on several processes at once.
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
