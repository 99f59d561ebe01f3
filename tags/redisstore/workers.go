package redisstore

import (
	"context"
	"time"
)

// The live background workers (DESIGN §8). Every tagqd's redrive worker
// beats here; work that reads every queue (the janitor, sweeps, finding
// outboxes and moves) is split among the members, each queue to one of
// them (redrive decides which), so that its cost does not grow with the
// number of replicas. The per-queue leases stay: two processes that
// briefly disagree on who is alive never run a queue's janitor or sweep
// at once.

// Heartbeat keeps this store's owner among the live workers for ttl and
// returns the live members (this one included), in order.
func (s *Store) Heartbeat(ctx context.Context, ttl time.Duration) ([]string, error) {
	out, err := scriptWorkers.Run(ctx, s.rdb, []string{s.workersKey()}, s.owner, max(ttl.Milliseconds(), 1)).StringSlice()
	if err != nil {
		return nil, mapErr(err, "", "")
	}
	return out, nil
}

// LeaveWorkers takes this store's owner out of the live workers at once
// (a clean stop: the others take its share without waiting for it to
// expire).
func (s *Store) LeaveWorkers(ctx context.Context) error {
	if err := scriptWorkers.Run(ctx, s.rdb, []string{s.workersKey()}, s.owner, 0).Err(); err != nil {
		return mapErr(err, "", "")
	}
	return nil
}

// Owner is this store's name among the workers (and as a lease holder).
func (s *Store) Owner() string { return s.owner }

// The work epoch: a counter every process bumps when it gives a queue
// background work that the background workers find by reading the queues
// (a redrive policy to sweep by, a move task to run), so that they read
// every queue for it only when the counter moved (or, for what a crash
// left, such as an outbox not relayed, every so often), not every few
// seconds: an idle queue costs nothing for it.

// WorkEpoch is the work epoch (0 before the first bump).
func (s *Store) WorkEpoch(ctx context.Context) (int64, error) {
	n, err := s.rdb.Get(ctx, s.workKey()).Int64()
	if isNil(err) {
		return 0, nil
	}
	if err != nil {
		return 0, mapErr(err, "", "")
	}
	return n, nil
}

// newWork bumps the work epoch (see WorkEpoch). A failure only delays the
// work until the workers' next full look: logged, not returned.
func (s *Store) newWork(ctx context.Context) {
	if err := s.rdb.Incr(context.WithoutCancel(ctx), s.workKey()).Err(); err != nil {
		s.log.Warn("background work may start late: the work epoch was not bumped", "err", err)
	}
}
