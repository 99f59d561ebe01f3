package tagq_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	tagq "github.com/tagq/tagq/clients/go"
	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
)

// The Consumer's timing on driven time (fake_server_test.go): renewals,
// backoffs, stops and reconnects at exact instants of the bubble's clock.

// runConsumer starts co in the bubble and returns Run's result. When the
// test ends the Consumer is stopped, its handlers cancelled, so that no
// goroutine outlives the bubble.
func runConsumer(t *testing.T, co *tagq.Consumer) <-chan error {
	done := make(chan error, 1)
	go func() { done <- co.Run(context.Background()) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = co.StopAndCancel(ctx)
	})
	return done
}

// holdUntil is a handler that holds each message until release is closed
// (then acknowledges it) or its context is cancelled.
func holdUntil(release <-chan struct{}) tagq.Handler {
	return tagq.HandlerFunc(func(ctx context.Context, _ *tagq.Message) error {
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
}

// Every held message, running or waiting for a worker, is renewed on the
// stream every third of the visibility, by the visibility, until
// MaxExtension after its arrival: the last renewals are shorter, so that
// the message's deadline does not pass arrival + MaxExtension by more than
// the rounding to whole seconds, and then they stop (logged once per
// message).
func TestConsumerTime_RenewsEveryThirdOfVisibilityUpToMaxExtension(t *testing.T) {
	inBubble(t, func(t *testing.T, f *fakeServer, c *tagq.Client) {
		logs := &logRecorder{}
		release := make(chan struct{})
		co := c.NewConsumer(tagq.ConsumerConfig{Queue: "q", Visibility: 3 * time.Second, MaxExtension: 5 * time.Second,
			MaxOutstandingMessages: 3, Logger: slog.New(logs)}, holdUntil(release))
		done := runConsumer(t, co)
		s := f.stream(t)
		s.push("a", "b") // one worker: b waits for it, held all the same
		time.Sleep(1500 * time.Millisecond)
		s.push("c") // arrives between two renewals; its cap is 6.5s
		time.Sleep(8500 * time.Millisecond)
		require.Equal(t, []string{
			"1s extend#1 d1 3s, d2 3s",
			"2s extend#1 d1 3s, d2 3s, d3 3s",
			"3s extend#1 d1 2s, d2 2s, d3 3s", // a and b: 2s left of their 5s
			"4s extend#1 d1 1s, d2 1s, d3 3s",
			"5s extend#1 d3 2s", // 1.5s left, rounded up
			"6s extend#1 d3 1s",
		}, f.events("extend"), "renewals, up to 10s")
		require.Equal(t, 3, logs.count("MaxExtension reached"), "once per message")

		close(release)
		synctest.Wait() // every message handled before the stop
		require.NoError(t, co.Stop(bounded(t)))
		require.NoError(t, recv(t, done, "Run"))
		require.Equal(t, []string{"10s ack#1 d1", "10s ack#1 d2", "10s ack#1 d3", "10s close#1"},
			f.events("ack", "nack", "close"))
	})
}

// With the defaults (30s visibility, 60 minutes MaxExtension) a message is
// renewed every 10s by 30s; a negative MaxExtension never renews.
func TestConsumerTime_RenewalDefaultsAndNever(t *testing.T) {
	for _, tc := range []struct {
		name string
		max  time.Duration
		want []string
	}{
		{"default", 0, []string{"10s extend#1 d1 30s", "20s extend#1 d1 30s", "30s extend#1 d1 30s"}},
		{"never", -1, []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inBubble(t, func(t *testing.T, f *fakeServer, c *tagq.Client) {
				release := make(chan struct{})
				co := c.NewConsumer(tagq.ConsumerConfig{Queue: "q", MaxExtension: tc.max}, holdUntil(release))
				runConsumer(t, co)
				f.stream(t).push("a")
				time.Sleep(35 * time.Second)
				require.Equal(t, tc.want, f.events("extend"))
				require.Equal(t, []string{"0s open#1 q/ credit 2 vis 30s"}, f.events("open"))
				close(release)
			})
		})
	}
}

// A failed message is nacked on the stream the instant its handler
// returns, with the backoff for its receive count, to the millisecond: a
// sub-second backoff is not truncated, a fraction of a millisecond is
// rounded up, a negative one is 0 and a longer one than 12 hours is cut to
// 12 hours.
func TestConsumerTime_NackDelayIsTheBackoff(t *testing.T) {
	for _, tc := range []struct {
		backoff time.Duration
		want    string
	}{
		{200 * time.Millisecond, "200ms"},
		{1500 * time.Microsecond, "2ms"},
		{2500 * time.Millisecond, "2.5s"},
		{0, "0s"},
		{-time.Second, "0s"},
		{13 * time.Hour, "12h0m0s"},
	} {
		t.Run(tc.backoff.String(), func(t *testing.T) {
			inBubble(t, func(t *testing.T, f *fakeServer, c *tagq.Client) {
				asked := make(chan int, 1)
				co := c.NewConsumer(tagq.ConsumerConfig{Queue: "q", Logger: quiet,
					Backoff: func(n int) time.Duration { asked <- n; return tc.backoff }},
					tagq.HandlerFunc(func(context.Context, *tagq.Message) error {
						time.Sleep(2 * time.Second)
						return errors.New("temporary")
					}))
				done := runConsumer(t, co)
				f.stream(t).pushMessages(&tagqv1.Message{Body: []byte("a"), ReceiveCount: 3})
				require.Equal(t, 3, recv(t, asked, "the backoff"), "asked with the receive count")
				synctest.Wait()
				require.Equal(t, []string{"2s nack#1 d1 " + tc.want}, f.events("nack", "ack"))
				require.NoError(t, co.Stop(bounded(t)))
				require.NoError(t, recv(t, done, "Run"))
			})
		})
	}
}

// Stop lets the running handler finish (its context is never cancelled)
// and closes the stream then, after its ack; the message that waited for a
// worker is neither run nor nacked (the close gives it back). Its
// context bounds only the wait: a Stop that gives up leaves the stop going
// on. StopAndCancel cancels the handler at once, sends no nack for the
// failure it caused (the close gives the message back) and closes the
// stream at once. The end of Run's context is a Stop.
func TestConsumerTime_StopAndStopAndCancel(t *testing.T) {
	for _, tc := range []struct {
		name    string
		stop    func(t *testing.T, co *tagq.Consumer, cancelRun context.CancelFunc)
		stopped time.Duration // when stop returned
		ran     time.Duration // when Run returned
		handler string        // when the handler returned, and its context's error then
		want    []string
	}{
		{"Stop", func(t *testing.T, co *tagq.Consumer, _ context.CancelFunc) {
			require.NoError(t, co.Stop(bounded(t)))
		}, 4 * time.Second, 4 * time.Second, "4s <nil>", []string{"1s flow#1 0", "4s ack#1 d1", "4s close#1"}},

		{"StopGivesUpWaiting", func(t *testing.T, co *tagq.Consumer, _ context.CancelFunc) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			require.ErrorIs(t, co.Stop(ctx), context.DeadlineExceeded)
		}, 3 * time.Second, 4 * time.Second, "4s <nil>", []string{"1s flow#1 0", "4s ack#1 d1", "4s close#1"}},

		{"StopAndCancel", func(t *testing.T, co *tagq.Consumer, _ context.CancelFunc) {
			require.NoError(t, co.StopAndCancel(bounded(t)))
		}, time.Second, time.Second, "1s context canceled", []string{"1s flow#1 0", "1s close#1"}},

		{"RunContext", func(t *testing.T, co *tagq.Consumer, cancelRun context.CancelFunc) {
			cancelRun()
		}, time.Second, 4 * time.Second, "4s <nil>", []string{"1s flow#1 0", "4s ack#1 d1", "4s close#1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inBubble(t, func(t *testing.T, f *fakeServer, c *tagq.Client) {
				handled := make(chan string, 2)
				co := c.NewConsumer(tagq.ConsumerConfig{Queue: "q", Logger: quiet},
					tagq.HandlerFunc(func(ctx context.Context, _ *tagq.Message) error {
						var err error
						select {
						case <-time.After(4 * time.Second):
						case <-ctx.Done():
							err = ctx.Err()
						}
						handled <- fmt.Sprintf("%v %v", f.now(), ctx.Err())
						return err
					}))
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				done := make(chan error, 1)
				go func() { done <- co.Run(ctx) }()
				f.stream(t).push("a", "b")
				time.Sleep(time.Second)
				tc.stop(t, co, cancel)
				require.Equal(t, tc.stopped, f.now(), "when the stop returned")
				require.NoError(t, recv(t, done, "Run"))
				require.Equal(t, tc.ran, f.now(), "when Run returned")
				require.Equal(t, tc.handler, recv(t, handled, "the handler"))
				require.Empty(t, handled, "the message that waited for a worker was not run")
				require.Equal(t, tc.want, f.events("flow", "ack", "nack", "close"))
			})
		})
	}
}

