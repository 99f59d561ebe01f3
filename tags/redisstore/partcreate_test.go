package redisstore

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tagq/tagq/tags"
)

// Creating a queue again with more partitions than it has is
// QUEUE_ALREADY_EXISTS and adds no partition to it (createPartitions once
// made Q#1..Q#P-1 before partition 0 found Q existing, and kept them).
func TestPartitions_CreatingAgainAddsNoPartition(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("one")
		b.queue("two", partitioned(2))
		for _, c := range []struct {
			name string
			n    int32
		}{{"one", 4}, {"two", 4}, {"two", 2}} {
			_, err := b.s.CreateQueue(b.ctx, tags.QueueConfig{Name: c.name, Partitions: &c.n})
			require.Equal(t, tags.ReasonQueueAlreadyExists, tags.ReasonOf(err), "%s with %d: %v", c.name, c.n, err)
		}
		require.Empty(t, b.keys(b.prefix+":{one#*"), "no partition added to a queue of one")
		require.NotEmpty(t, b.keys(b.prefix+":{two#1}:*"), "two keeps its partition 1")
		require.Empty(t, b.keys(b.prefix+":{two#2}:*"))
		require.Empty(t, b.keys(b.prefix+":{two#3}:*"))
		idx, err := b.rdb.ZRange(b.ctx, b.s.partsKey(), 0, -1).Result()
		require.NoError(t, err)
		require.Equal(t, []string{"two#1"}, idx)
		q, err := b.s.GetQueue(b.ctx, "one")
		require.NoError(t, err)
		require.Equal(t, int32(1), q.Partitions)
	})
}
