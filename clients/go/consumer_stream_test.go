package tagq_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	tagq "github.com/tagq/tagq/clients/go"
)

// dial connects to target (a proxy, say) and closes the client at the end.
func dial(t *testing.T, target string) *tagq.Client {
	t.Helper()
	c, err := tagq.Dial(target)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func sendN(t *testing.T, c *tagq.Client, q string, n int) {
	t.Helper()
	for i := range n {
		_, err := c.Send(context.Background(), q, tagq.Outgoing{Body: fmt.Appendf(nil, "m%d", i)})
		require.NoError(t, err)
	}
}

// start runs co and returns a channel with Run's result.
func start(co *tagq.Consumer) <-chan error {
	done := make(chan error, 1)
	go func() { done <- co.Run(context.Background()) }()
	return done
}

func eventually(t *testing.T, cond func() bool, what string) {
	t.Helper()
	require.Eventually(t, cond, wait, 10*time.Millisecond, what)
}

// When the stream breaks while a handler runs, the message stays in
// flight (the broken stream does not give it back) and is deleted by
// receipt handle when the handler returns, over the next connection. Its
// renewals by receipt handle and the settlement's timeout are checked on
// driven time (TestConsumerTime_OrphanIsRenewedAndSettledByReceiptHandle).
func TestConsumer_OrphanIsDeletedByReceiptHandle(t *testing.T) {
	c := client(t)
	ctx := context.Background()
	queue(t, c, "c-orphan", tagq.QueueOptions{})
	sendN(t, c, "c-orphan", 1)
	p := newProxy(t, addr)
	var calls atomic.Int32
	started, release := make(chan struct{}, 1), make(chan struct{})
	co := dial(t, p.Addr()).NewConsumer(tagq.ConsumerConfig{Queue: "c-orphan"},
		tagq.HandlerFunc(func(context.Context, *tagq.Message) error {
			calls.Add(1)
			started <- struct{}{}
			select {
			case <-release:
				return nil
			case <-time.After(wait):
				return errors.New("never released")
			}
		}))
	stop := run(t, co)
	recv(t, started, "the handler")
	p.cut()
	eventually(t, func() bool { return co.Orphans() == 1 }, "the message is an orphan of the broken stream")
	msgs, err := c.Receive(ctx, "c-orphan", tagq.ReceiveOptions{Max: 1})
	require.NoError(t, err)
	require.Empty(t, msgs, "still in flight for its handler")
	close(release)
	eventually(t, func() bool { return co.Orphans() == 0 }, "the orphan settled")
	stop()
	_, inflight, deleted, _ := tagState(t, c, "c-orphan", "default")
	require.EqualValues(t, 1, deleted)
	require.Zero(t, inflight)
	require.EqualValues(t, 1, calls.Load())
}

// A stream broken mid-batch: the handlers running finish and delete by
// receipt handle; the messages that waited for a worker go back at once
// and come again on the next stream (long before their 30 s visibility).
// Nothing is lost and nothing is handled twice.
func TestConsumer_BrokenStreamRedeliversWhatWaited(t *testing.T) {
	c := client(t)
	queue(t, c, "c-break", tagq.QueueOptions{})
	sendN(t, c, "c-break", 6)
	p := newProxy(t, addr)
	var mu sync.Mutex
	handled := map[string][]int32{} // body -> receive counts
	var calls atomic.Int32
	gate := make(chan struct{})
	started := make(chan struct{}, 16)
	co := dial(t, p.Addr()).NewConsumer(tagq.ConsumerConfig{Queue: "c-break", Workers: 2, MaxOutstandingMessages: 6,
		Visibility: 30 * time.Second},
		tagq.HandlerFunc(func(_ context.Context, m *tagq.Message) error {
			if calls.Add(1) <= 2 {
				started <- struct{}{}
				select {
				case <-gate:
				case <-time.After(wait):
					return errors.New("never released")
				}
			}
			mu.Lock()
			handled[string(m.GetBody())] = append(handled[string(m.GetBody())], m.GetReceiveCount())
			mu.Unlock()
			return nil
		}))
	stop := run(t, co)
	recv(t, started, "handler 1")
	recv(t, started, "handler 2")
	eventually(t, func() bool { return co.Held() == 6 }, "all six pushed")
	p.cut()
	eventually(t, func() bool { return co.Orphans() == 2 }, "the running two are orphans")
	close(gate)
	eventually(t, func() bool { _, _, deleted, _ := tagState(t, c, "c-break", "default"); return deleted == 6 },
		"all six deleted, well before the visibility timeout")
	stop()
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, handled, 6)
	again := 0
	for body, counts := range handled {
		require.Len(t, counts, 1, "%s handled once", body)
		if counts[0] == 2 {
			again++
		}
	}
	require.Equal(t, 4, again, "the four that waited came again (receive count 2)")
	_, inflight, _, _ := tagState(t, c, "c-break", "default")
	require.Zero(t, inflight)
}

