package redisstore

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tagq/tagq/tags"
)

// DESIGN §8: background work is leased per queue, so N replicas do it
// once, and a stopped replica's lease passes on. Two Stores on one backend
// are two replicas; the queue's test clock drives the lease.

func otherReplica(t *testing.T, b *bundle) *Store {
	t.Helper()
	s, err := New(b.ctx, Config{Client: b.rdb, Prefix: b.prefix, Logger: testLogger(t), TestClock: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	require.NotEqual(t, b.s.owner, s.owner)
	return s
}

func streamLen(t *testing.T, b *bundle, q string) int64 {
	t.Helper()
	n, err := b.rdb.XLen(b.ctx, b.s.qkeys(q).stream).Result()
	require.NoError(t, err)
	return n
}

func TestLease_JanitorWorkIsDoneByOneReplicaAndPassesOn(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		a, other := b.s, otherReplica(t, b)
		b.queue("q", func(c *tags.QueueConfig) { c.MessageRetentionSeconds = i32(60) })
		b.advance("q", 0)
		b.send("q", "m1", "m2")

		// a takes the lease for 10 minutes; nothing has expired yet.
		n, held, err := a.trimQueueLeased(b.ctx, "q", a.owner, 10*time.Minute)
		require.NoError(t, err)
		require.Zero(t, n)
		require.Zero(t, held)

		// Two minutes on, both messages' retention has passed. The other
		// replica finds a's lease and leaves the work to it.
		b.advance("q", 2*time.Minute)
		n, held, err = other.trimQueueLeased(b.ctx, "q", other.owner, 10*time.Minute)
		require.NoError(t, err)
		require.Zero(t, n)
		require.Equal(t, 8*time.Minute, held)
		require.EqualValues(t, 2, streamLen(t, b, "q"), "the replica without the lease trimmed nothing")

		// a renews it and does the work.
		n, held, err = a.trimQueueLeased(b.ctx, "q", a.owner, 10*time.Minute)
		require.NoError(t, err)
		require.EqualValues(t, 2, n)
		require.Zero(t, held)
		require.EqualValues(t, 2, b.state("q", "default").ExpiredTotal)

		// a stops (it visits no more). Once its lease lapses, the other
		// replica takes the work over.
		b.send("q", "m3", "m4")
		b.advance("q", 9*time.Minute) // 1 minute before a's lease ends
		_, held, err = other.trimQueueLeased(b.ctx, "q", other.owner, 10*time.Minute)
		require.NoError(t, err)
		require.Equal(t, time.Minute, held)
		b.advance("q", time.Minute+time.Millisecond)
		n, held, err = other.trimQueueLeased(b.ctx, "q", other.owner, 10*time.Minute)
		require.NoError(t, err)
		require.EqualValues(t, 2, n)
		require.Zero(t, held)
		require.EqualValues(t, 4, b.state("q", "default").ExpiredTotal)

		// Now a is the one that waits.
		_, held, err = a.trimQueueLeased(b.ctx, "q", a.owner, time.Minute)
		require.NoError(t, err)
		require.Equal(t, 10*time.Minute, held)

		// An explicit pass (RunJanitor) takes no lease and runs regardless.
		b.send("q", "m5")
		b.advance("q", 2*time.Minute)
		require.NoError(t, a.RunJanitor(b.ctx))
		require.EqualValues(t, 0, streamLen(t, b, "q"))
		require.EqualValues(t, 5, b.state("q", "default").ExpiredTotal)
	})
}

func TestLease_SweepIsDoneByOneReplicaAndPassesOn(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		a, other := b.s, otherReplica(t, b)
		b.queue("dlq", func(c *tags.QueueConfig) { c.DeadLetterQueue = true })
		b.queue("q", func(c *tags.QueueConfig) {
			c.RedrivePolicy = &tags.RedrivePolicy{DeadLetterQueue: "dlq", MaxReceiveCount: 1}
		})
		b.advance("q", 0)
		b.send("q", "poison")
		require.Len(t, b.receive("q", "", 1), 1)

		n, held, err := a.SweepDeadLeased(b.ctx, "q", 5*time.Minute)
		require.NoError(t, err)
		require.Zero(t, n, "not due yet")
		require.Zero(t, held)

		b.advance("q", time.Minute) // past the 30 s visibility timeout
		n, held, err = other.SweepDeadLeased(b.ctx, "q", 5*time.Minute)
		require.NoError(t, err)
		require.Zero(t, n)
		require.Equal(t, 4*time.Minute, held)
		require.EqualValues(t, 0, b.state("q", "default").DeadTotal)

		n, held, err = a.SweepDeadLeased(b.ctx, "q", 5*time.Minute)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		require.Zero(t, held)
		require.EqualValues(t, 1, b.state("q", "default").DeadTotal)
		require.EqualValues(t, 1, b.state("dlq", "default").Available)

		// a stops; after its lease, the other replica sweeps.
		b.send("q", "poison 2")
		require.Len(t, b.receive("q", "", 1), 1)
		b.advance("q", 5*time.Minute+time.Millisecond)
		n, held, err = other.SweepDeadLeased(b.ctx, "q", 5*time.Minute)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		require.Zero(t, held)
		require.EqualValues(t, 2, b.state("dlq", "default").Available)

		// SweepDead (an explicit sweep) ignores the lease.
		b.send("q", "poison 3")
		require.Len(t, b.receive("q", "", 1), 1)
		b.advance("q", time.Minute)
		n, err = a.SweepDead(b.ctx, "q")
		require.NoError(t, err)
		require.Equal(t, 1, n)
	})
}
