package redisstore

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tagq/tagq/tags"
)

// DESIGN §8: replicas read every queue's figures once per interval between
// them. A replica serves what another read while it is younger than the
// interval; the first to find it older reads anew for all.
func TestSharedStats_OneReadPerIntervalForAllReplicas(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		a, other := b.s, otherReplica(t, b)
		b.queue("q")
		b.send("q", "m1")
		available := func(snap tags.StatsSnapshot) int64 {
			require.Len(t, snap.Queues, 1)
			return snap.Queues[0].Tags[0].State.Available
		}
		t0 := time.Now()
		snap, err := a.SharedStats(b.ctx, 100, 5*time.Second, t0)
		require.NoError(t, err)
		require.EqualValues(t, 1, available(snap))
		require.Equal(t, t0.UnixMilli(), snap.At.UnixMilli())

		b.send("q", "m2")
		snap, err = other.SharedStats(b.ctx, 100, 5*time.Second, t0.Add(4*time.Second))
		require.NoError(t, err)
		require.EqualValues(t, 1, available(snap), "the other replica serves what the first read")
		require.Equal(t, t0.UnixMilli(), snap.At.UnixMilli())
		require.Equal(t, "default", snap.Queues[0].Tags[0].Name)

		snap, err = other.SharedStats(b.ctx, 100, 5*time.Second, t0.Add(5*time.Second))
		require.NoError(t, err)
		require.EqualValues(t, 2, available(snap), "older than the interval: read anew")
		snap, err = a.SharedStats(b.ctx, 100, 5*time.Second, t0.Add(6*time.Second))
		require.NoError(t, err)
		require.EqualValues(t, 2, available(snap))
		require.Equal(t, t0.Add(5*time.Second).UnixMilli(), snap.At.UnixMilli(), "and the first serves that")

		// A replica reading with another cap on tags reads its own.
		snap, err = a.SharedStats(b.ctx, 0, 5*time.Second, t0.Add(6*time.Second))
		require.NoError(t, err)
		require.True(t, snap.Truncated)
		require.Empty(t, snap.Queues)
	})
}

// While another replica holds the lease (it is reading), a replica waits
// for its figures, and serves the older ones if they do not come in time.
func TestSharedStats_WaitsForTheReplicaReading(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("q")
		b.send("q", "m1")
		a := b.s
		a.statsWait = 100 * time.Millisecond
		t0 := time.Now()
		first, err := a.SharedStats(b.ctx, 100, time.Second, t0)
		require.NoError(t, err)
		require.NoError(t, b.rdb.Set(b.ctx, a.statsKey()+":lease", "another", time.Minute).Err())

		snap, err := a.SharedStats(b.ctx, 100, time.Second, t0.Add(2*time.Second))
		require.NoError(t, err)
		require.Equal(t, first.At.UnixMilli(), snap.At.UnixMilli(), "nothing newer came: the older figures")

		a.statsWait = 10 * time.Second
		done := make(chan tags.StatsSnapshot, 1)
		go func() {
			snap, err := a.SharedStats(b.ctx, 100, time.Second, t0.Add(3*time.Second))
			if err != nil {
				t.Errorf("shared stats: %v", err)
			}
			done <- snap
		}()
		time.Sleep(2 * statsPoll)
		newer, ok, err := a.loadStats(b.ctx, 100) // first's figures
		require.NoError(t, err)
		require.True(t, ok)
		newer.at = t0.Add(3 * time.Second)
		require.NoError(t, a.publishStats(b.ctx, newer, 100, time.Second)) // the lease holder's
		select {
		case snap := <-done:
			require.Equal(t, newer.at.UnixMilli(), snap.At.UnixMilli())
		case <-time.After(5 * time.Second):
			t.Fatal("the figures another replica read were not served")
		}
	})
}

// An idle queue (nothing available, in flight or delayed on any tag) that
// got no message, no admission and no new tag since the figures were last
// read is as it was: reading the figures again costs none of its tags'
// state scripts (5,000 idle queues of two tags were 10,000 script calls
// per scrape). Anything that could change it is seen.
func TestSharedStats_IdleQueuesAsTheyWereCostNoTagReads(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		counter := &scriptCounter{}
		b.rdb.AddHook(counter)
		b.queue("idle")
		b.queue("busy")
		b.send("busy", "m")
		b.queue("retagged")
		b.tag("retagged", "x")
		b.send("retagged", "r")
		b.del("retagged", b.receive("retagged", "x", 1)...)
		b.del("retagged", b.receive("retagged", "default", 1)...)
		s := b.s
		t0 := time.Now()
		tagOf := func(snap tags.StatsSnapshot, q, tag string) tags.TagState {
			for _, qs := range snap.Queues {
				for _, tg := range qs.Tags {
					if qs.Name == q && tg.Name == tag {
						return tg.State
					}
				}
			}
			t.Fatalf("no %s/%s in the figures", q, tag)
			return tags.TagState{}
		}
		read := func(at time.Duration) (tags.StatsSnapshot, int64) {
			before := counter.n.Load()
			snap, err := s.SharedStats(b.ctx, 100, time.Second, t0.Add(at))
			require.NoError(t, err)
			return snap, counter.n.Load() - before
		}
		_, calls := read(0)
		require.EqualValues(t, 1+1+2+1, calls, "the first read reads every tag (and unleases)")
		snap, calls := read(2 * time.Second)
		require.EqualValues(t, 1+1, calls, "only busy's tag is read again (and the unlease)")
		require.EqualValues(t, 1, tagOf(snap, "busy", "default").Available)
		require.EqualValues(t, 1, tagOf(snap, "retagged", "x").ReceivedTotal, "idle, as it was")

		// A message to an idle queue, a tag made anew: read again.
		b.send("idle", "new")
		require.NoError(t, s.DeleteTag(b.ctx, "retagged", "x"))
		time.Sleep(2 * time.Millisecond) // another create time
		b.tag("retagged", "x")
		snap, calls = read(4 * time.Second)
		require.EqualValues(t, 1+1+2+1, calls)
		require.EqualValues(t, 1, tagOf(snap, "idle", "default").Available)
		require.Equal(t, tags.TagState{}, tagOf(snap, "retagged", "x"), "the new tag x")
	})
}