// The consumer never holds more than MaxOutstandingMessages, with more
// workers than that, and across a reconnect: the next stream gets only the
// credit the orphans of the broken one leave.
func TestConsumer_NeverHoldsMoreThanTheLimit(t *testing.T) {
	const limit, total = 3, 20
	c := client(t)
	queue(t, c, "c-limit", tagq.QueueOptions{})
	sendN(t, c, "c-limit", total)
	p := newProxy(t, addr)
	var cur, peak, heldPeak atomic.Int32
	tokens, all := make(chan struct{}), make(chan struct{})
	started := make(chan struct{}, total*2)
	var co *tagq.Consumer
	co = dial(t, p.Addr()).NewConsumer(tagq.ConsumerConfig{Queue: "c-limit", Workers: 10, MaxOutstandingMessages: limit},
		tagq.HandlerFunc(func(context.Context, *tagq.Message) error {
			n := cur.Add(1)
			defer cur.Add(-1)
			for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
			}
			if h := int32(co.Held()); h > heldPeak.Load() {
				heldPeak.Store(h)
			}
			started <- struct{}{}
			select {
			case <-tokens:
			case <-all:
			case <-time.After(wait):
				return errors.New("never released")
			}
			return nil
		}))
	stop := run(t, co)
	for i := range limit {
		recv(t, started, fmt.Sprintf("handler %d", i))
	}
	require.EqualValues(t, limit, cur.Load())
	require.Equal(t, limit, co.Held())
	p.cut()
	eventually(t, func() bool { return co.Orphans() == limit }, "the running three are orphans")
	tokens <- struct{}{} // one orphan finishes: room for one message on the next stream
	recv(t, started, "a handler on the next stream")
	require.Equal(t, limit, co.Held(), "two orphans and one message of the new stream")
	_, inflight, _, _ := tagState(t, c, "c-limit", "default")
	require.EqualValues(t, limit, inflight)
	close(all)
	eventually(t, func() bool { _, _, deleted, _ := tagState(t, c, "c-limit", "default"); return deleted == total },
		"every message handled")
	stop()
	require.EqualValues(t, limit, peak.Load(), "concurrent handlers")
	require.LessOrEqual(t, heldPeak.Load(), int32(limit), "messages held")
}

