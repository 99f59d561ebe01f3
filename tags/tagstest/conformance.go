package tagstest

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tagq/tagq/tags"
)

// cases are the suite's tests, in DESIGN.md's order of semantics, then
// the model tests.
var cases = []struct {
	name string
	fn   func(t *testing.T, b *B)
}{
	{"S1_TagsAreIndependent", testS1_TagsAreIndependent},
	{"S2_ExclusiveWithinTag_VisibleAgainAfterDeadline", testS2_ExclusiveWithinTag_VisibleAgainAfterDeadline},
	{"S3_ReceiptHandles", testS3_ReceiptHandles},
	{"S3_HandleOfADeletedTagDoesNotTouchItsNamesake", testS3_HandleOfADeletedTagDoesNotTouchItsNamesake},
	{"S4_VisibilityDefaultsAndOverrides", testS4_VisibilityDefaultsAndOverrides},
	{"S5_DelayedMessagesAreInvisibleToEveryTag", testS5_DelayedMessagesAreInvisibleToEveryTag},
	{"TagStartPoints", testTagStartPoints},
	{"TagFilters", testTagFilters},
	{"S12_CountersAcrossPurgeAndTagDelete", testS12_CountersAcrossPurgeAndTagDelete},
	{"Peek", testPeek},
	{"ReceiveOnTheDefaultTagFollowsARecreatedQueue", testReceiveOnTheDefaultTagFollowsARecreatedQueue},
	{"S7_ReceiveNeverHandsOutTheNPlusFirstTime", testS7_ReceiveNeverHandsOutTheNPlusFirstTime},
	{"S8_DeadMessageIsAnAckThatDeadLettersAtOnce", testS8_DeadMessageIsAnAckThatDeadLettersAtOnce},
	{"S9_DLQFilterOnSourceQueueReadsOneSource", testS9_DLQFilterOnSourceQueueReadsOneSource},
	{"S9_SameMessageDeadTwiceByARecreatedTagIsTwoDeadLetters", testS9_SameMessageDeadTwiceByARecreatedTagIsTwoDeadLetters},
	{"S13_TopicOnSend", testS13_TopicOnSend},
	{"S13_OrderAndOneInFlightPerTopicPerTag", testS13_OrderAndOneInFlightPerTopicPerTag},
	{"S13_TagsAreIndependent", testS13_TagsAreIndependent},
	{"S13_NackAndTimeoutRedeliverTheSameMessage", testS13_NackAndTimeoutRedeliverTheSameMessage},
	{"S13_OrderPerTopicUnderConcurrentReceivers", testS13_OrderPerTopicUnderConcurrentReceivers},
	{"S13_DeadLetterQueueOfATopicQueueIsATopicQueue", testS13_DeadLetterQueueOfATopicQueueIsATopicQueue},
	{"PeekPage_ListsEveryAvailableMessageOnce", testPeekPage_ListsEveryAvailableMessageOnce},
	{"Priority_OrderAcrossPrioritiesFIFOWithin", testPriority_OrderAcrossPrioritiesFIFOWithin},
	{"Priority_EveryTenthIsTheOldestHeld", testPriority_EveryTenthIsTheOldestHeld},
	{"Priority_RedeliveriesFirst", testPriority_RedeliveriesFirst},
	{"Priority_HeldAreAvailableAndAged", testPriority_HeldAreAvailableAndAged},
	{"Priority_DelayedJoinTheirListWhenDue", testPriority_DelayedJoinTheirListWhenDue},
	{"Priority_FilteredTagsAndIndependentTags", testPriority_FilteredTagsAndIndependentTags},
	{"Priority_PeekListsHeldMessages", testPriority_PeekListsHeldMessages},
	{"S22_SeekBackReplaysToThatTagOnly", testS22_SeekBackReplaysToThatTagOnly},
	{"S22_SeekForwardSkips", testS22_SeekForwardSkips},
	{"S22_InFlightAreDroppedAndTheirHandlesEnd", testS22_InFlightAreDroppedAndTheirHandlesEnd},
	{"S22_CountersExactAfterSeek", testS22_CountersExactAfterSeek},
	{"S22_TopicQueueOrderAfterSeek", testS22_TopicQueueOrderAfterSeek},
	{"S22_PriorityQueueAfterSeek", testS22_PriorityQueueAfterSeek},
	{"S22_SeekToMessageID", testS22_SeekToMessageID},
	{"S22_SeekFindsOnlyRetainedMessages", testS22_SeekFindsOnlyRetainedMessages},
	{"S22_BadInput", testS22_BadInput},
	// The model tests (model.go, topicmodel.go, prioritymodel.go).
	{"Model_RandomOperationsMatchReferenceModel", testModel_RandomOperationsMatchReferenceModel},
	{"Model_CapsDropOldest", testModel_CapsDropOldest},
	{"Model_MovedBackInStreamOrder", testModel_MovedBackInStreamOrder},
	{"Model_TopicQueue", testModel_TopicQueue},
	{"Model_PriorityQueue", testModel_PriorityQueue},
	{"Model_ChecksCatchWrongDeliveries", testModel_ChecksCatchWrongDeliveries},
}

// From semantics_test.go.

func testS1_TagsAreIndependent(t *testing.T, b *B) {
	b.queue("orders")
	b.tag("orders", "billing")
	b.tag("orders", "shipping")
	b.send("orders", "o1", "o2", "o3")

	billing := b.receive("orders", "billing", 10)
	require.Equal(t, []string{"o1", "o2", "o3"}, bodies(billing))
	shipping := b.receive("orders", "shipping", 10)
	require.Equal(t, []string{"o1", "o2", "o3"}, bodies(shipping))
	for i := range billing {
		require.Equal(t, billing[i].ID, shipping[i].ID)
		require.NotEqual(t, billing[i].ReceiptHandle, shipping[i].ReceiptHandle)
		require.Equal(t, "billing", billing[i].Tag)
		require.Equal(t, 1, billing[i].ReceiveCount)
	}
	b.del("orders", billing...)

	// Billing's deletes change nothing for shipping or the default tag.
	require.Equal(t, tags.TagState{ReceivedTotal: 3, DeletedTotal: 3}, b.state("orders", "billing"))
	require.Equal(t, tags.TagState{InFlight: 3, ReceivedTotal: 3}, b.state("orders", "shipping"))
	require.Equal(t, tags.TagState{Available: 3}, b.state("orders", "default"))
	require.Equal(t, []string{"o1", "o2", "o3"}, bodies(b.receive("orders", "", 10)))

	// Shipping's nack redelivers to shipping only.
	errs, err := b.s.ChangeVisibility(b.ctx, "orders", []tags.VisibilityChange{{ReceiptHandle: shipping[0].ReceiptHandle}})
	require.NoError(t, err)
	require.NoError(t, errs[0])
	require.Empty(t, b.receive("orders", "billing", 10))
	again := b.receive("orders", "shipping", 10)
	require.Equal(t, []string{"o1"}, bodies(again))
	require.Equal(t, 2, again[0].ReceiveCount)
}

