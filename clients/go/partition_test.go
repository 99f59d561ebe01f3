package tagq_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	tagq "github.com/tagq/tagq/clients/go"
)

// A partitioned queue from the Go client: Partitions sets the count, the
// queue reports it, every message sent reaches each tag exactly once
// (receipt handles work alone), and a count out of range or on a priority
// queue is refused naming the field.
func TestClient_PartitionedQueue(t *testing.T) {
	c := client(t)
	ctx := context.Background()
	created, err := c.CreateQueue(ctx, "c-parts", tagq.QueueOptions{Partitions: 4})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.DeleteQueue(context.Background(), "c-parts", true) })
	require.Equal(t, int32(4), created.GetPartitions())
	q, err := c.GetQueue(ctx, "c-parts")
	require.NoError(t, err)
	require.Equal(t, int32(4), q.GetPartitions())
	_, err = c.CreateTag(ctx, "c-parts", "audit")
	require.NoError(t, err)

	// Four batches: they rotate over the partitions.
	want := map[string]bool{}
	for b := range 4 {
		var msgs []tagq.Outgoing
		for i := range 3 {
			body := fmt.Sprintf("m%d-%d", b, i)
			want[body] = true
			msgs = append(msgs, tagq.Outgoing{Body: []byte(body)})
		}
		_, err := c.SendBatch(ctx, "c-parts", msgs...)
		require.NoError(t, err)
	}
	for _, tag := range []string{"default", "audit"} {
		got := map[string]bool{}
		for range 10 { // each receive may stop at a partition boundary
			msgs, err := c.Receive(ctx, "c-parts", tagq.ReceiveOptions{Tag: tag, Max: 10})
			require.NoError(t, err)
			for _, m := range msgs {
				require.False(t, got[string(m.GetBody())], "%s received %s twice", tag, m.GetBody())
				got[string(m.GetBody())] = true
				require.NoError(t, c.Delete(ctx, m.GetReceiptHandle()))
			}
			if len(got) == len(want) {
				break
			}
		}
		require.Equal(t, want, got, tag)
		tg, err := c.GetTag(ctx, "c-parts", tag)
		require.NoError(t, err)
		require.Equal(t, int64(len(want)), tg.GetState().GetDeletedTotal(), tag)
	}

	for _, o := range []tagq.QueueOptions{{Partitions: 65}, {Partitions: -1}, {Partitions: 2, PriorityQueue: true}} {
		_, err = c.CreateQueue(ctx, "c-parts-bad", o)
		var e *tagq.Error
		require.ErrorAs(t, err, &e, "%+v", o)
		require.Equal(t, "queue.partitions", e.Field, "%+v", o)
	}
}
