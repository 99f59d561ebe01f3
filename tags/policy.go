package tags

import "time"

// Redrive policy rules (S7-S8): the dead-letter queue must exist and be
// flagged dead_letter_queue; a dead-letter queue cannot have a policy (so
// dead letters are never redriven again and no cycle can form); a queue
// cannot be its own dead-letter queue; the dead-letter queue keeps messages
// at least as long as its sources (dead letters are never trimmed sooner
// than the messages they came from); a topic queue's dead-letter queue is
// a topic queue, and only topic queues use one (dead letters keep their
// topic, and their order when moved back: S13); a dead-letter queue
// cannot be deleted while a policy names it, unless forced, which removes
// those policies. CheckQueueConfig and CheckQueueUpdate check a policy's
// shape; the rest needs the dead-letter queue, the storage's to check.

// checkPolicyShape checks policy p (nil: none) given as field.
func checkPolicyShape(field string, p *RedrivePolicy) *Error {
	if p == nil {
		return nil
	}
	if e := CheckName(field+".dead_letter_queue", "queue", p.DeadLetterQueue); e != nil {
		return e
	}
	mrc := p.MaxReceiveCount
	return CheckRange(field+".max_receive_count", &mrc, 1, MaxMaxReceiveCount)
}

// MaxBackoffSeconds bounds a retry policy's backoffs (12 hours, the
// longest visibility timeout).
const MaxBackoffSeconds = MaxVisibilitySeconds

// Retry backoff (README "Retry backoff"). A message that a tag received n
// times (n >= 1) and that comes back to it — its visibility ran out, or a
// nack asked for the policy — becomes available to that tag again after
// a backoff drawn uniformly from [b, min(max, 2b)], b = min(max,
// min·2^(n-1)): exponential, with "equal jitter" over the next step (half
// of 2b fixed, half random), so min_backoff_seconds is a true floor and
// max_backoff_seconds a true ceiling, and retries of messages that failed
// together spread over a window as wide as the backoff itself. (Full
// jitter, [0, b], would undo the floor: a draw near 0 retries at once.)
// A message at its redrive policy's max_receive_count is dead-lettered
// when its visibility runs out, never backed off (S7). An explicit delay
// (ChangeMessageVisibility, a nack with a delay) always wins.

// CheckRetryPolicy checks policy p (nil: none) given as field:
// 0 <= min_backoff_seconds <= max_backoff_seconds <= MaxBackoffSeconds.
func CheckRetryPolicy(field string, p *RetryPolicy) *Error {
	if p == nil {
		return nil
	}
	lo := p.MinBackoffSeconds
	if e := CheckRange(field+".min_backoff_seconds", &lo, 0, MaxBackoffSeconds); e != nil {
		return e
	}
	hi := p.MaxBackoffSeconds
	if e := CheckRange(field+".max_backoff_seconds", &hi, 0, MaxBackoffSeconds); e != nil {
		return e
	}
	if hi < lo {
		return Invalid(ReasonInvalidArgumentRange, field+".max_backoff_seconds",
			"%s.max_backoff_seconds (%d) must be at least min_backoff_seconds (%d)", field, hi, lo)
	}
	return nil
}

// BackoffBounds is the range [lo, hi] from which the backoff after the
// n-th receive is drawn (n < 1 counts as 1).
func (p RetryPolicy) BackoffBounds(n int) (lo, hi time.Duration) {
	b := int64(p.MinBackoffSeconds)
	mx := int64(p.MaxBackoffSeconds)
	for i := 1; i < n && b < mx; i++ {
		b *= 2
	}
	b = min(b, mx)
	return time.Duration(b) * time.Second, time.Duration(min(2*b, mx)) * time.Second
}
