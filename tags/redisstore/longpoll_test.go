package redisstore

import (
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/tagq/tagq/tags"
)

type received struct {
	msgs    []tags.Message
	err     error
	elapsed time.Duration
}

// waitReceive starts a long-poll receive and returns once it is waiting.
func waitReceive(t *testing.T, b *bundle, s *Store, q, tag string, wait int32) <-chan received {
	t.Helper()
	before := s.waiters.Waiting(q)
	ch := make(chan received, 1)
	go func() {
		start := time.Now()
		msgs, err := s.Receive(b.ctx, q, tag, tags.ReceiveOptions{MaxMessages: 1, WaitSeconds: i32(wait)})
		ch <- received{msgs, err, time.Since(start)}
	}()
	require.Eventually(t, func() bool { return s.waiters.Waiting(q) > before }, 5*time.Second, time.Millisecond)
	return ch
}

func requireWoken(t *testing.T, ch <-chan received, body string) {
	t.Helper()
	select {
	case r := <-ch:
		require.NoError(t, r.err)
		require.Equal(t, []string{body}, bodies(r.msgs))
	case <-time.After(8 * time.Second):
		t.Fatal("waiting receive was not woken")
	}
}

func TestS6_LongPollIsWokenBySend(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("q")
		ch := waitReceive(t, b, b.s, "q", "", 20)
		b.send("q", "hello")
		requireWoken(t, ch, "hello")
	})
}

func TestS6_LongPollIsWokenByNack(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("q")
		b.send("q", "m")
		got := b.receive("q", "", 1)
		ch := waitReceive(t, b, b.s, "q", "", 20)
		nack(t, b, "q", got[0].ReceiptHandle)
		requireWoken(t, ch, "m")
	})
}

func TestS6_LongPollIsWokenAcrossProcesses(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		// A second Store on the same Redis stands for another tagqd.
		other, err := New(b.ctx, Config{Client: b.rdb, Prefix: b.prefix, TestClock: true})
		require.NoError(t, err)
		t.Cleanup(func() { _ = other.Close() })
		b.queue("q")
		ch := waitReceive(t, b, b.s, "q", "", 20)
		_, err = other.Send(b.ctx, "q", []tags.OutMessage{{Body: []byte("from-other")}})
		require.NoError(t, err)
		requireWoken(t, ch, "from-other")

		// A nack on the other process wakes a waiter here too.
		b.send("q", "n")
		got, err := other.Receive(b.ctx, "q", "", tags.ReceiveOptions{MaxMessages: 1, WaitSeconds: i32(0)})
		require.NoError(t, err)
		require.Len(t, got, 1)
		ch = waitReceive(t, b, b.s, "q", "", 20)
		errs, err := other.ChangeVisibility(b.ctx, "q", []tags.VisibilityChange{{ReceiptHandle: got[0].ReceiptHandle}})
		require.NoError(t, err)
		require.NoError(t, errs[0])
		requireWoken(t, ch, "n")
	})
}

func TestS6_ManyWaitersShareOneConnection(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("q")
		const n = 200
		var wg sync.WaitGroup
		results := make(chan received, n)
		for range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				msgs, err := b.s.Receive(b.ctx, "q", "", tags.ReceiveOptions{MaxMessages: 1, WaitSeconds: i32(20)})
				results <- received{msgs: msgs, err: err}
			}()
		}
		require.Eventually(t, func() bool { return b.s.waiters.Waiting("q") == n }, 10*time.Second, 5*time.Millisecond)
		for i := 0; i < n; i += 100 {
			bodies := make([]string, 100)
			for j := range bodies {
				bodies[j] = "m"
			}
			b.send("q", bodies...)
		}
		wg.Wait()
		close(results)
		got := 0
		for r := range results {
			require.NoError(t, r.err)
			got += len(r.msgs)
		}
		require.Equal(t, n, got)
		require.Equal(t, tags.TagState{InFlight: n, ReceivedTotal: n}, b.state("q", "default"))
	})
}

func TestS6_CloseReleasesWaitingReceives(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		s, err := New(b.ctx, Config{Client: b.rdb, Prefix: b.prefix, TestClock: true})
		require.NoError(t, err)
		b.queue("q")
		ch := waitReceive(t, b, s, "q", "", 20)
		require.NoError(t, s.Close())
		select {
		case r := <-ch:
			require.NoError(t, r.err)
			require.Empty(t, r.msgs)
		case <-time.After(5 * time.Second):
			t.Fatal("Close did not release the waiting receive")
		}
	})
}

func TestS6_CanceledWaitReturnsContextError(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("q")
		ctx, cancel := context.WithCancel(b.ctx)
		done := make(chan error, 1)
		go func() {
			_, err := b.s.Receive(ctx, "q", "", tags.ReceiveOptions{MaxMessages: 1, WaitSeconds: i32(20)})
			done <- err
		}()
		require.Eventually(t, func() bool { return b.s.waiters.Waiting("q") == 1 }, 5*time.Second, time.Millisecond)
		cancel()
		require.ErrorIs(t, <-done, context.Canceled)
		require.Eventually(t, func() bool { return b.s.waiters.Waiting("q") == 0 }, 5*time.Second, time.Millisecond)
	})
}

