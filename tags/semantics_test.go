package tags

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestS1_TagsAreIndependent(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
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
		require.Equal(t, TagState{ReceivedTotal: 3, DeletedTotal: 3}, b.state("orders", "billing"))
		require.Equal(t, TagState{InFlight: 3, ReceivedTotal: 3}, b.state("orders", "shipping"))
		require.Equal(t, TagState{Available: 3}, b.state("orders", "default"))
		require.Equal(t, []string{"o1", "o2", "o3"}, bodies(b.receive("orders", "", 10)))

		// Shipping's nack redelivers to shipping only.
		errs, err := b.s.ChangeVisibility(b.ctx, "orders", []VisibilityChange{{ReceiptHandle: shipping[0].ReceiptHandle}})
		require.NoError(t, err)
		require.NoError(t, errs[0])
		require.Empty(t, b.receive("orders", "billing", 10))
		again := b.receive("orders", "shipping", 10)
		require.Equal(t, []string{"o1"}, bodies(again))
		require.Equal(t, 2, again[0].ReceiveCount)
	})
}

func TestS2_ExclusiveWithinTag_VisibleAgainAfterDeadline(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("q", func(c *QueueConfig) { c.VisibilityTimeoutSeconds = i32(30) })
		b.send("q", "m")
		first := b.receive("q", "", 1)
		require.Len(t, first, 1)
		require.Empty(t, b.receive("q", "", 10), "in flight: no second receive on the same tag")
		b.advance("q", 29*time.Second)
		require.Empty(t, b.receive("q", "", 10))
		require.Equal(t, TagState{InFlight: 1, ReceivedTotal: 1}, b.state("q", "default"))
		b.advance("q", time.Second)
		require.Equal(t, TagState{Available: 1, ReceivedTotal: 1}, b.state("q", "default"))
		second := b.receive("q", "", 1)
		require.Len(t, second, 1)
		require.Equal(t, first[0].ID, second[0].ID)
		require.Equal(t, 2, second[0].ReceiveCount)
		require.Equal(t, first[0].FirstReceiveTime, second[0].FirstReceiveTime)
		require.NotEqual(t, first[0].ReceiptHandle, second[0].ReceiptHandle)
	})
}

func TestS3_ReceiptHandles(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("q")
		b.queue("other")
		b.send("q", "m")
		first := b.receive("q", "", 1)[0]

		t.Run("garbled and forged handles are invalid", func(t *testing.T) {
			for _, h := range []string{"garbage", "", first.ReceiptHandle[:len(first.ReceiptHandle)-2] + "AA", "x" + first.ReceiptHandle} {
				errs, err := b.s.Delete(b.ctx, "q", []string{h})
				require.NoError(t, err)
				requireReason(t, errs[0], ReasonInvalidReceiptHandle)
				errs, err = b.s.ChangeVisibility(b.ctx, "q", []VisibilityChange{{ReceiptHandle: h}})
				require.NoError(t, err)
				requireReason(t, errs[0], ReasonInvalidReceiptHandle)
			}
		})
		t.Run("a handle of another queue is invalid", func(t *testing.T) {
			errs, err := b.s.Delete(b.ctx, "other", []string{first.ReceiptHandle})
			require.NoError(t, err)
			requireReason(t, errs[0], ReasonInvalidReceiptHandle)
		})
		require.Equal(t, TagState{InFlight: 1, ReceivedTotal: 1}, b.state("q", "default"), "invalid handles wrote nothing")

		// Received again: the old handle is stale for visibility but still deletes.
		nack(t, b, "q", first.ReceiptHandle)
		second := b.receive("q", "", 1)[0]
		errs, err := b.s.ChangeVisibility(b.ctx, "q", []VisibilityChange{{ReceiptHandle: first.ReceiptHandle, VisibilitySeconds: 60}})
		require.NoError(t, err)
		requireReason(t, errs[0], ReasonReceiptHandleStale)
		var e *Error
		require.ErrorAs(t, errs[0], &e)
		require.Equal(t, KindFailedPrecondition, e.Kind)

		b.del("q", first)
		require.Equal(t, TagState{ReceivedTotal: 2, DeletedTotal: 1}, b.state("q", "default"))
		b.del("q", second) // deleting twice is not an error
		require.Equal(t, TagState{ReceivedTotal: 2, DeletedTotal: 1}, b.state("q", "default"))
		errs, err = b.s.ChangeVisibility(b.ctx, "q", []VisibilityChange{{ReceiptHandle: second.ReceiptHandle}})
		require.NoError(t, err)
		requireReason(t, errs[0], ReasonReceiptHandleStale)
	})
}