func testS2_ExclusiveWithinTag_VisibleAgainAfterDeadline(t *testing.T, b *B) {
	b.queue("q", func(c *tags.QueueConfig) { c.VisibilityTimeoutSeconds = i32(30) })
	b.send("q", "m")
	first := b.receive("q", "", 1)
	require.Len(t, first, 1)
	require.Empty(t, b.receive("q", "", 10), "in flight: no second receive on the same tag")
	b.advance("q", 29*time.Second)
	require.Empty(t, b.receive("q", "", 10))
	require.Equal(t, tags.TagState{InFlight: 1, ReceivedTotal: 1}, b.state("q", "default"))
	b.advance("q", time.Second)
	require.Equal(t, tags.TagState{Available: 1, ReceivedTotal: 1}, b.state("q", "default"))
	second := b.receive("q", "", 1)
	require.Len(t, second, 1)
	require.Equal(t, first[0].ID, second[0].ID)
	require.Equal(t, 2, second[0].ReceiveCount)
	require.Equal(t, first[0].FirstReceiveTime, second[0].FirstReceiveTime)
	require.NotEqual(t, first[0].ReceiptHandle, second[0].ReceiptHandle)
}

func testS3_ReceiptHandles(t *testing.T, b *B) {
	b.queue("q")
	b.queue("other")
	b.send("q", "m")
	first := b.receive("q", "", 1)[0]

	t.Run("garbled and forged handles are invalid", func(t *testing.T) {
		for _, h := range []string{"garbage", "", first.ReceiptHandle[:len(first.ReceiptHandle)-2] + "AA", "x" + first.ReceiptHandle} {
			errs, err := b.s.Delete(b.ctx, "q", []string{h})
			require.NoError(t, err)
			requireReason(t, errs[0], tags.ReasonInvalidReceiptHandle)
			errs, err = b.s.ChangeVisibility(b.ctx, "q", []tags.VisibilityChange{{ReceiptHandle: h}})
			require.NoError(t, err)
			requireReason(t, errs[0], tags.ReasonInvalidReceiptHandle)
		}
	})
	t.Run("a handle of another queue is invalid", func(t *testing.T) {
		errs, err := b.s.Delete(b.ctx, "other", []string{first.ReceiptHandle})
		require.NoError(t, err)
		requireReason(t, errs[0], tags.ReasonInvalidReceiptHandle)
	})
	require.Equal(t, tags.TagState{InFlight: 1, ReceivedTotal: 1}, b.state("q", "default"), "invalid handles wrote nothing")

	// Received again: the old handle is stale for visibility but still deletes.
	nack(t, b, "q", first.ReceiptHandle)
	second := b.receive("q", "", 1)[0]
	errs, err := b.s.ChangeVisibility(b.ctx, "q", []tags.VisibilityChange{{ReceiptHandle: first.ReceiptHandle, VisibilitySeconds: 60}})
	require.NoError(t, err)
	requireReason(t, errs[0], tags.ReasonReceiptHandleStale)
	var e *tags.Error
	require.ErrorAs(t, errs[0], &e)
	require.Equal(t, tags.KindFailedPrecondition, e.Kind)

	b.del("q", first)
	require.Equal(t, tags.TagState{ReceivedTotal: 2, DeletedTotal: 1}, b.state("q", "default"))
	b.del("q", second) // deleting twice is not an error
	require.Equal(t, tags.TagState{ReceivedTotal: 2, DeletedTotal: 1}, b.state("q", "default"))
	errs, err = b.s.ChangeVisibility(b.ctx, "q", []tags.VisibilityChange{{ReceiptHandle: second.ReceiptHandle}})
	require.NoError(t, err)
	requireReason(t, errs[0], tags.ReasonReceiptHandleStale)
}

// A tag deleted and created again under the same name is another tag: a
// handle of the old one neither changes nor deletes what the new one holds.
func testS3_HandleOfADeletedTagDoesNotTouchItsNamesake(t *testing.T, b *B) {
	b.queue("q")
	b.tag("q", "t", func(c *tags.TagConfig) { c.Start = tags.Start{Kind: tags.StartOldest} })
	b.send("q", "m")
	old := b.receive("q", "t", 1)[0]
	require.NoError(t, b.s.DeleteTag(b.ctx, "q", "t"))
	b.advance("q", time.Second)
	b.tag("q", "t", func(c *tags.TagConfig) { c.Start = tags.Start{Kind: tags.StartOldest} })
	cur := b.receive("q", "t", 1)[0]
	require.Equal(t, old.ID, cur.ID)
	require.Equal(t, 1, cur.ReceiveCount)

	errs, err := b.s.ChangeVisibility(b.ctx, "q", []tags.VisibilityChange{{ReceiptHandle: old.ReceiptHandle}})
	require.NoError(t, err)
	requireReason(t, errs[0], tags.ReasonReceiptHandleStale)
	b.del("q", old)
	require.Equal(t, tags.TagState{InFlight: 1, ReceivedTotal: 1}, b.state("q", "t"), "the old handle deleted nothing")
	b.del("q", cur)
	require.Equal(t, tags.TagState{ReceivedTotal: 1, DeletedTotal: 1}, b.state("q", "t"))
}

