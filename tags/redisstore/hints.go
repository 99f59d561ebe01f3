package redisstore

import "time"

// The hint cache. Every receive script says when the tag's earliest
// deadline falls (n's h: a lower bound of what may come due: a
// redelivery, a delayed message, a recovered read). A process keeps it
// per tag, so that a receive with nothing due skips the work for due
// messages, and an empty read skips the script (cachedEmpty); waiting
// receives wake at it.
//
// What makes something due earlier than the cached time (a nack, a read
// recovered by the janitor, a topic unblocked by the sweep, on any
// process) writes the queue's wake stream, which the queue's watch reads
// (package wake): it forgets or lowers the hint. That keeps a hint true
// only while a watch of its queue runs, from before the script that told
// it: so a hint learned under a running watch (its epoch) is trusted as
// long as that watch runs, and any other for hintTTL at most, after which
// the next receive looks again (S21: nothing available waits).

// hintTTL is how long a hint no watch keeps up to date is trusted.
const hintTTL = time.Second

// hint is a tag's cached "nothing is due before at".
type hint struct {
	at    time.Time
	until time.Time // at most until then when not kept by watch epoch
	epoch uint64    // the queue's watch when the script was asked (0: none)
}

// hintAsk is what a receive script's caller knew before it asked: the
// count of forgotten hints, the time and the queue's watch.
type hintAsk struct {
	gen   uint64
	at    time.Time
	epoch uint64
}

// askHint is taken just before a receive script is called.
func (s *Store) askHint(queue string) hintAsk {
	return hintAsk{gen: s.hintGeneration(), at: time.Now(), epoch: s.waiters.Epoch(queue)}
}

// hintOf is the tag's hint and whether it is trusted now.
func (s *Store) hintOf(queue, tag string, now time.Time) (hint, bool) {
	v, ok := s.hints.Load(tagKey{queue, tag})
	if !ok {
		return hint{}, false
	}
	h := v.(hint)
	if (h.epoch == 0 || h.epoch != s.waiters.Epoch(queue)) && !now.Before(h.until) {
		return h, false
	}
	return h, true
}

// wakeAt is when a receive that relies on the hint should look again:
// at, or sooner when no watch keeps the hint.
func (s *Store) wakeAt(queue string, h hint) time.Time {
	if h.epoch != 0 && h.epoch == s.waiters.Epoch(queue) {
		return h.at
	}
	return minTime(h.at, h.until)
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// dueMaybe: may the tag have due redeliveries or due parked messages now?
// Yes unless the last receive's script said its earliest deadline (h, a
// lower bound every script keeps) is still ahead, the hint is trusted (see
// above), and nothing lowered it since (a nack here or, through the wake
// stream, on another process). A wrong "no" only puts a redelivery behind
// new messages until the next receive.
func (s *Store) dueMaybe(queue, tag string) bool {
	if s.rdb.testClock {
		return true // the queue's clock is not ours to follow
	}
	now := time.Now()
	h, ok := s.hintOf(queue, tag, now)
	return !ok || !now.Before(h.at)
}

// noteHint caches what a script said, unless a hint was forgotten since
// the script was asked: then a nack may have landed after the script read
// h, and the cache would hide it.
func (s *Store) noteHint(queue, tag string, r receiveResult, asked hintAsk) {
	s.hintMu.Lock()
	defer s.hintMu.Unlock()
	if s.hintGen != asked.gen {
		return
	}
	h := hint{until: asked.at.Add(hintTTL), epoch: asked.epoch}
	if r.hintMs >= infMs {
		h.at = time.Now().Add(time.Hour)
	} else {
		h.at = time.Now().Add(time.Duration(r.hintMs-r.nowMs) * time.Millisecond)
	}
	s.hints.Store(tagKey{queue, tag}, h)
}

// cachedEmpty is an empty receive's result from what the last script of
// the tag said: its wait, and when to look again (as local time).
func (s *Store) cachedEmpty(queue, tag string) (receiveResult, bool) {
	now := time.Now()
	w, ok1 := s.queueWaits.Load(queue)
	h, ok2 := s.hintOf(queue, tag, now)
	if !ok1 || !ok2 {
		return receiveResult{}, false
	}
	return receiveResult{nowMs: now.UnixMilli(), hintMs: s.wakeAt(queue, h).UnixMilli(), queueWait: w.(int32)}, true
}

// forgetHint: something may have become due early (a nack, a shorter
// visibility).
func (s *Store) forgetHint(queue, tag string) {
	s.hintMu.Lock()
	s.hintGen++
	s.hints.Delete(tagKey{queue, tag})
	s.hintMu.Unlock()
}

// lowerHint: something of tag becomes due at the latest at (a wake-stream
// entry's time, as local time). The cached hint, if any, comes down to it;
// a hint read before, still in flight, is not stored over it (noteHint).
func (s *Store) lowerHint(queue, tag string, at time.Time) {
	s.hintMu.Lock()
	defer s.hintMu.Unlock()
	s.hintGen++
	k := tagKey{queue, tag}
	if v, ok := s.hints.Load(k); ok && v.(hint).at.After(at) {
		h := v.(hint)
		h.at = at
		s.hints.Store(k, h)
	}
}

// hintGeneration is the count of forgotten hints, for noteHint.
func (s *Store) hintGeneration() uint64 {
	s.hintMu.Lock()
	defer s.hintMu.Unlock()
	return s.hintGen
}
