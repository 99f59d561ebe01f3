package redisstore

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tagq/tagq/tags"
)

// Priority queues (EMQ): per tag, higher priority first (1 highest, 8 by
// default), FIFO within a priority, except that every 10th message a tag
// hands out from what it holds is its oldest held one.

func priorityQueue(c *tags.QueueConfig) { c.PriorityQueue = true }

// sendPrio sends pairs of priority and body.
func (b *bundle) sendPrio(q string, pairs ...any) []string {
	b.t.Helper()
	msgs := make([]tags.OutMessage, 0, len(pairs)/2)
	for i := 0; i+1 < len(pairs); i += 2 {
		msgs = append(msgs, tags.OutMessage{Priority: int32(pairs[i].(int)), Body: []byte(pairs[i+1].(string))})
	}
	return b.sendMsgs(q, msgs...)
}

func prios(msgs []tags.Message) []int32 {
	out := make([]int32, len(msgs))
	for i, m := range msgs {
		out[i] = m.Priority
	}
	return out
}

// prioKeysOf are tag's priority lists (lib.lua's priokeys).
func prioKeysOf(b *bundle, q, tag string) []string {
	n := b.s.qkeys(q).tag(tag).state
	out := make([]string, 0, tags.MaxPriority)
	for p := 1; p <= tags.MaxPriority; p++ {
		out = append(out, fmt.Sprintf("%spl:%d", n[:len(n)-1], p))
	}
	return out
}

// requireNoPrioKeys: tag holds nothing (no lists, no counts).
func requireNoPrioKeys(t *testing.T, b *bundle, q, tag string) {
	t.Helper()
	for _, k := range prioKeysOf(b, q, tag) {
		n, err := b.rdb.Exists(b.ctx, k).Result()
		require.NoError(t, err)
		require.Zero(t, n, "key %s", k)
	}
	fields, _ := b.rdb.HKeys(b.ctx, b.s.qkeys(q).tag(tag).state).Result()
	for _, f := range fields {
		require.NotRegexp(t, `^pq:`, f)
	}
}

func TestPriority_Validation(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("pq", priorityQueue)
		b.queue("plain")
		b.queue("tq", topicQueue)
		send := func(q string, m tags.OutMessage) error {
			res, err := b.s.Send(b.ctx, q, []tags.OutMessage{m})
			require.NoError(t, err)
			return res[0].Err
		}
		for _, c := range []struct {
			q string
			m tags.OutMessage
		}{
			{"pq", tags.OutMessage{Body: []byte("x"), Priority: 17}},
			{"pq", tags.OutMessage{Body: []byte("x"), Priority: -1}},
			{"plain", tags.OutMessage{Body: []byte("x"), Priority: 1}},
			{"tq", tags.OutMessage{Body: []byte("x"), Topic: "a", Priority: 8}},
		} {
			err := send(c.q, c.m)
			requireReason(t, err, tags.ReasonInvalidArgumentRange)
			var e *tags.Error
			require.ErrorAs(t, err, &e)
			require.Equal(t, "priority", e.Field, "%s %+v", c.q, c.m)
		}
		require.NoError(t, send("pq", tags.OutMessage{Body: []byte("x"), Priority: 1}))
		require.NoError(t, send("pq", tags.OutMessage{Body: []byte("y"), Priority: tags.MaxPriority}))
		require.NoError(t, send("plain", tags.OutMessage{Body: []byte("z"), Priority: 0}))
		require.Equal(t, []int32{0}, prios(b.receive("plain", "", 1)), "no priority off priority queues")

		_, err := b.s.CreateQueue(b.ctx, tags.QueueConfig{Name: "both", TopicQueue: true, PriorityQueue: true})
		requireReason(t, err, tags.ReasonInvalidArgumentRange)
		var e *tags.Error
		require.ErrorAs(t, err, &e)
		require.Equal(t, "priority_queue", e.Field)

		q, err := b.s.GetQueue(b.ctx, "pq")
		require.NoError(t, err)
		require.True(t, q.PriorityQueue)
		require.False(t, q.TopicQueue)
		// Only the default's 8 is stored as no field at all.
		ids := b.sendPrio("pq", 8, "eight", 0, "none", 3, "three")
		for i, want := range []string{"", "", "3"} {
			e, err := b.rdb.XRange(b.ctx, b.s.qkeys("pq").stream, ids[i], ids[i]).Result()
			require.NoError(t, err)
			pr, _ := e[0].Values["pr"].(string)
			require.Equal(t, want, pr)
		}
	})
}