func nack(t *testing.T, b *B, q, h string) {
	t.Helper()
	errs, err := b.s.ChangeVisibility(b.ctx, q, []tags.VisibilityChange{{ReceiptHandle: h}})
	require.NoError(t, err)
	require.NoError(t, errs[0])
}

func testS4_VisibilityDefaultsAndOverrides(t *testing.T, b *B) {
	b.queue("q", func(c *tags.QueueConfig) { c.VisibilityTimeoutSeconds = i32(100) })
	b.tag("q", "fast", func(c *tags.TagConfig) { c.VisibilityTimeoutSeconds = i32(10) })
	b.send("q", "m")
	dq := b.receive("q", "", 1)
	fast := b.receive("q", "fast", 1)
	require.Len(t, dq, 1)
	require.Len(t, fast, 1)
	b.advance("q", 10*time.Second)
	require.Len(t, b.receive("q", "fast", 1), 1, "tag override: 10 s")
	require.Empty(t, b.receive("q", "", 1), "queue default: 100 s")
	b.advance("q", 90*time.Second)
	got := b.receive("q", "", 1, func(o *tags.ReceiveOptions) { o.VisibilitySeconds = i32(5) })
	require.Len(t, got, 1)
	b.advance("q", 5*time.Second)
	got = b.receive("q", "", 1)
	require.Len(t, got, 1, "receive override: 5 s")

	// Extending lasts until the next receive; shortening to 0 is a nack.
	errs, err := b.s.ChangeVisibility(b.ctx, "q", []tags.VisibilityChange{{ReceiptHandle: got[0].ReceiptHandle, VisibilitySeconds: 1000}})
	require.NoError(t, err)
	require.NoError(t, errs[0])
	b.advance("q", 999*time.Second)
	require.Empty(t, b.receive("q", "", 1))
	nack(t, b, "q", got[0].ReceiptHandle)
	again := b.receive("q", "", 1)
	require.Len(t, again, 1)
	require.Equal(t, 4, again[0].ReceiveCount)
}

func testS5_DelayedMessagesAreInvisibleToEveryTag(t *testing.T, b *B) {
	b.queue("q", func(c *tags.QueueConfig) {
		c.DelaySeconds = i32(60)
		c.VisibilityTimeoutSeconds = i32(43200)
	})
	b.tag("q", "other")
	b.sendMsgs("q", tags.OutMessage{Body: []byte("queue-delay")}, tags.OutMessage{Body: []byte("now"), DelaySeconds: i32(0)},
		tags.OutMessage{Body: []byte("late"), DelaySeconds: i32(900)})
	require.Equal(t, tags.TagState{Available: 1, Delayed: 2}, b.state("q", "other"))
	require.Equal(t, []string{"now"}, bodies(b.receive("q", "", 10)))
	// The default tag has read past the delayed messages (parked); the
	// other tag has not: both count them as delayed.
	require.Equal(t, tags.TagState{InFlight: 1, Delayed: 2, ReceivedTotal: 1}, b.state("q", "default"))
	require.Equal(t, tags.TagState{Available: 1, Delayed: 2}, b.state("q", "other"))
	b.advance("q", 59*time.Second)
	require.Empty(t, b.receive("q", "", 10))
	b.advance("q", time.Second)
	require.Equal(t, tags.TagState{Available: 1, InFlight: 1, Delayed: 1, ReceivedTotal: 1}, b.state("q", "default"))
	require.Equal(t, tags.TagState{Available: 2, Delayed: 1}, b.state("q", "other"))
	require.Equal(t, []string{"queue-delay"}, bodies(b.receive("q", "", 10)))
	require.Equal(t, []string{"queue-delay", "now"}, bodies(b.receive("q", "other", 10)))
	b.advance("q", 840*time.Second)
	got := b.receive("q", "other", 10)
	require.Equal(t, []string{"late"}, bodies(got))
	require.Equal(t, 1, got[0].ReceiveCount)
	require.Equal(t, tags.TagState{InFlight: 3, ReceivedTotal: 3}, b.state("q", "other"))
}

func testTagStartPoints(t *testing.T, b *B) {
	b.queue("q")
	ids := b.send("q", "m1", "m2")
	b.advance("q", time.Second)
	ids = append(ids, b.send("q", "m3")...)
	b.tag("q", "now")
	b.tag("q", "oldest", func(c *tags.TagConfig) { c.Start = tags.Start{Kind: tags.StartAt, At: time.Unix(0, 0)} })
	b.tag("q", "at", func(c *tags.TagConfig) { c.Start = tags.Start{Kind: tags.StartAt, At: sendTime(b, "q", ids[2])} })
	b.send("q", "m4")
	require.Equal(t, tags.TagState{Available: 1}, b.state("q", "now"))
	require.Equal(t, tags.TagState{Available: 4}, b.state("q", "oldest"))
	require.Equal(t, tags.TagState{Available: 2}, b.state("q", "at"))
	require.Equal(t, []string{"m4"}, bodies(b.receive("q", "now", 10)))
	require.Equal(t, []string{"m1", "m2", "m3", "m4"}, bodies(b.receive("q", "oldest", 10)))
	require.Equal(t, []string{"m3", "m4"}, bodies(b.receive("q", "at", 10)))
	tg, err := b.s.GetTag(b.ctx, "q", "oldest")
	require.NoError(t, err)
	require.Equal(t, tags.StartOldest, tg.Start.Kind)
}

