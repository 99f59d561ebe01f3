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

// janitorPass trims the queues idle says are due, and notes which had
// work. Idle queues are visited ever more rarely (up to janitorIdleMax).
func (s *Store) janitorPass(ctx context.Context, idle *Idle) error {
	names, err := s.rdb.ZRange(ctx, s.indexKey(), 0, -1).Result()
	if err != nil {
		return unavailable(err)
	}
	idle.Forget(names)
	for _, q := range names {
		now := time.Now()
		if !idle.Due(q, now) {
			continue
		}
		n, err := s.trimQueueCount(ctx, q)
		if err != nil {
			return err
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
		return unavailable(err)
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
	k := s.qkeys(q)
	var removed int64
	for range 100 { // bounded work per pass
		more := false
		err := s.withTags(ctx, q, func(names, tagKeys []string) error {
			keys := append(append([]string{k.meta, k.stream, k.tags, k.filters, k.delayed}, tagKeys...), k.sizes, k.holes,
				k.sendDedup, k.sendDedupExp)
			args := append([]any{janitorBatch, s.stalledRead.Milliseconds()}, toAny(names)...)
			res, err := scriptJanitor.Run(ctx, s.rdb, keys, args...).Int64Slice()
			if err != nil {
				return mapErr(err, q, "")
			}
			more = len(res) == 2 && res[1] == 1
			if len(res) == 2 {
				removed += res[0]
			}
			return nil
		})
		if err != nil || !more {
			return removed, err
		}
	}
	return removed, nil
}
