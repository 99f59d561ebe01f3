package tags

import (
	"sync"
	"time"
)

// Idle backs off background work on queues where it finds nothing to do,
// so idle queues cost next to nothing while busy ones are visited every
// interval. Safe for concurrent use.
type Idle struct {
	min, max time.Duration
	mu       sync.Mutex
	next     map[string]idleState
}

type idleState struct {
	at  time.Time
	gap time.Duration
}

// NewIdle makes an Idle whose waits double from min to max.
func NewIdle(min, max time.Duration) *Idle {
	return &Idle{min: min, max: max, next: map[string]idleState{}}
}

// Due says whether queue q should be visited at now.
func (b *Idle) Due(q string, now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	st, ok := b.next[q]
	return !ok || !now.Before(st.at)
}

// Done records a visit of q at now: busy (it did work) or not.
func (b *Idle) Done(q string, now time.Time, busy bool) {
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

// Forget drops what is known of queues not in keep (deleted ones).
func (b *Idle) Forget(keep []string) {
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
