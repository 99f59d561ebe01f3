package tagq_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	tagq "github.com/tagq/tagq/clients/go"
)

// queue creates a queue for one test and deletes it (forced) at the end,
// so the tests can run again on the same tagqd (go test -count=N).
func queue(t *testing.T, c *tagq.Client, name string, o tagq.QueueOptions) {
	t.Helper()
	_, err := c.CreateQueue(context.Background(), name, o)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.DeleteQueue(context.Background(), name, true) })
}

func client(t *testing.T) *tagq.Client {
	t.Helper()
	c, err := tagq.Dial(addr)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// run starts a consumer and returns a function that stops it and waits.
func run(t *testing.T, co *tagq.Consumer) func() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- co.Run(ctx) }()
	return func() {
		cancel()
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(20 * time.Second):
			t.Fatal("consumer did not stop")
		}
	}
}

func tagState(t *testing.T, c *tagq.Client, q, tag string) (avail, inflight, deleted, dead int64) {
	t.Helper()
	g, err := c.GetTag(context.Background(), q, tag)
	require.NoError(t, err)
	s := g.GetState()
	return s.GetAvailable(), s.GetInFlight(), s.GetDeletedTotal(), s.GetDeadTotal()
}

func TestConsumer_DeletesWhatItHandles(t *testing.T) {
	c := client(t)
	ctx := context.Background()
	queue(t, c, "c-ok", tagq.QueueOptions{})
	for i := range 20 {
		_, err := c.Send(ctx, "c-ok", tagq.Outgoing{Body: []byte(fmt.Sprint(i))})
		require.NoError(t, err)
	}
	var n atomic.Int32
	all := make(chan struct{})
	stop := run(t, c.NewConsumer(tagq.ConsumerConfig{Queue: "c-ok", Workers: 4, Wait: time.Second},
		tagq.HandlerFunc(func(context.Context, *tagq.Message) error {
			if n.Add(1) == 20 {
				close(all)
			}
			return nil
		})))
	recv(t, all, "all 20 messages handled")
	stop()
	_, inflight, deleted, _ := tagState(t, c, "c-ok", "default")
	require.EqualValues(t, 20, deleted)
	require.Zero(t, inflight)
}

func TestConsumer_NacksWithBackoffAndRetries(t *testing.T) {
	c := client(t)
	ctx := context.Background()
	queue(t, c, "c-retry", tagq.QueueOptions{})
	_, err := c.Send(ctx, "c-retry", tagq.Outgoing{Body: []byte("flaky")})
	require.NoError(t, err)
	var backoffs []int
	counts := make(chan int32, 3)
	// Sub-second backoffs cross the wire as such (delay_milliseconds) and
	// the server honours them; their exact values are checked on driven
	// time (TestConsumerTime_NackDelayIsTheBackoff).
	stop := run(t, c.NewConsumer(tagq.ConsumerConfig{Queue: "c-retry", Wait: time.Second,
		Backoff: func(n int) time.Duration { backoffs = append(backoffs, n); return time.Duration(n) * time.Millisecond }},
		tagq.HandlerFunc(func(_ context.Context, m *tagq.Message) error {
			counts <- m.GetReceiveCount()
			if m.GetReceiveCount() < 3 {
				return errors.New("temporary")
			}
			return nil
		})))
	require.EqualValues(t, 1, recv(t, counts, "the first receive"))
	require.EqualValues(t, 2, recv(t, counts, "the second receive"))
	require.EqualValues(t, 3, recv(t, counts, "the third receive"))
	stop()
	require.Equal(t, []int{1, 2}, backoffs, "the backoff is asked for with the receive count")
	_, _, deleted, _ := tagState(t, c, "c-retry", "default")
	require.EqualValues(t, 1, deleted)
}

func TestConsumer_PoisonIsDeadLettered(t *testing.T) {
	c := client(t)
	ctx := context.Background()
	queue(t, c, "c-dlq", tagq.QueueOptions{DeadLetterQueue: true})
	queue(t, c, "c-poison", tagq.QueueOptions{RedriveTo: "c-dlq", MaxReceiveCount: 10})
	_, err := c.Send(ctx, "c-poison", tagq.Outgoing{Body: []byte("bad")})
	require.NoError(t, err)
	handled := make(chan struct{})
	stop := run(t, c.NewConsumer(tagq.ConsumerConfig{Queue: "c-poison", Wait: time.Second},
		tagq.HandlerFunc(func(context.Context, *tagq.Message) error {
			defer close(handled)
			return tagq.PoisonError("SCHEMA_MISMATCH", errors.New("field x missing"))
		})))
	recv(t, handled, "the poison message handled")
	stop()
	_, _, _, dead := tagState(t, c, "c-poison", "default")
	require.EqualValues(t, 1, dead)
	msgs, err := c.Peek(ctx, "c-dlq", "", 10)
	require.NoError(t, err)
	require.Len(t, msgs, 1)
	require.Equal(t, "SCHEMA_MISMATCH", msgs[0].GetDeadLetter().GetReason())
	require.Equal(t, "field x missing", msgs[0].GetDeadLetter().GetDescription())
}