// Stop lets the running handler finish (its context is not cancelled) and
// delete its message, and gives the messages that waited for a worker
// back at once: they come again at the next receive with receive count 2,
// not after their 30 s visibility.
func TestConsumer_StopGivesWaitingMessagesBackAtOnce(t *testing.T) {
	c := client(t)
	queue(t, c, "c-giveback", tagq.QueueOptions{})
	sendN(t, c, "c-giveback", 5)
	started, release := make(chan struct{}, 1), make(chan struct{})
	ctxErr := make(chan error, 1)
	co := c.NewConsumer(tagq.ConsumerConfig{Queue: "c-giveback", MaxOutstandingMessages: 5, Visibility: 30 * time.Second},
		tagq.HandlerFunc(func(ctx context.Context, _ *tagq.Message) error {
			started <- struct{}{}
			select {
			case <-release:
			case <-time.After(wait):
				return errors.New("never released")
			}
			ctxErr <- ctx.Err()
			return nil
		}))
	done := start(co)
	recv(t, started, "the handler")
	eventually(t, func() bool { return co.Held() == 5 }, "all five pushed")
	stopped := make(chan error, 1)
	go func() { stopped <- co.Stop(context.Background()) }()
	eventually(t, co.Stopping, "the stop began")
	select {
	case err := <-stopped:
		t.Fatalf("Stop returned (%v) while a handler ran", err)
	default:
	}
	close(release)
	require.NoError(t, recv(t, ctxErr, "the handler's end"), "a soft stop does not cancel handlers")
	require.NoError(t, recv(t, stopped, "Stop"))
	require.NoError(t, recv(t, done, "Run"))
	require.NoError(t, within(t, "a second Stop", func() error { return co.Stop(context.Background()) }))
	_, _, deleted, _ := tagState(t, c, "c-giveback", "default")
	require.EqualValues(t, 1, deleted, "the handled message was deleted before Stop returned")
	msgs, err := c.Receive(context.Background(), "c-giveback", tagq.ReceiveOptions{Max: 10})
	require.NoError(t, err)
	require.Len(t, msgs, 4, "given back at once")
	for _, m := range msgs {
		require.EqualValues(t, 2, m.GetReceiveCount())
	}
}

// StopAndCancel cancels the handlers' contexts; a handler that fails
// because of it has its message given back at once, without backoff.
func TestConsumer_StopAndCancelCancelsHandlers(t *testing.T) {
	c := client(t)
	queue(t, c, "c-cancel", tagq.QueueOptions{})
	sendN(t, c, "c-cancel", 1)
	started := make(chan struct{}, 1)
	co := c.NewConsumer(tagq.ConsumerConfig{Queue: "c-cancel"},
		tagq.HandlerFunc(func(ctx context.Context, _ *tagq.Message) error {
			started <- struct{}{}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(wait):
				return errNotCancelled
			}
		}))
	done := start(co)
	recv(t, started, "the handler")
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	require.NoError(t, co.StopAndCancel(ctx), "returns once the cancelled handler returned")
	require.NoError(t, recv(t, done, "Run"))
	msgs, err := c.Receive(context.Background(), "c-cancel", tagq.ReceiveOptions{Max: 10})
	require.NoError(t, err)
	require.Len(t, msgs, 1, "given back at once, not after a backoff")
	require.EqualValues(t, 2, msgs[0].GetReceiveCount())
}

func TestConsumer_StopBeforeRun(t *testing.T) {
	c := client(t)
	co := c.NewConsumer(tagq.ConsumerConfig{Queue: "never-read"},
		tagq.HandlerFunc(func(context.Context, *tagq.Message) error { return errors.New("not called") }))
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	require.NoError(t, co.Stop(ctx))
	require.NoError(t, co.Stop(ctx))
	require.NoError(t, co.StopAndCancel(ctx))
	require.NoError(t, within(t, "Run after Stop", func() error { return co.Run(ctx) }))
}

func TestConsumer_RunTwice(t *testing.T) {
	c := client(t)
	queue(t, c, "c-twice", tagq.QueueOptions{})
	co := c.NewConsumer(tagq.ConsumerConfig{Queue: "c-twice"},
		tagq.HandlerFunc(func(context.Context, *tagq.Message) error { return nil }))
	first, second := start(co), start(co)
	var err error
	select { // one of them is refused at once; the other runs until Stop
	case err = <-first:
		first = second
	case err = <-second:
	case <-time.After(wait):
		t.Fatal("neither Run returned")
	}
	require.ErrorIs(t, err, tagq.ErrConsumerRunning)
	require.NoError(t, within(t, "Stop", func() error { return co.Stop(context.Background()) }))
	require.NoError(t, recv(t, first, "Run"))
}

