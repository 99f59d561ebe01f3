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

// The conformance suite (tags/tagstest) checks S22 through the Storage
// interface; these check what lies beneath: waking, reads racing a seek,
// and the keys a seek leaves.

var fromOldest = tags.SeekTarget{Time: time.Unix(0, 0)}

// A seek that makes messages available wakes the tag's waiting receives,
// on this process and on others (S21).
func TestS22_SeekWakesWaitingReceives(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		other, err := New(b.ctx, Config{Client: b.rdb, Prefix: b.prefix, TestClock: true})
		require.NoError(t, err)
		t.Cleanup(func() { _ = other.Close() })
		b.queue("q")
		b.send("q", "m")
		b.del("q", b.receive("q", "", 1)...)

		// The answer is the state the seek left, whatever the woken
		// receive takes meanwhile (one transaction: seek, then state).
		ch := waitReceive(t, b, b.s, "q", "", 20)
		tg, err := b.s.SeekTag(b.ctx, "q", "default", fromOldest)
		require.NoError(t, err)
		require.Equal(t, int64(1), tg.State.Available)
		require.Zero(t, tg.State.InFlight)
		requireWoken(t, ch, "m")

		ch = waitReceive(t, b, b.s, "q", "", 20)
		tg, err = other.SeekTag(b.ctx, "q", "default", fromOldest)
		require.NoError(t, err)
		require.Equal(t, int64(1), tg.State.Available)
		requireWoken(t, ch, "m")
	})
}

// A receive reads new entries into the tag's PEL, then records them in
// its script. A seek between the two ends that read: the script hands out
// none of it (a receive after the seek reads the same entries, and hands
// them out once). When the seek came between the receive's reading of the
// PEL epoch and its read, the entries it read after the seek stay pending
// until the janitor recovers them, counted available all along.
func TestS22_AReadBeforeASeekIsNotHandedOut(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("q")
		ids := b.send("q", "a", "b")
		k := b.s.qkeys("q")

		fresh, epoch, ok, err := b.s.readNew(b.ctx, k, "default", 2)
		require.NoError(t, err)
		require.True(t, ok)
		require.Len(t, fresh, 2)
		_, err = b.s.SeekTag(b.ctx, "q", "default", fromOldest)
		require.NoError(t, err)
		got := b.receive("q", "default", 10)
		require.Equal(t, []string{"a", "b"}, bodies(got))
		r, err := b.s.receiveScript(b.ctx, "q", "default", "", 2, -1, false, false, fresh, epoch)
		require.NoError(t, err)
		require.Empty(t, r.msgs, "read before the seek: not handed out")
		require.Equal(t, tags.TagState{InFlight: 2, ReceivedTotal: 2}, b.state("q", "default"))
		b.del("q", got...)
		require.Equal(t, tags.TagState{ReceivedTotal: 2, DeletedTotal: 2}, b.state("q", "default"))

		// The epoch read before the seek, the entries after it.
		epoch, err = b.rdb.HGet(b.ctx, k.meta, "pep").Result()
		require.NoError(t, err)
		_, err = b.s.SeekTag(b.ctx, "q", "default", tags.SeekTarget{MessageID: ids[1]})
		require.NoError(t, err)
		fresh, _, _, err = b.s.readNew(b.ctx, k, "default", 2)
		require.NoError(t, err)
		require.Len(t, fresh, 1)
		r, err = b.s.receiveScript(b.ctx, "q", "default", "", 2, -1, false, false, fresh, epoch)
		require.NoError(t, err)
		require.Empty(t, r.msgs)
		require.Equal(t, int64(1), b.pelCount("q", "default"), "left pending")
		require.Equal(t, tags.TagState{Available: 1, ReceivedTotal: 2, DeletedTotal: 2}, b.state("q", "default"))
		impatient, err := New(b.ctx, Config{Client: b.rdb, Prefix: b.prefix, TestClock: true, StalledRead: time.Nanosecond})
		require.NoError(t, err)
		defer impatient.Close()
		require.NoError(t, impatient.RunJanitor(b.ctx))
		require.Zero(t, b.pelCount("q", "default"))
		again := b.receive("q", "default", 10)
		require.Equal(t, []string{"b"}, bodies(again))
		require.Equal(t, 1, again[0].ReceiveCount)
		require.Equal(t, tags.TagState{InFlight: 1, ReceivedTotal: 3, DeletedTotal: 2}, b.state("q", "default"))
	})
}

