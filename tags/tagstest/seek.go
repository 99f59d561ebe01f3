package tagstest

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tagq/tagq/tags"
	"github.com/tagq/tagq/tags/streamid"
)

// S22 Seek. SeekTag moves one tag's cursor to a time or a message id
// (tags.SeekTarget):
//   - a time T: before the first retained message sent at or after T; a
//     time before the oldest retained message (the epoch) replays every
//     retained one; a time at or after the seek's own (the storage's
//     clock) skips every retained message, as a tag created then: what is
//     sent after the seek is available, even if sent before T;
//   - a message id M: just before M (M and every later message); M must
//     be retained, else NOT_FOUND MESSAGE_NOT_FOUND (field message_id);
//     a malformed id, neither or both targets: INVALID_ARGUMENT naming the
//     field.
//
// Every retained message after the cursor that the tag admits (filter, or
// a dead letter moved back to it) is available again to that tag alone
// (S1: no other tag moves), delayed ones counted delayed until due, in
// send order (topic queues: one in flight per topic from the cursor;
// priority queues: by priority again). Retention decides what is
// retained (S11): without retain_acked_messages, messages every tag had
// finished may be gone. Everything the tag held ends: in-flight, nacked
// and delayed-read messages are dropped from it (available again when
// after the cursor, skipped when before), receive counts start again (a
// replay is a new life for redrive, S7). Receipt handles issued before the
// seek end: a delete with one is no error and deletes nothing, a
// visibility change or DeadMessage gets RECEIPT_HANDLE_STALE, whether or
// not the message was received again since. The totals (received,
// deleted, dead, expired), the tag's config, filter, visibility override
// and quota stay; available, in flight and delayed are exact at once (S12).
// Dead letters already sent (or on their way) stay in the DLQ; moves back
// go on, and what they bring lands at the end of the stream.

// seek moves tag's cursor and returns its state after (the age of its
// oldest message left out, as state does).
func (b *B) seek(q, tag string, to tags.SeekTarget) tags.TagState {
	b.t.Helper()
	tg, err := b.s.SeekTag(b.ctx, q, tag, to)
	require.NoError(b.t, err)
	require.Equal(b.t, tag, tg.Name)
	st := tg.State
	st.OldestAvailableAge = 0
	require.Equal(b.t, b.state(q, tag), st, "the state SeekTag answers is the tag's")
	return st
}

// sendSpaced sends each body a second after the last (the queue's clock
// stands still otherwise), so that each has a send time of its own.
func (b *B) sendSpaced(q string, bodies ...string) []string {
	b.t.Helper()
	ids := make([]string, 0, len(bodies))
	for _, body := range bodies {
		b.advance(q, time.Second)
		ids = append(ids, b.send(q, body)...)
	}
	return ids
}

func at(ms int64) tags.SeekTarget { return tags.SeekTarget{Time: time.UnixMilli(ms)} }

func toID(id string) tags.SeekTarget { return tags.SeekTarget{MessageID: id} }

