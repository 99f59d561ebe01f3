package tags

import (
	"strconv"
	"time"
)

// Rate quotas, after EMQ's per-queue read and write QPS quotas:
//   - write_quota_per_second: messages stored in the queue per second, by
//     every sender together;
//   - read_quota_per_second: messages handed out per second to each tag
//     (redeliveries count), the queue's value unless the tag has its own.
//
// Seconds are Redis's (the scripts' clock, TIME or the test clock), so
// every tagqd replica counts against the same window and a quota holds
// exactly however many replicas serve the queue. The counters live in
// hashes the scripts read anyway — the queue's meta hash (wq, wqs second,
// wqn count) for sends, the tag's state hash n (rq override, rqs, rqn)
// for receives — so a queue without quotas pays two more fields in an
// HMGET it already makes, and nothing else.
//
// Over a quota: RESOURCE_EXHAUSTED, reason QUOTA_EXCEEDED, with metadata
// quota (the attribute's name), limit, and retry_after_ms (to the next
// second of the Redis clock). A batch send stores the entries that fit,
// in order, and refuses the rest (as the caps do with QUEUE_FULL); a
// receive hands out what the quota leaves, and is refused only when it
// leaves nothing. Consume streams wait for the next second instead (see
// Reader.Receive). Dead letters arriving in a DLQ and messages moved back
// from one are not sends and are never refused.
//
// A process that saw a quota run out remembers it until that second ends
// (by its own clock, from before it asked: never later than Redis's), and
// refuses further calls in that second without a round trip.

// MaxQuotaPerSecond bounds write_quota_per_second and read_quota_per_second.
const MaxQuotaPerSecond = 10_000_000

// Quota attribute names, as errors name them.
const (
	QuotaWrite = "write_quota_per_second"
	QuotaRead  = "read_quota_per_second"
)

func checkQuota(field string, v *int32) *Error {
	if v != nil && (*v < 0 || *v > MaxQuotaPerSecond) {
		return invalid(ReasonInvalidArgumentRange, field, "%s must be 0 (no quota) or between 1 and %d, got %d",
			field, MaxQuotaPerSecond, *v)
	}
	return nil
}

// quotaExceeded is the error of a call over quota (QuotaWrite or
// QuotaRead) of limit messages a second, retryMs before the next second.
func quotaExceeded(queue, tag, quota string, limit, retryMs int64) *Error {
	queue = echo(queue)
	md := map[string]string{"queue": queue, "quota": quota, "limit": strconv.FormatInt(limit, 10),
		"retry_after_ms": strconv.FormatInt(max(retryMs, 1), 10)}
	what := "queue " + strconv.Quote(queue) + " takes at most " + strconv.FormatInt(limit, 10) + " messages a second"
	if tag != "" {
		md["tag"] = echo(tag)
		what = "tag " + strconv.Quote(md["tag"]) + " of queue " + strconv.Quote(queue) + " receives at most " +
			strconv.FormatInt(limit, 10) + " messages a second"
	}
	return &Error{Kind: KindResourceExhausted, Reason: ReasonQuotaExceeded, Metadata: md,
		Message: what + " (" + quota + "); retry in " + md["retry_after_ms"] + " ms"}
}

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
