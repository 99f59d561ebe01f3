package redisstore

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// Stats reports what GetTag and the queue's keys hold, for every queue and
// tag, in name order.
func TestStats_MatchesGetTagAndBacklogs(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		ordersWithDLQ(b)
		b.send("orders", "a", "b", "c", "d", "e")
		got := b.receive("orders", "billing", 3)
		b.del("orders", got[0])
		deadOnBilling(t, b, "f") // dead-lettered and relayed to orders-dlq
		stageDead(t, b, "orders", "billing", got[1])
		b.receive("orders", "shipping", 2)

		qs, truncated, err := b.s.Stats(b.ctx, 100)
		require.NoError(t, err)
		require.False(t, truncated)
		require.Len(t, qs, 2)
		require.Equal(t, "orders", qs[0].Name)
		require.Equal(t, "orders-dlq", qs[1].Name)
		orders := qs[0]
		require.EqualValues(t, 6, orders.Messages)
		require.EqualValues(t, 1, orders.Outbox, "the staged dead letter waits in the outbox")
		require.EqualValues(t, 1, qs[1].Messages, "f reached the DLQ")
		require.Zero(t, orders.MovesRunning)

		var names []string
		for _, tg := range orders.Tags {
			names = append(names, tg.Name)
			st := tg.State
			st.OldestAvailableAge = 0
			require.Equal(t, b.state("orders", tg.Name), st, tg.Name)
		}
		require.Equal(t, []string{"billing", "default", "shipping"}, names)
		billing := orders.Tags[0].State
		require.EqualValues(t, 2, billing.DeadTotal)
		require.EqualValues(t, 1, billing.DeletedTotal)
		require.EqualValues(t, 1, billing.InFlight)
		require.EqualValues(t, 2, billing.Available)

		task, err := b.s.StartMove(b.ctx, "orders-dlq", "", "", 0)
		require.NoError(t, err)
		qs, _, err = b.s.Stats(b.ctx, 100)
		require.NoError(t, err)
		require.EqualValues(t, 1, qs[1].MovesRunning)
		require.Equal(t, task.Remaining(), qs[1].MovesRemaining)
		require.EqualValues(t, 1, qs[1].MovesRemaining)
	})
}

// Stats pages through more queues than one batch reads, stops before the
// tag that would pass the cap, and leaves deleted queues out.
func TestStats_PagesAndCapsTheTags(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		n := statsBatch + 3
		for i := range n {
			b.queue(fmt.Sprintf("q%04d", i)) // one tag each: default
		}
		require.NoError(t, b.s.DeleteQueue(b.ctx, "q0001", false))
		qs, truncated, err := b.s.Stats(b.ctx, n)
		require.NoError(t, err)
		require.False(t, truncated)
		require.Len(t, qs, n-1)
		require.Equal(t, "q0000", qs[0].Name)
		require.Equal(t, "q0002", qs[1].Name)
		require.Equal(t, fmt.Sprintf("q%04d", n-1), qs[n-2].Name)
		for _, q := range qs {
			require.Len(t, q.Tags, 1, q.Name)
		}

		qs, truncated, err = b.s.Stats(b.ctx, 5)
		require.NoError(t, err)
		require.True(t, truncated)
		require.Len(t, qs, 5)
		require.Equal(t, "q0005", qs[4].Name) // q0001 is gone
	})
}