// A seek back makes what follows the cursor available again to that tag
// only, finished or not; another tag's view, and the tag's totals, stay.
func testS22_SeekBackReplaysToThatTagOnly(t *testing.T, b *B) {
	b.queue("q", func(c *tags.QueueConfig) { c.RetainAckedMessages = true })
	b.tag("q", "other")
	b.advance("q", 0)
	ids := b.sendSpaced("q", "m1", "m2", "m3", "m4")
	got := b.receive("q", "", 10)
	b.inOrder("q", []string{"m1", "m2", "m3", "m4"}, bodies(got))
	b.del("q", got...)
	other := b.receive("q", "other", 1)
	b.inOrder("q", []string{"m1"}, bodies(other))
	otherBefore := b.state("q", "other")

	st := b.seek("q", "default", at(sendTime(b, "q", ids[1]).UnixMilli()))
	require.Equal(t, tags.TagState{Available: 3, ReceivedTotal: 4, DeletedTotal: 4}, st, "m2..m4 again; totals stay")
	require.Equal(t, otherBefore, b.state("q", "other"), "S1: another tag's view does not move")
	again := b.receive("q", "", 10)
	b.inOrder("q", []string{"m2", "m3", "m4"}, bodies(again), "in send order from the cursor")
	for i, m := range again {
		require.Equal(t, ids[i+1], m.ID)
		require.Equal(t, 1, m.ReceiveCount, "a replay is a new life: receive count from 1")
		require.Equal(t, "default", m.Tag)
	}
	require.Equal(t, tags.TagState{InFlight: 3, ReceivedTotal: 7, DeletedTotal: 4}, b.state("q", "default"))
	b.inOrder("q", []string{"m2", "m3", "m4"}, bodies(b.receive("q", "other", 10)), "other reads on where it was")
	require.Equal(t, tags.TagState{InFlight: 4, ReceivedTotal: 4}, b.state("q", "other"))

	// The epoch: every retained message.
	st = b.seek("q", "default", at(0))
	require.Equal(t, tags.TagState{Available: 4, ReceivedTotal: 7, DeletedTotal: 4}, st)
	b.inOrder("q", []string{"m1", "m2", "m3", "m4"}, bodies(b.receive("q", "", 10)))
}

// A seek forward skips what lies before the cursor; a time at or after
// the seek's own time skips everything retained, as a tag created then.
func testS22_SeekForwardSkips(t *testing.T, b *B) {
	b.queue("q")
	b.advance("q", 0)
	ids := b.sendSpaced("q", "m1", "m2", "m3", "m4")
	st := b.seek("q", "default", at(sendTime(b, "q", ids[2]).UnixMilli()))
	require.Equal(t, tags.TagState{Available: 2}, st)
	b.inOrder("q", []string{"m3", "m4"}, bodies(b.receive("q", "", 10)))

	rcv := int64(2)
	for _, when := range []int64{b.now("q"), b.now("q") + time.Hour.Milliseconds()} {
		st = b.seek("q", "default", at(when))
		require.Equal(t, tags.TagState{ReceivedTotal: rcv}, st, "nothing retained is after the cursor")
		require.Empty(t, b.receive("q", "", 10))
		b.send("q", "later")
		require.Equal(t, tags.TagState{Available: 1, ReceivedTotal: rcv}, b.state("q", "default"),
			"a message sent after the seek is available, even before the time sought")
		b.inOrder("q", []string{"later"}, bodies(b.receive("q", "", 10)))
		rcv++
		b.advance("q", time.Second)
	}
}

