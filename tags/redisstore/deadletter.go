package redisstore

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tagq/tagq/tags"
)

const (
	sweepBatch = 100 // messages a sweep call dead-letters at most
	relayBatch = 100
)

// DeadLetter moves in-flight messages to the queue's dead-letter queue at
// once (S8): an ACK for the tag that received each, with the given reason.
// A handle of an older receive, or of a message deleted or expired since,
// gets RECEIPT_HANDLE_STALE. A queue without a redrive policy answers
// NOT_A_SOURCE_QUEUE for the whole call. The dead letters are relayed to
// the DLQ before DeadLetter returns, unless the DLQ is unreachable; then
// the relay keeps trying in the background (nothing is lost).
func (s *Store) DeadLetter(ctx context.Context, queue string, reqs []tags.DeadRequest) ([]error, error) {
	ctx = s.acked(ctx) // S20: acknowledged once replicated
	b, err := s.checkHandles(queue, len(reqs), func(i int) string { return reqs[i].ReceiptHandle }, func(i int) *tags.Error {
		return tags.CheckDeadReason(reqs[i].Reason, reqs[i].Description)
	})
	if err != nil {
		return nil, err
	}
	return b.errs, s.settleHandles(ctx, queue, b, func(i int, d tags.Delivery) tags.Settlement {
		return tags.Settlement{Kind: tags.SettleDead, Delivery: d, Reason: reqs[i].Reason, Description: reqs[i].Description}
	})
}

// SweepDead dead-letters, on every tag of a source queue, the messages
// received max_receive_count times whose visibility deadline has passed,
// then relays them. Safe to run on several processes at once.
func (s *Store) SweepDead(ctx context.Context, queue string) (int, error) {
	n, _, err := s.sweepDead(ctx, queue, "", 0)
	return n, err
}

// SweepDeadLeased is SweepDead by the holder of the queue's sweeper lease
// (DESIGN §8: one process sweeps a queue at a time): it takes or renews
// the lease for lease and sweeps, or, when another process holds it,
// sweeps nothing and says how long that lease has left. See tags.LeaseGrace.
func (s *Store) SweepDeadLeased(ctx context.Context, queue string, lease time.Duration) (int, time.Duration, error) {
	return s.sweepDead(ctx, queue, s.owner, lease)
}

func (s *Store) sweepDead(ctx context.Context, queue, owner string, lease time.Duration) (int, time.Duration, error) {
	k := s.qkeys(queue)
	total := 0
	for {
		moved, more := 0, false
		var held time.Duration
		err := s.withTags(ctx, queue, func(names, _ []string) error {
			keys := []string{k.meta, k.stream, k.outbox, k.tags}
			for _, n := range names {
				tk := k.tag(n)
				keys = append(keys, tk.state, tk.visible, tk.last, tk.batches)
			}
			args := append([]any{queue, sweepBatch, owner, lease.Milliseconds()}, toAny(names)...)
			res, err := scriptSweep.Run(ctx, s.rdb, keys, args...).Int64Slice()
			if err != nil {
				return mapErr(err, queue, "")
			}
			if len(res) == 3 {
				moved, held, more = int(res[0]), time.Duration(res[1])*time.Millisecond, res[2] == 1
			}
			return nil
		})
		if err != nil {
			return total, 0, err
		}
		if held > 0 {
			return total, held, nil
		}
		total += moved
		if moved < sweepBatch && !more {
			break
		}
	}
	if total > 0 {
		if _, err := s.RelayOutbox(ctx, queue); err != nil {
			return total, 0, err
		}
	}
	return total, 0, nil
}

// relayFault, when set (tests only), is called at each step of relaying a
// batch of outbox entries; an error stops the relay there, as a crash would.
var relayFault func(step string) error

// RelayOutbox moves a source queue's staged dead letters into their
// dead-letter queue: add to the DLQ (deduplicated there), then remove from
// the outbox. A crash between the two leaves the entry to be relayed again,
// which the DLQ's dedupe key absorbs: exactly once, even across cluster
// slots. Returns how many entries left the outbox in this call.
//
// Entries go in batches: one read, the DLQ adds pipelined, one XDEL. One
// relay per queue runs at a time in this process. A caller that finds one
// running does not wait for it: it asks it to go round once more (which
// picks up what the caller staged) and returns 0. So a receive that
// dead-letters never queues behind another's relay; with no relay running
// (a single consumer, every test) the relay happens within the call. If the
// running relay fails, the redrive worker relays what is left.
func (s *Store) RelayOutbox(ctx context.Context, queue string) (int, error) {
	ctx = s.acked(ctx) // S20: acknowledged once replicated
	v, _ := s.relaying.LoadOrStore(queue, &relayState{})
	st := v.(*relayState)
	st.again.Store(true)
	total := 0
	for st.again.Load() {
		if !st.mu.TryLock() {
			return total, nil // the running relay sees again and goes round
		}
		var err error
		for err == nil && st.again.Swap(false) {
			var n int
			n, err = s.relayAll(ctx, queue)
			total += n
		}
		st.mu.Unlock()
		if err != nil {
			return total, err
		}
		// Asked again between the last round and the unlock: go round.
	}
	return total, nil
}

// relayState serialises the relays of one queue in this process.
type relayState struct {
	mu    sync.Mutex
	again atomic.Bool // a caller staged dead letters: relay (once more)
}

