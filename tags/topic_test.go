package tags

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Topic queues (S13): per tag, the messages of one topic in send order,
// one in flight at a time; a message that dies unblocks its topic.

func topicQueue(c *QueueConfig) { c.TopicQueue = true }

func (b *bundle) sendTopics(q string, pairs ...string) []string {
	b.t.Helper()
	msgs := make([]OutMessage, 0, len(pairs)/2)
	for i := 0; i+1 < len(pairs); i += 2 {
		msgs = append(msgs, OutMessage{Topic: pairs[i], Body: []byte(pairs[i+1])})
	}
	return b.sendMsgs(q, msgs...)
}

func TestS13_TopicOnSend(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("tq", topicQueue)
		b.queue("plain")
		send := func(q string, m OutMessage) error {
			res, err := b.s.Send(b.ctx, q, []OutMessage{m})
			require.NoError(t, err)
			return res[0].Err
		}
		for _, c := range []struct {
			q     string
			m     OutMessage
			field string
		}{
			{"tq", OutMessage{Body: []byte("x")}, "topic"},
			{"plain", OutMessage{Body: []byte("x"), Topic: "a"}, "topic"},
			{"tq", OutMessage{Body: []byte("x"), Topic: "a b"}, "topic"},
			{"tq", OutMessage{Body: []byte("x"), Topic: "é"}, "topic"},
			{"tq", OutMessage{Body: []byte("x"), Topic: strings.Repeat("a", MaxTopicLen+1)}, "topic"},
			{"tq", OutMessage{Body: []byte("x"), Topic: "a", DelaySeconds: i32(5)}, "delay_seconds"},
		} {
			err := send(c.q, c.m)
			requireReason(t, err, ReasonInvalidArgumentRange)
			var e *Error
			require.ErrorAs(t, err, &e)
			require.Equal(t, c.field, e.Field, "%+v", c.m)
		}
		require.NoError(t, send("tq", OutMessage{Body: []byte("x"), Topic: strings.Repeat("a", MaxTopicLen)}))
		require.NoError(t, send("tq", OutMessage{Body: []byte("y"), Topic: "Az09_.:-", DelaySeconds: i32(0)}))
		require.NoError(t, send("plain", OutMessage{Body: []byte("z")}))

		got := b.receive("tq", "", 10)
		require.Len(t, got, 2)
		require.Equal(t, strings.Repeat("a", MaxTopicLen), got[0].Topic)
		require.Equal(t, "Az09_.:-", got[1].Topic)
		require.Equal(t, "", b.receive("plain", "", 1)[0].Topic)
		peeked, err := b.s.Peek(b.ctx, "tq", []string{got[1].ID})
		require.NoError(t, err)
		require.Equal(t, "Az09_.:-", peeked[0].Topic)
	})
}

// The cached flag says plain, the queue is a topic queue (re-created
// under the same name): send.lua refuses the message all the same.
func TestS13_StaleTopicFlagIsCheckedByTheScript(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("q")
		b.send("q", "warm the cache")
		require.NoError(t, b.s.DeleteQueue(b.ctx, "q", false))
		b.queue("q", topicQueue)
		res, err := b.s.Send(b.ctx, "q", []OutMessage{{Body: []byte("no topic")}})
		require.NoError(t, err)
		requireReason(t, res[0].Err, ReasonInvalidArgumentRange)
		b.sendTopics("q", "a", "fine")
		require.Equal(t, []string{"fine"}, bodies(b.receive("q", "", 10)))
	})
}

func TestS13_OrderAndOneInFlightPerTopicPerTag(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("q", topicQueue)
		b.sendTopics("q", "a", "a1", "b", "b1", "a", "a2", "c", "c1", "b", "b2", "a", "a3")

		first := b.receive("q", "", 10)
		require.Equal(t, []string{"a1", "b1", "c1"}, bodies(first), "one per topic")
		require.Empty(t, b.receive("q", "", 10), "every topic blocked")
		// Held messages are available, not in flight (S12).
		require.Equal(t, TagState{Available: 3, InFlight: 3, ReceivedTotal: 3}, b.state("q", "default"))

		b.del("q", first[0]) // a1: a2 is next for a
		require.Equal(t, []string{"a2"}, bodies(b.receive("q", "", 10)))
		b.sendTopics("q", "d", "d1", "b", "b3")
		b.del("q", first[1]) // b1
		// The ready topic's held message before new ones; b3 waits behind b2.
		require.Equal(t, []string{"b2", "d1"}, bodies(b.receive("q", "", 10)))
		require.Equal(t, TagState{Available: 2, InFlight: 4, ReceivedTotal: 6, DeletedTotal: 2}, b.state("q", "default"))
	})
}

