package redrive

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tagq/tagq/tags"
)

// Each queue is one live worker's; they share the queues about evenly; a
// worker that leaves gives away its own queues and nothing else moves.
func TestShares_EachQueueHasOneWorker(t *testing.T) {
	live := []string{"a1", "b2", "c3", "d4"}
	sh := map[string]*shares{}
	for _, w := range live {
		sh[w] = &shares{self: w}
		sh[w].set(live)
	}
	owner := map[string]string{}
	count := map[string]int{}
	for i := range 10000 {
		q := fmt.Sprintf("queue-%d", i)
		for _, w := range live {
			if sh[w].mine(q) {
				require.Empty(t, owner[q], "queue %s has two workers", q)
				owner[q] = w
				count[w]++
			}
		}
		require.NotEmpty(t, owner[q], "queue %s has no worker", q)
	}
	for _, w := range live {
		require.InDelta(t, 2500, count[w], 250, "worker %s has %d of 10000 queues", w, count[w])
	}
	rest := []string{"a1", "c3", "d4"}
	for _, w := range rest {
		sh[w].set(rest)
	}
	for q, was := range owner {
		var now string
		for _, w := range rest {
			if sh[w].mine(q) {
				now = w
			}
		}
		if was != "b2" {
			require.Equal(t, was, now, "queue %s moved though its worker stayed", q)
		}
		require.NotEmpty(t, now)
	}

	// A worker that has not heard of the others yet takes every queue.
	require.True(t, (&shares{self: "x"}).mine("queue-1"))
}

// Two replicas' workers visit each queue from one of them only (each
// queue's janitor lease is taken by one owner), and when one stops, the
// other takes its queues at once.
func TestShares_ReplicasSplitTheQueues(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rdb, rs := bubbleReplicas(t, 2)
		ctx := context.Background()
		var names []string
		for i := range 20 {
			q := fmt.Sprintf("q%d", i)
			_, err := rs[0].s.CreateQueue(ctx, tags.QueueConfig{Name: q})
			require.NoError(t, err)
			names = append(names, q)
		}
		holders := func() map[string]string {
			out := map[string]string{}
			for _, q := range names {
				v := rdb.HGet(ctx, "live:{"+q+"}:m", "lj").Val()
				out[q] = strings.Fields(v + " ")[0]
			}
			return out
		}
		time.Sleep(namesEvery + 2*time.Second) // both beat, list the queues and visit them
		byWorker := map[string]int{}
		for q, h := range holders() {
			require.Contains(t, []string{rs[0].s.Owner(), rs[1].s.Owner()}, h, "queue %s", q)
			mine0 := rs[0].w.shares.mine(q)
			require.Equal(t, mine0, h == rs[0].s.Owner(), "queue %s visited by %s", q, h)
			require.NotEqual(t, mine0, rs[1].w.shares.mine(q))
			byWorker[h]++
		}
		require.Len(t, byWorker, 2, "both workers have a share: %v", byWorker)

		// Leases are renewed only by the queue's worker: leave them to lapse,
		// stop one worker; the other takes every queue.
		rs[1].w.Stop()
		time.Sleep(tags.LeaseGrace + janitorIdleMax)
		for q, h := range holders() {
			require.Equal(t, rs[0].s.Owner(), h, "queue %s", q)
		}
	})
}

// A redrive policy set on one replica is swept by whichever worker has the
// queue within seconds (the work epoch), though workers read their queues
// for work only when it moves (or every discoverAll).
func TestShares_NewWorkIsFoundWithinSeconds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, rs := bubbleReplicas(t, 2)
		ctx := context.Background()
		a := rs[0].s
		_, err := a.CreateQueue(ctx, tags.QueueConfig{Name: "dlq", DeadLetterQueue: true})
		require.NoError(t, err)
		_, err = a.CreateQueue(ctx, tags.QueueConfig{Name: "q", VisibilityTimeoutSeconds: i32(1)})
		require.NoError(t, err)
		time.Sleep(2 * discoverEvery) // both have looked for work: none
		_, err = a.UpdateQueue(ctx, "q", tags.QueueUpdate{SetRedrivePolicy: true,
			RedrivePolicy: &tags.RedrivePolicy{DeadLetterQueue: "dlq", MaxReceiveCount: 1}})
		require.NoError(t, err)
		_, err = a.Send(ctx, "q", []tags.OutMessage{{Body: []byte("m")}})
		require.NoError(t, err)
		got, err := a.Receive(ctx, "q", "", tags.ReceiveOptions{MaxMessages: 1, WaitSeconds: i32(0)})
		require.NoError(t, err)
		require.Len(t, got, 1)
		start := time.Now()
		for {
			tg, err := a.GetTag(ctx, "dlq", "default")
			require.NoError(t, err)
			if tg.State.Available == 1 {
				break
			}
			require.Less(t, time.Since(start), discoverEvery+3*time.Second, "not dead-lettered")
			time.Sleep(100 * time.Millisecond)
		}
		require.Less(t, time.Since(start), discoverAll)
		t.Logf("dead-lettered %v after its receive (visibility 1 s)", time.Since(start))
	})
}