func TestConsumer_PanicIsAnError(t *testing.T) {
	c := client(t)
	queue(t, c, "c-panic", tagq.QueueOptions{})
	sendN(t, c, "c-panic", 1)
	counts := make(chan int32, 2)
	stop := run(t, c.NewConsumer(tagq.ConsumerConfig{Queue: "c-panic", Backoff: func(int) time.Duration { return 0 }},
		tagq.HandlerFunc(func(_ context.Context, m *tagq.Message) error {
			counts <- m.GetReceiveCount()
			if m.GetReceiveCount() == 1 {
				panic("boom")
			}
			return nil
		})))
	require.EqualValues(t, 1, recv(t, counts, "the first delivery"))
	require.EqualValues(t, 2, recv(t, counts, "the retry"))
	stop()
	_, _, deleted, _ := tagState(t, c, "c-panic", "default")
	require.EqualValues(t, 1, deleted)
}

// A Poison reason or description longer than the server takes is cut, not
// sent as is (which would end the stream with INVALID_ARGUMENT).
func TestConsumer_LongPoisonTextIsCut(t *testing.T) {
	c := client(t)
	queue(t, c, "c-long-dlq", tagq.QueueOptions{DeadLetterQueue: true})
	queue(t, c, "c-long-poison", tagq.QueueOptions{RedriveTo: "c-long-dlq", MaxReceiveCount: 10})
	sendN(t, c, "c-long-poison", 1)
	handled := make(chan struct{}, 1)
	stop := run(t, c.NewConsumer(tagq.ConsumerConfig{Queue: "c-long-poison"},
		tagq.HandlerFunc(func(context.Context, *tagq.Message) error {
			handled <- struct{}{}
			return tagq.PoisonError(strings.Repeat("R", 300), errors.New(strings.Repeat("é", 3000)))
		})))
	recv(t, handled, "the handler")
	eventually(t, func() bool { _, _, _, dead := tagState(t, c, "c-long-poison", "default"); return dead == 1 }, "dead-lettered")
	stop()
	msgs, err := c.Peek(context.Background(), "c-long-dlq", "", 10)
	require.NoError(t, err)
	require.Len(t, msgs, 1)
	d := msgs[0].GetDeadLetter()
	require.Len(t, d.GetReason(), 256)
	require.LessOrEqual(t, len(d.GetDescription()), 4096)
	require.Greater(t, len(d.GetDescription()), 4090)
	require.True(t, utf8.ValidString(d.GetDescription()))
}

// While stopping, the acks of the last handlers make no room for more
// pushes: the messages the Consumer never got are not received (their
// receive count stays 0) just to be given back at the close.
func TestConsumer_StopTakesNoMoreMessages(t *testing.T) {
	c := client(t)
	queue(t, c, "c-stop-nomore", tagq.QueueOptions{})
	sendN(t, c, "c-stop-nomore", 8)
	started, release := make(chan struct{}, 2), make(chan struct{})
	co := c.NewConsumer(tagq.ConsumerConfig{Queue: "c-stop-nomore", Workers: 2, MaxOutstandingMessages: 4},
		tagq.HandlerFunc(func(context.Context, *tagq.Message) error {
			started <- struct{}{}
			select {
			case <-release:
				return nil
			case <-time.After(wait):
				return errors.New("never released")
			}
		}))
	done := start(co)
	recv(t, started, "handler 1")
	recv(t, started, "handler 2")
	eventually(t, func() bool { return co.Held() == 4 }, "four pushed")
	stopped := make(chan error, 1)
	go func() { stopped <- co.Stop(context.Background()) }()
	eventually(t, co.Stopping, "the stop began")
	close(release)
	require.NoError(t, recv(t, stopped, "Stop"))
	require.NoError(t, recv(t, done, "Run"))
	msgs, err := c.Receive(context.Background(), "c-stop-nomore", tagq.ReceiveOptions{Max: 10})
	require.NoError(t, err)
	counts := map[int32]int{}
	for _, m := range msgs {
		counts[m.GetReceiveCount()]++
	}
	require.Equal(t, map[int32]int{2: 2, 1: 4}, counts, "two given back, four never pushed")
}