// A seek drops the tag's in-flight messages. Their receipt handles end
// with the seek: a delete with one is no error and deletes nothing (the
// message is the tag's again, as if never received); a visibility change
// or DeadMessage is RECEIPT_HANDLE_STALE, also once the message was
// received again after the seek.
func testS22_InFlightAreDroppedAndTheirHandlesEnd(t *testing.T, b *B) {
	ordersWithDLQ(b)
	b.advance("orders", 0)
	b.sendSpaced("orders", "m1", "m2", "m3")
	old := b.receive("orders", "billing", 2)
	b.inOrder("orders", []string{"m1", "m2"}, bodies(old))
	require.Equal(t, tags.TagState{Available: 1, InFlight: 2, ReceivedTotal: 2}, b.state("orders", "billing"))

	st := b.seek("orders", "billing", at(0))
	require.Equal(t, tags.TagState{Available: 3, ReceivedTotal: 2}, st, "in flight no more: available again")

	errs, err := b.s.Delete(b.ctx, "orders", []string{old[0].ReceiptHandle})
	require.NoError(t, err)
	require.NoError(t, errs[0], "deleting with a handle from before the seek is no error")
	require.Equal(t, tags.TagState{Available: 3, ReceivedTotal: 2}, b.state("orders", "billing"), "and deletes nothing")

	fresh := b.receive("orders", "billing", 10)
	b.inOrder("orders", []string{"m1", "m2", "m3"}, bodies(fresh))
	require.Equal(t, 1, fresh[1].ReceiveCount)
	for _, h := range old {
		errs, err := b.s.ChangeVisibility(b.ctx, "orders", []tags.VisibilityChange{{ReceiptHandle: h.ReceiptHandle}})
		require.NoError(t, err)
		requireReason(t, errs[0], tags.ReasonReceiptHandleStale)
		errs, err = b.s.DeadLetter(b.ctx, "orders", []tags.DeadRequest{{ReceiptHandle: h.ReceiptHandle}})
		require.NoError(t, err)
		requireReason(t, errs[0], tags.ReasonReceiptHandleStale)
		errs, err = b.s.Delete(b.ctx, "orders", []string{h.ReceiptHandle})
		require.NoError(t, err)
		require.NoError(t, errs[0])
	}
	require.Equal(t, tags.TagState{InFlight: 3, ReceivedTotal: 5}, b.state("orders", "billing"),
		"old handles touched none of the deliveries after the seek")
	b.del("orders", fresh...)
	require.Equal(t, tags.TagState{ReceivedTotal: 5, DeletedTotal: 3}, b.state("orders", "billing"))
	require.Equal(t, tags.TagState{Available: 3}, b.state("orders", "shipping"))

	// The same through a consume stream's settlements.
	b.seek("orders", "billing", at(0))
	r, err := b.s.OpenReader(b.ctx, "orders", "billing", nil)
	require.NoError(t, err)
	streamed, err := r.Receive(b.ctx, 1)
	r.Close()
	require.NoError(t, err)
	b.seek("orders", "billing", at(0))
	sb := &tags.SettleBatch{Queue: "orders", Tag: "billing", Ops: []tags.Settlement{
		{Kind: tags.SettleAck, Delivery: streamed[0].Delivery("orders")},
	}}
	require.NoError(t, b.s.Settle(b.ctx, []*tags.SettleBatch{sb}))
	require.NoError(t, sb.Errs[0])
	require.Equal(t, tags.TagState{Available: 3, ReceivedTotal: 6, DeletedTotal: 3}, b.state("orders", "billing"))
}

// Counters stay exact (S12) across seeks: delayed messages after the
// cursor count as delayed, a filtered tag counts what its filter admits,
// redelivered and nacked ones leave in flight, and receive counts start
// again, so redrive (S7) counts the replay's receives only; dead letters
// stay in the DLQ.
func testS22_CountersExactAfterSeek(t *testing.T, b *B) {
	ordersWithDLQ(b)
	red := "red"
	b.tag("orders", "reds", func(c *tags.TagConfig) {
		c.Filter = &tags.Filter{Conditions: []tags.Condition{{Name: "color", Value: &red}}}
	})
	b.advance("orders", 0)
	b.advance("orders-dlq", 0)
	redMsg := func(body string) tags.OutMessage {
		return tags.OutMessage{Body: []byte(body), Attributes: map[string]tags.Attribute{"color": {String: "red"}}}
	}
	b.advance("orders", time.Second)
	b.sendMsgs("orders", redMsg("r1"), tags.OutMessage{Body: []byte("p1")})
	b.advance("orders", time.Second)
	b.sendMsgs("orders", tags.OutMessage{Body: []byte("d1"), DelaySeconds: i32(60)}, redMsg("r2"))

	// billing: r1 dead-lettered at its second receive, p1 nacked, r2 in flight.
	got := b.receive("orders", "billing", 3)
	b.inOrder("orders", []string{"r1", "p1", "r2"}, bodies(got))
	nack(t, b, "orders", got[0].ReceiptHandle)
	nack(t, b, "orders", got[1].ReceiptHandle)
	again := b.receive("orders", "billing", 1)
	require.Equal(t, "r1", string(again[0].Body))
	require.Equal(t, 2, again[0].ReceiveCount)
	errs, err := b.s.DeadLetter(b.ctx, "orders", []tags.DeadRequest{{ReceiptHandle: again[0].ReceiptHandle}})
	require.NoError(t, err)
	require.NoError(t, errs[0])
	require.Equal(t, tags.TagState{Available: 1, InFlight: 1, Delayed: 1, ReceivedTotal: 4, DeadTotal: 1},
		b.state("orders", "billing"))
	b.receive("orders", "reds", 1)

	st := b.seek("orders", "billing", at(0))
	require.Equal(t, tags.TagState{Available: 3, Delayed: 1, ReceivedTotal: 4, DeadTotal: 1}, st)
	st = b.seek("orders", "reds", at(0))
	require.Equal(t, tags.TagState{Available: 2, ReceivedTotal: 1}, st, "the filter admits r1 and r2 only")
	require.Equal(t, tags.TagState{Available: 3, Delayed: 1}, b.state("orders", "shipping"))
	require.Equal(t, tags.TagState{Available: 1}, b.state("orders-dlq", "default"), "the dead letter stays")

	// Receive counts start again: r1 may be received twice more before
	// redrive moves it (max receive count 2).
	first := b.receive("orders", "billing", 1)
	b.inOrder("orders", []string{"r1"}, bodies(first))
	require.Equal(t, 1, first[0].ReceiveCount)
	nack(t, b, "orders", first[0].ReceiptHandle)
	second := b.receive("orders", "billing", 1)
	require.Equal(t, 2, second[0].ReceiveCount)

	b.advance("orders", time.Minute) // d1 due; r1's visibility passed at its last receive
	require.Equal(t, tags.TagState{Available: 3, ReceivedTotal: 6, DeadTotal: 1}, b.state("orders", "billing"),
		"p1, d1, r2 (r1, at its last receive, is a dead letter)")
	b.inOrder("orders", []string{"p1", "d1", "r2"}, bodies(b.receive("orders", "billing", 10)))
	require.Equal(t, tags.TagState{InFlight: 3, ReceivedTotal: 9, DeadTotal: 2}, b.state("orders", "billing"))
}