func TestS13_TagsAreIndependent(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("orders", topicQueue)
		b.tag("orders", "billing")
		b.tag("orders", "shipping")
		b.sendTopics("orders", "A", "A1", "A", "A2")

		billing := b.receive("orders", "billing", 10)
		require.Equal(t, []string{"A1"}, bodies(billing))
		require.Empty(t, b.receive("orders", "billing", 10), "billing holds A")
		shipping := b.receive("orders", "shipping", 10)
		require.Equal(t, []string{"A1"}, bodies(shipping), "billing's block is not shipping's")
		b.del("orders", shipping...)
		require.Equal(t, []string{"A2"}, bodies(b.receive("orders", "shipping", 10)))
		require.Empty(t, b.receive("orders", "billing", 10), "shipping's delete does not unblock billing")
		b.del("orders", billing...)
		require.Equal(t, []string{"A2"}, bodies(b.receive("orders", "billing", 10)))
	})
}

func TestS13_NackAndTimeoutRedeliverTheSameMessage(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("q", topicQueue, func(c *QueueConfig) { c.VisibilityTimeoutSeconds = i32(30) })
		b.sendTopics("q", "a", "a1", "a", "a2")

		m := b.receive("q", "", 10)
		require.Equal(t, []string{"a1"}, bodies(m))
		nack(t, b, "q", m[0].ReceiptHandle)
		again := b.receive("q", "", 10)
		require.Equal(t, []string{"a1"}, bodies(again), "a nack keeps the topic behind the same message")
		require.Equal(t, 2, again[0].ReceiveCount)

		b.advance("q", 30*time.Second) // the visibility timeout
		third := b.receive("q", "", 10)
		require.Equal(t, []string{"a1"}, bodies(third), "so does a timeout")
		require.Equal(t, 3, third[0].ReceiveCount)
		b.del("q", third[0])
		require.Equal(t, []string{"a2"}, bodies(b.receive("q", "", 10)))
	})
}

func TestS13_PoisonDeadLetteredUnblocksItsTopicForThatTagOnly(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("dlq", topicQueue, func(c *QueueConfig) { c.DeadLetterQueue = true })
		b.queue("q", topicQueue, func(c *QueueConfig) {
			c.VisibilityTimeoutSeconds = i32(30)
			c.RedrivePolicy = &RedrivePolicy{DeadLetterQueue: "dlq", MaxReceiveCount: 2}
		})
		b.tag("q", "billing")
		b.tag("q", "shipping")
		b.sendTopics("q", "a", "poison", "a", "a2", "b", "b1")

		// S7: billing's receives of the poison run out; the sweeper
		// dead-letters it without a receive, and a2 is next for billing.
		first := b.receive("q", "billing", 10)
		require.Equal(t, []string{"poison", "b1"}, bodies(first))
		b.del("q", first[1])
		b.advance("q", 30*time.Second)
		require.Equal(t, []string{"poison"}, bodies(b.receive("q", "billing", 10)))
		b.advance("q", 30*time.Second)
		_, err := b.s.SweepDead(b.ctx, "q")
		require.NoError(t, err)
		require.Equal(t, []string{"a2"}, bodies(b.receive("q", "billing", 10)))
		st := b.state("q", "billing")
		require.Equal(t, int64(1), st.DeadTotal)

		// S8: shipping dead-letters its own poison at once; its topic b is
		// untouched, and billing's view is unchanged.
		ship := b.receive("q", "shipping", 10)
		require.Equal(t, []string{"poison", "b1"}, bodies(ship))
		errs, err := b.s.DeadLetter(b.ctx, "q", []DeadRequest{{ReceiptHandle: ship[0].ReceiptHandle}})
		require.NoError(t, err)
		require.NoError(t, errs[0])
		require.Equal(t, []string{"a2"}, bodies(b.receive("q", "shipping", 10)))
		require.Empty(t, b.receive("q", "billing", 10))
		// One dead letter per tag, both of topic a in the DLQ (a topic queue).
		require.Len(t, b.receive("dlq", "", 10), 1)
		require.Equal(t, TagState{Available: 1, InFlight: 1, ReceivedTotal: 1}, b.state("dlq", "default"))
	})
}