// The cached flag says plain, the queue is a priority queue (re-created
// under the same name): the scripts follow the queue.
func TestPriority_StaleFlagIsCheckedByTheScripts(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("q")
		b.send("q", "warm the cache")
		require.Len(t, b.receive("q", "", 1), 1)
		require.NoError(t, b.s.DeleteQueue(b.ctx, "q", false))
		b.queue("q", priorityQueue)
		b.sendPrio("q", 9, "low", 2, "high")
		require.Equal(t, []string{"high", "low"}, bodies(b.receive("q", "", 10)))

		b.queue("r", priorityQueue)
		b.sendPrio("r", 1, "warm")
		require.NoError(t, b.s.DeleteQueue(b.ctx, "r", false))
		b.queue("r")
		res, err := b.s.Send(b.ctx, "r", []tags.OutMessage{{Body: []byte("x"), Priority: 3}})
		require.NoError(t, err)
		requireReason(t, res[0].Err, tags.ReasonInvalidArgumentRange)
	})
}

// max_receive_count dead-letters a poison message; its dead letter keeps
// its priority (in a priority DLQ it is handed out by it) and, moved back,
// the tag it died in gets it by that priority again.
func TestPriority_PoisonDeadLetterAndMoveBackKeepThePriority(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("dlq", priorityQueue, func(c *tags.QueueConfig) { c.DeadLetterQueue = true })
		b.queue("q", priorityQueue, func(c *tags.QueueConfig) {
			c.VisibilityTimeoutSeconds = i32(30)
			c.RedrivePolicy = &tags.RedrivePolicy{DeadLetterQueue: "dlq", MaxReceiveCount: 2}
		})
		b.sendPrio("q", 12, "poison12", 2, "poison2")
		for i := range 2 {
			got := b.receive("q", "", 10)
			if i == 0 {
				require.Equal(t, []string{"poison2", "poison12"}, bodies(got))
			} else {
				require.ElementsMatch(t, []string{"poison2", "poison12"}, bodies(got), "redeliveries: by due time")
			}
			b.advance("q", 30*time.Second)
		}
		require.Empty(t, b.receive("q", "", 10), "both dead-lettered at their third receive")
		require.Equal(t, int64(2), b.state("q", "default").DeadTotal)

		dead := b.receive("dlq", "", 10)
		require.Equal(t, []string{"poison2", "poison12"}, bodies(dead), "by priority in the DLQ")
		require.Equal(t, []int32{2, 12}, prios(dead))
		nack(t, b, "dlq", dead[0].ReceiptHandle)
		nack(t, b, "dlq", dead[1].ReceiptHandle)

		b.sendPrio("q", 8, "new8", 1, "new1")
		_, err := b.s.StartMove(b.ctx, "dlq", "", "", 0)
		require.NoError(t, err)
		require.Equal(t, 2, runMoveToEnd(t, b, "dlq"))
		got := b.receive("q", "", 10)
		require.Equal(t, []string{"new1", "poison2", "new8", "poison12"}, bodies(got))
		require.Equal(t, []int32{1, 2, 8, 12}, prios(got))
		require.Equal(t, 1, got[1].MoveCount)
	})
}