// When the stream breaks while a handler runs, its message is renewed by
// receipt handle (each call bounded by a third of the visibility) and
// settled by receipt handle when the handler returns: the settlement's
// timeout starts then, not when the handler started (here it outlives the
// timeout), and a nack is rounded up to whole seconds. The next stream
// opens with the credit the orphan leaves.
func TestConsumerTime_OrphanIsRenewedAndSettledByReceiptHandle(t *testing.T) {
	defer tagq.SetSettleTimeout(2 * time.Second)()
	for _, tc := range []struct {
		name    string
		verdict error
		want    string
	}{
		{"ack", nil, "5.5s delete rh-m1 within 2s"},
		{"nack", errors.New("temporary"), "5.5s visibility rh-m1 2s within 2s"}, // 1.2s, rounded up
	} {
		t.Run(tc.name, func(t *testing.T) {
			inBubble(t, func(t *testing.T, f *fakeServer, c *tagq.Client) {
				verdict := make(chan error)
				co := c.NewConsumer(tagq.ConsumerConfig{Queue: "q", Visibility: 3 * time.Second, Logger: quiet,
					Backoff: func(int) time.Duration { return 1200 * time.Millisecond }},
					tagq.HandlerFunc(func(ctx context.Context, _ *tagq.Message) error {
						select {
						case err := <-verdict:
							return err
						case <-ctx.Done():
							return ctx.Err()
						}
					}))
				done := runConsumer(t, co)
				f.stream(t).push("a")
				time.Sleep(500 * time.Millisecond)
				f.ln.cut()
				synctest.Wait()
				require.Equal(t, 1, co.Orphans())
				time.Sleep(5 * time.Second)
				send(t, verdict, tc.verdict, "the verdict")
				synctest.Wait()
				require.Equal(t, []string{
					"1s visibility rh-m1 3s within 1s",
					"2s visibility rh-m1 3s within 1s",
					"3s visibility rh-m1 3s within 1s",
					"4s visibility rh-m1 3s within 1s",
					"5s visibility rh-m1 3s within 1s",
					tc.want,
				}, f.events("visibility", "delete"))
				opens := f.events("open")
				require.Len(t, opens, 2)
				require.True(t, strings.HasSuffix(opens[1], "open#2 q/ credit 1 vis 3s"), "%s: one credit left of 2", opens[1])
				require.Equal(t, 0, co.Orphans())
				require.NoError(t, co.Stop(bounded(t)))
				require.NoError(t, recv(t, done, "Run"))
			})
		})
	}
}