// Concurrent receivers on one tag: each topic is delivered in send order
// and never two of a topic at once.
func TestS13_OrderPerTopicUnderConcurrentReceivers(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("q", topicQueue)
		const topics, per = 8, 12
		var msgs []OutMessage
		for i := range per {
			for tp := range topics {
				msgs = append(msgs, OutMessage{Topic: fmt.Sprintf("t%d", tp), Body: []byte(fmt.Sprintf("%d", i))})
			}
		}
		b.sendMsgs("q", msgs...)

		var mu sync.Mutex
		inFlight := map[string]bool{}
		got := map[string][]string{}
		var wg sync.WaitGroup
		errc := make(chan error, 4)
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for tries := 0; tries < 2000; tries++ {
					ms, err := b.s.Receive(b.ctx, "q", "", ReceiveOptions{MaxMessages: 3, WaitSeconds: i32(0)})
					if err != nil {
						errc <- err
						return
					}
					mu.Lock()
					for _, m := range ms {
						if inFlight[m.Topic] {
							mu.Unlock()
							errc <- fmt.Errorf("topic %s handed out twice at once", m.Topic)
							return
						}
						inFlight[m.Topic] = true
						got[m.Topic] = append(got[m.Topic], string(m.Body))
					}
					done := 0
					for _, l := range got {
						done += len(l)
					}
					mu.Unlock()
					for _, m := range ms {
						mu.Lock()
						inFlight[m.Topic] = false // before the delete: a receive may get the next at once
						mu.Unlock()
						errs, err := b.s.Delete(b.ctx, "q", []string{m.ReceiptHandle})
						if err != nil || errs[0] != nil {
							errc <- fmt.Errorf("delete: %v %v", err, errs)
							return
						}
					}
					if done == topics*per {
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
		require.Len(t, got, topics)
		want := make([]string, per)
		for i := range want {
			want[i] = fmt.Sprint(i)
		}
		for tp, l := range got {
			require.Equal(t, want, l, "topic %s in send order, each once", tp)
		}
		require.Equal(t, TagState{ReceivedTotal: topics * per, DeletedTotal: topics * per}, b.state("q", "default"))
	})
}

// Finding a ready topic costs the same Redis work whatever the number of
// blocked topics (counted commands, see scripts/testcount.lua).
func TestS13_ManyBlockedTopicsDoNotSlowFindingAReadyOne(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		work := func(q string, blocked int) int64 {
			b.queue(q, topicQueue)
			var msgs []OutMessage
			for i := range blocked {
				tp := fmt.Sprintf("t%d", i)
				msgs = append(msgs, OutMessage{Topic: tp, Body: []byte("first")}, OutMessage{Topic: tp, Body: []byte("second")})
			}
			for len(msgs) > 0 {
				n := min(len(msgs), MaxBatchEntries)
				b.sendMsgs(q, msgs[:n]...)
				msgs = msgs[n:]
			}
			var heads []Message
			for {
				got := b.receive(q, "", MaxBatchEntries)
				if len(got) == 0 {
					break
				}
				heads = append(heads, got...)
			}
			require.Len(t, heads, blocked, "one in flight per topic, the seconds held")
			b.del(q, heads[0]) // t0 is ready; every other topic is blocked
			meta := b.s.qkeys(q).meta
			require.NoError(t, b.rdb.HSet(b.ctx, meta, "test_count", 1).Err())
			got := b.receive(q, "", 1)
			require.NoError(t, b.rdb.HDel(b.ctx, meta, "test_count").Err())
			require.Len(t, got, 1)
			require.Equal(t, "t0", got[0].Topic)
			require.Equal(t, "second", string(got[0].Body))
			calls, err := b.rdb.HGet(b.ctx, meta, "test_calls").Int64()
			require.NoError(t, err)
			return calls
		}
		few, many := work("few", 3), work("many", 600)
		require.Positive(t, few)
		require.Equal(t, few, many, "Redis commands to find the ready topic with 3 and 600 blocked")
	})
}