// Topic queues (S13): a seek resets the tag's blocked topics and held
// messages; from the cursor each topic is delivered in send order again,
// one in flight at a time.
func testS22_TopicQueueOrderAfterSeek(t *testing.T, b *B) {
	b.queue("q", topicQueue)
	b.advance("q", 0)
	b.advance("q", time.Second)
	b.sendTopics("q", "a", "a1", "a", "a2", "b", "b1", "a", "a3", "b", "b2")
	first := b.receive("q", "", 10)
	b.inOrder("q", []string{"a1", "b1"}, bodies(first))
	b.del("q", withBody(t, first, "a1"))
	b.inOrder("q", []string{"a2"}, bodies(b.receive("q", "", 10)), "b blocked by b1")

	st := b.seek("q", "default", at(0))
	require.Equal(t, tags.TagState{Available: 5, ReceivedTotal: 3, DeletedTotal: 1}, st)
	var order []string
	for len(order) < 5 {
		got := b.receive("q", "", 10)
		require.NotEmpty(t, got, "after %v", order)
		order = append(order, bodies(got)...)
		b.del("q", got...)
	}
	if b.partitions("q") > 1 { // topics in partitions of their own: each in send order
		var as, bs []string
		for _, m := range order {
			if m[0] == 'a' {
				as = append(as, m)
			} else {
				bs = append(bs, m)
			}
		}
		require.Equal(t, []string{"a1", "a2", "a3"}, as, "in send order")
		require.Equal(t, []string{"b1", "b2"}, bs, "in send order")
	} else {
		require.Equal(t, []string{"a1", "b1", "a2", "b2", "a3"}, order, "one per topic at a time, in send order")
	}
	require.Equal(t, tags.TagState{ReceivedTotal: 8, DeletedTotal: 6}, b.state("q", "default"))
}