// A tag deleted and created again under the same name is another tag: a
// handle of the old one neither changes nor deletes what the new one holds.
func TestS3_HandleOfADeletedTagDoesNotTouchItsNamesake(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("q")
		b.tag("q", "t", func(c *TagConfig) { c.Start = Start{Kind: StartOldest} })
		b.send("q", "m")
		old := b.receive("q", "t", 1)[0]
		require.NoError(t, b.s.DeleteTag(b.ctx, "q", "t"))
		b.advance("q", time.Second)
		b.tag("q", "t", func(c *TagConfig) { c.Start = Start{Kind: StartOldest} })
		cur := b.receive("q", "t", 1)[0]
		require.Equal(t, old.ID, cur.ID)
		require.Equal(t, 1, cur.ReceiveCount)

		errs, err := b.s.ChangeVisibility(b.ctx, "q", []VisibilityChange{{ReceiptHandle: old.ReceiptHandle}})
		require.NoError(t, err)
		requireReason(t, errs[0], ReasonReceiptHandleStale)
		b.del("q", old)
		require.Equal(t, TagState{InFlight: 1, ReceivedTotal: 1}, b.state("q", "t"), "the old handle deleted nothing")
		b.del("q", cur)
		require.Equal(t, TagState{ReceivedTotal: 1, DeletedTotal: 1}, b.state("q", "t"))
	})
}

func nack(t *testing.T, b *bundle, q, h string) {
	t.Helper()
	errs, err := b.s.ChangeVisibility(b.ctx, q, []VisibilityChange{{ReceiptHandle: h}})
	require.NoError(t, err)
	require.NoError(t, errs[0])
}

func TestS4_VisibilityDefaultsAndOverrides(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("q", func(c *QueueConfig) { c.VisibilityTimeoutSeconds = i32(100) })
		b.tag("q", "fast", func(c *TagConfig) { c.VisibilityTimeoutSeconds = i32(10) })
		b.send("q", "m")
		dq := b.receive("q", "", 1)
		fast := b.receive("q", "fast", 1)
		require.Len(t, dq, 1)
		require.Len(t, fast, 1)
		b.advance("q", 10*time.Second)
		require.Len(t, b.receive("q", "fast", 1), 1, "tag override: 10 s")
		require.Empty(t, b.receive("q", "", 1), "queue default: 100 s")
		b.advance("q", 90*time.Second)
		got := b.receive("q", "", 1, func(o *ReceiveOptions) { o.VisibilitySeconds = i32(5) })
		require.Len(t, got, 1)
		b.advance("q", 5*time.Second)
		got = b.receive("q", "", 1)
		require.Len(t, got, 1, "receive override: 5 s")

		// Extending lasts until the next receive; shortening to 0 is a nack.
		errs, err := b.s.ChangeVisibility(b.ctx, "q", []VisibilityChange{{ReceiptHandle: got[0].ReceiptHandle, VisibilitySeconds: 1000}})
		require.NoError(t, err)
		require.NoError(t, errs[0])
		b.advance("q", 999*time.Second)
		require.Empty(t, b.receive("q", "", 1))
		nack(t, b, "q", got[0].ReceiptHandle)
		again := b.receive("q", "", 1)
		require.Len(t, again, 1)
		require.Equal(t, 4, again[0].ReceiveCount)
	})
}