func TestS13_RetentionNeverTrimsAHeldMessage(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("q", topicQueue, func(c *QueueConfig) { c.MessageRetentionSeconds = i32(3600) })
		b.tag("q", "other")
		b.sendTopics("q", "a", "a1", "a", "a2")
		require.Equal(t, []string{"a1"}, bodies(b.receive("q", "", 10)))
		other := b.receive("q", "other", 10)
		b.del("q", other...)
		a2 := b.receive("q", "other", 10)
		require.Equal(t, []string{"a2"}, bodies(a2))
		b.del("q", a2...)
		// "other" is done with both; the default tag holds a1 and needs a2.
		_, err := b.s.trimQueueCount(b.ctx, "q")
		require.NoError(t, err)
		require.Equal(t, TagState{Available: 1, InFlight: 1, ReceivedTotal: 1}, b.state("q", "default"))

		// Retention expires both: counted, and the topic's keys are gone.
		b.advance("q", time.Hour)
		_, err = b.s.trimQueueCount(b.ctx, "q")
		require.NoError(t, err)
		st := b.state("q", "default")
		require.Equal(t, TagState{ReceivedTotal: 1, ExpiredTotal: 2}, st)
		tk := topickeysOf(b, "q", "default")
		for _, k := range tk {
			n, err := b.rdb.Exists(b.ctx, k).Result()
			require.NoError(t, err)
			require.Zero(t, n, "key %s", k)
		}
		b.sendTopics("q", "a", "a3")
		require.Equal(t, []string{"a3"}, bodies(b.receive("q", "", 10)), "a is free again")
	})
}

// topickeysOf are tag's topic keys (lib.lua's topickeys) for topic "a".
func topickeysOf(b *bundle, q, tag string) []string {
	n := b.s.qkeys(q).tag(tag).state
	base := n[:len(n)-1]
	return []string{base + "tb", base + "tr", base + "th:a"}
}

func TestS13_DeleteTagAndQueueRemoveTopicKeys(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("q", topicQueue)
		b.tag("q", "t")
		b.sendTopics("q", "a", "a1", "a", "a2")
		require.Len(t, b.receive("q", "t", 10), 1)
		require.Len(t, b.receive("q", "", 10), 1)
		require.NoError(t, b.s.DeleteTag(b.ctx, "q", "t"))
		for _, k := range topickeysOf(b, "q", "t") {
			n, _ := b.rdb.Exists(b.ctx, k).Result()
			require.Zero(t, n, "key %s", k)
		}
		_, err := b.s.PurgeQueue(b.ctx, "q")
		require.NoError(t, err)
		for _, k := range topickeysOf(b, "q", "default") {
			n, _ := b.rdb.Exists(b.ctx, k).Result()
			require.Zero(t, n, "key %s after purge", k)
		}
		b.sendTopics("q", "a", "a3")
		require.Equal(t, []string{"a3"}, bodies(b.receive("q", "", 10)))
		b.sendTopics("q", "a", "a4")
		require.NoError(t, b.s.DeleteQueue(b.ctx, "q", false))
		require.Empty(t, b.keys(b.prefix+":{q}:*"))
	})
}

func TestS13_DeadLetterQueueOfATopicQueueIsATopicQueue(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("plain-dlq", func(c *QueueConfig) { c.DeadLetterQueue = true })
		b.queue("topic-dlq", topicQueue, func(c *QueueConfig) { c.DeadLetterQueue = true })
		_, err := b.s.CreateQueue(b.ctx, QueueConfig{Name: "tq", TopicQueue: true,
			RedrivePolicy: &RedrivePolicy{DeadLetterQueue: "plain-dlq", MaxReceiveCount: 3}})
		requireReason(t, err, ReasonTopicQueueMismatch)
		var e *Error
		require.ErrorAs(t, err, &e)
		require.Equal(t, "redrive_policy.dead_letter_queue", e.Field)
		_, err = b.s.CreateQueue(b.ctx, QueueConfig{Name: "pq",
			RedrivePolicy: &RedrivePolicy{DeadLetterQueue: "topic-dlq", MaxReceiveCount: 3}})
		requireReason(t, err, ReasonTopicQueueMismatch)

		b.queue("tq", topicQueue)
		_, err = b.s.UpdateQueue(b.ctx, "tq", QueueUpdate{SetRedrivePolicy: true,
			RedrivePolicy: &RedrivePolicy{DeadLetterQueue: "plain-dlq", MaxReceiveCount: 3}})
		requireReason(t, err, ReasonTopicQueueMismatch)
		_, err = b.s.UpdateQueue(b.ctx, "tq", QueueUpdate{SetRedrivePolicy: true,
			RedrivePolicy: &RedrivePolicy{DeadLetterQueue: "topic-dlq", MaxReceiveCount: 3}})
		require.NoError(t, err)
	})
}