// Priority queues: a seek empties the tag's held lists; what follows the
// cursor is read into them again and handed out by priority.
func testS22_PriorityQueueAfterSeek(t *testing.T, b *B) {
	b.queue("q", priorityQueue)
	b.advance("q", 0)
	b.advance("q", time.Second)
	b.sendPrio("q", 8, "low", 1, "high", 4, "mid")
	b.inOrder("q", []string{"high"}, bodies(b.receive("q", "", 1)))
	st := b.seek("q", "default", at(0))
	require.Equal(t, tags.TagState{Available: 3, ReceivedTotal: 1}, st)
	got := b.receive("q", "", 10)
	b.inOrder("q", []string{"high", "mid", "low"}, bodies(got))
	require.Equal(t, []int32{1, 4, 8}, prios(got))
}

// A seek to a message id: that message and every later one.
func testS22_SeekToMessageID(t *testing.T, b *B) {
	b.queue("q")
	b.advance("q", 0)
	ids := b.send("q", "m1", "m2", "m3") // one send time: only an id tells them apart
	b.inOrder("q", []string{"m1", "m2", "m3"}, bodies(b.receive("q", "", 10)))
	st := b.seek("q", "default", toID(ids[1]))
	require.Equal(t, tags.TagState{Available: 2, ReceivedTotal: 3}, st)
	b.inOrder("q", []string{"m2", "m3"}, bodies(b.receive("q", "", 10)))
	st = b.seek("q", "default", toID(ids[0]))
	require.Equal(t, tags.TagState{Available: 3, ReceivedTotal: 5}, st)
	b.inOrder("q", []string{"m1", "m2", "m3"}, bodies(b.receive("q", "", 10)))
}

// Seeking back finds only what the queue retains (S11): without
// retain_acked_messages, messages every tag finished are gone; a time
// before the oldest retained message means from the oldest, and a
// message id no longer retained is MESSAGE_NOT_FOUND.
func testS22_SeekFindsOnlyRetainedMessages(t *testing.T, b *B) {
	mt := b.maintainer()
	b.queue("q")
	b.queue("kept", func(c *tags.QueueConfig) { c.RetainAckedMessages = true })
	for _, q := range []string{"q", "kept"} {
		b.advance(q, 0)
		before := b.now(q) - time.Hour.Milliseconds()
		ids := b.sendSpaced(q, "m1", "m2", "m3")
		got := b.receive(q, "", 2)
		b.del(q, got...)
		b.advance(q, 2*time.Second) // past the seconds of what was in flight
		require.NoError(t, mt.Janitor(b.ctx, q))
		want := tags.TagState{Available: 3, ReceivedTotal: 2, DeletedTotal: 2}
		if q == "q" {
			want.Available = 1 // m1 and m2 went: every tag had finished them
			_, err := b.s.SeekTag(b.ctx, q, "default", toID(ids[0]))
			requireReason(t, err, tags.ReasonMessageNotFound)
			e, _ := tags.AsError(err)
			require.Equal(t, "message_id", e.Field)
		}
		require.Equal(t, want, b.seek(q, "default", at(before)),
			"%s: an hour before the oldest: every retained message", q)
		require.Equal(t, want, b.seek(q, "default", at(0)), q)
		require.Len(t, b.receive(q, "", 10), int(want.Available))
	}
}

// Bad input names its field; a missing queue or tag is NOT_FOUND.
func testS22_BadInput(t *testing.T, b *B) {
	b.queue("q")
	ids := b.send("q", "m1")
	for _, c := range []struct {
		queue, tag string
		to         tags.SeekTarget
		reason     string
		field      string
	}{
		{"q", "default", tags.SeekTarget{}, tags.ReasonInvalidArgumentRange, "time"},
		{"q", "default", tags.SeekTarget{Time: time.Now(), MessageID: ids[0]}, tags.ReasonInvalidArgumentRange, "message_id"},
		{"q", "default", toID("yesterday"), tags.ReasonInvalidArgumentRange, "message_id"},
		{"q", "default", toID("12"), tags.ReasonInvalidArgumentRange, "message_id"},
		{"q", "default", toID("1-1"), tags.ReasonMessageNotFound, "message_id"},
		{"q", "bad name", at(0), tags.ReasonInvalidName, "name"},
		{"bad name", "default", at(0), tags.ReasonInvalidName, "queue"},
		{"q", "nope", at(0), tags.ReasonTagNotFound, ""},
		{"nope", "default", at(0), tags.ReasonQueueNotFound, ""},
		{"nope", "default", toID(ids[0]), tags.ReasonQueueNotFound, ""},
	} {
		_, err := b.s.SeekTag(b.ctx, c.queue, c.tag, c.to)
		requireReason(t, err, c.reason)
		if c.field != "" {
			e, _ := tags.AsError(err)
			require.Equal(t, c.field, e.Field, "%+v: %v", c, err)
		}
	}
	require.Equal(t, tags.TagState{Available: 1}, b.state("q", "default"), "nothing changed")
}