func testTagFilters(t *testing.T, b *B) {
	b.queue("q")
	red := "red"
	b.sendMsgs("q", tags.OutMessage{Body: []byte("before"), Attributes: map[string]tags.Attribute{"color": {String: "red"}}})
	b.tag("q", "red", func(c *tags.TagConfig) {
		c.Filter = &tags.Filter{Conditions: []tags.Condition{{Name: "color", Value: &red}}}
	})
	b.tag("q", "red-oldest", func(c *tags.TagConfig) {
		c.Start = tags.Start{Kind: tags.StartOldest}
		c.Filter = &tags.Filter{Conditions: []tags.Condition{{Name: "color", Value: &red}}}
	})
	b.tag("q", "sized-or-red", func(c *tags.TagConfig) {
		c.Filter = &tags.Filter{Or: true, Conditions: []tags.Condition{{Name: "size"}, {Name: "color", Value: &red}}}
	})
	b.tag("q", "sized-and-red", func(c *tags.TagConfig) {
		c.Filter = &tags.Filter{Conditions: []tags.Condition{{Name: "size"}, {Name: "color", Value: &red}}}
	})
	attr := func(kv ...string) map[string]tags.Attribute {
		m := map[string]tags.Attribute{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = tags.Attribute{String: kv[i+1]}
		}
		return m
	}
	b.sendMsgs("q",
		tags.OutMessage{Body: []byte("r"), Attributes: attr("color", "red")},
		tags.OutMessage{Body: []byte("g"), Attributes: attr("color", "green")},
		tags.OutMessage{Body: []byte("rs"), Attributes: attr("color", "red", "size", "L")},
		tags.OutMessage{Body: []byte("s"), Attributes: map[string]tags.Attribute{"size": {Binary: true, Bytes: []byte{0, 1}}}},
		tags.OutMessage{Body: []byte("none")},
	)
	require.Equal(t, tags.TagState{Available: 2}, b.state("q", "red"))
	require.Equal(t, tags.TagState{Available: 3}, b.state("q", "red-oldest"))
	require.Equal(t, tags.TagState{Available: 3}, b.state("q", "sized-or-red"))
	require.Equal(t, tags.TagState{Available: 1}, b.state("q", "sized-and-red"))
	require.Equal(t, []string{"r", "rs"}, bodies(b.receive("q", "red", 10)))
	require.Equal(t, []string{"before", "r", "rs"}, bodies(b.receive("q", "red-oldest", 10)))
	got := b.receive("q", "sized-or-red", 10)
	require.Equal(t, []string{"r", "rs", "s"}, bodies(got))
	require.Equal(t, []byte{0, 1}, got[2].Attributes["size"].Bytes)
	require.Equal(t, []string{"rs"}, bodies(b.receive("q", "sized-and-red", 10)))
	for _, tag := range []string{"red", "sized-or-red", "sized-and-red"} {
		st := b.state("q", tag)
		require.Zero(t, st.Available, tag)
	}
}

func testS12_CountersAcrossPurgeAndTagDelete(t *testing.T, b *B) {
	b.queue("q")
	b.tag("q", "t")
	b.send("q", "m1", "m2", "m3")
	got := b.receive("q", "", 2)
	n, err := b.s.PurgeQueue(b.ctx, "q")
	require.NoError(t, err)
	require.EqualValues(t, 3, n)
	require.Equal(t, tags.TagState{ReceivedTotal: 2}, b.state("q", "default"))
	require.Equal(t, tags.TagState{}, b.state("q", "t"))
	errs, err := b.s.Delete(b.ctx, "q", []string{got[0].ReceiptHandle})
	require.NoError(t, err)
	require.NoError(t, errs[0], "a purged message's delete is a no-op")
	b.send("q", "m4")
	require.Equal(t, []string{"m4"}, bodies(b.receive("q", "t", 10)))
	require.NoError(t, b.s.DeleteTag(b.ctx, "q", "t"))
	_, err = b.s.GetTag(b.ctx, "q", "t")
	requireReason(t, err, tags.ReasonTagNotFound)
	b.tag("q", "t")
	require.Equal(t, tags.TagState{}, b.state("q", "t"), "a recreated tag starts afresh")
	require.Equal(t, tags.TagState{Available: 1, ReceivedTotal: 2}, b.state("q", "default"))
}

func testPeek(t *testing.T, b *B) {
	b.queue("q")
	ids := b.send("q", "m1", "m2", "m3")
	got, _, err := b.s.PeekPage(b.ctx, "q", "", 2, "")
	require.NoError(t, err)
	require.Equal(t, []string{"m1", "m2"}, bodies(got))
	require.Equal(t, tags.TagState{Available: 3}, b.state("q", "default"), "peek changes nothing")
	r := b.receive("q", "", 1)
	nack(t, b, "q", r[0].ReceiptHandle)
	got, _, err = b.s.PeekPage(b.ctx, "q", "", 10, "")
	require.NoError(t, err)
	require.Equal(t, []string{"m1", "m2", "m3"}, bodies(got))
	require.Equal(t, 1, got[0].ReceiveCount)
	byID, err := b.s.Peek(b.ctx, "q", []string{ids[2], "1-1"})
	require.NoError(t, err)
	require.Equal(t, []string{"m3"}, bodies(byID))
	require.Equal(t, ids[2], byID[0].ID)
}

// The default tag's name is cached per process; a queue re-created with
// another default tag must not be read through the old name.
func testReceiveOnTheDefaultTagFollowsARecreatedQueue(t *testing.T, b *B) {
	b.queue("q")
	b.send("q", "one")
	require.Equal(t, []string{"one"}, bodies(b.receive("q", "", 1)))
	require.NoError(t, b.s.DeleteQueue(b.ctx, "q", false))
	b.queue("q", func(c *tags.QueueConfig) { c.DefaultTagName = "main" })
	b.tag("q", "default") // a tag with the old name, which must not be used
	b.send("q", "two")
	got := b.receive("q", "", 1)
	require.Equal(t, []string{"two"}, bodies(got))
	require.Equal(t, "main", got[0].Tag)
	require.Equal(t, tags.TagState{Available: 1}, b.state("q", "default"))
}

// From deadletter_test.go.

func testS7_ReceiveNeverHandsOutTheNPlusFirstTime(t *testing.T, b *B) {
	ordersWithDLQ(b)
	b.send("orders", "m")
	for range 2 {
		got := b.receive("orders", "billing", 1)
		require.Len(t, got, 1)
		nack(t, b, "orders", got[0].ReceiptHandle)
	}
	// A receive gets there before any sweeper: it dead-letters instead.
	require.Empty(t, b.receive("orders", "billing", 10))
	require.Equal(t, tags.TagState{ReceivedTotal: 2, DeadTotal: 1}, b.state("orders", "billing"))
	require.Equal(t, []string{"m"}, bodies(b.receive("orders-dlq", "", 10)))
	// Other tags keep receiving it, with their own counts.
	got := b.receive("orders", "shipping", 1)
	require.Equal(t, 1, got[0].ReceiveCount)
}