// A priority queue's dead letters in a plain DLQ keep their field; moved
// back they keep their priority. A dead letter held in a priority DLQ's
// list leaves it when moved out.
func TestPriority_PlainDLQAndHeldDeadLettersMovedOut(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("plain-dlq", func(c *tags.QueueConfig) { c.DeadLetterQueue = true })
		b.queue("prio-dlq", priorityQueue, func(c *tags.QueueConfig) { c.DeadLetterQueue = true })
		b.queue("q", priorityQueue, func(c *tags.QueueConfig) {
			c.RedrivePolicy = &tags.RedrivePolicy{DeadLetterQueue: "plain-dlq", MaxReceiveCount: 5}
		})
		b.queue("r", priorityQueue, func(c *tags.QueueConfig) {
			c.RedrivePolicy = &tags.RedrivePolicy{DeadLetterQueue: "prio-dlq", MaxReceiveCount: 5}
		})
		deadAll := func(q string) {
			for _, m := range b.receive(q, "", 10) {
				errs, err := b.s.DeadLetter(b.ctx, q, []tags.DeadRequest{{ReceiptHandle: m.ReceiptHandle}})
				require.NoError(t, err)
				require.NoError(t, errs[0])
			}
		}
		b.sendPrio("q", 3, "q3", 14, "q14")
		deadAll("q")
		b.sendPrio("r", 3, "r3", 14, "r14")
		deadAll("r")

		// The priority DLQ's tag has read both (held, not handed out):
		// moved out, they leave its lists.
		require.Equal(t, []string{"r3"}, bodies(b.receive("prio-dlq", "", 1)))
		require.Equal(t, tags.TagState{Available: 1, InFlight: 1, ReceivedTotal: 1}, b.state("prio-dlq", "default"))
		_, err := b.s.StartMove(b.ctx, "prio-dlq", "", "", 0)
		require.NoError(t, err)
		require.Equal(t, 2, runMoveToEnd(t, b, "prio-dlq"))
		require.Equal(t, tags.TagState{ReceivedTotal: 1}, b.state("prio-dlq", "default"))
		requireNoPrioKeys(t, b, "prio-dlq", "default")

		plain := b.receive("plain-dlq", "", 10)
		require.Equal(t, []string{"q3", "q14"}, bodies(plain))
		require.Equal(t, []int32{0, 0}, prios(plain), "shown on priority queues only")
		nack(t, b, "plain-dlq", plain[0].ReceiptHandle)
		nack(t, b, "plain-dlq", plain[1].ReceiptHandle)
		_, err = b.s.StartMove(b.ctx, "plain-dlq", "", "", 0)
		require.NoError(t, err)
		require.Equal(t, 2, runMoveToEnd(t, b, "plain-dlq"))

		b.sendPrio("q", 8, "q8")
		got := b.receive("q", "", 10)
		require.Equal(t, []string{"q3", "q8", "q14"}, bodies(got))
		got = b.receive("r", "", 10)
		require.Equal(t, []string{"r3", "r14"}, bodies(got))
		require.Equal(t, []int32{3, 14}, prios(got))
	})
}

// The janitor keeps held entries, and expires them (counted, never handed
// out) with their retention; purge, tag and queue deletion remove the lists.
func TestPriority_RetentionPurgeAndDeletion(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("q", priorityQueue, func(c *tags.QueueConfig) { c.MessageRetentionSeconds = i32(3600) })
		b.tag("q", "other")
		b.sendPrio("q", 4, "a", 4, "b", 9, "c")
		require.Equal(t, []string{"a"}, bodies(b.receive("q", "", 1)))
		other := b.receive("q", "other", 10)
		require.Len(t, other, 3)
		b.del("q", other...)
		// "other" is done with them; the default tag holds b and c.
		_, err := b.s.trimQueueCount(b.ctx, "q")
		require.NoError(t, err)
		n, err := b.rdb.XLen(b.ctx, b.s.qkeys("q").stream).Result()
		require.NoError(t, err)
		require.Equal(t, int64(3), n, "held entries are kept")
		require.Equal(t, tags.TagState{Available: 2, InFlight: 1, ReceivedTotal: 1}, b.state("q", "default"))

		b.advance("q", time.Hour)
		_, err = b.s.trimQueueCount(b.ctx, "q")
		require.NoError(t, err)
		require.Equal(t, tags.TagState{ReceivedTotal: 1, ExpiredTotal: 3}, b.state("q", "default"))
		requireNoPrioKeys(t, b, "q", "default")
		b.sendPrio("q", 5, "d")
		require.Equal(t, []string{"d"}, bodies(b.receive("q", "", 10)))

		// Purge.
		b.sendPrio("q", 5, "e", 6, "f")
		require.Len(t, b.receive("q", "", 1), 1)
		_, err = b.s.PurgeQueue(b.ctx, "q")
		require.NoError(t, err)
		requireNoPrioKeys(t, b, "q", "default")
		require.Equal(t, tags.TagState{}, zeroTotals(b.state("q", "default")))
		b.sendPrio("q", 7, "g", 3, "h")
		require.Equal(t, []string{"h", "g"}, bodies(b.receive("q", "", 10)))

		// Tag and queue deletion.
		b.sendPrio("q", 7, "i", 3, "j")
		require.Len(t, b.receive("q", "other", 1), 1)
		require.NoError(t, b.s.DeleteTag(b.ctx, "q", "other"))
		requireNoPrioKeys(t, b, "q", "other")
		require.Len(t, b.receive("q", "", 1), 1)
		require.NoError(t, b.s.DeleteQueue(b.ctx, "q", false))
		require.Empty(t, b.keys(b.prefix+":{q}:*"))
	})
}

func zeroTotals(st tags.TagState) tags.TagState {
	st.ReceivedTotal, st.DeletedTotal, st.DeadTotal, st.ExpiredTotal = 0, 0, 0, 0
	return st
}

