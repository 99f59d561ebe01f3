package redisstore

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tagq/tagq/tags"
)

// Topic queues (S13): per tag, the messages of one topic in send order,
// one in flight at a time; a message that dies unblocks its topic.

func topicQueue(c *tags.QueueConfig) { c.TopicQueue = true }

func (b *bundle) sendTopics(q string, pairs ...string) []string {
	b.t.Helper()
	msgs := make([]tags.OutMessage, 0, len(pairs)/2)
	for i := 0; i+1 < len(pairs); i += 2 {
		msgs = append(msgs, tags.OutMessage{Topic: pairs[i], Body: []byte(pairs[i+1])})
	}
	return b.sendMsgs(q, msgs...)
}

// The cached flag says plain, the queue is a topic queue (re-created
// under the same name): send.lua refuses the message all the same.
func TestS13_StaleTopicFlagIsCheckedByTheScript(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("q")
		b.send("q", "warm the cache")
		require.NoError(t, b.s.DeleteQueue(b.ctx, "q", false))
		b.queue("q", topicQueue)
		res, err := b.s.Send(b.ctx, "q", []tags.OutMessage{{Body: []byte("no topic")}})
		require.NoError(t, err)
		requireReason(t, res[0].Err, tags.ReasonInvalidArgumentRange)
		b.sendTopics("q", "a", "fine")
		require.Equal(t, []string{"fine"}, bodies(b.receive("q", "", 10)))
	})
}

func TestS13_PoisonDeadLetteredUnblocksItsTopicForThatTagOnly(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("dlq", topicQueue, func(c *tags.QueueConfig) { c.DeadLetterQueue = true })
		b.queue("q", topicQueue, func(c *tags.QueueConfig) {
			c.VisibilityTimeoutSeconds = i32(30)
			c.RedrivePolicy = &tags.RedrivePolicy{DeadLetterQueue: "dlq", MaxReceiveCount: 2}
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
		errs, err := b.s.DeadLetter(b.ctx, "q", []tags.DeadRequest{{ReceiptHandle: ship[0].ReceiptHandle}})
		require.NoError(t, err)
		require.NoError(t, errs[0])
		require.Equal(t, []string{"a2"}, bodies(b.receive("q", "shipping", 10)))
		require.Empty(t, b.receive("q", "billing", 10))
		// One dead letter per tag, both of topic a in the DLQ (a topic queue).
		require.Len(t, b.receive("dlq", "", 10), 1)
		require.Equal(t, tags.TagState{Available: 1, InFlight: 1, ReceivedTotal: 1}, b.state("dlq", "default"))
	})
}

// Finding a ready topic costs the same Redis work whatever the number of
// blocked topics (counted commands, see scripts/testcount.lua).
func TestS13_ManyBlockedTopicsDoNotSlowFindingAReadyOne(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		work := func(q string, blocked int) int64 {
			b.queue(q, topicQueue)
			var msgs []tags.OutMessage
			for i := range blocked {
				tp := fmt.Sprintf("t%d", i)
				msgs = append(msgs, tags.OutMessage{Topic: tp, Body: []byte("first")}, tags.OutMessage{Topic: tp, Body: []byte("second")})
			}
			for len(msgs) > 0 {
				n := min(len(msgs), tags.MaxBatchEntries)
				b.sendMsgs(q, msgs[:n]...)
				msgs = msgs[n:]
			}
			var heads []tags.Message
			for {
				got := b.receive(q, "", tags.MaxBatchEntries)
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
		b.queue("q", topicQueue, func(c *tags.QueueConfig) { c.MessageRetentionSeconds = i32(3600) })
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
		require.Equal(t, tags.TagState{Available: 1, InFlight: 1, ReceivedTotal: 1}, b.state("q", "default"))

		// Retention expires both: counted, and the topic's keys are gone.
		b.advance("q", time.Hour)
		_, err = b.s.trimQueueCount(b.ctx, "q")
		require.NoError(t, err)
		st := b.state("q", "default")
		require.Equal(t, tags.TagState{ReceivedTotal: 1, ExpiredTotal: 2}, st)
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
		impatient, err := New(b.ctx, Config{Client: b.rdb, Prefix: b.prefix, TestClock: true,
			StalledRead: time.Nanosecond})
		require.NoError(t, err)
		defer impatient.Close()
		require.NoError(t, impatient.RunJanitor(b.ctx))
		require.Equal(t, tags.TagState{Available: 3, InFlight: 1, ReceivedTotal: 1}, b.state("q", "default"))

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
		require.Equal(t, tags.TagState{ReceivedTotal: 4, DeletedTotal: 4}, b.state("q", "default"))
	})
}

// Dead letters keep their topic in the DLQ (ordered there too), and moved
// back they keep it: the tag they died in gets them in order behind what
// it holds of the topic.
func TestS13_DeadLettersAndMovesBackKeepTheTopic(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("dlq", topicQueue, func(c *tags.QueueConfig) { c.DeadLetterQueue = true })
		b.queue("q", topicQueue, func(c *tags.QueueConfig) {
			c.RedrivePolicy = &tags.RedrivePolicy{DeadLetterQueue: "dlq", MaxReceiveCount: 5}
		})
		b.tag("q", "billing")
		b.sendTopics("q", "a", "a1", "a", "a2", "b", "b1")
		dead := func(msgs ...tags.Message) {
			for _, m := range msgs {
				errs, err := b.s.DeadLetter(b.ctx, "q", []tags.DeadRequest{{ReceiptHandle: m.ReceiptHandle}})
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
		require.Equal(t, tags.TagState{ReceivedTotal: 2}, b.state("dlq", "default"), "gone from the DLQ, held or not")
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

// A topic queue's read inside the receive script takes bodies through Lua:
// it reads in chunks that max_message_bytes keeps within 4 MiB and stops
// once the bodies read pass it, handing out what it has (at 1 MiB, 4 of
// the 6 here; the rest on the next receive).
func TestS13_ReadIsBoundedByBytes(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("big", topicQueue, func(c *tags.QueueConfig) { c.MaxMessageBytes = i32(tags.MaxMaxMessageBytes) })
		large := strings.Repeat("y", tags.MaxMaxMessageBytes)
		var pairs []string
		for i := range 6 {
			pairs = append(pairs, fmt.Sprint("t", i), large)
		}
		b.sendTopics("big", pairs...)
		require.Len(t, b.receive("big", "", 10), 4, "one chunk of 4 x 1 MiB reached 4 MiB")
		require.Len(t, b.receive("big", "", 10), 2)
		require.Equal(t, tags.TagState{InFlight: 6, ReceivedTotal: 6}, b.state("big", "default"))
	})
}
