package redisstore

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tagq/tagq/tags"
)

// pelCount is how many entries tag's PEL holds.
func (b *bundle) pelCount(q, tag string) int64 {
	b.t.Helper()
	p, err := b.rdb.XPending(b.ctx, b.s.qkeys(q).stream, tag).Result()
	require.NoError(b.t, err)
	return p.Count
}

// Deliveries stay in the tag's PEL while in flight (see lib.lua). However
// long they sit there, the janitor does not take them for a stalled read;
// once due they come back with the next receive count and the same first
// receive time, and every handle of the stay still deletes.
func TestPELDeliveriesAreInFlightNotStalledReads(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("q", func(c *tags.QueueConfig) { c.VisibilityTimeoutSeconds = i32(30) })
		b.advance("q", 0)
		b.send("q", "a", "b")
		first := b.receive("q", "default", 10)
		require.Len(t, first, 2)
		require.Equal(t, int64(2), b.pelCount("q", "default"), "in flight in the PEL")

		impatient, err := New(b.ctx, Config{Client: b.rdb, Prefix: b.prefix, TestClock: true,
			StalledRead: time.Nanosecond})
		require.NoError(t, err)
		defer impatient.Close()
		require.NoError(t, impatient.RunJanitor(b.ctx))
		require.Equal(t, int64(2), b.pelCount("q", "default"))
		require.Equal(t, tags.TagState{InFlight: 2, ReceivedTotal: 2}, b.state("q", "default"))
		require.Empty(t, b.receive("q", "default", 10))

		b.advance("q", 31*time.Second)
		require.Equal(t, tags.TagState{Available: 2, ReceivedTotal: 2}, b.state("q", "default"))
		again := b.receive("q", "default", 10)
		require.Len(t, again, 2)
		require.Zero(t, b.pelCount("q", "default"), "redelivered from the zset")
		for _, m := range again {
			require.Equal(t, 2, m.ReceiveCount)
			require.Equal(t, first[0].FirstReceiveTime, m.FirstReceiveTime)
		}
		// The first handles are stale for visibility, and still delete.
		errs, err := b.s.ChangeVisibility(b.ctx, "q", []tags.VisibilityChange{{ReceiptHandle: first[0].ReceiptHandle}})
		require.NoError(t, err)
		requireReason(t, errs[0], tags.ReasonReceiptHandleStale)
		b.del("q", first...)
		require.Equal(t, tags.TagState{ReceivedTotal: 4, DeletedTotal: 2}, b.state("q", "default"))
	})
}

// A receive reads, then records in its script. When the janitor recovered
// the read in between (its tagqd looked dead), the script hands out
// nothing of it: the recovered entries come with the next receive, once.
func TestReceiveAfterItsReadWasRecoveredHandsOutNothing(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("q")
		ids := b.send("q", "a", "b")
		k := b.s.qkeys("q")

		// Undisturbed, the epoch read with the entries lets the script
		// record them as they are.
		fresh, epoch, ok, err := b.s.readNew(b.ctx, k, "default", 1)
		require.NoError(t, err)
		require.True(t, ok)
		r, err := b.s.receiveScript(b.ctx, "q", "default", "", 1, -1, false, false, fresh, epoch)
		require.NoError(t, err)
		require.Len(t, r.msgs, 1)
		require.Equal(t, ids[0], r.msgs[0].ID)

		fresh, epoch, _, err = b.s.readNew(b.ctx, k, "default", 1)
		require.NoError(t, err)
		require.Len(t, fresh, 1)
		impatient, err := New(b.ctx, Config{Client: b.rdb, Prefix: b.prefix, TestClock: true,
			StalledRead: time.Nanosecond})
		require.NoError(t, err)
		defer impatient.Close()
		require.NoError(t, impatient.RunJanitor(b.ctx))
		r, err = b.s.receiveScript(b.ctx, "q", "default", "", 1, -1, false, false, fresh, epoch)
		require.NoError(t, err)
		require.Empty(t, r.msgs, "its read was recovered: not handed out twice")
		require.Equal(t, tags.TagState{Available: 1, InFlight: 1, ReceivedTotal: 1}, b.state("q", "default"))

		got := b.receive("q", "default", 10)
		require.Len(t, got, 1)
		require.Equal(t, ids[1], got[0].ID)
		require.Equal(t, 1, got[0].ReceiveCount)
		require.Equal(t, tags.TagState{InFlight: 2, ReceivedTotal: 2}, b.state("q", "default"))
	})
}