// seek is the plain model's seek (S22) of a random tag: to the epoch, to
// a time at or after now (the end), to the send time of a message (or half
// a second before it), or to a message's id (one no longer retained:
// MESSAGE_NOT_FOUND, nothing changes). The tag forgets what it held,
// starts a new life (its earlier handles settle nothing) and reads from
// the cursor; the state the seek answers must be the model's. The clock
// then moves a second on: deliveries in the seek's own millisecond (which
// the storage dates a millisecond later, see redisstore's receive.lua)
// are the S22 tests' (seek.go), not the model's.
func (m *model) seek() {
	tg := m.pickTag()
	if tg == nil {
		return
	}
	idms := func(idx int) int64 {
		ms, _, _ := streamid.Parse(m.msgs[idx].sid)
		return int64(ms)
	}
	// first is the index of the first message sent at or after ms.
	first := func(ms int64) int {
		for idx := range m.msgs {
			if idms(idx) >= ms {
				return idx
			}
		}
		return len(m.msgs)
	}
	var to tags.SeekTarget
	start, missing := 0, false
	var from []int // per partition, for a message id of a partitioned queue
	switch r := m.rnd.IntN(6); {
	case r == 0 || len(m.msgs) == 0:
		to.Time = time.UnixMilli(0)
	case r == 1:
		to.Time = time.UnixMilli(m.now + []int64{0, 5000}[m.rnd.IntN(2)])
		start = len(m.msgs)
	case r <= 3:
		ms := idms(m.rnd.IntN(len(m.msgs))) - []int64{0, 500}[m.rnd.IntN(2)]
		to.Time = time.UnixMilli(ms)
		start = first(ms)
		if ms >= m.now {
			start = len(m.msgs) // a time at or after the seek's: the end
		}
	default:
		start = m.rnd.IntN(len(m.msgs))
		to.MessageID = m.msgs[start].id
		missing = m.msgs[start].trimmed
		if m.parts > 1 {
			// Its partition from it, the others from its millisecond (ids
			// of different partitions are of different streams), as a
			// seek to that time (at or after now: the end).
			from = make([]int, m.parts)
			ms := idms(start)
			for k := range from {
				from[k] = len(m.msgs)
				for idx := len(m.msgs) - 1; idx >= 0 && idms(idx) >= ms && ms < m.now; idx-- {
					if m.msgs[idx].part == k {
						from[k] = idx
					}
				}
			}
			from[m.msgs[start].part] = start
		}
	}
	m.op = fmt.Sprintf("seek %s to %v %q (model index %d)", tg.name, to.Time.UnixMilli(), to.MessageID, start)
	got, err := m.b.s.SeekTag(m.b.ctx, m.q, tg.name, to)
	if missing {
		if tags.ReasonOf(err) != tags.ReasonMessageNotFound {
			m.failf("seek to a trimmed message: %v, want MESSAGE_NOT_FOUND", err)
		}
		return
	}
	if err != nil {
		m.failf("seek: %v", err)
	}
	tg.startIdx, tg.from, tg.excluded, tg.held = start, from, map[int]bool{}, map[int]*mHeld{}
	tg.life++
	st := got.State
	st.OldestAvailableAge = 0
	if want := m.expectState(tg); st != want {
		m.failf("tag %s state after the seek\n got  %+v\n want %+v", tg.name, st, want)
	}
	m.advanceBy(1000)
}