func TestS5_DelayedMessagesAreInvisibleToEveryTag(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("q", func(c *QueueConfig) {
			c.DelaySeconds = i32(60)
			c.VisibilityTimeoutSeconds = i32(43200)
		})
		b.tag("q", "other")
		b.sendMsgs("q", OutMessage{Body: []byte("queue-delay")}, OutMessage{Body: []byte("now"), DelaySeconds: i32(0)},
			OutMessage{Body: []byte("late"), DelaySeconds: i32(900)})
		require.Equal(t, TagState{Available: 1, Delayed: 2}, b.state("q", "other"))
		require.Equal(t, []string{"now"}, bodies(b.receive("q", "", 10)))
		// The default tag has read past the delayed messages (parked); the
		// other tag has not: both count them as delayed.
		require.Equal(t, TagState{InFlight: 1, Delayed: 2, ReceivedTotal: 1}, b.state("q", "default"))
		require.Equal(t, TagState{Available: 1, Delayed: 2}, b.state("q", "other"))
		b.advance("q", 59*time.Second)
		require.Empty(t, b.receive("q", "", 10))
		b.advance("q", time.Second)
		require.Equal(t, TagState{Available: 1, InFlight: 1, Delayed: 1, ReceivedTotal: 1}, b.state("q", "default"))
		require.Equal(t, TagState{Available: 2, Delayed: 1}, b.state("q", "other"))
		require.Equal(t, []string{"queue-delay"}, bodies(b.receive("q", "", 10)))
		require.Equal(t, []string{"queue-delay", "now"}, bodies(b.receive("q", "other", 10)))
		b.advance("q", 840*time.Second)
		got := b.receive("q", "other", 10)
		require.Equal(t, []string{"late"}, bodies(got))
		require.Equal(t, 1, got[0].ReceiveCount)
		require.Equal(t, TagState{InFlight: 3, ReceivedTotal: 3}, b.state("q", "other"))
	})
}

func TestS11_MessagesGoOnceEveryTagIsDone(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("q")
		b.tag("q", "b")
		b.send("q", "m1", "m2")
		a := b.receive("q", "", 10)
		b.del("q", a...)
		require.NoError(t, b.s.RunJanitor(b.ctx))
		q, err := b.s.GetQueue(b.ctx, "q")
		require.NoError(t, err)
		require.EqualValues(t, 2, q.RetainedMessages, "tag b still needs them")
		bm := b.receive("q", "b", 1)
		b.del("q", bm...)
		require.NoError(t, b.s.RunJanitor(b.ctx))
		q, err = b.s.GetQueue(b.ctx, "q")
		require.NoError(t, err)
		require.EqualValues(t, 1, q.RetainedMessages)
		require.Equal(t, TagState{Available: 1, ReceivedTotal: 1, DeletedTotal: 1}, b.state("q", "b"))
		require.Equal(t, []string{"m2"}, bodies(b.receive("q", "b", 10)))
	})
}

func TestS11_RetainAckedMessagesReplaysToNewTag(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("q", func(c *QueueConfig) { c.RetainAckedMessages = true })
		b.send("q", "m1", "m2")
		b.del("q", b.receive("q", "", 10)...)
		require.NoError(t, b.s.RunJanitor(b.ctx))
		b.tag("q", "replay", func(c *TagConfig) { c.Start = Start{Kind: StartOldest} })
		require.Equal(t, TagState{Available: 2}, b.state("q", "replay"))
		require.Equal(t, []string{"m1", "m2"}, bodies(b.receive("q", "replay", 10)))
	})
}

func TestS11_RetentionExpiryIsCountedPerTag(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("q", func(c *QueueConfig) { c.MessageRetentionSeconds = i32(60) })
		b.tag("q", "slow")
		b.send("q", "m1", "m2")
		b.del("q", b.receive("q", "", 1)...) // default: m1 deleted, m2 unread
		held := b.receive("q", "slow", 1)    // slow: m1 in flight, m2 unread
		require.Len(t, held, 1)
		b.advance("q", 59*time.Second)
		require.NoError(t, b.s.RunJanitor(b.ctx))
		require.Equal(t, TagState{Available: 1, ReceivedTotal: 1, DeletedTotal: 1}, b.state("q", "default"))
		b.advance("q", time.Second)
		require.NoError(t, b.s.RunJanitor(b.ctx))
		require.Equal(t, TagState{ReceivedTotal: 1, DeletedTotal: 1, ExpiredTotal: 1}, b.state("q", "default"))
		require.Equal(t, TagState{ReceivedTotal: 1, ExpiredTotal: 2}, b.state("q", "slow"))
		q, err := b.s.GetQueue(b.ctx, "q")
		require.NoError(t, err)
		require.Zero(t, q.RetainedMessages)
		// The expired in-flight handle no longer works for visibility.
		errs, err := b.s.ChangeVisibility(b.ctx, "q", []VisibilityChange{{ReceiptHandle: held[0].ReceiptHandle}})
		require.NoError(t, err)
		requireReason(t, errs[0], ReasonReceiptHandleStale)
		require.Empty(t, b.receive("q", "slow", 10))
	})
}

