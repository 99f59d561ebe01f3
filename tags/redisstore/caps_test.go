package redisstore

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tagq/tagq/tags"
)

// prodStore is a second Store on b's Redis and prefix on the production
// clock, so that its sends take the fast path (plain XADDs + sendpost.lua).
func prodStore(t *testing.T, b *bundle) *Store {
	t.Helper()
	s, err := New(b.ctx, Config{Client: b.rdb, Prefix: b.prefix, Logger: testLogger(t)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// eachSendPath runs fn on each backend once per send path: "slow"
// (send.lua, as under the test clock) and "fast" (plain XADDs and
// sendpost.lua, on the production clock), with the store that takes it.
func eachSendPath(t *testing.T, fn func(t *testing.T, b *bundle, path string, s *Store)) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		fn(t, b, "slow", b.s)
		fn(t, b, "fast", prodStore(t, b))
	})
}

// requireSizes checks a queue's size bookkeeping against its stream: one
// size in z per entry (and per out-of-order deletion still noted in zh),
// rb their sum (less the deleted), and rb the sizes of the messages left.
func (b *bundle) requireSizes(q string, wantBytes int64) {
	b.t.Helper()
	k := b.s.qkeys(q)
	xlen := b.rdb.XLen(b.ctx, k.stream).Val()
	holes := b.rdb.ZRange(b.ctx, k.holes, 0, -1).Val()
	sizes := b.rdb.LRange(b.ctx, k.sizes, 0, -1).Val()
	require.Len(b.t, sizes, int(xlen)+len(holes), "one size per stream entry and per hole")
	var sum int64
	for _, v := range sizes {
		n, err := strconv.ParseInt(v, 10, 64)
		require.NoError(b.t, err)
		sum += n
	}
	for _, h := range holes {
		n, err := strconv.ParseInt(h[strings.LastIndexByte(h, ':')+1:], 10, 64)
		require.NoError(b.t, err)
		sum -= n
	}
	qi, err := b.s.GetQueue(b.ctx, q)
	require.NoError(b.t, err)
	require.Equal(b.t, sum, qi.RetainedBytes, "rb is the sum of z")
	require.Equal(b.t, wantBytes, qi.RetainedBytes)
	require.Equal(b.t, xlen, qi.RetainedMessages)
}

// The backlog: a queue read only by named tags kept every message
// for the whole retention, because the default tag made with it never read
// them. Without a default tag, what both tags finish is trimmed.
func TestNoDefaultTagQueueKeepsNothingItsTagsFinished(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		prod := prodStore(t, b)
		_, err := b.s.CreateQueue(b.ctx, tags.QueueConfig{Name: "bad", NoDefaultTag: true, DefaultTagName: "x"})
		requireReason(t, err, tags.ReasonInvalidArgumentRange)
		require.Equal(t, "default_tag_name", mustError(t, err).Field)

		for _, name := range []string{"orders", "with-default"} {
			q := b.queue(name, func(c *tags.QueueConfig) { c.NoDefaultTag = name == "orders" })
			b.tag(name, "billing")
			b.tag(name, "shipping")
			if name == "orders" {
				require.Empty(t, q.DefaultTagName)
				got, err := b.s.GetQueue(b.ctx, name)
				require.NoError(t, err)
				require.Nil(t, got.DefaultTag)
				require.Equal(t, 2, got.TagCount)
				_, err = b.s.Receive(b.ctx, name, "", tags.ReceiveOptions{MaxMessages: 1, WaitSeconds: i32(0)})
				requireReason(t, err, tags.ReasonTagNotFound)
				e := mustError(t, err)
				require.Equal(t, tags.KindNotFound, e.Kind)
				require.Equal(t, "tag", e.Field)
				require.Equal(t, name, e.Metadata["queue"])
			}
			for i := range 40 {
				sender := b.s
				if i%2 == 1 {
					sender = prod // the fast path too
				}
				res, err := sender.Send(b.ctx, name, []tags.OutMessage{{Body: []byte("m" + strconv.Itoa(i))}})
				require.NoError(t, err)
				require.NoError(t, res[0].Err)
			}
			b.advance(name, time.Minute)
			for _, tag := range []string{"billing", "shipping"} {
				got := b.receive(name, tag, 100)
				require.Len(t, got, 40)
				b.del(name, got...)
			}
			b.advance(name, time.Minute)
			require.NoError(t, b.s.RunJanitor(b.ctx))
		}
		require.Zero(t, b.rdb.XLen(b.ctx, b.s.qkeys("orders").stream).Val(), "both tags finished every message")
		b.requireSizes("orders", 0)
		require.EqualValues(t, 40, b.rdb.XLen(b.ctx, b.s.qkeys("with-default").stream).Val(),
			"the unread default tag holds every message (the behaviour no_default_tag avoids)")
		require.Equal(t, tags.TagState{ReceivedTotal: 40, DeletedTotal: 40}, b.state("orders", "billing"))
	})
}

