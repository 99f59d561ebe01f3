package tags

import (
	"context"
	"math"
	"strconv"
)

// Caps on what a queue retains (max_retained_messages, max_retained_bytes)
// and the overflow policy, after RabbitMQ's x-max-length(-bytes) with
// reject-publish / drop-head and NATS's MaxMsgs/MaxBytes with
// DiscardNew/DiscardOld.
//
// Where they are enforced:
//   - OverflowRejectNew: by the send itself, atomically (send.lua, or
//     sendpost.lua after the fast path's XADDs, which takes back the
//     entries that do not fit). Each entry from the first that does not
//     fit is refused with QUEUE_FULL; nothing refused was acknowledged.
//   - OverflowDropOldest: a send that takes the queue over is stored; the
//     same call then trims the queue's oldest messages (janitor.lua, which
//     counts each as expired for every tag that had not finished it) before
//     it returns. The janitor enforces the caps too, e.g. after dead letters
//     or moved-back messages (never refused) arrived.
//
// Sizes are counted as max_message_bytes counts them (body plus attribute
// names and values), kept per entry in the queue's z list so that trims
// of the stream's head take them off exactly (see scripts/lib.lua).

// checkCaps validates caps as set on create or update; mmb is the queue's
// max_message_bytes (a byte cap below it could refuse every message; 0:
// checked later, by checkUpdatedCaps).
func checkCaps(msgs, bytes *int64, ovf *Overflow, mmb int32) *Error {
	if msgs != nil && (*msgs < 0 || *msgs > MaxRetainedMessagesLimit) {
		return invalid(ReasonInvalidArgumentRange, "max_retained_messages",
			"max_retained_messages must be 0 (no cap) or between 1 and %d, got %d", MaxRetainedMessagesLimit, *msgs)
	}
	if bytes != nil && (*bytes < 0 || *bytes > MaxRetainedBytesLimit) {
		return invalid(ReasonInvalidArgumentRange, "max_retained_bytes",
			"max_retained_bytes must be 0 (no cap) or between max_message_bytes and %d, got %d", int64(MaxRetainedBytesLimit), *bytes)
	}
	if bytes != nil && *bytes != 0 && *bytes < int64(mmb) {
		return invalid(ReasonInvalidArgumentRange, "max_retained_bytes",
			"max_retained_bytes (%d) must be at least max_message_bytes (%d)", *bytes, mmb)
	}
	if ovf != nil && (*ovf < OverflowUnspecified || *ovf > OverflowDropOldest) {
		return invalid(ReasonInvalidArgumentRange, "overflow_policy", "overflow_policy %d is not one tagq knows", *ovf)
	}
	return nil
}

// overflowField is how the meta hash spells a policy.
func overflowField(o Overflow) string {
	if o == OverflowDropOldest {
		return "drop"
	}
	return "reject"
}

func decodeOverflow(v string) Overflow {
	if v == "drop" {
		return OverflowDropOldest
	}
	return OverflowRejectNew
}

// capFields are the meta hash fields of the caps set in msgs, bytes, ovf.
func capFields(msgs, bytes *int64, ovf *Overflow) []any {
	var out []any
	if msgs != nil {
		out = append(out, "cmax", *msgs)
	}
	if bytes != nil {
		out = append(out, "bmax", *bytes)
	}
	if ovf != nil && *ovf != OverflowUnspecified {
		out = append(out, "ovf", overflowField(*ovf))
	}
	return out
}

// decodeCaps fills q's caps and their state from its meta hash.
func decodeCaps(q *Queue, m map[string]string) {
	n64 := func(k string) int64 { v, _ := strconv.ParseInt(m[k], 10, 64); return v }
	q.MaxRetainedMessages = n64("cmax")
	q.MaxRetainedBytes = n64("bmax")
	q.Overflow = decodeOverflow(m["ovf"])
	q.RetainedBytes = n64("rb")
	q.DroppedTotal = n64("dropped")
}

func queueFull(q string) *Error {
	q = echo(q)
	return &Error{Kind: KindResourceExhausted, Reason: ReasonQueueFull,
		Message: "queue " + strconv.Quote(q) + " is at its max_retained_messages or max_retained_bytes and refuses new messages " +
			"(overflow_policy OVERFLOW_POLICY_REJECT_NEW) until tags finish some or they expire",
		Metadata: map[string]string{"queue": q}}
}

// checkUpdatedCaps checks the caps an update leaves against the
// max_message_bytes it leaves (either may change).
func checkUpdatedCaps(cur *Queue, u QueueUpdate) *Error {
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
		return invalid(ReasonInvalidArgumentRange, field,
			"max_retained_bytes (%d) must be at least max_message_bytes (%d)", bytes, mmb)
	}
	return nil
}

// room is what a queue with caps could still take when a send last
// looked (math.MaxInt64: no cap), cached per queue so that sends to a full
// queue with OverflowRejectNew are refused without sending their bodies.
type room struct{ msgs, bytes int64 }

// noteRoom caches the room a send or a look found: free messages and
// bytes, each -1 when there is no cap and -2 when the queue is over it.
func (s *Store) noteRoom(queue string, msgs, bytes int64) {
	norm := func(v int64) int64 {
		switch {
		case v == -1:
			return math.MaxInt64
		case v < 0:
			return 0
		}
		return v
	}
	s.rooms.Store(queue, room{msgs: norm(msgs), bytes: norm(bytes)})
}

// roomFor says how many of a batch's entries, from the first, a queue
// with OverflowRejectNew has room for.
// While the cached room takes the whole batch it asks Redis nothing (the
// send's sendpost.lua has the last word); otherwise it reads the queue's
// fill in one round trip, with no body sent.
func (s *Store) roomFor(ctx context.Context, queue string, entries []sendEntry) (int, error) {
	n := len(entries)
	fits := func(r room) int {
		var bytes int64
		for j, e := range entries {
			bytes += int64(e.size)
			if int64(j+1) > r.msgs || bytes > r.bytes {
				return j
			}
		}
		return n
	}
	v, ok := s.rooms.Load(queue)
	if !ok || fits(v.(room)) == n {
		return n, nil
	}
	k := s.qkeys(queue)
	pipe := s.rdb.Pipeline()
	m := pipe.HMGet(ctx, k.meta, "cmax", "bmax", "rb")
	xlen := pipe.XLen(ctx, k.stream)
	if _, err := pipe.Exec(ctx); err != nil {
		return 0, mapErr(err, queue, "")
	}
	num := func(i int) int64 { x, _ := m.Val()[i].(string); v, _ := strconv.ParseInt(x, 10, 64); return v }
	cmax, bmax, rb := num(0), num(1), num(2)
	clamp := func(v int64) int64 { return max(v, 0) } // never -1, which says "no cap"
	free := room{msgs: -1, bytes: -1}
	if cmax > 0 {
		free.msgs = clamp(cmax - xlen.Val())
	}
	if bmax > 0 {
		free.bytes = clamp(bmax - rb)
	}
	s.noteRoom(queue, free.msgs, free.bytes)
	v, _ = s.rooms.Load(queue)
	return fits(v.(room)), nil
}

// attrsSize is what attributes add to a message's size: names and values,
// as max_message_bytes counts them (see checkMessageAttributes).
func attrsSize(attrs map[string]Attribute) int {
	n := 0
	for name, a := range attrs {
		n += len(name) + len(a.String) + len(a.Bytes)
	}
	return n
}