// A visibility change on another process that brings a deadline nearer
// (here to 1 s) tells this process's waiters through the wake stream: they
// look again when it passes, and get the message back. (On the production
// clock a future deadline arms a timer here rather than waking a waiter at
// once to ask Redis.)
func TestS6_LongPollIsWokenAtADeadlineSetElsewhere(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		here, other := prodStore(t, b), prodStore(t, b)
		b.queue("q")
		_, err := other.Send(b.ctx, "q", []tags.OutMessage{{Body: []byte("m")}})
		require.NoError(t, err)
		first, err := other.Receive(b.ctx, "q", "", tags.ReceiveOptions{MaxMessages: 1, WaitSeconds: i32(0)})
		require.NoError(t, err)
		require.Len(t, first, 1)

		r, err := here.NewReader(b.ctx, "q", "", nil)
		require.NoError(t, err)
		defer r.Close()
		got := make(chan received, 1)
		go func() {
			msgs, err := r.Receive(b.ctx, 1)
			got <- received{msgs: msgs, err: err}
		}()
		// Its script has run (it found nothing): it waits, for 30 s as far
		// as it knows.
		require.Eventually(t, func() bool { _, ok := here.hints.Load(tagKey{"q", "default"}); return ok },
			5*time.Second, time.Millisecond)
		errs, err := other.ChangeVisibility(b.ctx, "q", []tags.VisibilityChange{{ReceiptHandle: first[0].ReceiptHandle, VisibilitySeconds: 1}})
		require.NoError(t, err)
		require.NoError(t, errs[0])
		select {
		case g := <-got:
			require.NoError(t, g.err)
			require.Equal(t, []string{"m"}, bodies(g.msgs))
			require.EqualValues(t, 2, g.msgs[0].ReceiveCount)
		case <-time.After(8 * time.Second):
			t.Fatal("the reader was not woken at the deadline")
		}
	})
}

// Sends on this process's fast path wake its waiting readers themselves
// (the watch then skips their entries rather than reading their bodies
// back); another process's sends in between still wake them through the
// watch.
func TestS6_LocalSendsWakeReadersDirectly(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		here, other := prodStore(t, b), prodStore(t, b)
		b.queue("q")
		r, err := here.NewReader(b.ctx, "q", "", nil)
		require.NoError(t, err)
		defer r.Close()
		receive := func() <-chan received {
			ch := make(chan received, 1)
			go func() {
				msgs, err := r.Receive(b.ctx, 100)
				ch <- received{msgs: msgs, err: err}
			}()
			return ch
		}
		expect := func(ch <-chan received, want int) {
			t.Helper()
			got := 0
			for got < want {
				select {
				case g := <-ch:
					require.NoError(t, g.err)
					got += len(g.msgs)
					if got < want {
						ch = receive()
					}
				case <-time.After(8 * time.Second):
					t.Fatalf("woken for %d of %d messages", got, want)
				}
			}
			require.Equal(t, want, got)
		}
		send := func(s *Store, n int) {
			msgs := make([]tags.OutMessage, n)
			for i := range msgs {
				msgs[i].Body = []byte("m")
			}
			res, err := s.Send(b.ctx, "q", msgs)
			require.NoError(t, err)
			for _, r := range res {
				require.NoError(t, r.Err)
			}
		}
		for round := range 3 {
			ch := receive()
			require.Eventually(t, func() bool { _, ok := here.hints.Load(tagKey{"q", "default"}); return ok || round > 0 },
				5*time.Second, time.Millisecond)
			switch round {
			case 0:
				send(here, 10)
			case 1:
				send(other, 5)
				send(here, 10)
			case 2:
				send(here, 10)
				send(other, 5)
			}
			expect(ch, map[int]int{0: 10, 1: 15, 2: 15}[round])
		}
		require.NotEmpty(t, here.waiters.Announced("q"), "local sends were announced to the watch")
	})
}

// countHook counts the commands a client sends whose name is one of names.
type countHook struct {
	names []string
	n     *atomic.Int64
}

func (h countHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h countHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.count(cmd)
		return next(ctx, cmd)
	}
}

func (h countHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, c := range cmds {
			h.count(c)
		}
		return next(ctx, cmds)
	}
}

func (h countHook) count(cmd redis.Cmder) {
	if slices.ContainsFunc(h.names, func(n string) bool { return strings.EqualFold(cmd.Name(), n) }) {
		h.n.Add(1)
	}
}

// A long poll on a queue this process already watches registers before
// its first read, so that one read covers the wait too: it reads once
// before it waits, not twice. A send then wakes it as before.
func TestS6_ALongPollOnAWatchedQueueReadsOnceBeforeItWaits(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, b *bundle) {
		s := prodStore(t, b)
		b.queue("q")
		r, err := s.NewReader(b.ctx, "q", "", nil) // keeps the queue's watch
		require.NoError(t, err)
		defer r.Close()
		var reads atomic.Int64
		b.rdb.AddHook(countHook{names: []string{"xreadgroup"}, n: &reads})
		ch := make(chan received, 1)
		go func() {
			msgs, err := s.Receive(b.ctx, "q", "", tags.ReceiveOptions{MaxMessages: 1, WaitSeconds: i32(20)})
			ch <- received{msgs: msgs, err: err}
		}()
		require.Eventually(t, func() bool { return offered(s, "q") == 1 }, 10*time.Second, time.Millisecond)
		require.EqualValues(t, 1, reads.Load(), "reads before the wait")
		b.send("q", "x") // another process's send: the watch wakes it
		g := got(t, ch)
		require.NoError(t, g.err)
		require.Equal(t, []string{"x"}, bodies(g.msgs))
	})
}