// A seek leaves none of the tag's delivery state: no PEL, no in-flight,
// parked, last-chance or batch sets, no in-flight counts, no topic or
// priority lists; only the tag's state hash.
func TestS22_SeekLeavesNoDeliveryState(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("orders-dlq", func(c *tags.QueueConfig) { c.DeadLetterQueue = true })
		b.queue("plain", func(c *tags.QueueConfig) {
			c.RedrivePolicy = &tags.RedrivePolicy{DeadLetterQueue: "orders-dlq", MaxReceiveCount: 1}
		})
		b.queue("topics", func(c *tags.QueueConfig) { c.TopicQueue = true })
		b.queue("prios", func(c *tags.QueueConfig) { c.PriorityQueue = true })
		b.sendMsgs("plain", tags.OutMessage{Body: []byte("p1")}, tags.OutMessage{Body: []byte("p2")},
			tags.OutMessage{Body: []byte("later"), DelaySeconds: i32(60)})
		got := b.receive("plain", "", 1)
		nack(t, b, "plain", got[0].ReceiptHandle)
		b.receive("plain", "", 1, func(o *tags.ReceiveOptions) { o.VisibilitySeconds = i32(600) })
		b.sendMsgs("topics", tags.OutMessage{Topic: "a", Body: []byte("a1")}, tags.OutMessage{Topic: "a", Body: []byte("a2")})
		b.receive("topics", "", 10)
		b.sendMsgs("prios", tags.OutMessage{Priority: 3, Body: []byte("x")}, tags.OutMessage{Priority: 9, Body: []byte("y")})
		b.receive("prios", "", 1)

		for _, q := range []string{"plain", "topics", "prios"} {
			before := b.keys(b.s.qkeys(q).base + "t:default:*")
			require.Greater(t, len(before), 1, "%s: %v", q, before)
			_, err := b.s.SeekTag(b.ctx, q, "default", fromOldest)
			require.NoError(t, err)
			left := b.keys(b.s.qkeys(q).base + "t:default:*")
			require.Equal(t, []string{b.s.qkeys(q).tag("default").state}, left, q)
			require.Zero(t, b.pelCount(q, "default"), q)
			n, err := b.rdb.HGetAll(b.ctx, b.s.qkeys(q).tag("default").state).Result()
			require.NoError(t, err)
			fields := make([]string, 0, len(n))
			for f := range n {
				if strings.HasPrefix(f, "w:") || strings.HasPrefix(f, "pq:") || f == "jpc" {
					fields = append(fields, f)
				}
			}
			slices.Sort(fields)
			require.Empty(t, fields, q)
			require.Equal(t, "0", n["pc"], q)
		}
		require.Equal(t, tags.TagState{Available: 2, Delayed: 1, ReceivedTotal: 2, DeadTotal: 1}, b.state("plain", "default"),
			"p1 died at its one receive; retained, it is available again")
		require.Equal(t, tags.TagState{Available: 2, ReceivedTotal: 1}, b.state("topics", "default"))
		require.Equal(t, tags.TagState{Available: 2, ReceivedTotal: 1}, b.state("prios", "default"))
	})
}

// BenchmarkSeekTag is what one seek costs (one script call, which holds
// Redis while it counts what follows the cursor) on a queue of n retained
// 1 KiB messages, on TAGQ_TEST_REDIS_URL: to the oldest on an unfiltered
// tag (XLEN), to the middle by message id (half of them read and counted),
// to the oldest on a filtered tag (all of them read, their attributes
// decoded), and to now (nothing counted).
func BenchmarkSeekTag(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		b.Run(fmt.Sprintf("messages=%d", n), func(b *testing.B) {
			s, ctx := benchStore(b, "bench-seek")
			if _, err := s.CreateQueue(ctx, tags.QueueConfig{Name: "bench-seek", RetainAckedMessages: true}); err != nil {
				b.Fatal(err)
			}
			red := "red"
			if _, err := s.CreateTag(ctx, "bench-seek", tags.TagConfig{Name: "reds",
				Filter: &tags.Filter{Conditions: []tags.Condition{{Name: "color", Value: &red}}}}); err != nil {
				b.Fatal(err)
			}
			body := make([]byte, 1024)
			var middle string
			for i := 0; i < n; i += 100 {
				msgs := make([]tags.OutMessage, 100)
				for j := range msgs {
					msgs[j] = tags.OutMessage{Body: body}
					if j%2 == 0 {
						msgs[j].Attributes = map[string]tags.Attribute{"color": {String: "red"}}
					}
				}
				res, err := s.Send(ctx, "bench-seek", msgs)
				if err != nil {
					b.Fatal(err)
				}
				if i == n/2 {
					middle = res[0].ID
				}
			}
			for _, c := range []struct {
				name, tag string
				to        tags.SeekTarget
				available int64
			}{
				{"oldest", "default", fromOldest, int64(n)},
				{"middle-id", "default", tags.SeekTarget{MessageID: middle}, int64(n / 2)},
				{"filtered-oldest", "reds", fromOldest, int64(n / 2)},
				{"now", "default", tags.SeekTarget{Time: time.Now().Add(time.Hour)}, 0},
			} {
				b.Run(c.name, func(b *testing.B) {
					for range b.N {
						tg, err := s.SeekTag(ctx, "bench-seek", c.tag, c.to)
						if err != nil || tg.State.Available != c.available {
							b.Fatalf("%+v, %v; want %d available", tg, err, c.available)
						}
					}
				})
			}
		})
	}
}