func testS8_DeadMessageIsAnAckThatDeadLettersAtOnce(t *testing.T, b *B) {
	ordersWithDLQ(b)
	b.send("orders", "poison")
	got := b.receive("orders", "shipping", 1)
	errs, err := b.s.DeadLetter(b.ctx, "orders", []tags.DeadRequest{{ReceiptHandle: got[0].ReceiptHandle,
		Reason: "BAD_ADDRESS", Description: "no such street"}})
	require.NoError(t, err)
	require.NoError(t, errs[0])
	require.Equal(t, tags.TagState{ReceivedTotal: 1, DeadTotal: 1}, b.state("orders", "shipping"))
	require.Equal(t, tags.TagState{Available: 1}, b.state("orders", "billing"))
	dead := b.receive("orders-dlq", "", 10) // in the DLQ at once: no sweep, no relay call
	require.Len(t, dead, 1)
	require.Equal(t, "BAD_ADDRESS", dead[0].DeadLetter.Reason)
	require.Equal(t, "no such street", dead[0].DeadLetter.Description)
	require.Equal(t, "shipping", dead[0].DeadLetter.SourceTag)

	// Stale handles are refused; the default reason is CONSUMER_DEAD_LETTERED.
	errs, err = b.s.DeadLetter(b.ctx, "orders", []tags.DeadRequest{{ReceiptHandle: got[0].ReceiptHandle}})
	require.NoError(t, err)
	requireReason(t, errs[0], tags.ReasonReceiptHandleStale)
	first := b.receive("orders", "billing", 1)
	nack(t, b, "orders", first[0].ReceiptHandle)
	again := b.receive("orders", "billing", 1)
	errs, err = b.s.DeadLetter(b.ctx, "orders", []tags.DeadRequest{{ReceiptHandle: first[0].ReceiptHandle}})
	require.NoError(t, err)
	requireReason(t, errs[0], tags.ReasonReceiptHandleStale)
	errs, err = b.s.DeadLetter(b.ctx, "orders", []tags.DeadRequest{{ReceiptHandle: again[0].ReceiptHandle}})
	require.NoError(t, err)
	require.NoError(t, errs[0])
	dead = b.receive("orders-dlq", "", 10)
	require.Len(t, dead, 1)
	require.Equal(t, tags.ReasonConsumerDeadLettered, dead[0].DeadLetter.Reason)
	require.Equal(t, 2, dead[0].DeadLetter.OriginalReceiveCount)

	// A queue without a policy (a DLQ, too) is not a source queue.
	b.send("orders-dlq", "x")
	d := b.receive("orders-dlq", "", 1)
	_, err = b.s.DeadLetter(b.ctx, "orders-dlq", []tags.DeadRequest{{ReceiptHandle: d[0].ReceiptHandle}})
	requireReason(t, err, tags.ReasonNotASourceQueue)
	e, _ := tags.AsError(err)
	require.Equal(t, tags.KindFailedPrecondition, e.Kind)
}

func testS9_DLQFilterOnSourceQueueReadsOneSource(t *testing.T, b *B) {
	ordersWithDLQ(b)
	b.queue("refunds", func(c *tags.QueueConfig) {
		c.RedrivePolicy = &tags.RedrivePolicy{DeadLetterQueue: "orders-dlq", MaxReceiveCount: 1}
	})
	orders := "orders"
	b.tag("orders-dlq", "from-orders", func(c *tags.TagConfig) {
		c.Filter = &tags.Filter{Conditions: []tags.Condition{{Name: tags.SourceQueueAttribute, Value: &orders}}}
	})
	b.send("orders", "o")
	b.send("refunds", "r")
	for _, q := range []string{"orders", "refunds"} {
		got := b.receive(q, "", 1)
		_, err := b.s.DeadLetter(b.ctx, q, []tags.DeadRequest{{ReceiptHandle: got[0].ReceiptHandle}})
		require.NoError(t, err)
	}
	require.Equal(t, tags.TagState{Available: 1}, b.state("orders-dlq", "from-orders"))
	require.Equal(t, []string{"o"}, bodies(b.receive("orders-dlq", "from-orders", 10)))
	require.Equal(t, []string{"o", "r"}, bodies(b.receive("orders-dlq", "", 10)))
}

// Found by the model test: a tag deleted and created again from the oldest
// message dead-letters the same message at the same receive count. That is
// a second dead letter, not a repeat of the first.
func testS9_SameMessageDeadTwiceByARecreatedTagIsTwoDeadLetters(t *testing.T, b *B) {
	ordersWithDLQ(b)
	b.send("orders", "m")
	for range 2 {
		got := b.receive("orders", "billing", 1)
		require.Len(t, got, 1)
		require.Equal(t, 1, got[0].ReceiveCount)
		errs, err := b.s.DeadLetter(b.ctx, "orders", []tags.DeadRequest{{ReceiptHandle: got[0].ReceiptHandle}})
		require.NoError(t, err)
		require.NoError(t, errs[0])
		require.NoError(t, b.s.DeleteTag(b.ctx, "orders", "billing"))
		b.tag("orders", "billing", func(c *tags.TagConfig) { c.Start = tags.Start{Kind: tags.StartOldest} })
	}
	require.Equal(t, tags.TagState{Available: 2}, b.state("orders-dlq", "default"))
}

// From topic_test.go.

