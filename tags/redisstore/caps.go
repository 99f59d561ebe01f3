package redisstore

import (
	"context"
	"math"
	"strconv"

	"github.com/tagq/tagq/tags"
)

// Caps on what a queue retains (the rules: package tags, caps.go), and
// where the engine enforces them:
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

// overflowField is how the meta hash spells a policy.
func overflowField(o tags.Overflow) string {
	if o == tags.OverflowDropOldest {
		return "drop"
	}
	return "reject"
}

func decodeOverflow(v string) tags.Overflow {
	if v == "drop" {
		return tags.OverflowDropOldest
	}
	return tags.OverflowRejectNew
}

// capFields are the meta hash fields of the caps set in msgs, bytes, ovf.
func capFields(msgs, bytes *int64, ovf *tags.Overflow) []any {
	var out []any
	if msgs != nil {
		out = append(out, "cmax", *msgs)
	}
	if bytes != nil {
		out = append(out, "bmax", *bytes)
	}
	if ovf != nil && *ovf != tags.OverflowUnspecified {
		out = append(out, "ovf", overflowField(*ovf))
	}
	return out
}

// decodeCaps fills q's caps and their state from its meta hash.
func decodeCaps(q *tags.Queue, m map[string]string) {
	n64 := func(k string) int64 { v, _ := strconv.ParseInt(m[k], 10, 64); return v }
	q.MaxRetainedMessages = n64("cmax")
	q.MaxRetainedBytes = n64("bmax")
	q.Overflow = decodeOverflow(m["ovf"])
	q.RetainedBytes = n64("rb")
	q.DroppedTotal = n64("dropped")
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
