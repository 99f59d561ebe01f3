package tagq

import "time"

// Hooks for the package's external tests (package tagq_test).

// SetSettleTimeout changes the timeout of unary settlements and returns a
// function that restores it.
func SetSettleTimeout(d time.Duration) (restore func()) {
	old := settleTimeout
	settleTimeout = d
	return func() { settleTimeout = old }
}

// Held is how many messages the Consumer holds: pushed and not settled,
// on the live stream and as orphans of broken ones.
func (co *Consumer) Held() int {
	co.mu.Lock()
	defer co.mu.Unlock()
	n := len(co.orphans)
	if co.cur != nil {
		n += len(co.cur.held) - co.cur.parked // a parked delivery is its orphan's message
	}
	return n
}

// Stopping reports whether a stop has begun.
func (co *Consumer) Stopping() bool {
	co.mu.Lock()
	defer co.mu.Unlock()
	return co.stopping
}

// Orphans is how many messages of broken streams the Consumer still
// handles.
func (co *Consumer) Orphans() int {
	co.mu.Lock()
	defer co.mu.Unlock()
	return len(co.orphans)
}

// Parked is how many deliveries of the live stream wait for the verdict
// of their message's orphan.
func (co *Consumer) Parked() int {
	co.mu.Lock()
	defer co.mu.Unlock()
	if co.cur == nil {
		return 0
	}
	return co.cur.parked
}
