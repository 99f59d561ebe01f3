package tagq_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	tagq "github.com/tagq/tagq/clients/go"
)

// A queue's retry policy from the Go client: set on create, shown, used by
// a Consumer with ServerBackoff (its nack carries no delay: the failed
// message comes back after the server's backoff) and by NackWithBackoff,
// then removed. Real time on a real tagqd: the policy is 1 s exactly.
func TestRetryBackoff_ServerSide(t *testing.T) {
	c := client(t)
	ctx := context.Background()
	queue(t, c, "c-server-backoff", tagq.QueueOptions{RetryBackoff: &tagq.RetryBackoff{Min: time.Second, Max: time.Second}})
	q, err := c.GetQueue(ctx, "c-server-backoff")
	require.NoError(t, err)
	require.EqualValues(t, 1, q.GetRetryPolicy().GetMinBackoffSeconds())
	require.EqualValues(t, 1, q.GetRetryPolicy().GetMaxBackoffSeconds())

	_, err = c.Send(ctx, "c-server-backoff", tagq.Outgoing{Body: []byte("flaky")})
	require.NoError(t, err)
	type seen struct {
		count int32
		at    time.Time
	}
	got := make(chan seen, 2)
	stop := run(t, c.NewConsumer(tagq.ConsumerConfig{Queue: "c-server-backoff", ServerBackoff: true,
		Backoff: func(int) time.Duration { panic("ServerBackoff: the client's Backoff is not called") }},
		tagq.HandlerFunc(func(_ context.Context, m *tagq.Message) error {
			got <- seen{m.GetReceiveCount(), time.Now()}
			if m.GetReceiveCount() < 2 {
				return errors.New("temporary")
			}
			return nil
		})))
	first := recv(t, got, "the first receive")
	second := recv(t, got, "the second receive, after the server's backoff")
	stop()
	require.EqualValues(t, 1, first.count)
	require.EqualValues(t, 2, second.count)
	require.GreaterOrEqual(t, second.at.Sub(first.at), 900*time.Millisecond)

	// By receipt handle.
	_, err = c.Send(ctx, "c-server-backoff", tagq.Outgoing{Body: []byte("again")})
	require.NoError(t, err)
	msgs, err := c.Receive(ctx, "c-server-backoff", tagq.ReceiveOptions{Wait: 5 * time.Second})
	require.NoError(t, err)
	require.Len(t, msgs, 1)
	t0 := time.Now()
	require.NoError(t, c.NackWithBackoff(ctx, msgs[0].GetReceiptHandle()))
	msgs, err = c.Receive(ctx, "c-server-backoff", tagq.ReceiveOptions{Wait: 10 * time.Second})
	require.NoError(t, err)
	require.Len(t, msgs, 1)
	require.EqualValues(t, 2, msgs[0].GetReceiveCount())
	require.GreaterOrEqual(t, time.Since(t0), 900*time.Millisecond)

	q, err = c.SetRetryBackoff(ctx, "c-server-backoff", nil)
	require.NoError(t, err)
	require.Nil(t, q.GetRetryPolicy())
	_, err = c.SetRetryBackoff(ctx, "c-server-backoff", &tagq.RetryBackoff{Min: 2 * time.Second, Max: time.Second})
	require.Equal(t, "INVALID_ARGUMENT_RANGE", tagq.ReasonOf(err))
}