func mustError(t *testing.T, err error) *tags.Error {
	t.Helper()
	e, ok := tags.AsError(err)
	require.True(t, ok, "not an engine error: %v", err)
	return e
}

func TestCapsAreValidatedNamingTheField(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		i64 := func(v int64) *int64 { return &v }
		for _, c := range []struct {
			cfg   tags.QueueConfig
			field string
		}{
			{tags.QueueConfig{MaxRetainedMessages: i64(-1)}, "max_retained_messages"},
			{tags.QueueConfig{MaxRetainedMessages: i64(tags.MaxRetainedMessagesLimit + 1)}, "max_retained_messages"},
			{tags.QueueConfig{MaxRetainedBytes: i64(-5)}, "max_retained_bytes"},
			{tags.QueueConfig{MaxRetainedBytes: i64(tags.DefaultMaxMessageBytes - 1)}, "max_retained_bytes"},
			{tags.QueueConfig{MaxRetainedBytes: i64(tags.MaxRetainedBytesLimit + 1)}, "max_retained_bytes"},
			{tags.QueueConfig{Overflow: tags.Overflow(7)}, "overflow_policy"},
		} {
			c.cfg.Name = "q"
			_, err := b.s.CreateQueue(b.ctx, c.cfg)
			requireReason(t, err, tags.ReasonInvalidArgumentRange)
			require.Equal(t, c.field, mustError(t, err).Field)
		}
		q := b.queue("q", func(c *tags.QueueConfig) { c.MaxRetainedBytes = i64(4096); c.MaxMessageBytes = i32(2048) })
		require.Equal(t, tags.OverflowRejectNew, q.Overflow, "the default policy")
		got, err := b.s.GetQueue(b.ctx, "q")
		require.NoError(t, err)
		require.EqualValues(t, 4096, got.MaxRetainedBytes)
		require.Zero(t, got.MaxRetainedMessages)
		require.Equal(t, tags.OverflowRejectNew, got.Overflow)

		// An update may not leave the byte cap below max_message_bytes,
		// whichever of the two it changes.
		_, err = b.s.UpdateQueue(b.ctx, "q", tags.QueueUpdate{MaxMessageBytes: i32(8192)})
		requireReason(t, err, tags.ReasonInvalidArgumentRange)
		require.Equal(t, "max_message_bytes", mustError(t, err).Field)
		_, err = b.s.UpdateQueue(b.ctx, "q", tags.QueueUpdate{MaxRetainedBytes: i64(1024)})
		require.Equal(t, "max_retained_bytes", mustError(t, err).Field)
		drop := tags.OverflowDropOldest
		got, err = b.s.UpdateQueue(b.ctx, "q", tags.QueueUpdate{MaxRetainedBytes: i64(0), MaxRetainedMessages: i64(10), Overflow: &drop})
		require.NoError(t, err)
		require.Zero(t, got.MaxRetainedBytes)
		require.EqualValues(t, 10, got.MaxRetainedMessages)
		require.Equal(t, tags.OverflowDropOldest, got.Overflow)
	})
}

