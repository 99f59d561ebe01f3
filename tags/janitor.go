package tags

import (
	"context"
	"time"
)

// janitorBatch is how many stream entries one janitor script call examines.
const janitorBatch = 500

func (s *Store) janitorLoop() {
	defer s.done.Done()
	t := time.NewTicker(s.janitorEvery)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if err := s.RunJanitor(ctx); err != nil {
			s.log.Warn("janitor pass failed", "err", err)
		}
		cancel()
	}
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
	k := s.qkeys(q)
	for range 100 { // bounded work per pass
		more := false
		err := s.withTags(ctx, q, func(names, tagKeys []string) error {
			keys := append([]string{k.meta, k.stream, k.tags, k.filters, k.delayed}, tagKeys...)
			args := append([]any{janitorBatch, s.stalledRead.Milliseconds()}, toAny(names)...)
			res, err := scriptJanitor.Run(ctx, s.rdb, keys, args...).Int64Slice()
			if err != nil {
				return mapErr(err, q, "")
			}
			more = len(res) == 2 && res[1] == 1
			return nil
		})
		if err != nil || !more {
			return err
		}
	}
	return nil
}
