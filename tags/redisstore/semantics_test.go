package redisstore

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tagq/tagq/tags"
)

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
		require.Equal(t, tags.TagState{Available: 1, ReceivedTotal: 1, DeletedTotal: 1}, b.state("q", "b"))
		require.Equal(t, []string{"m2"}, bodies(b.receive("q", "b", 10)))
	})
}

func TestS11_RetainAckedMessagesReplaysToNewTag(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("q", func(c *tags.QueueConfig) { c.RetainAckedMessages = true })
		b.send("q", "m1", "m2")
		b.del("q", b.receive("q", "", 10)...)
		require.NoError(t, b.s.RunJanitor(b.ctx))
		b.tag("q", "replay", func(c *tags.TagConfig) { c.Start = tags.Start{Kind: tags.StartOldest} })
		require.Equal(t, tags.TagState{Available: 2}, b.state("q", "replay"))
		require.Equal(t, []string{"m1", "m2"}, bodies(b.receive("q", "replay", 10)))
	})
}

func TestS11_RetentionExpiryIsCountedPerTag(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("q", func(c *tags.QueueConfig) { c.MessageRetentionSeconds = i32(60) })
		b.tag("q", "slow")
		b.send("q", "m1", "m2")
		b.del("q", b.receive("q", "", 1)...) // default: m1 deleted, m2 unread
		held := b.receive("q", "slow", 1)    // slow: m1 in flight, m2 unread
		require.Len(t, held, 1)
		b.advance("q", 59*time.Second)
		require.NoError(t, b.s.RunJanitor(b.ctx))
		require.Equal(t, tags.TagState{Available: 1, ReceivedTotal: 1, DeletedTotal: 1}, b.state("q", "default"))
		b.advance("q", time.Second)
		require.NoError(t, b.s.RunJanitor(b.ctx))
		require.Equal(t, tags.TagState{ReceivedTotal: 1, DeletedTotal: 1, ExpiredTotal: 1}, b.state("q", "default"))
		require.Equal(t, tags.TagState{ReceivedTotal: 1, ExpiredTotal: 2}, b.state("q", "slow"))
		q, err := b.s.GetQueue(b.ctx, "q")
		require.NoError(t, err)
		require.Zero(t, q.RetainedMessages)
		// The expired in-flight handle no longer works for visibility.
		errs, err := b.s.ChangeVisibility(b.ctx, "q", []tags.VisibilityChange{{ReceiptHandle: held[0].ReceiptHandle}})
		require.NoError(t, err)
		requireReason(t, errs[0], tags.ReasonReceiptHandleStale)
		require.Empty(t, b.receive("q", "slow", 10))
	})
}

func TestS11_RetentionCountsFromWhenADelayedMessageBecomesVisible(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("q", func(c *tags.QueueConfig) { c.MessageRetentionSeconds = i32(60) })
		b.sendMsgs("q", tags.OutMessage{Body: []byte("d"), DelaySeconds: i32(120)})
		b.advance("q", 150*time.Second)
		require.NoError(t, b.s.RunJanitor(b.ctx))
		require.Equal(t, []string{"d"}, bodies(b.receive("q", "", 1)))
	})
}

func TestQueueLifecycle(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		q := b.queue("q1", func(c *tags.QueueConfig) { c.UserAttributes = map[string]string{"team": "core"} })
		require.EqualValues(t, 30, q.VisibilityTimeoutSeconds)
		require.EqualValues(t, 345600, q.MessageRetentionSeconds)
		require.EqualValues(t, 262144, q.MaxMessageBytes)
		require.Equal(t, "default", q.DefaultTagName)
		_, err := b.s.CreateQueue(b.ctx, tags.QueueConfig{Name: "q1"})
		requireReason(t, err, tags.ReasonQueueAlreadyExists)
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

		upd, err := b.s.UpdateQueue(b.ctx, "q1", tags.QueueUpdate{VisibilityTimeoutSeconds: i32(5), SetUserAttributes: true})
		require.NoError(t, err)
		require.EqualValues(t, 5, upd.VisibilityTimeoutSeconds)
		require.Empty(t, upd.UserAttributes)
		require.False(t, upd.UpdateTime.Before(upd.CreateTime))

		b.send("q1", "m")
		require.NoError(t, b.s.DeleteQueue(b.ctx, "q1", false))
		_, err = b.s.GetQueue(b.ctx, "q1")
		requireReason(t, err, tags.ReasonQueueNotFound)
		_, err = b.s.Send(b.ctx, "q1", []tags.OutMessage{{Body: []byte("x")}})
		requireReason(t, err, tags.ReasonQueueNotFound)
		require.Empty(t, b.keys(b.prefix+":{q1}*"), "every key of the queue is gone")
		b.queue("q1")
		require.Equal(t, tags.TagState{}, b.state("q1", "default"))
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
		impatient, err := New(b.ctx, Config{Client: b.rdb, Prefix: b.prefix, TestClock: true,
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

func nack(t *testing.T, b *bundle, q, h string) {
	t.Helper()
	errs, err := b.s.ChangeVisibility(b.ctx, q, []tags.VisibilityChange{{ReceiptHandle: h}})
	require.NoError(t, err)
	require.NoError(t, errs[0])
}