func TestS11_RetentionCountsFromWhenADelayedMessageBecomesVisible(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("q", func(c *QueueConfig) { c.MessageRetentionSeconds = i32(60) })
		b.sendMsgs("q", OutMessage{Body: []byte("d"), DelaySeconds: i32(120)})
		b.advance("q", 150*time.Second)
		require.NoError(t, b.s.RunJanitor(b.ctx))
		require.Equal(t, []string{"d"}, bodies(b.receive("q", "", 1)))
	})
}

func TestTagStartPoints(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("q")
		ids := b.send("q", "m1", "m2")
		b.advance("q", time.Second)
		ids = append(ids, b.send("q", "m3")...)
		b.tag("q", "now")
		b.tag("q", "oldest", func(c *TagConfig) { c.Start = Start{Kind: StartAt, At: time.Unix(0, 0)} })
		b.tag("q", "at", func(c *TagConfig) { c.Start = Start{Kind: StartAt, At: idTime(ids[2])} })
		b.send("q", "m4")
		require.Equal(t, TagState{Available: 1}, b.state("q", "now"))
		require.Equal(t, TagState{Available: 4}, b.state("q", "oldest"))
		require.Equal(t, TagState{Available: 2}, b.state("q", "at"))
		require.Equal(t, []string{"m4"}, bodies(b.receive("q", "now", 10)))
		require.Equal(t, []string{"m1", "m2", "m3", "m4"}, bodies(b.receive("q", "oldest", 10)))
		require.Equal(t, []string{"m3", "m4"}, bodies(b.receive("q", "at", 10)))
		tg, err := b.s.GetTag(b.ctx, "q", "oldest")
		require.NoError(t, err)
		require.Equal(t, StartOldest, tg.Start.Kind)
	})
}

func TestTagFilters(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("q")
		red := "red"
		b.sendMsgs("q", OutMessage{Body: []byte("before"), Attributes: map[string]Attribute{"color": {String: "red"}}})
		b.tag("q", "red", func(c *TagConfig) {
			c.Filter = &Filter{Conditions: []Condition{{Name: "color", Value: &red}}}
		})
		b.tag("q", "red-oldest", func(c *TagConfig) {
			c.Start = Start{Kind: StartOldest}
			c.Filter = &Filter{Conditions: []Condition{{Name: "color", Value: &red}}}
		})
		b.tag("q", "sized-or-red", func(c *TagConfig) {
			c.Filter = &Filter{Or: true, Conditions: []Condition{{Name: "size"}, {Name: "color", Value: &red}}}
		})
		b.tag("q", "sized-and-red", func(c *TagConfig) {
			c.Filter = &Filter{Conditions: []Condition{{Name: "size"}, {Name: "color", Value: &red}}}
		})
		attr := func(kv ...string) map[string]Attribute {
			m := map[string]Attribute{}
			for i := 0; i < len(kv); i += 2 {
				m[kv[i]] = Attribute{String: kv[i+1]}
			}
			return m
		}
		b.sendMsgs("q",
			OutMessage{Body: []byte("r"), Attributes: attr("color", "red")},
			OutMessage{Body: []byte("g"), Attributes: attr("color", "green")},
			OutMessage{Body: []byte("rs"), Attributes: attr("color", "red", "size", "L")},
			OutMessage{Body: []byte("s"), Attributes: map[string]Attribute{"size": {Binary: true, Bytes: []byte{0, 1}}}},
			OutMessage{Body: []byte("none")},
		)
		require.Equal(t, TagState{Available: 2}, b.state("q", "red"))
		require.Equal(t, TagState{Available: 3}, b.state("q", "red-oldest"))
		require.Equal(t, TagState{Available: 3}, b.state("q", "sized-or-red"))
		require.Equal(t, TagState{Available: 1}, b.state("q", "sized-and-red"))
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
	})
}