// Dead letters keep their topic in the DLQ (ordered there too), and moved
// back they keep it: the tag they died in gets them in order behind what
// it holds of the topic.
func TestS13_DeadLettersAndMovesBackKeepTheTopic(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("dlq", topicQueue, func(c *QueueConfig) { c.DeadLetterQueue = true })
		b.queue("q", topicQueue, func(c *QueueConfig) {
			c.RedrivePolicy = &RedrivePolicy{DeadLetterQueue: "dlq", MaxReceiveCount: 5}
		})
		b.tag("q", "billing")
		b.sendTopics("q", "a", "a1", "a", "a2", "b", "b1")
		dead := func(msgs ...Message) {
			for _, m := range msgs {
				errs, err := b.s.DeadLetter(b.ctx, "q", []DeadRequest{{ReceiptHandle: m.ReceiptHandle}})
				require.NoError(t, err)
				require.NoError(t, errs[0])
			}
		}
		first := b.receive("q", "billing", 10)
		require.Equal(t, []string{"a1", "b1"}, bodies(first))
		dead(first...)
		second := b.receive("q", "billing", 10)
		require.Equal(t, []string{"a2"}, bodies(second))
		dead(second...)

		// In the DLQ: a topic queue, a1 before a2.
		got := b.receive("dlq", "", 10)
		require.Equal(t, []string{"a1", "b1"}, bodies(got))
		require.Equal(t, "a", got[0].Topic)
		require.Equal(t, "b", got[1].Topic)
		nack(t, b, "dlq", got[0].ReceiptHandle)
		nack(t, b, "dlq", got[1].ReceiptHandle)

		// a3 is sent before the move: billing gets a3, then the moved-back
		// a1 and a2 in their order, one at a time.
		b.sendTopics("q", "a", "a3")
		_, err := b.s.StartMove(b.ctx, "dlq", "", "", 0)
		require.NoError(t, err)
		moved := runMoveToEnd(t, b, "dlq")
		tasks, err := b.s.ListMoves(b.ctx, "dlq")
		require.NoError(t, err)
		require.Equal(t, 3, moved, "%+v", tasks[0])
		require.Equal(t, TagState{ReceivedTotal: 2}, b.state("dlq", "default"), "gone from the DLQ, held or not")
		var order []string
		for range 5 {
			got := b.receive("q", "billing", 10)
			if len(got) == 0 {
				break
			}
			for _, m := range got {
				order = append(order, m.Topic+":"+string(m.Body))
			}
			b.del("q", got...)
		}
		require.Equal(t, []string{"a:a3", "b:b1", "a:a1", "a:a2"}, order)
		var seen []string
		for range 5 {
			got := b.receive("q", "", 10)
			seen = append(seen, bodies(got)...)
			if len(got) > 0 {
				b.del("q", got...)
			}
		}
		require.Equal(t, []string{"a1", "b1", "a2", "a3"}, seen, "the default tag never gets the moved-back ones")
	})
}

// A read into the PEL whose receive never ran (its tagqd died) is
// recovered by the janitor behind its topic when the topic is blocked,
// as the blocker when it is free.
func TestS13_StalledReadsRecoverIntoTheirTopic(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("q", topicQueue)
		b.sendTopics("q", "a", "a1", "a", "a2")
		first := b.receive("q", "", 10)
		require.Equal(t, []string{"a1"}, bodies(first))
		b.sendTopics("q", "a", "a3", "b", "b1")
		got, _, _, err := b.s.readNew(b.ctx, b.s.qkeys("q"), "default", 10) // a read whose script never runs
		require.NoError(t, err)
		require.Len(t, got, 2)
		impatient, err := New(b.ctx, Config{Client: b.rdb, Prefix: b.prefix, JanitorInterval: -1, TestClock: true,
			StalledRead: time.Nanosecond})
		require.NoError(t, err)
		defer impatient.Close()
		require.NoError(t, impatient.RunJanitor(b.ctx))
		require.Equal(t, TagState{Available: 3, InFlight: 1, ReceivedTotal: 1}, b.state("q", "default"))

		var order []string
		b.del("q", first...)
		for range 5 {
			got := b.receive("q", "", 10)
			for _, m := range got {
				order = append(order, string(m.Body))
			}
			if len(got) > 0 {
				b.del("q", got...)
			}
		}
		// No order across topics: a2 then a3, and b1.
		require.ElementsMatch(t, []string{"a2", "b1", "a3"}, order)
		require.Less(t, slices.Index(order, "a2"), slices.Index(order, "a3"))
		require.Equal(t, TagState{ReceivedTotal: 4, DeletedTotal: 4}, b.state("q", "default"))
	})
}