func TestConsumer_RunFailsFastOnAMissingQueue(t *testing.T) {
	c := client(t)
	err := c.NewConsumer(tagq.ConsumerConfig{Queue: "nope", Wait: time.Second},
		tagq.HandlerFunc(func(context.Context, *tagq.Message) error { return nil })).Run(context.Background())
	require.Equal(t, "QUEUE_NOT_FOUND", tagq.ReasonOf(err))
}

func TestClient_ErrorsCarryReasonAndField(t *testing.T) {
	c := client(t)
	_, err := c.CreateQueue(context.Background(), "has space", tagq.QueueOptions{})
	var e *tagq.Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, "INVALID_NAME", e.Reason)
	require.Equal(t, "queue.name", e.Field)
	require.ErrorIs(t, err, &tagq.Error{Reason: "INVALID_NAME"})
	err = c.Delete(context.Background(), "garbled")
	require.Equal(t, "INVALID_RECEIPT_HANDLE", tagq.ReasonOf(err))
}

func TestClient_ReceivesAnswersOver4MiB(t *testing.T) {
	c := client(t)
	ctx := context.Background()
	queue(t, c, "c-big", tagq.QueueOptions{MaxMessageBytes: 1 << 20})
	big := make([]tagq.Outgoing, 6)
	for i := range big {
		big[i] = tagq.Outgoing{Body: make([]byte, 1<<20-16)}
	}
	_, err := c.SendBatch(ctx, "c-big", big...)
	require.NoError(t, err)
	msgs, err := c.Receive(ctx, "c-big", tagq.ReceiveOptions{Max: 10})
	require.NoError(t, err, "a 6 MiB answer")
	require.Len(t, msgs, 6)
}

// A priority queue: higher priority first, FIFO within one, the
// priority on each message (8 when sent without one); a priority on a
// plain queue is refused naming the field.
func TestClient_PriorityQueue(t *testing.T) {
	c := client(t)
	ctx := context.Background()
	queue(t, c, "c-prio", tagq.QueueOptions{PriorityQueue: true})
	_, err := c.SendBatch(ctx, "c-prio", tagq.Outgoing{Body: []byte("low"), Priority: 16},
		tagq.Outgoing{Body: []byte("default")}, tagq.Outgoing{Body: []byte("high-1"), Priority: 1})
	require.NoError(t, err)
	_, err = c.Send(ctx, "c-prio", tagq.Outgoing{Body: []byte("high-2"), Priority: 1})
	require.NoError(t, err)
	got, err := c.Receive(ctx, "c-prio", tagq.ReceiveOptions{Max: 10})
	require.NoError(t, err)
	var order []string
	for _, m := range got {
		order = append(order, fmt.Sprintf("%s:%d", m.GetBody(), m.GetPriority()))
	}
	require.Equal(t, []string{"high-1:1", "high-2:1", "default:8", "low:16"}, order)

	queue(t, c, "c-plain", tagq.QueueOptions{})
	_, err = c.Send(ctx, "c-plain", tagq.Outgoing{Body: []byte("x"), Priority: 2})
	var e *tagq.Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, "priority", e.Field)
}

// S3: Delete, ChangeVisibility and Dead take the receipt handle alone.
func TestClient_HandleCallsNeedNoQueue(t *testing.T) {
	c := client(t)
	ctx := context.Background()
	queue(t, c, "c-h-dlq", tagq.QueueOptions{DeadLetterQueue: true})
	queue(t, c, "c-h", tagq.QueueOptions{RedriveTo: "c-h-dlq", MaxReceiveCount: 5})
	for i := range 3 {
		_, err := c.Send(ctx, "c-h", tagq.Outgoing{Body: []byte(fmt.Sprint(i))})
		require.NoError(t, err)
	}
	msgs, err := c.Receive(ctx, "c-h", tagq.ReceiveOptions{Max: 3})
	require.NoError(t, err)
	require.Len(t, msgs, 3)
	require.NoError(t, c.Delete(ctx, msgs[0].GetReceiptHandle()))
	require.NoError(t, c.ChangeVisibility(ctx, msgs[1].GetReceiptHandle(), 0))
	require.NoError(t, c.Dead(ctx, msgs[2].GetReceiptHandle(), "POISON", ""))
	again, err := c.Receive(ctx, "c-h", tagq.ReceiveOptions{Max: 3})
	require.NoError(t, err)
	require.Len(t, again, 1) // the nacked one; the others are gone
	require.Equal(t, msgs[1].GetMessageId(), again[0].GetMessageId())
	dead, err := c.Receive(ctx, "c-h-dlq", tagq.ReceiveOptions{Max: 3})
	require.NoError(t, err)
	require.Len(t, dead, 1)
	require.Equal(t, "POISON", dead[0].GetDeadLetter().GetReason())
}