// eventTimes are the instants of events.
func eventTimes(t *testing.T, events []string) []time.Duration {
	t.Helper()
	var at []time.Duration
	for _, e := range events {
		d, err := time.ParseDuration(strings.Fields(e)[0])
		require.NoError(t, err)
		at = append(at, d)
	}
	return at
}

// requireBackoff checks the gaps between attempts at a stream: each
// follows the one before by a delay with jitter, between half of and the
// whole of a bound that doubles from 100ms up to 10s.
func requireBackoff(t *testing.T, at []time.Duration) {
	t.Helper()
	require.GreaterOrEqual(t, len(at), 10, "attempts")
	for n := 1; n < len(at); n++ {
		d := min(100*time.Millisecond<<min(n-1, 7), 10*time.Second)
		gap := at[n] - at[n-1]
		require.True(t, gap >= d/2 && gap <= d, "attempt %d came %v after the one before, not within [%v, %v]",
			n+1, gap, d/2, d)
	}
}

// A Consumer whose streams the server ends at once (unavailable) opens
// them again with a growing backoff; once a stream was answered, the
// backoff starts over.
func TestConsumerTime_ReconnectBackoff(t *testing.T) {
	inBubble(t, func(t *testing.T, f *fakeServer, c *tagq.Client) {
		f.refuseStreams(errUnavailable)
		co := c.NewConsumer(tagq.ConsumerConfig{Queue: "q", Logger: quiet},
			tagq.HandlerFunc(func(context.Context, *tagq.Message) error { return nil }))
		done := runConsumer(t, co)
		time.Sleep(60 * time.Second)
		requireBackoff(t, eventTimes(t, f.events("open")))

		f.refuseStreams(nil)
		s := f.stream(t) // within 10s
		s.push("a")
		synctest.Wait()
		time.Sleep(time.Second)
		s.fail(errUnavailable)
		broke := f.now()
		f.stream(t)
		at := eventTimes(t, f.events("open"))
		gap := at[len(at)-1] - broke
		require.True(t, gap >= 50*time.Millisecond && gap <= 100*time.Millisecond,
			"after an answered stream the first retry waits 50-100ms, not %v", gap)
		require.Equal(t, []string{fmt.Sprintf("%v ack#%d d1", broke-time.Second, len(at)-1)}, f.events("ack"))
		require.NoError(t, co.Stop(bounded(t)))
		require.NoError(t, recv(t, done, "Run"))
	})
}
