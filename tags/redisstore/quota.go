package redisstore

import "time"

// Rate quotas (tags' quota.go has the rules) in the engine. Seconds are
// Redis's (the scripts' clock, TIME or the test clock). The counters live
// in hashes the scripts read anyway — the queue's meta hash (wq, wqs
// second, wqn count) for sends, the tag's state hash n (rq override, rqs,
// rqn) for receives — so a queue without quotas pays two more fields in
// an HMGET it already makes, and nothing else.
//
// A process that saw a quota run out remembers it until that second ends
// (by its own clock, from before it asked: never later than Redis's), and
// refuses further calls in that second without a round trip.

// spent is a quota that ran out: its limit, and the local time before
// which it stays spent.
type spent struct {
	limit int64
	until time.Time
}

// noteSpent remembers that a quota ran out, retryMs after asked (the local
// time before the call: the script's second cannot end sooner).
func (s *Store) noteSpent(key any, limit, retryMs int64, asked time.Time) {
	if s.rdb.testClock {
		return // the queue's clock is not ours to follow
	}
	s.spentQuotas.Store(key, spent{limit: limit, until: asked.Add(time.Duration(retryMs) * time.Millisecond)})
}

// spentFor is a quota known to be spent now: its limit and the time left
// until the next second.
func (s *Store) spentFor(key any) (int64, time.Duration, bool) {
	v, ok := s.spentQuotas.Load(key)
	if !ok {
		return 0, 0, false
	}
	sp := v.(spent)
	left := time.Until(sp.until)
	if left <= 0 {
		s.spentQuotas.CompareAndDelete(key, v)
		return 0, 0, false
	}
	return sp.limit, left, true
}

// writeQuotaKey and readQuotaKey key spentQuotas.
type writeQuotaKey string

func ceilMs(d time.Duration) int64 { return int64((d + time.Millisecond - 1) / time.Millisecond) }