// sendEach sends one batch through s and returns each entry's reason ("" =
// stored).
func sendEach(t *testing.T, s *Store, b *bundle, q string, bodies ...string) []string {
	t.Helper()
	msgs := make([]tags.OutMessage, len(bodies))
	for i, body := range bodies {
		msgs[i] = tags.OutMessage{Body: []byte(body)}
	}
	res, err := s.Send(b.ctx, q, msgs)
	require.NoError(t, err)
	out := make([]string, len(res))
	for i, r := range res {
		if r.Err != nil {
			out[i] = tags.ReasonOf(r.Err)
			e := mustError(t, r.Err)
			if out[i] == tags.ReasonQueueFull {
				require.Equal(t, tags.KindResourceExhausted, e.Kind)
				require.Equal(t, q, e.Metadata["queue"])
			}
		}
	}
	return out
}

// OverflowRejectNew: the entries that fit are stored, in order, the rest
// refused with QUEUE_FULL; whatever was refused is not in the stream and
// whatever was acknowledged is. Both send paths (send.lua under the test
// clock, the fast path with sendpost.lua on the production clock).
func TestCapsRejectNewRefusesWhatDoesNotFit(t *testing.T) {
	eachSendPath(t, func(t *testing.T, b *bundle, path string, s *Store) {
		q := "count-" + path
		b.queue(q, func(c *tags.QueueConfig) {
			c.MaxRetainedMessages = new(int64)
			*c.MaxRetainedMessages = 3
			c.NoDefaultTag = true
		})
		b.tag(q, "t")
		full := tags.ReasonQueueFull
		require.Equal(t, []string{"", "", "", full, full}, sendEach(t, s, b, q, "1", "2", "3", "4", "5"))
		require.Equal(t, []string{full}, sendEach(t, s, b, q, "6"), "a full queue refuses, and again")
		require.Equal(t, []string{full}, sendEach(t, s, b, q, "7"))
		b.requireSizes(q, 3)
		got := b.receive(q, "t", 10)
		require.Equal(t, []string{"1", "2", "3"}, bodies(got), "nothing refused reached the stream")
		b.del(q, got...)
		require.NoError(t, b.s.RunJanitor(b.ctx))
		b.requireSizes(q, 0)
		require.Equal(t, []string{"", "", "", full}, sendEach(t, s, b, q, "8", "9", "10", "11"), "room again")
		require.Equal(t, tags.TagState{Available: 3, ReceivedTotal: 3, DeletedTotal: 3}, b.state(q, "t"))

		// Bytes: 1000 + 1000 fit in 2048, a third message does not,
		// even a small one after it (a batch is stored in order).
		q = "bytes-" + path
		b.queue(q, func(c *tags.QueueConfig) {
			c.MaxMessageBytes = i32(1024)
			c.MaxRetainedBytes = new(int64)
			*c.MaxRetainedBytes = 2048
		})
		k := strings.Repeat("k", 1000)
		require.Equal(t, []string{"", "", full, full}, sendEach(t, s, b, q, k, k, "x"+k, "y"))
		b.requireSizes(q, 2000)
		require.Equal(t, int64(2), b.state(q, "default").Available)
	})
}

// A cap lowered below what a queue holds refuses every send until the
// queue drains below it; the fast path learns it from sendpost.lua.
func TestCapsRejectNewAfterTheCapIsLowered(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		s := prodStore(t, b)
		b.queue("q")
		require.Equal(t, []string{"", "", "", ""}, sendEach(t, s, b, "q", "1", "2", "3", "4"))
		two := int64(2)
		_, err := b.s.UpdateQueue(b.ctx, "q", tags.QueueUpdate{MaxRetainedMessages: &two})
		require.NoError(t, err)
		require.Equal(t, []string{tags.ReasonQueueFull}, sendEach(t, s, b, "q", "5"))
		require.Equal(t, []string{tags.ReasonQueueFull}, sendEach(t, s, b, "q", "6"))
		b.del("q", b.receive("q", "", 3)...)
		require.NoError(t, b.s.RunJanitor(b.ctx))
		require.Equal(t, []string{"", tags.ReasonQueueFull}, sendEach(t, s, b, "q", "7", "8"))
		require.Equal(t, []string{"4", "7"}, bodies(b.receive("q", "", 10)))
		b.requireSizes("q", 2)
	})
}