func testS13_TopicOnSend(t *testing.T, b *B) {
	b.queue("tq", topicQueue)
	b.queue("plain")
	send := func(q string, m tags.OutMessage) error {
		res, err := b.s.Send(b.ctx, q, []tags.OutMessage{m})
		require.NoError(t, err)
		return res[0].Err
	}
	for _, c := range []struct {
		q     string
		m     tags.OutMessage
		field string
	}{
		{"tq", tags.OutMessage{Body: []byte("x")}, "topic"},
		{"plain", tags.OutMessage{Body: []byte("x"), Topic: "a"}, "topic"},
		{"tq", tags.OutMessage{Body: []byte("x"), Topic: "a b"}, "topic"},
		{"tq", tags.OutMessage{Body: []byte("x"), Topic: "é"}, "topic"},
		{"tq", tags.OutMessage{Body: []byte("x"), Topic: strings.Repeat("a", tags.MaxTopicLen+1)}, "topic"},
		{"tq", tags.OutMessage{Body: []byte("x"), Topic: "a", DelaySeconds: i32(5)}, "delay_seconds"},
	} {
		err := send(c.q, c.m)
		requireReason(t, err, tags.ReasonInvalidArgumentRange)
		var e *tags.Error
		require.ErrorAs(t, err, &e)
		require.Equal(t, c.field, e.Field, "%+v", c.m)
	}
	require.NoError(t, send("tq", tags.OutMessage{Body: []byte("x"), Topic: strings.Repeat("a", tags.MaxTopicLen)}))
	require.NoError(t, send("tq", tags.OutMessage{Body: []byte("y"), Topic: "Az09_.:-", DelaySeconds: i32(0)}))
	require.NoError(t, send("plain", tags.OutMessage{Body: []byte("z")}))

	got := b.receive("tq", "", 10)
	require.Len(t, got, 2)
	require.Equal(t, strings.Repeat("a", tags.MaxTopicLen), got[0].Topic)
	require.Equal(t, "Az09_.:-", got[1].Topic)
	require.Equal(t, "", b.receive("plain", "", 1)[0].Topic)
	peeked, err := b.s.Peek(b.ctx, "tq", []string{got[1].ID})
	require.NoError(t, err)
	require.Equal(t, "Az09_.:-", peeked[0].Topic)
}

func testS13_OrderAndOneInFlightPerTopicPerTag(t *testing.T, b *B) {
	b.queue("q", topicQueue)
	b.sendTopics("q", "a", "a1", "b", "b1", "a", "a2", "c", "c1", "b", "b2", "a", "a3")

	first := b.receive("q", "", 10)
	b.inOrder("q", []string{"a1", "b1", "c1"}, bodies(first), "one per topic")
	require.Empty(t, b.receive("q", "", 10), "every topic blocked")
	// Held messages are available, not in flight (S12).
	require.Equal(t, tags.TagState{Available: 3, InFlight: 3, ReceivedTotal: 3}, b.state("q", "default"))

	b.del("q", withBody(t, first, "a1")) // a2 is next for a
	require.Equal(t, []string{"a2"}, bodies(b.receive("q", "", 10)))
	b.sendTopics("q", "d", "d1", "b", "b3")
	b.del("q", withBody(t, first, "b1"))
	// The ready topic's held message before new ones; b3 waits behind b2.
	b.inOrder("q", []string{"b2", "d1"}, bodies(b.receive("q", "", 10)))
	require.Equal(t, tags.TagState{Available: 2, InFlight: 4, ReceivedTotal: 6, DeletedTotal: 2}, b.state("q", "default"))
}

func testS13_TagsAreIndependent(t *testing.T, b *B) {
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
}

func testS13_NackAndTimeoutRedeliverTheSameMessage(t *testing.T, b *B) {
	b.queue("q", topicQueue, func(c *tags.QueueConfig) { c.VisibilityTimeoutSeconds = i32(30) })
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
}

