package redrive

import (
	"context"
	"hash/fnv"
	"slices"
	"sync"
	"time"
)

// Shares of the background work (DESIGN §8). Every worker beats in the
// store's set of live workers (tags.Maintainer.Heartbeat) and does the work
// that reads queues one by one — the janitor, sweeps, finding outboxes and
// moves — for its share of the queues only: each queue belongs to the live
// worker that ranks highest for it (rendezvous hashing), so N replicas
// cost what one does, and when one stops, its queues spread over the
// others (at once on a clean stop, within memberTTL after a crash) while
// the rest stay where they were. The per-queue leases stay as a guard:
// two workers that briefly disagree on who is alive do not run one
// queue's janitor or sweep at the same moment.

const (
	// memberBeat is how often a worker renews its membership; memberTTL how
	// long it stays a member without renewing (a crashed replica's queues
	// pass on within it).
	memberBeat = time.Second
	memberTTL  = 3 * time.Second
	// namesEvery is how often a worker lists the queues (a new queue's
	// first janitor visit may wait this long).
	namesEvery = 5 * time.Second
)

// shares is what a worker knows of the live workers.
type shares struct {
	self string
	mu   sync.RWMutex
	live []string // in order; nil until heard: then every queue is this worker's
	ver  uint64   // counts the changes of live
}

// set notes the live workers.
func (sh *shares) set(live []string) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if !slices.Equal(sh.live, live) {
		sh.live = live
		sh.ver++
	}
}

// version counts the changes of the live workers (the worker's share).
func (sh *shares) version() uint64 {
	sh.mu.RLock()
	defer sh.mu.RUnlock()
	return sh.ver
}

// mine says whether queue q is this worker's to visit.
func (sh *shares) mine(q string) bool {
	sh.mu.RLock()
	defer sh.mu.RUnlock()
	if len(sh.live) == 0 {
		return true
	}
	var best string
	var top uint64
	for i, w := range sh.live {
		if r := rank(w, q); i == 0 || r > top {
			best, top = w, r
		}
	}
	return best == sh.self
}

// of is the queues of names that are this worker's.
func (sh *shares) of(names []string) []string {
	var out []string
	for _, q := range names {
		if sh.mine(q) {
			out = append(out, q)
		}
	}
	return out
}

// rank is worker w's weight for queue q (rendezvous hashing): FNV-1a of
// both, mixed (splitmix64's finalizer) so that close names spread.
func rank(w, q string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(w))
	_, _ = h.Write([]byte{0})
	_, _ = h.Write([]byte(q))
	x := h.Sum64()
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// beat renews this worker's membership every memberBeat until stop, and
// leaves when it stops.
func (w *Worker) beat() {
	defer w.done.Done()
	once := func() {
		ctx, cancel := context.WithTimeout(context.Background(), memberBeat)
		defer cancel()
		live, err := w.cfg.Store.Heartbeat(ctx, memberTTL)
		if err != nil {
			w.cfg.Logger.Warn("background workers: heartbeat failed", "err", err)
			return
		}
		w.shares.set(live)
	}
	once()
	t := time.NewTicker(memberBeat)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			ctx, cancel := context.WithTimeout(context.Background(), memberBeat)
			if err := w.cfg.Store.LeaveWorkers(ctx); err != nil {
				w.cfg.Logger.Warn("background workers: leaving failed; the others take over within seconds", "err", err)
			}
			cancel()
			return
		case <-t.C:
			once()
		}
	}
}

// names lists the queues, at most every namesEvery unless fresh (the
// worker's passes share the list).
func (w *Worker) names(ctx context.Context, now time.Time, fresh bool) ([]string, error) {
	w.namesMu.Lock()
	defer w.namesMu.Unlock()
	if fresh || w.namesAt.IsZero() || now.Sub(w.namesAt) >= namesEvery {
		names, err := w.cfg.Store.QueueNames(ctx)
		if err != nil {
			return nil, err
		}
		w.queueNames, w.namesAt = names, now
	}
	return w.queueNames, nil
}