// OverflowDropOldest: sends are stored and the oldest messages go, each
// counted as expired by every tag that had not finished it (never read:
// unread; read and not deleted: in flight), and as dropped by the queue.
func TestCapsDropOldestCountsWhatEachTagLost(t *testing.T) {
	eachSendPath(t, func(t *testing.T, b *bundle, path string, s *Store) {
		q := "q-" + path
		b.queue(q, func(c *tags.QueueConfig) {
			c.NoDefaultTag = true
			c.MaxRetainedMessages = new(int64)
			*c.MaxRetainedMessages = 5
			c.Overflow = tags.OverflowDropOldest
		})
		eu := "eu"
		b.tag(q, "a")
		b.tag(q, "b")
		b.tag(q, "c", func(c *tags.TagConfig) {
			c.Filter = &tags.Filter{Conditions: []tags.Condition{{Name: "region", Value: &eu}}}
		})
		inEU := tags.OutMessage{Body: []byte("2"), Attributes: map[string]tags.Attribute{"region": {String: "eu"}}}
		send := func(msgs ...tags.OutMessage) {
			res, err := s.Send(b.ctx, q, msgs)
			require.NoError(t, err)
			for _, r := range res {
				require.NoError(t, r.Err)
			}
		}
		send(tags.OutMessage{Body: []byte("1")}, inEU, tags.OutMessage{Body: []byte("3")}, tags.OutMessage{Body: []byte("4")},
			tags.OutMessage{Body: []byte("5")})
		got := b.receive(q, "a", 2)
		require.Equal(t, []string{"1", "2"}, bodies(got))
		b.del(q, got[0]) // a finished 1; 2 is in flight
		require.Equal(t, []string{"2"}, bodies(b.receive(q, "c", 1)))
		b.del(q, b.receive(q, "b", 1)...) // b finished 1

		// Three more: 1, 2 and 3 go.
		send(tags.OutMessage{Body: []byte("6")}, tags.OutMessage{Body: []byte("7")},
			tags.OutMessage{Body: []byte("8"), Attributes: map[string]tags.Attribute{"region": {String: "eu"}}})
		qi, err := b.s.GetQueue(b.ctx, q)
		require.NoError(t, err)
		require.EqualValues(t, 5, qi.RetainedMessages)
		require.EqualValues(t, 2, qi.DroppedTotal, "1 was finished by every tag that wanted it; 2 and 3 were not")
		b.requireSizes(q, int64(5+len("region")+len("eu")))
		require.Equal(t, tags.TagState{Available: 5, ReceivedTotal: 2, DeletedTotal: 1, ExpiredTotal: 2}, b.state(q, "a"),
			"a lost 2 (in flight) and 3 (unread)")
		require.Equal(t, tags.TagState{Available: 5, ReceivedTotal: 1, DeletedTotal: 1, ExpiredTotal: 2}, b.state(q, "b"))
		require.Equal(t, tags.TagState{Available: 1, ReceivedTotal: 1, ExpiredTotal: 1}, b.state(q, "c"), "c lost 2, in flight")
		require.Equal(t, []string{"4", "5", "6", "7", "8"}, bodies(b.receive(q, "a", 10)))
		require.Equal(t, []string{"8"}, bodies(b.receive(q, "c", 10)))
	})
}

// The byte cap with OverflowDropOldest drops as many of the oldest as it
// takes, and retention expiry counts the same way the policy does.
func TestCapsDropOldestByBytes(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("q", func(c *tags.QueueConfig) {
			c.MaxMessageBytes = i32(1024)
			c.MaxRetainedBytes = new(int64)
			*c.MaxRetainedBytes = 3000
			c.Overflow = tags.OverflowDropOldest
		})
		k := strings.Repeat("k", 1000)
		b.send("q", "a"+k[1:], "b"+k[1:], "c"+k[1:]) // 3000: full, not over
		b.requireSizes("q", 3000)
		b.send("q", strings.Repeat("d", 1024)) // 4024: a and b go
		b.requireSizes("q", 2024)
		got := b.receive("q", "", 10)
		require.Len(t, got, 2)
		require.Equal(t, byte('c'), got[0].Body[0])
		require.Equal(t, tags.TagState{InFlight: 2, ReceivedTotal: 2, ExpiredTotal: 2}, b.state("q", "default"))

		// Retention: both in flight expire, counted alike.
		b.advance("q", tags.DefaultRetention*time.Second+time.Minute)
		require.NoError(t, b.s.RunJanitor(b.ctx))
		require.Equal(t, tags.TagState{ReceivedTotal: 2, ExpiredTotal: 4}, b.state("q", "default"))
		qi, err := b.s.GetQueue(b.ctx, "q")
		require.NoError(t, err)
		require.EqualValues(t, 2, qi.DroppedTotal, "expiry is not a drop")
		b.requireSizes("q", 0)
	})
}

