package tagqtest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	tagq "github.com/tagq/tagq/clients/go"
	"github.com/tagq/tagq/tagqtest"
)

// The example a user's test follows: start a server, point the client at
// it, drive time instead of sleeping. Billing reads an order, crashes
// before deleting it, gets it again once the visibility timeout passes,
// and after the second failure the order is in the dead-letter queue.
func TestExample_RetryThenDeadLetter(t *testing.T) {
	srv := tagqtest.NewServer(t)
	ctx := context.Background()
	c, err := tagq.Dial(srv.GRPCAddr)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })

	_, err = c.CreateQueue(ctx, "orders-dlq", tagq.QueueOptions{DeadLetterQueue: true})
	require.NoError(t, err)
	_, err = c.CreateQueue(ctx, "orders", tagq.QueueOptions{NoDefaultTag: true, VisibilityTimeout: 30 * time.Second,
		RedriveTo: "orders-dlq", MaxReceiveCount: 2})
	require.NoError(t, err)
	_, err = c.CreateTag(ctx, "orders", "billing")
	require.NoError(t, err)
	_, err = c.Send(ctx, "orders", tagq.Outgoing{Body: []byte(`{"order":1}`)})
	require.NoError(t, err)

	billing := tagq.ReceiveOptions{Tag: "billing", Max: 10}
	got, err := c.Receive(ctx, "orders", billing)
	require.NoError(t, err)
	require.Len(t, got, 1)
	got, err = c.Receive(ctx, "orders", billing)
	require.NoError(t, err)
	require.Empty(t, got, "in flight for 30 s")

	srv.FastForward(31 * time.Second)
	got, err = c.Receive(ctx, "orders", billing)
	require.NoError(t, err)
	require.Len(t, got, 1, "back after the visibility timeout")
	require.EqualValues(t, 2, got[0].GetReceiveCount())

	srv.FastForward(31 * time.Second) // the second failure: dead-lettered
	tag, err := c.GetTag(ctx, "orders", "billing")
	require.NoError(t, err)
	require.EqualValues(t, 1, tag.GetState().GetDeadTotal())
	dead, err := c.Receive(ctx, "orders-dlq", tagq.ReceiveOptions{})
	require.NoError(t, err)
	require.Len(t, dead, 1)
	require.Equal(t, `{"order":1}`, string(dead[0].GetBody()))
}

// Delays and retention follow the same clock; REST serves the same data.
func TestServer_DelayRetentionAndREST(t *testing.T) {
	srv := tagqtest.NewServer(t)
	ctx := context.Background()
	c, err := tagq.Dial(srv.GRPCAddr)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	start := srv.Now()

	_, err = c.CreateQueue(ctx, "q", tagq.QueueOptions{Retention: time.Minute})
	require.NoError(t, err)
	_, err = c.Send(ctx, "q", tagq.Outgoing{Body: []byte("later"), Delay: 10 * time.Minute})
	require.NoError(t, err)
	got, err := c.Receive(ctx, "q", tagq.ReceiveOptions{})
	require.NoError(t, err)
	require.Empty(t, got, "delayed")
	srv.FastForward(10 * time.Minute)
	got, err = c.Receive(ctx, "q", tagq.ReceiveOptions{})
	require.NoError(t, err)
	require.Len(t, got, 1, "due")
	require.NoError(t, c.Delete(ctx, got[0].GetReceiptHandle()))

	_, err = c.Send(ctx, "q", tagq.Outgoing{Body: []byte("never read")})
	require.NoError(t, err)
	srv.FastForward(2 * time.Minute) // past its retention
	tag, err := c.GetTag(ctx, "q", "default")
	require.NoError(t, err)
	require.EqualValues(t, 1, tag.GetState().GetExpiredTotal())
	require.Equal(t, start.Add(12*time.Minute), srv.Now())

	code, body := srv.Get("/v1/queues/q")
	require.Equal(t, 200, code, body)
	require.True(t, strings.Contains(body, `"name":"q"`) || strings.Contains(body, `"name": "q"`), body)
}

// Two servers in one test are independent.
func TestServer_Independent(t *testing.T) {
	a, b := tagqtest.NewServer(t), tagqtest.NewServer(t)
	ctx := context.Background()
	ca, err := tagq.Dial(a.GRPCAddr)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ca.Close() })
	cb, err := tagq.Dial(b.GRPCAddr)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cb.Close() })
	_, err = ca.CreateQueue(ctx, "q", tagq.QueueOptions{})
	require.NoError(t, err)
	_, err = cb.GetQueue(ctx, "q")
	require.Equal(t, "QUEUE_NOT_FOUND", tagq.ReasonOf(err))
}