// Concurrent receivers on one tag: each topic is delivered in send order
// and never two of a topic at once.
func testS13_OrderPerTopicUnderConcurrentReceivers(t *testing.T, b *B) {
	b.queue("q", topicQueue)
	const topics, per = 8, 12
	var msgs []tags.OutMessage
	for i := range per {
		for tp := range topics {
			msgs = append(msgs, tags.OutMessage{Topic: fmt.Sprintf("t%d", tp), Body: []byte(fmt.Sprintf("%d", i))})
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
				ms, err := b.s.Receive(b.ctx, "q", "", tags.ReceiveOptions{MaxMessages: 3, WaitSeconds: i32(0)})
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
	require.Equal(t, tags.TagState{ReceivedTotal: topics * per, DeletedTotal: topics * per}, b.state("q", "default"))
}

func testS13_DeadLetterQueueOfATopicQueueIsATopicQueue(t *testing.T, b *B) {
	b.queue("plain-dlq", func(c *tags.QueueConfig) { c.DeadLetterQueue = true })
	b.queue("topic-dlq", topicQueue, func(c *tags.QueueConfig) { c.DeadLetterQueue = true })
	_, err := b.s.CreateQueue(b.ctx, tags.QueueConfig{Name: "tq", TopicQueue: true,
		RedrivePolicy: &tags.RedrivePolicy{DeadLetterQueue: "plain-dlq", MaxReceiveCount: 3}})
	requireReason(t, err, tags.ReasonTopicQueueMismatch)
	var e *tags.Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, "redrive_policy.dead_letter_queue", e.Field)
	_, err = b.s.CreateQueue(b.ctx, tags.QueueConfig{Name: "pq",
		RedrivePolicy: &tags.RedrivePolicy{DeadLetterQueue: "topic-dlq", MaxReceiveCount: 3}})
	requireReason(t, err, tags.ReasonTopicQueueMismatch)

	b.queue("tq", topicQueue)
	_, err = b.s.UpdateQueue(b.ctx, "tq", tags.QueueUpdate{SetRedrivePolicy: true,
		RedrivePolicy: &tags.RedrivePolicy{DeadLetterQueue: "plain-dlq", MaxReceiveCount: 3}})
	requireReason(t, err, tags.ReasonTopicQueueMismatch)
	_, err = b.s.UpdateQueue(b.ctx, "tq", tags.QueueUpdate{SetRedrivePolicy: true,
		RedrivePolicy: &tags.RedrivePolicy{DeadLetterQueue: "topic-dlq", MaxReceiveCount: 3}})
	require.NoError(t, err)
}

// From peekpage_test.go.

// peekAll pages through what tag would receive, size at a time, and
// returns the ids in page order and the number of pages.
func peekAll(t *testing.T, b *B, q, tag string, size int) ([]string, int) {
	t.Helper()
	var ids []string
	from, pages := "", 0
	for {
		msgs, next, err := b.s.PeekPage(b.ctx, q, tag, size, from)
		require.NoError(t, err)
		pages++
		require.LessOrEqual(t, len(msgs), size)
		for _, m := range msgs {
			ids = append(ids, m.ID)
		}
		if next == "" {
			return ids, pages
		}
		require.Less(t, pages, 1000, "paging does not end")
		from = next
	}
}

// PeekMessage pages: every message available to the tag once, in the
// order a receive would take them (due redeliveries first), nothing
// received.
func testPeekPage_ListsEveryAvailableMessageOnce(t *testing.T, b *B) {
	b.queue("q")
	var bodies []string
	for i := range 250 {
		bodies = append(bodies, fmt.Sprint(i))
	}
	sent := b.send("q", bodies[:100]...)
	sent = append(sent, b.send("q", bodies[100:200]...)...)
	sent = append(sent, b.send("q", bodies[200:]...)...)

	// A partitioned queue is listed one partition after the other: a page
	// that ends a partition may say more follows when the partitions after
	// it are empty (one empty page more).
	extra := 0
	if b.partitions("q") > 1 {
		extra = 1
	}
	ids, pages := peekAll(t, b, "q", "", 100)
	b.inOrder("q", sent, ids)
	require.Contains(t, []int{3, 3 + extra}, pages)
	ids, pages = peekAll(t, b, "q", "", 50) // exactly full pages: the last says no more
	b.inOrder("q", sent, ids)
	require.Contains(t, []int{5, 5 + extra}, pages)
	require.EqualValues(t, 0, b.state("q", "default").ReceivedTotal, "peeking receives nothing")

	// Five received, their visibility passed: due redeliveries come
	// first, across pages of 2, then the never-received rest.
	got := b.receive("q", "", 5, func(o *tags.ReceiveOptions) { o.VisibilitySeconds = i32(1) })
	require.Len(t, got, 5)
	b.advance("q", 2*time.Second)
	ids, _ = peekAll(t, b, "q", "", 2)
	require.Len(t, ids, 250)
	require.ElementsMatch(t, sent, ids)
	if b.partitions("q") > 1 {
		return // a partitioned queue lists one partition after the other, each in this order
	}
	require.ElementsMatch(t, sent[:5], ids[:5], "the redeliveries first")
	require.Equal(t, sent[5:], ids[5:])
}

// From priority_test.go.

func testPriority_OrderAcrossPrioritiesFIFOWithin(t *testing.T, b *B) {
	b.queue("q", priorityQueue)
	b.tag("q", "single")
	b.sendPrio("q", 5, "a1", 1, "b1", 0, "c1", 16, "d1", 1, "b2", 5, "a2", 8, "c2")

	got := b.receive("q", "", 10)
	require.Equal(t, []string{"b1", "b2", "a1", "a2", "c1", "c2", "d1"}, bodies(got))
	require.Equal(t, []int32{1, 1, 5, 5, 8, 8, 16}, prios(got), "0 is the default, 8")

	// One at a time, the same order; held messages are available.
	var one []string
	for i := range 7 {
		m := b.receive("q", "single", 1)
		require.Len(t, m, 1)
		one = append(one, string(m[0].Body))
		if i == 0 {
			require.Equal(t, tags.TagState{Available: 6, InFlight: 1, ReceivedTotal: 1}, b.state("q", "single"))
		}
	}
	require.Equal(t, bodies(got), one)
	require.Empty(t, b.receive("q", "single", 1))

	// A new message of higher priority passes the held ones.
	b.sendPrio("q", 9, "x1", 9, "x2", 9, "x3")
	require.Equal(t, []string{"x1"}, bodies(b.receive("q", "single", 1)))
	b.sendPrio("q", 2, "urgent")
	require.Equal(t, []string{"urgent", "x2"}, bodies(b.receive("q", "single", 2)))

	// Peek shows the priority too.
	peeked, err := b.s.Peek(b.ctx, "q", []string{got[0].ID, got[4].ID})
	require.NoError(t, err)
	require.Equal(t, []int32{1, 8}, prios(peeked))
}

// The starvation rule at exact positions: every 10th message handed out
// from the lists is the oldest held one, whatever its priority; the same
// in one receive of 30 as in 30 receives of one.
func testPriority_EveryTenthIsTheOldestHeld(t *testing.T, b *B) {
	b.queue("q", priorityQueue)
	b.tag("q", "ones")
	var pairs []any
	for i := range 10 {
		pairs = append(pairs, 16, fmt.Sprintf("o%d", i))
	}
	for i := range 20 {
		pairs = append(pairs, 1, fmt.Sprintf("h%d", i))
	}
	b.sendPrio("q", pairs...)
	var want []string
	for i := range 9 {
		want = append(want, fmt.Sprintf("h%d", i))
	}
	want = append(want, "o0")
	for i := 9; i < 18; i++ {
		want = append(want, fmt.Sprintf("h%d", i))
	}
	want = append(want, "o1", "h18", "h19")
	for i := 2; i < 10; i++ {
		want = append(want, fmt.Sprintf("o%d", i))
	}
	require.Equal(t, want, bodies(b.receive("q", "", 30)))
	var one []string
	for range 30 {
		one = append(one, bodies(b.receive("q", "ones", 1))...)
	}
	require.Equal(t, want, one)

	// Redeliveries do not count: the counter goes on from 30.
	b.sendPrio("q", 16, "old", 1, "p1", 1, "p2", 1, "p3", 1, "p4", 1, "p5", 1, "p6", 1, "p7", 1, "p8", 1, "p9", 1, "p10")
	got := b.receive("q", "", 10)
	require.Equal(t, []string{"p1", "p2", "p3", "p4", "p5", "p6", "p7", "p8", "p9", "old"}, bodies(got))
}

// Redeliveries (nacked, or their visibility passed) come before new
// messages whatever their priority.
func testPriority_RedeliveriesFirst(t *testing.T, b *B) {
	b.queue("q", priorityQueue, func(c *tags.QueueConfig) { c.VisibilityTimeoutSeconds = i32(30) })
	b.sendPrio("q", 16, "low")
	low := b.receive("q", "", 1)
	require.Equal(t, []string{"low"}, bodies(low))
	b.sendPrio("q", 1, "high")
	nack(t, b, "q", low[0].ReceiptHandle)
	got := b.receive("q", "", 10)
	require.Equal(t, []string{"low", "high"}, bodies(got))
	require.Equal(t, []int{2, 1}, []int{got[0].ReceiveCount, got[1].ReceiveCount})
	require.Equal(t, []int32{16, 1}, prios(got))

	b.sendPrio("q", 1, "high2")
	b.advance("q", 30*time.Second)
	got = b.receive("q", "", 10)
	// Redeliveries among themselves by due time (here the same).
	require.ElementsMatch(t, []string{"low", "high"}, bodies(got[:2]), "visibility passed: redeliveries first")
	require.Equal(t, "high2", string(got[2].Body))
	b.del("q", got...)
	require.Equal(t, tags.TagState{ReceivedTotal: 6, DeletedTotal: 3}, b.state("q", "default"))
}

// Held messages are available, and the oldest of them is the tag's
// oldest available.
func testPriority_HeldAreAvailableAndAged(t *testing.T, b *B) {
	b.queue("q", priorityQueue)
	b.advance("q", 0)
	b.sendPrio("q", 9, "old9", 3, "old3")
	b.advance("q", 5*time.Second)
	b.sendPrio("q", 1, "new1")
	require.Equal(t, []string{"new1"}, bodies(b.receive("q", "", 1)))
	b.advance("q", 5*time.Second)
	tg, err := b.s.GetTag(b.ctx, "q", "default")
	require.NoError(t, err)
	require.Equal(t, int64(2), tg.State.Available)
	require.Equal(t, 10*time.Second, tg.State.OldestAvailableAge)
}

// A delayed message parks until due, then joins its priority's list.
func testPriority_DelayedJoinTheirListWhenDue(t *testing.T, b *B) {
	b.queue("q", priorityQueue)
	b.advance("q", 0)
	b.sendMsgs("q", tags.OutMessage{Body: []byte("later1"), Priority: 1, DelaySeconds: i32(10)},
		tags.OutMessage{Body: []byte("now9"), Priority: 9}, tags.OutMessage{Body: []byte("now10"), Priority: 10})
	require.Equal(t, []string{"now9"}, bodies(b.receive("q", "", 1)))
	require.Equal(t, tags.TagState{Available: 1, InFlight: 1, Delayed: 1, ReceivedTotal: 1}, b.state("q", "default"))
	b.advance("q", 10*time.Second)
	b.sendPrio("q", 2, "now2")
	got := b.receive("q", "", 10)
	require.Equal(t, []string{"later1", "now2", "now10"}, bodies(got))
	require.Equal(t, []int32{1, 2, 10}, prios(got))
	require.Equal(t, tags.TagState{InFlight: 4, ReceivedTotal: 4}, b.state("q", "default"))
}

func testPriority_FilteredTagsAndIndependentTags(t *testing.T, b *B) {
	b.queue("q", priorityQueue)
	red := "red"
	b.tag("q", "reds", func(c *tags.TagConfig) {
		c.Filter = &tags.Filter{Conditions: []tags.Condition{{Name: "color", Value: &red}}}
	})
	b.tag("q", "all")
	colored := func(p int32, body, color string) tags.OutMessage {
		return tags.OutMessage{Body: []byte(body), Priority: p, Attributes: map[string]tags.Attribute{"color": {String: color}}}
	}
	b.sendMsgs("q", colored(9, "r9", "red"), colored(1, "b1", "blue"), colored(3, "r3", "red"), colored(2, "b2", "blue"))
	require.Equal(t, []string{"r3"}, bodies(b.receive("q", "reds", 1)))
	require.Equal(t, []string{"b1", "b2"}, bodies(b.receive("q", "all", 2)))
	require.Equal(t, tags.TagState{Available: 1, InFlight: 1, ReceivedTotal: 1}, b.state("q", "reds"))
	require.Equal(t, tags.TagState{Available: 2, InFlight: 2, ReceivedTotal: 2}, b.state("q", "all"))
	b.sendMsgs("q", colored(1, "r1", "red"))
	require.Equal(t, []string{"r1", "r9"}, bodies(b.receive("q", "reds", 10)))
	require.Equal(t, []string{"r1", "r3", "r9"}, bodies(b.receive("q", "all", 10)))
	require.Equal(t, []string{"b1", "r1", "b2", "r3", "r9"}, bodies(b.receive("q", "", 10)), "the default tag's own order")
}

// Peek lists a priority queue's held messages (by priority, FIFO within
// one) after redeliveries and before what the tag has yet to read, in
// pages.
func testPriority_PeekListsHeldMessages(t *testing.T, b *B) {
	b.queue("q", priorityQueue)
	b.sendPrio("q", 9, "a9", 2, "b2", 0, "c8", 2, "d2", 1, "e1")
	first := b.receive("q", "", 1)
	require.Equal(t, []string{"e1"}, bodies(first))
	nack(t, b, "q", first[0].ReceiptHandle)
	b.sendPrio("q", 1, "unread")
	var pages [][]string
	from := ""
	for range 10 {
		msgs, next, err := b.s.PeekPage(b.ctx, "q", "", 2, from)
		require.NoError(t, err)
		pages = append(pages, bodies(msgs))
		if next == "" {
			break
		}
		from = next
	}
	require.Equal(t, [][]string{{"e1", "b2"}, {"d2", "c8"}, {"a9", "unread"}}, pages)
	all, _, err := b.s.PeekPage(b.ctx, "q", "", 10, "")
	require.NoError(t, err)
	require.Equal(t, []int32{1, 2, 2, 8, 9, 1}, prios(all))
	require.Equal(t, tags.TagState{Available: 6, ReceivedTotal: 1}, b.state("q", "default"), "peek changes nothing")
}

// withBody is the message of msgs with body body.
func withBody(t *testing.T, msgs []tags.Message, body string) tags.Message {
	t.Helper()
	for _, m := range msgs {
		if string(m.Body) == body {
			return m
		}
	}
	t.Fatalf("no message %q among %v", body, bodies(msgs))
	return tags.Message{}
}