// A read into the PEL whose receive never ran (its tagqd died) is
// recovered by the janitor into its priority's list.
func TestPriority_StalledReadsRecoverIntoTheirList(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("q", priorityQueue)
		b.sendPrio("q", 9, "first")
		require.Len(t, b.receive("q", "", 1), 1)
		b.sendPrio("q", 9, "n9", 2, "n2")
		got, _, _, err := b.s.readNew(b.ctx, b.s.qkeys("q"), "default", 10) // a read whose script never runs
		require.NoError(t, err)
		require.Len(t, got, 2)
		impatient, err := New(b.ctx, Config{Client: b.rdb, Prefix: b.prefix, TestClock: true,
			StalledRead: time.Nanosecond})
		require.NoError(t, err)
		defer impatient.Close()
		require.NoError(t, impatient.RunJanitor(b.ctx))
		require.Equal(t, tags.TagState{Available: 2, InFlight: 1, ReceivedTotal: 1}, b.state("q", "default"))
		b.sendPrio("q", 5, "n5")
		require.Equal(t, []string{"n2", "n5", "n9"}, bodies(b.receive("q", "", 10)))
		require.Equal(t, tags.TagState{InFlight: 4, ReceivedTotal: 4}, b.state("q", "default"))
	})
}

// prioOrder is the order in which a tag hands out messages of these
// priorities (0: the default), all read at once: by the rule.
func prioOrder(prios []int32) []int {
	lists := make([][]int, tags.MaxPriority+1)
	for i, p := range prios {
		if p == 0 {
			p = tags.DefaultPriority
		}
		lists[p] = append(lists[p], i)
	}
	var out []int
	for pk := 1; len(out) < len(prios); pk++ {
		best := 0
		for p := 1; p <= tags.MaxPriority; p++ {
			if len(lists[p]) == 0 {
				continue
			}
			if best == 0 {
				best = p
				if pk%tags.PriorityOldestEvery != 0 {
					break
				}
			} else if lists[p][0] < lists[best][0] {
				best = p
			}
		}
		out = append(out, lists[best][0])
		lists[best] = lists[best][1:]
	}
	return out
}

// Concurrent receivers on one tag: every message once, none lost, and
// the receives together follow the rule: each one's batch is the next
// run of the one order a single receiver would see.
func TestPriority_ConcurrentReceivers(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("q", priorityQueue)
		const total = 300
		rng := rand.New(rand.NewPCG(1, 2))
		var msgs []tags.OutMessage
		var ps []int32
		for i := range total {
			p := int32(rng.IntN(17))
			ps = append(ps, p)
			msgs = append(msgs, tags.OutMessage{Priority: p, Body: []byte(fmt.Sprint(i))})
		}
		for len(msgs) > 0 {
			n := min(len(msgs), tags.MaxBatchEntries)
			b.sendMsgs("q", msgs[:n]...)
			msgs = msgs[n:]
		}
		order := prioOrder(ps)
		pos := make(map[string]int, total) // body -> place in order
		for k, i := range order {
			pos[fmt.Sprint(i)] = k
		}
		var mu sync.Mutex
		seen := map[string]bool{}
		var batches [][]int
		var wg sync.WaitGroup
		errc := make(chan error, 4)
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for tries := 0; tries < 500; tries++ {
					ms, err := b.s.Receive(b.ctx, "q", "", tags.ReceiveOptions{MaxMessages: 7, WaitSeconds: i32(0)})
					if err != nil {
						errc <- err
						return
					}
					mu.Lock()
					for _, m := range ms {
						if seen[m.ID] {
							mu.Unlock()
							errc <- fmt.Errorf("message %s handed out twice", m.ID)
							return
						}
						seen[m.ID] = true
					}
					if len(ms) > 0 {
						places := make([]int, len(ms))
						for i, m := range ms {
							places[i] = pos[string(m.Body)]
						}
						batches = append(batches, places)
					}
					done := len(seen) == total
					mu.Unlock()
					if len(ms) > 0 {
						hs := make([]string, len(ms))
						for i, m := range ms {
							hs[i] = m.ReceiptHandle
						}
						if _, err := b.s.Delete(b.ctx, "q", hs); err != nil {
							errc <- err
							return
						}
					}
					if done {
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errc)
		for err := range errc {
			require.NoError(t, err)
		}
		require.Len(t, seen, total)
		for _, places := range batches {
			for i := range places {
				require.Equal(t, places[0]+i, places[i], "a batch is a run of the order: %v", places)
			}
		}
		require.Equal(t, tags.TagState{ReceivedTotal: total, DeletedTotal: total}, b.state("q", "default"))
		requireNoPrioKeys(t, b, "q", "default")
	})
}