// The janitor trims below the PEL's first delivery (from the start of its
// second of ids, as for the zset's), never the delivery itself.
func TestJanitorTrimsBelowThePELOnly(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("q")
		b.advance("q", 0)
		b.send("q", "a")
		b.advance("q", 2*time.Second)
		b.send("q", "b", "c")
		msgs := b.receive("q", "default", 10)
		require.Len(t, msgs, 3)
		require.Equal(t, int64(3), b.pelCount("q", "default"))
		b.del("q", msgs[0], msgs[2])
		require.NoError(t, b.s.RunJanitor(b.ctx))
		stream := b.s.qkeys("q").stream
		left, err := b.rdb.XRange(b.ctx, stream, "-", "+").Result()
		require.NoError(t, err)
		require.Len(t, left, 2, "a went; b is in flight, c in its second")
		require.Equal(t, msgs[1].ID, left[0].ID)
		b.del("q", msgs[1])
		require.NoError(t, b.s.RunJanitor(b.ctx))
		require.Zero(t, b.rdb.XLen(b.ctx, stream).Val())
		require.Equal(t, tags.TagState{ReceivedTotal: 3, DeletedTotal: 3}, b.state("q", "default"))
	})
}

// With max_receive_count 1 a delivery still in the PEL is at its last
// receive: once its visibility passes, the sweep dead-letters it (S7),
// with no receive needed; a receive never hands it out again.
func TestPELDeliveryAtMaxReceiveCountOneIsSweptWhenDue(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("q-dlq", func(c *tags.QueueConfig) { c.DeadLetterQueue = true })
		b.queue("q", func(c *tags.QueueConfig) {
			c.VisibilityTimeoutSeconds = i32(30)
			c.RedrivePolicy = &tags.RedrivePolicy{DeadLetterQueue: "q-dlq", MaxReceiveCount: 1}
		})
		b.advance("q", 0)
		b.send("q", "a", "b")
		got := b.receive("q", "default", 10)
		require.Len(t, got, 2)
		require.Equal(t, int64(2), b.pelCount("q", "default"))
		b.del("q", got[1])
		n, err := b.s.SweepDead(b.ctx, "q")
		require.NoError(t, err)
		require.Zero(t, n, "not due yet")

		b.advance("q", 30*time.Second)
		n, err = b.s.SweepDead(b.ctx, "q")
		require.NoError(t, err)
		require.Equal(t, 1, n)
		require.Zero(t, b.pelCount("q", "default"))
		require.Equal(t, tags.TagState{ReceivedTotal: 2, DeletedTotal: 1, DeadTotal: 1}, b.state("q", "default"))
		require.Empty(t, b.receive("q", "default", 10))
		require.Equal(t, []string{"a"}, bodies(b.receive("q-dlq", "", 10)))
	})
}

// A batch whose deliveries are all settled loses its record at once, so
// its deadline wakes no receive; one with a delivery left keeps it.
func TestSettledBatchesLeaveTheirRecord(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("q")
		records := func() int64 { return b.rdb.ZCard(b.ctx, b.s.qkeys("q").tag("default").batches).Val() }
		b.send("q", "a", "b")
		first := b.receive("q", "default", 2)
		b.send("q", "c", "d")
		second := b.receive("q", "default", 2)
		require.Equal(t, int64(2), records())
		b.del("q", first[0], second[0])
		require.Equal(t, int64(2), records(), "both batches still hold a delivery")
		b.del("q", first[1])
		require.Equal(t, int64(1), records(), "the first batch is settled")
		b.del("q", second[1])
		require.Zero(t, records())
		require.Equal(t, tags.TagState{ReceivedTotal: 4, DeletedTotal: 4}, b.state("q", "default"))
	})
}

// A batch of settlements larger than one settle.lua call takes (Lua's
// stack holds 8,000 unpacked values) goes in several calls, in the batch's
// order: a consume stream giving back 10,000 outstanding messages at once
// (its clean close) failed whole before.
func TestSettleTakesBatchesBeyondOneScriptCall(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("q")
		const n = 8200
		var got []tags.Message
		for len(got) < n {
			batch := make([]string, 100)
			for i := range batch {
				batch[i] = "m"
			}
			b.send("q", batch...)
			got = append(got, b.receive("q", "", 100)...)
		}
		sb := &tags.SettleBatch{Queue: "q", Tag: got[0].Tag}
		for i, m := range got {
			// The first half nacked, then everything acked: the acks come
			// after the nacks whatever the call they fall in.
			if i < n/2 {
				sb.Ops = append(sb.Ops, tags.Settlement{Kind: tags.SettleVisibility, Delivery: m.Delivery("q")})
			}
		}
		for _, m := range got[n/2:] {
			sb.Ops = append(sb.Ops, tags.Settlement{Kind: tags.SettleAck, Delivery: m.Delivery("q")})
		}
		for _, m := range got[:10] {
			sb.Ops = append(sb.Ops, tags.Settlement{Kind: tags.SettleAck, Delivery: m.Delivery("q")})
		}
		require.NoError(t, b.s.Settle(b.ctx, []*tags.SettleBatch{sb}))
		for i, e := range sb.Errs {
			require.NoError(t, e, "op %d", i)
		}
		require.Equal(t, tags.TagState{Available: n/2 - 10, ReceivedTotal: n, DeletedTotal: n/2 + 10}, b.state("q", "default"))
	})
}