// relayAll relays every outbox entry of queue, in batches.
func (s *Store) relayAll(ctx context.Context, queue string) (int, error) {
	k := s.qkeys(queue)
	done := 0
	start := "-"
	for {
		entries, err := s.rdb.XRangeN(ctx, k.outbox, start, "+", relayBatch).Result()
		if err != nil {
			return done, mapErr(err, queue, "")
		}
		if len(entries) == 0 {
			return done, nil
		}
		start = "(" + entries[len(entries)-1].ID
		if relayFault != nil {
			if err := relayFault("before-add"); err != nil {
				return done, err
			}
		}
		calls := make([]scriptCall, len(entries))
		dlqs := make([]string, len(entries))
		for i, e := range entries {
			calls[i], dlqs[i] = s.dlqAddCall(e.ID, e.Values)
		}
		cmds, err := s.evalPipelined(ctx, scriptDLQAdd, calls)
		if err != nil {
			return done, err
		}
		added := make([]string, 0, len(entries))
		for i, c := range cmds {
			res, err := c.Int()
			if err != nil {
				// Entries added before this one stay in the outbox too:
				// relaying them again is deduplicated.
				return done, mapErr(err, dlqs[i], "")
			}
			if res < 0 {
				// The DLQ is gone: keep the entry rather than drop it.
				s.log.Warn("dead-letter queue does not exist; dead letter kept in the source's outbox",
					"source_queue", queue, "dead_letter_queue", dlqs[i])
				continue
			}
			added = append(added, entries[i].ID)
		}
		if relayFault != nil {
			if err := relayFault("after-add"); err != nil {
				return done, err
			}
		}
		if len(added) > 0 {
			if err := s.rdb.XDel(ctx, k.outbox, added...).Err(); err != nil {
				return done, mapErr(err, queue, "")
			}
			done += len(added)
		}
		if len(entries) < relayBatch {
			return done, nil
		}
	}
}

// dlqAddCall is the DLQ-side script call that adds one outbox entry to its
// DLQ, and that DLQ's name.
//
// The dedupe key is queue/tag/message/generation plus the outbox entry's id:
// the first four alone repeat when a tag is deleted, created again from the
// oldest message, and dead-letters the same message at the same receive
// count, and that second death must not be taken for a repeat of the first.
// The outbox id is new for each death and the same for every relay of it.
func (s *Store) dlqAddCall(outboxID string, v map[string]any) (scriptCall, string) {
	str := func(k string) string { x, _ := v[k].(string); return x }
	dlq := str("dq")
	attrs := decodeAttrs(str("a"))
	if attrs == nil {
		attrs = map[string]tags.Attribute{}
	}
	// A partition's dead letter names its queue, and the message id the
	// API showed (partition.go).
	source, original := queueOf(str("sq")), str("oi")
	if !strings.Contains(original, idPartSep) {
		original = userID(str("sq"), original)
	}
	attrs[tags.SourceQueueAttribute] = tags.Attribute{String: source}
	rc, _ := strconv.Atoi(str("rc"))
	ts, _ := strconv.ParseInt(str("ts"), 10, 64)
	mv, _ := strconv.Atoi(str("mv"))
	dl, _ := json.Marshal(tags.DeadLetter{SourceQueue: source, SourceTag: str("st"), DeadMs: ts,
		OriginalMessageID: original, OriginalReceiveCount: rc, Reason: str("r"), Description: str("ds"), MoveCount: mv})
	key := fmt.Sprintf("%s/%s/%s/%s/%s", str("sq"), str("st"), str("id"), str("rc"), outboxID)
	dk := s.qkeys(dlq)
	return scriptCall{keys: []string{dk.meta, dk.stream, dk.dedupe, dk.filters, dk.sizes, dk.holes},
		args: []any{key, str("b"), encodeAttrs(attrs), string(dl), len(str("b")) + tags.AttributesSize(attrs), str("tp"),
			str("pr")}}, dlq
}

// RedriveWork lists the queues the redrive worker must visit: those with a
// redrive policy (to sweep) and those with dead letters waiting in their
// outbox (to relay, e.g. after a crash between the two relay steps).
func (s *Store) RedriveWork(ctx context.Context) (sweep, relay []string, err error) {
	names, err := s.QueueNames(ctx)
	if err != nil {
		return nil, nil, err
	}
	return s.RedriveWorkOf(ctx, names)
}

// RedriveWorkOf is RedriveWork among the named queues only (a background
// worker's share of them): one pipelined round trip.
func (s *Store) RedriveWorkOf(ctx context.Context, names []string) (sweep, relay []string, err error) {
	if len(names) == 0 {
		return nil, nil, nil
	}
	pipe := s.rdb.Pipeline()
	policies := make([]*redis.StringCmd, len(names))
	outboxes := make([]*redis.IntCmd, len(names))
	for i, n := range names {
		k := s.qkeys(n)
		policies[i] = pipe.HGet(ctx, k.meta, "rpq")
		outboxes[i] = pipe.XLen(ctx, k.outbox)
	}
	if _, err := pipe.Exec(ctx); err != nil && !isNil(err) {
		return nil, nil, mapErr(err, "", "")
	}
	for i, n := range names {
		if policies[i].Val() != "" {
			sweep = append(sweep, n)
		}
		if outboxes[i].Val() > 0 {
			relay = append(relay, n)
		}
	}
	return sweep, relay, nil
}