// A count out of step with its list (it cannot be made so but by hand) is
// set right by the next receive, which hands out what the lists hold.
func TestPriority_CountOutOfStepIsSetRight(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("q", priorityQueue)
		b.sendPrio("q", 3, "a", 5, "b", 5, "c")
		require.Equal(t, []string{"a"}, bodies(b.receive("q", "", 1)))
		n := b.s.qkeys("q").tag("default").state
		require.NoError(t, b.rdb.HSet(b.ctx, n, "pq:3", 4, "pq:5", 7).Err())
		require.Equal(t, []string{"b", "c"}, bodies(b.receive("q", "", 10)))
		requireNoPrioKeys(t, b, "q", "default")
		b.sendPrio("q", 4, "d")
		require.Equal(t, []string{"d"}, bodies(b.receive("q", "", 10)))
		require.Equal(t, tags.TagState{InFlight: 4, ReceivedTotal: 4}, b.state("q", "default"))
	})
}

// A consume stream's reader follows the same order, and waits for news
// only once the tag's lists are empty.
func TestPriority_ReaderFollowsTheOrder(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("q", priorityQueue)
		b.sendPrio("q", 7, "g7", 3, "c3", 3, "c3b", 12, "l12", 1, "a1")
		r, err := b.s.NewReader(b.ctx, "q", "", nil)
		require.NoError(t, err)
		defer r.Close()
		var got []string
		for range 3 {
			msgs, err := r.Receive(b.ctx, 2)
			require.NoError(t, err)
			got = append(got, bodies(msgs)...)
		}
		require.Equal(t, []string{"a1", "c3", "c3b", "g7", "l12"}, got)
		b.sendPrio("q", 16, "p16", 2, "p2")
		msgs, err := r.Receive(b.ctx, 10)
		require.NoError(t, err)
		require.Equal(t, []string{"p2", "p16"}, bodies(msgs))
	})
}

// A receive reads what is new in chunks, and stops after the chunk that
// takes the bodies read past 4 MiB (they pass through Lua): a message
// beyond waits for the next receive's read. A chunk holds what the
// queue's max_message_bytes allows within 4 MiB (16 at the default 256 KiB).

// held is what the default tag of q holds in its priority lists.
func held(b *bundle, q string) int64 {
	b.t.Helper()
	var n int64
	for _, k := range prioKeysOf(b, q, "default") {
		l, err := b.rdb.LLen(b.ctx, k).Result()
		require.NoError(b.t, err)
		n += l
	}
	return n
}
func TestPriority_ReadIsBoundedByBytes(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("q", priorityQueue)
		body := strings.Repeat("x", 50<<10)
		for range 2 {
			var pairs []any
			for range 75 {
				pairs = append(pairs, 16, body)
			}
			b.sendPrio("q", pairs...)
		}
		b.sendPrio("q", 1, "urgent")
		got := b.receive("q", "", 1)
		require.Equal(t, []int32{16}, prios(got), "150 x 50 KiB: 96 (six chunks of 16) pass 4 MiB")
		require.Equal(t, int64(95), held(b, "q"))
		got = b.receive("q", "", 1)
		require.Equal(t, []string{"urgent"}, bodies(got))
		require.Equal(t, tags.TagState{Available: 149, InFlight: 2, ReceivedTotal: 2}, b.state("q", "default"))

		// Chunks are sized by the queue's largest message: at 1 MiB a chunk
		// is 4 messages, so one read never takes more than 4 MiB of bodies
		// into Lua (a chunk of 100 would have taken all 7 below, urgent too).
		b.queue("big", priorityQueue, func(c *tags.QueueConfig) { c.MaxMessageBytes = i32(tags.MaxMaxMessageBytes) })
		large := strings.Repeat("y", tags.MaxMaxMessageBytes)
		for range 6 {
			b.sendPrio("big", 16, large)
		}
		b.sendPrio("big", 1, "urgent")
		got = b.receive("big", "", 1)
		require.Equal(t, []int32{16}, prios(got), "the first chunk (4 x 1 MiB) reached 4 MiB: urgent not read yet")
		require.Equal(t, int64(3), held(b, "big"))
		got = b.receive("big", "", 1)
		require.Equal(t, []string{"urgent"}, bodies(got))
	})
}