func TestS12_CountersAcrossPurgeAndTagDelete(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("q")
		b.tag("q", "t")
		b.send("q", "m1", "m2", "m3")
		got := b.receive("q", "", 2)
		n, err := b.s.PurgeQueue(b.ctx, "q")
		require.NoError(t, err)
		require.EqualValues(t, 3, n)
		require.Equal(t, TagState{ReceivedTotal: 2}, b.state("q", "default"))
		require.Equal(t, TagState{}, b.state("q", "t"))
		errs, err := b.s.Delete(b.ctx, "q", []string{got[0].ReceiptHandle})
		require.NoError(t, err)
		require.NoError(t, errs[0], "a purged message's delete is a no-op")
		b.send("q", "m4")
		require.Equal(t, []string{"m4"}, bodies(b.receive("q", "t", 10)))
		require.NoError(t, b.s.DeleteTag(b.ctx, "q", "t"))
		_, err = b.s.GetTag(b.ctx, "q", "t")
		requireReason(t, err, ReasonTagNotFound)
		b.tag("q", "t")
		require.Equal(t, TagState{}, b.state("q", "t"), "a recreated tag starts afresh")
		require.Equal(t, TagState{Available: 1, ReceivedTotal: 2}, b.state("q", "default"))
	})
}

func TestQueueLifecycle(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		q := b.queue("q1", func(c *QueueConfig) { c.UserAttributes = map[string]string{"team": "core"} })
		require.EqualValues(t, 30, q.VisibilityTimeoutSeconds)
		require.EqualValues(t, 345600, q.MessageRetentionSeconds)
		require.EqualValues(t, 262144, q.MaxMessageBytes)
		require.Equal(t, "default", q.DefaultTagName)
		_, err := b.s.CreateQueue(b.ctx, QueueConfig{Name: "q1"})
		requireReason(t, err, ReasonQueueAlreadyExists)
		for i := 2; i <= 5; i++ {
			b.queue(fmt.Sprintf("q%d", i))
		}
		b.queue("other")
		page, next, err := b.s.ListQueues(b.ctx, "q", 2, "")
		require.NoError(t, err)
		require.Len(t, page, 2)
		require.Equal(t, "q1", page[0].Name)
		require.Equal(t, "q2", next)
		var names []string
		for tok := ""; ; {
			page, tok, err = b.s.ListQueues(b.ctx, "q", 2, tok)
			require.NoError(t, err)
			for _, q := range page {
				names = append(names, q.Name)
			}
			if tok == "" {
				break
			}
		}
		require.Equal(t, []string{"q1", "q2", "q3", "q4", "q5"}, names)

		upd, err := b.s.UpdateQueue(b.ctx, "q1", QueueUpdate{VisibilityTimeoutSeconds: i32(5), SetUserAttributes: true})
		require.NoError(t, err)
		require.EqualValues(t, 5, upd.VisibilityTimeoutSeconds)
		require.Empty(t, upd.UserAttributes)
		require.False(t, upd.UpdateTime.Before(upd.CreateTime))

		b.send("q1", "m")
		require.NoError(t, b.s.DeleteQueue(b.ctx, "q1", false))
		_, err = b.s.GetQueue(b.ctx, "q1")
		requireReason(t, err, ReasonQueueNotFound)
		_, err = b.s.Send(b.ctx, "q1", []OutMessage{{Body: []byte("x")}})
		requireReason(t, err, ReasonQueueNotFound)
		require.Empty(t, b.keys(b.prefix+":{q1}*"), "every key of the queue is gone")
		b.queue("q1")
		require.Equal(t, TagState{}, b.state("q1", "default"))
	})
}

func TestPeek(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("q")
		ids := b.send("q", "m1", "m2", "m3")
		got, err := b.s.PeekNext(b.ctx, "q", "", 2)
		require.NoError(t, err)
		require.Equal(t, []string{"m1", "m2"}, bodies(got))
		require.Equal(t, TagState{Available: 3}, b.state("q", "default"), "peek changes nothing")
		r := b.receive("q", "", 1)
		nack(t, b, "q", r[0].ReceiptHandle)
		got, err = b.s.PeekNext(b.ctx, "q", "", 10)
		require.NoError(t, err)
		require.Equal(t, []string{"m1", "m2", "m3"}, bodies(got))
		require.Equal(t, 1, got[0].ReceiveCount)
		byID, err := b.s.Peek(b.ctx, "q", []string{ids[2], "1-1"})
		require.NoError(t, err)
		require.Equal(t, []string{"m3"}, bodies(byID))
		require.Equal(t, ids[2], byID[0].ID)
	})
}

