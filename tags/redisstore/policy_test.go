package redisstore

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tagq/tagq/tags"
)

func TestRedrivePolicy_RulesAndSources(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("orders-dlq", func(c *tags.QueueConfig) { c.DeadLetterQueue = true })
		b.queue("plain")
		pol := &tags.RedrivePolicy{DeadLetterQueue: "orders-dlq", MaxReceiveCount: 2}
		q := b.queue("orders", func(c *tags.QueueConfig) { c.RedrivePolicy = pol })
		require.Equal(t, pol, q.RedrivePolicy)
		dlq, err := b.s.GetQueue(b.ctx, "orders-dlq")
		require.NoError(t, err)
		require.Equal(t, []string{"orders"}, dlq.SourceQueues)

		// Refusals, each naming the field; nothing changes.
		_, err = b.s.CreateQueue(b.ctx, tags.QueueConfig{Name: "x", RedrivePolicy: &tags.RedrivePolicy{DeadLetterQueue: "nope", MaxReceiveCount: 1}})
		requireReason(t, err, tags.ReasonQueueNotFound)
		_, err = b.s.CreateQueue(b.ctx, tags.QueueConfig{Name: "x", RedrivePolicy: &tags.RedrivePolicy{DeadLetterQueue: "plain", MaxReceiveCount: 1}})
		requireReason(t, err, tags.ReasonNotADeadLetterQueue)
		_, err = b.s.CreateQueue(b.ctx, tags.QueueConfig{Name: "x", RedrivePolicy: &tags.RedrivePolicy{DeadLetterQueue: "orders-dlq", MaxReceiveCount: 1001}})
		requireInvalid(t, err, tags.ReasonInvalidArgumentRange, "redrive_policy.max_receive_count")
		_, err = b.s.CreateQueue(b.ctx, tags.QueueConfig{Name: "x", DeadLetterQueue: true, RedrivePolicy: pol})
		requireReason(t, err, tags.ReasonRedriveCycle)
		_, err = b.s.UpdateQueue(b.ctx, "orders-dlq", tags.QueueUpdate{SetRedrivePolicy: true,
			RedrivePolicy: &tags.RedrivePolicy{DeadLetterQueue: "orders-dlq", MaxReceiveCount: 1}})
		requireReason(t, err, tags.ReasonRedriveCycle)
		_, err = b.s.CreateQueue(b.ctx, tags.QueueConfig{Name: "x", MessageRetentionSeconds: i32(tags.MaxRetentionSeconds), RedrivePolicy: pol})
		requireReason(t, err, tags.ReasonInvalidArgumentRange) // the DLQ would keep dead letters shorter
		_, err = b.s.UpdateQueue(b.ctx, "orders-dlq", tags.QueueUpdate{MessageRetentionSeconds: i32(60)})
		requireReason(t, err, tags.ReasonInvalidArgumentRange)
		_, err = b.s.GetQueue(b.ctx, "x")
		requireReason(t, err, tags.ReasonQueueNotFound)

		// Set on another queue by update, moved to another DLQ, removed.
		b.queue("dlq2", func(c *tags.QueueConfig) { c.DeadLetterQueue = true })
		upd, err := b.s.UpdateQueue(b.ctx, "plain", tags.QueueUpdate{SetRedrivePolicy: true, RedrivePolicy: pol})
		require.NoError(t, err)
		require.Equal(t, pol, upd.RedrivePolicy)
		dlq, _ = b.s.GetQueue(b.ctx, "orders-dlq")
		require.Equal(t, []string{"orders", "plain"}, dlq.SourceQueues)
		_, err = b.s.UpdateQueue(b.ctx, "plain", tags.QueueUpdate{SetRedrivePolicy: true, RedrivePolicy: &tags.RedrivePolicy{DeadLetterQueue: "dlq2", MaxReceiveCount: 5}})
		require.NoError(t, err)
		dlq, _ = b.s.GetQueue(b.ctx, "orders-dlq")
		require.Equal(t, []string{"orders"}, dlq.SourceQueues)
		upd, err = b.s.UpdateQueue(b.ctx, "plain", tags.QueueUpdate{SetRedrivePolicy: true})
		require.NoError(t, err)
		require.Nil(t, upd.RedrivePolicy)
		d2, _ := b.s.GetQueue(b.ctx, "dlq2")
		require.Empty(t, d2.SourceQueues)

		// A DLQ in use is not deleted unless forced; force clears policies.
		err = b.s.DeleteQueue(b.ctx, "orders-dlq", false)
		requireReason(t, err, tags.ReasonDeadLetterQueueInUse)
		require.NoError(t, b.s.DeleteQueue(b.ctx, "orders-dlq", true))
		src, err := b.s.GetQueue(b.ctx, "orders")
		require.NoError(t, err)
		require.Nil(t, src.RedrivePolicy)

		// Deleting a source takes it off its DLQ's list.
		b.queue("d3", func(c *tags.QueueConfig) { c.DeadLetterQueue = true })
		b.queue("s3", func(c *tags.QueueConfig) {
			c.RedrivePolicy = &tags.RedrivePolicy{DeadLetterQueue: "d3", MaxReceiveCount: 1}
		})
		require.NoError(t, b.s.DeleteQueue(b.ctx, "s3", false))
		require.NoError(t, b.s.DeleteQueue(b.ctx, "d3", false))
	})
}