// Dead letters count toward a DLQ's bytes, and leave it exactly when they
// are moved back out of order (a hole in z) or trimmed.
func TestRetainedBytesFollowDeadLettersAndMoves(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		ordersWithDLQ(b)
		deadOnBilling(t, b, "one", "two", "three")
		b.requireSizes("orders-dlq", int64(len("one")+len("two")+len("three"))+3*int64(len(tags.SourceQueueAttribute)+len("orders")))
		_, err := b.s.StartMove(b.ctx, "orders-dlq", "", "", 0)
		require.NoError(t, err)
		require.Equal(t, 3, runMoveToEnd(t, b, "orders-dlq"))
		b.requireSizes("orders-dlq", 0)
		require.NoError(t, b.s.RunJanitor(b.ctx))
		b.requireSizes("orders-dlq", 0)
		b.requireSizes("orders", 2*int64(len("one")+len("two")+len("three"))) // the originals, and the moved back

		// Purge starts the bookkeeping again.
		_, err = b.s.PurgeQueue(b.ctx, "orders")
		require.NoError(t, err)
		b.requireSizes("orders", 0)
		b.send("orders", "abc")
		b.requireSizes("orders", 3)
	})
}

// A cap set by another process: the fast path's first send finds out from
// sendpost.lua (taking back what does not fit), and the sends after it
// look at the room first, sending no body to a full queue.
func TestCapsSetElsewhereReachTheFastPath(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		s := prodStore(t, b)
		b.queue("q")
		require.Equal(t, []string{""}, sendEach(t, s, b, "q", "1"))
		lim, _ := s.limits.Load("q")
		require.False(t, lim.(sendLimits).reject)
		two := int64(2)
		_, err := b.s.UpdateQueue(b.ctx, "q", tags.QueueUpdate{MaxRetainedMessages: &two})
		require.NoError(t, err)
		require.Equal(t, []string{"", tags.ReasonQueueFull}, sendEach(t, s, b, "q", "2", "3"))
		_, cached := s.limits.Load("q")
		require.False(t, cached, "the limits are read again")
		require.Equal(t, []string{tags.ReasonQueueFull}, sendEach(t, s, b, "q", "4"))
		lim, _ = s.limits.Load("q")
		require.True(t, lim.(sendLimits).reject)
		r, _ := s.rooms.Load("q")
		require.Equal(t, room{msgs: 0, bytes: math.MaxInt64}, r)
		require.Equal(t, []string{"1", "2"}, bodies(b.receive("q", "", 10)))
		b.requireSizes("q", 2)
	})
}

// A queue made before the size bookkeeping has entries without a size:
// trimming them takes nothing off retained_bytes, and the sizes of the
// newer entries stay theirs.
func TestRetainedBytesOfAQueueOlderThanTheBookkeeping(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("q")
		b.send("q", "old1", "old2", "old3")
		k := b.s.qkeys("q")
		require.NoError(t, b.rdb.Del(b.ctx, k.sizes).Err()) // as a queue made before it
		require.NoError(t, b.rdb.HDel(b.ctx, k.meta, "rb").Err())
		b.del("q", b.receive("q", "", 3)...)
		b.advance("q", 2*time.Second) // a later second than the old ones (the janitor trims by second)
		b.send("q", "new-one1", "new-two2")
		require.NoError(t, b.s.RunJanitor(b.ctx))
		b.requireSizes("q", 16)
		b.del("q", b.receive("q", "", 3)...)
		b.advance("q", 2*time.Second)
		require.NoError(t, b.s.RunJanitor(b.ctx))
		b.requireSizes("q", 0)
	})
}