// The default tag's name is cached per process; a queue re-created with
// another default tag must not be read through the old name.
func TestReceiveOnTheDefaultTagFollowsARecreatedQueue(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("q")
		b.send("q", "one")
		require.Equal(t, []string{"one"}, bodies(b.receive("q", "", 1)))
		require.NoError(t, b.s.DeleteQueue(b.ctx, "q", false))
		b.queue("q", func(c *QueueConfig) { c.DefaultTagName = "main" })
		b.tag("q", "default") // a tag with the old name, which must not be used
		b.send("q", "two")
		got := b.receive("q", "", 1)
		require.Equal(t, []string{"two"}, bodies(got))
		require.Equal(t, "main", got[0].Tag)
		require.Equal(t, TagState{Available: 1}, b.state("q", "default"))
	})
}

// Listing pipelines one state script per queue or tag; after Redis lost its
// scripts (a restart, SCRIPT FLUSH) they are loaded again, not failed.
func TestListingSurvivesALostScriptCache(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("l1")
		b.queue("l2")
		b.tag("l1", "t")
		b.send("l1", "m")
		require.NoError(t, b.rdb.ScriptFlush(b.ctx).Err())
		qs, _, err := b.s.ListQueues(b.ctx, "l", 10, "")
		require.NoError(t, err)
		require.Len(t, qs, 2)
		require.EqualValues(t, 1, qs[0].DefaultTag.Available)
		require.NoError(t, b.rdb.ScriptFlush(b.ctx).Err())
		ts, _, err := b.s.ListTags(b.ctx, "l1", 10, "")
		require.NoError(t, err)
		require.Len(t, ts, 2)
		require.EqualValues(t, 1, ts[1].State.Available)
	})
}

// A receive reads new entries into the tag's PEL, then hands them out in
// its script. If its tagqd stops between the two, the janitor makes them
// visible again (receive count 0, so the next receive is a first one), and
// keeps them from being trimmed meanwhile.
func TestReceiveReadAbandonedBetweenStepsIsRecovered(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("q")
		b.tag("q", "other") // a tag that is done, so only the PEL can hold the entries
		ids := b.send("q", "a", "b")
		for _, m := range b.receive("q", "other", 10) {
			b.del("q", m)
		}
		k := b.s.qkeys("q")
		// The first step alone, as a stopped tagqd left it.
		got, _, _, err := b.s.readNew(b.ctx, k, "default", 10)
		require.NoError(t, err)
		require.Len(t, got, 2)
		require.NoError(t, b.s.RunJanitor(b.ctx))
		require.Equal(t, int64(2), b.rdb.XLen(b.ctx, k.stream).Val(), "pending entries are not trimmed")
		require.Empty(t, b.receive("q", "default", 10), "not yet recovered: the read may still finish")

		// Once stalled long enough (here: at once), the janitor recovers them.
		impatient, err := New(b.ctx, Config{Client: b.rdb, Prefix: b.prefix, JanitorInterval: -1, TestClock: true,
			StalledRead: time.Nanosecond})
		require.NoError(t, err)
		defer impatient.Close()
		require.NoError(t, impatient.RunJanitor(b.ctx))
		msgs := b.receive("q", "default", 10)
		require.ElementsMatch(t, ids, []string{msgs[0].ID, msgs[1].ID})
		for _, m := range msgs {
			require.Equal(t, 1, m.ReceiveCount)
		}
		st := b.state("q", "default")
		require.Equal(t, int64(2), st.InFlight)
		require.Equal(t, int64(0), st.Available)
		require.Equal(t, int64(2), st.ReceivedTotal)
		b.del("q", msgs...)
		require.NoError(t, b.s.RunJanitor(b.ctx))
		require.Equal(t, int64(0), b.rdb.XLen(b.ctx, k.stream).Val(), "done with, then trimmed")
	})
}
