package redrive

import (
	"sync"
	"time"
)

// idle backs off background work on queues where it finds nothing to do,
// so idle queues cost next to nothing while busy ones are visited every
// interval. Safe for concurrent use.
type idle struct {
	min, max time.Duration
	mu       sync.Mutex
	next     map[string]idleState
}

type idleState struct {
	at  time.Time
	gap time.Duration
}

// newIdle makes an idle whose waits double from min to max.
func newIdle(min, max time.Duration) *idle {
	return &idle{min: min, max: max, next: map[string]idleState{}}
}

// Due says whether queue q should be visited at now.
func (b *idle) Due(q string, now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	st, ok := b.next[q]
	return !ok || !now.Before(st.at)
}

// Done records a visit of q at now: busy (it did work) or not.
func (b *idle) Done(q string, now time.Time, busy bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	st := b.next[q]
	if busy || st.gap == 0 {
		st.gap = b.min
	} else {
		st.gap = min(2*st.gap, b.max)
	}
	st.at = now.Add(st.gap)
	b.next[q] = st
}

// IdleGap is the wait Done(q, _, false) would set: how long q may go
// unvisited if this visit finds nothing to do.
func (b *idle) IdleGap(q string) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	st := b.next[q]
	if st.gap == 0 {
		return b.min
	}
	return min(2*st.gap, b.max)
}

// Until sets q's next visit at t (another process's lease on q's work
// runs until then), keeping its backoff as it was.
func (b *idle) Until(q string, t time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	st := b.next[q]
	if st.gap == 0 {
		st.gap = b.min
	}
	st.at = t
	b.next[q] = st
}

// Soon brings q's next visit forward to t, if it was due later (the
// backoff stays as it was).
func (b *idle) Soon(q string, t time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	st, ok := b.next[q]
	if !ok || !st.at.After(t) {
		return // due already (a queue not seen yet is due at once)
	}
	st.at = t
	b.next[q] = st
}

// Forget drops what is known of queues not in keep (deleted ones).
func (b *idle) Forget(keep []string) {
	in := make(map[string]bool, len(keep))
	for _, q := range keep {
		in[q] = true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for q := range b.next {
		if !in[q] {
			delete(b.next, q)
		}
	}
}
