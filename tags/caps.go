package tags

import "strconv"

// Caps on what a queue retains (max_retained_messages, max_retained_bytes)
// and the overflow policy, after RabbitMQ's x-max-length(-bytes) with
// reject-publish / drop-head and NATS's MaxMsgs/MaxBytes with
// DiscardNew/DiscardOld:
//   - OverflowRejectNew: a send refuses, with QUEUE_FULL (QueueFull), each
//     entry from the first that does not fit; nothing refused was
//     acknowledged.
//   - OverflowDropOldest: a send that takes the queue over is stored, and
//     the queue's oldest messages go before it returns, each counted as
//     expired by every tag that had not finished it. Dead letters and
//     messages moved back are never refused; the storage's background
//     work brings the queue within its caps after them.
//
// Sizes are counted as max_message_bytes counts them (body plus attribute
// names and values: AttributesSize). How a storage enforces the caps is
// its own (the Redis engine: redisstore's caps.go).

// checkCaps validates caps as set on create or update; mmb is the queue's
// max_message_bytes (a byte cap below it could refuse every message; 0:
// checked later, by CheckUpdatedCaps).
func checkCaps(msgs, bytes *int64, ovf *Overflow, mmb int32) *Error {
	if msgs != nil && (*msgs < 0 || *msgs > MaxRetainedMessagesLimit) {
		return Invalid(ReasonInvalidArgumentRange, "max_retained_messages",
			"max_retained_messages must be 0 (no cap) or between 1 and %d, got %d", MaxRetainedMessagesLimit, *msgs)
	}
	if bytes != nil && (*bytes < 0 || *bytes > MaxRetainedBytesLimit) {
		return Invalid(ReasonInvalidArgumentRange, "max_retained_bytes",
			"max_retained_bytes must be 0 (no cap) or between max_message_bytes and %d, got %d", int64(MaxRetainedBytesLimit), *bytes)
	}
	if bytes != nil && *bytes != 0 && *bytes < int64(mmb) {
		return Invalid(ReasonInvalidArgumentRange, "max_retained_bytes",
			"max_retained_bytes (%d) must be at least max_message_bytes (%d)", *bytes, mmb)
	}
	if ovf != nil && (*ovf < OverflowUnspecified || *ovf > OverflowDropOldest) {
		return Invalid(ReasonInvalidArgumentRange, "overflow_policy", "overflow_policy %d is not one tagq knows", *ovf)
	}
	return nil
}

// QueueFull refuses a send to queue q, at a cap with OverflowRejectNew.
func QueueFull(q string) *Error {
	q = Echo(q)
	return &Error{Kind: KindResourceExhausted, Reason: ReasonQueueFull,
		Message: "queue " + strconv.Quote(q) + " is at its max_retained_messages or max_retained_bytes and refuses new messages " +
			"(overflow_policy OVERFLOW_POLICY_REJECT_NEW) until tags finish some or they expire",
		Metadata: map[string]string{"queue": q}}
}

// CheckUpdatedCaps checks the caps an update leaves against the
// max_message_bytes it leaves (either may change), cur being the queue
// as it is.
func CheckUpdatedCaps(cur *Queue, u QueueUpdate) *Error {
	mmb := cur.MaxMessageBytes
	if u.MaxMessageBytes != nil {
		mmb = *u.MaxMessageBytes
	}
	bytes := cur.MaxRetainedBytes
	if u.MaxRetainedBytes != nil {
		bytes = *u.MaxRetainedBytes
	}
	if bytes != 0 && int64(mmb) > bytes {
		field := "max_retained_bytes"
		if u.MaxRetainedBytes == nil {
			field = "max_message_bytes"
		}
		return Invalid(ReasonInvalidArgumentRange, field,
			"max_retained_bytes (%d) must be at least max_message_bytes (%d)", bytes, mmb)
	}
	return nil
}
