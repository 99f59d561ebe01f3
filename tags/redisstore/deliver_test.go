package redisstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/tagq/tagq/internal/durable"
	"github.com/tagq/tagq/tags"
	"github.com/tagq/tagq/tags/wake"
)

// offered counts the readers of queue waiting in the store's offer book.
func offered(s *Store, queue string) int {
	s.offers.mu.Lock()
	defer s.offers.mu.Unlock()
	n := 0
	for _, list := range s.offers.byQueue[queue] {
		n += len(list)
	}
	return n
}

// openReader opens a reader of queue's tag, closed when the test ends
// (after its receives returned).
func openReader(t *testing.T, s *Store, queue, tag string) *Reader {
	t.Helper()
	r, err := s.NewReader(context.Background(), queue, tag, nil)
	require.NoError(t, err)
	t.Cleanup(r.Close)
	return r
}

// receiveIn runs r.Receive(ctx, n) in a goroutine.
func receiveIn(ctx context.Context, r *Reader, n int) <-chan received {
	ch := make(chan received, 1)
	go func() {
		msgs, err := r.Receive(ctx, n)
		ch <- received{msgs: msgs, err: err}
	}()
	return ch
}

// got waits (bounded) for a Receive's outcome.
func got(t *testing.T, ch <-chan received) received {
	t.Helper()
	select {
	case g := <-ch:
		return g
	case <-time.After(10 * time.Second):
		t.Fatal("the receive did not return")
		return received{}
	}
}

// waitOffered waits until queue has n readers offered, each having read
// once (its tag's hint is known: a send may deliver to it).
func waitOffered(t *testing.T, s *Store, queue string, n int, tags ...string) {
	t.Helper()
	require.Eventually(t, func() bool {
		for _, tag := range tags {
			if _, ok := s.hints.Load(tagKey{queue, tag}); !ok {
				return false
			}
		}
		return offered(s, queue) == n
	}, 10*time.Second, time.Millisecond, "readers waiting")
}

// A fast-path send hands one waiting reader of each tag what it received
// for it in the send's own MULTI: the messages, with working receipt
// handles, counted in flight; the tag's other reader stays waiting.
func TestDeliver_ASendHandsAWaitingReaderItsMessages(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, b *bundle) {
		s := prodStore(t, b)
		b.queue("q")
		b.tag("q", "a")
		b.tag("q", "b")
		ra1, ra2, rb := openReader(t, s, "q", "a"), openReader(t, s, "q", "a"), openReader(t, s, "q", "b")
		ctx, cancel := context.WithCancel(b.ctx)
		defer cancel()
		cha1, cha2, chb := receiveIn(ctx, ra1, 10), receiveIn(ctx, ra2, 10), receiveIn(ctx, rb, 10)
		waitOffered(t, s, "q", 3, "a", "b")

		res, err := s.Send(b.ctx, "q", []tags.OutMessage{{Body: []byte("x")}, {Body: []byte("y")}})
		require.NoError(t, err)
		require.NoError(t, res[0].Err)
		require.EqualValues(t, 2, s.delivered.Load(), "one delivery per tag")

		gb := got(t, chb)
		require.NoError(t, gb.err)
		require.Equal(t, []string{"x", "y"}, bodies(gb.msgs))
		var ga received
		left := cha2 // the reader of a that stays waiting
		select {
		case ga = <-cha1:
		case ga = <-cha2:
			left = cha1
		case <-time.After(10 * time.Second):
			t.Fatal("no reader of tag a got the messages")
		}
		require.NoError(t, ga.err)
		require.Equal(t, []string{"x", "y"}, bodies(ga.msgs))
		require.Equal(t, 1, offered(s, "q"), "the other reader of a still waits")
		cancel()
		require.ErrorIs(t, got(t, left).err, context.Canceled)

		for _, m := range append(ga.msgs, gb.msgs...) {
			require.EqualValues(t, 1, m.ReceiveCount)
			require.Positive(t, m.VisibleFor)
		}
		require.EqualValues(t, 2, b.state("q", "a").InFlight)
		errs, err := s.Delete(b.ctx, "q", []string{ga.msgs[0].ReceiptHandle, gb.msgs[1].ReceiptHandle})
		require.NoError(t, err)
		require.Equal(t, []error{nil, nil}, errs)
		require.EqualValues(t, 1, b.state("q", "a").InFlight)
		require.EqualValues(t, 1, b.state("q", "b").InFlight)
	})
}

// A reader a send claimed waits for that send's answer even when it is
// woken or its context ends meanwhile: messages the send's receive found
// come back (not lost to the visibility timeout with nobody to pass them
// on); a receive that did not run is a wake-up, or the context's error.
func TestDeliver_AClaimedReaderIsHeardOut(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, b *bundle) {
		s, other := prodStore(t, b), prodStore(t, b)
		b.queue("q")
		r, err := s.NewReader(b.ctx, "q", "", nil)
		require.NoError(t, err)
		defer r.Close()
		send := func(body string) {
			res, err := other.Send(b.ctx, "q", []tags.OutMessage{{Body: []byte(body)}})
			require.NoError(t, err)
			require.NoError(t, res[0].Err)
		}

		// Claimed, woken by another process's send, then cancelled: the
		// claim's receive runs and its message comes back without error.
		ctx, cancel := context.WithCancel(b.ctx)
		ch := receiveIn(ctx, r, 10)
		waitOffered(t, s, "q", 1, "default")
		claims := s.claimOffers("q")
		require.Len(t, claims, 1)
		send("m1")
		cancel()
		tx := &durable.Tx{}
		s.queueDeliveries(b.ctx, tx, claims)
		s.execSendTx(b.ctx, "q", tx.Cmds())
		require.NoError(t, claims[0].cmd.Err())
		s.deliver(claims, wake.Counts{})
		g := got(t, ch)
		require.NoError(t, g.err)
		require.Equal(t, []string{"m1"}, bodies(g.msgs))

		// A claim whose receive failed: the reader reads itself.
		ch = receiveIn(b.ctx, r, 10)
		waitOffered(t, s, "q", 1, "default")
		claims = s.claimOffers("q")
		require.Len(t, claims, 1)
		send("m2")
		claims[0].cmd = redis.NewCmd(b.ctx)
		claims[0].cmd.SetErr(errors.New("connection reset"))
		s.deliver(claims, wake.Counts{})
		g = got(t, ch)
		require.NoError(t, g.err)
		require.Equal(t, []string{"m2"}, bodies(g.msgs))

		// The same with the context ended: its error.
		ctx, cancel = context.WithCancel(b.ctx)
		ch = receiveIn(ctx, r, 10)
		waitOffered(t, s, "q", 1, "default")
		claims = s.claimOffers("q")
		require.Len(t, claims, 1)
		cancel()
		claims[0].cmd = redis.NewCmd(b.ctx)
		claims[0].cmd.SetErr(errors.New("connection reset"))
		s.deliver(claims, wake.Counts{})
		g = got(t, ch)
		require.ErrorIs(t, g.err, context.Canceled)
		require.Empty(t, g.msgs)
	})
}

// Sends deliver only where the reader's own receive would do the same:
// not to a tag whose redeliveries may be due (no hint yet, or a nack),
// nor to a tag with a read quota, nor on a topic queue.
func TestDeliver_OnlyThePlainCase(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, b *bundle) {
		s := prodStore(t, b)
		b.queue("q")
		b.tag("q", "quota", func(c *tags.TagConfig) { c.ReadQuotaPerSecond = i32(1000) })
		b.queue("tq", topicQueue)
		ctx, cancel := context.WithCancel(b.ctx)
		defer cancel()
		rq := openReader(t, s, "q", "quota")
		rt := openReader(t, s, "tq", "")
		chq, cht := receiveIn(ctx, rq, 10), receiveIn(ctx, rt, 10)
		waitOffered(t, s, "q", 1, "quota")
		waitOffered(t, s, "tq", 1)
		require.Empty(t, s.claimOffers("q"), "a tag with a read quota")
		require.Empty(t, s.claimOffers("tq"), "a topic queue")
		s.forgetHint("q", "quota")
		s.readQuotas.Delete(tagKey{"q", "quota"})
		require.Empty(t, s.claimOffers("q"), "redeliveries may be due")
		cancel()
		require.ErrorIs(t, got(t, chq).err, context.Canceled)
		require.ErrorIs(t, got(t, cht).err, context.Canceled)
	})
}

// A long poll (ReceiveMessage with a wait) is delivered to the same way,
// with its own visibility.
func TestDeliver_LongPollsToo(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, b *bundle) {
		s := prodStore(t, b)
		b.queue("q")
		poll := func() <-chan received {
			ch := make(chan received, 1)
			go func() {
				msgs, err := s.Receive(b.ctx, "q", "", tags.ReceiveOptions{MaxMessages: 5, WaitSeconds: i32(20),
					VisibilitySeconds: i32(7)})
				ch <- received{msgs: msgs, err: err}
			}()
			return ch
		}
		ch := poll()
		waitOffered(t, s, "q", 1, "default")
		res, err := s.Send(b.ctx, "q", []tags.OutMessage{{Body: []byte("x")}})
		require.NoError(t, err)
		require.NoError(t, res[0].Err)
		g := got(t, ch)
		require.NoError(t, g.err)
		require.Equal(t, []string{"x"}, bodies(g.msgs))
		require.EqualValues(t, 1, s.delivered.Load())
		require.Equal(t, 7*time.Second, g.msgs[0].VisibleFor)
		errs, err := s.Delete(b.ctx, "q", []string{g.msgs[0].ReceiptHandle})
		require.NoError(t, err)
		require.Equal(t, []error{nil}, errs)

	})
}

// A delivery's bodies pass through Lua, so it takes at most what the
// queue's max_message_bytes keeps within 4 MiB (4 at 1 MiB); the rest is
// not left behind: the reader reads it next, without waiting for news.
func TestDeliver_IsBoundedByBytes(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, b *bundle) {
		s := prodStore(t, b)
		b.queue("q", func(c *tags.QueueConfig) { c.MaxMessageBytes = i32(1 << 20) })
		r, err := s.NewReader(b.ctx, "q", "", nil)
		require.NoError(t, err)
		defer r.Close()
		ch := receiveIn(b.ctx, r, 10)
		waitOffered(t, s, "q", 1, "default")
		out := make([]tags.OutMessage, 10)
		for i := range out {
			out[i].Body = []byte{byte('a' + i)}
		}
		res, err := s.Send(b.ctx, "q", out)
		require.NoError(t, err)
		require.NoError(t, res[9].Err)
		g := got(t, ch)
		require.NoError(t, g.err)
		require.Equal(t, []string{"a", "b", "c", "d"}, bodies(g.msgs))
		require.EqualValues(t, 1, s.delivered.Load())
		g = got(t, receiveIn(b.ctx, r, 10))
		require.NoError(t, g.err)
		require.Equal(t, []string{"e", "f", "g", "h", "i", "j"}, bodies(g.msgs))
	})
}

// Concurrent fast-path sends and readers of two tags: every message
// reaches each tag exactly once, whether a send delivered it or a reader
// read it, and sends did deliver (the readers all wait before the first).
func TestDeliver_ConcurrentSendsAndReaders(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, b *bundle) {
		s := prodStore(t, b)
		b.queue("q")
		b.tag("q", "a")
		b.tag("q", "b")
		const perTag, senders, total = 3, 4, 400
		ctx, cancel := context.WithTimeout(b.ctx, 60*time.Second)
		defer cancel()
		type item struct{ tag, body string }
		got := make(chan item, 2*total)
		errs := make(chan error, 2*perTag+senders)
		var wg sync.WaitGroup
		var rs []*Reader
		defer func() {
			cancel()
			wg.Wait()
			for _, r := range rs {
				r.Close()
			}
		}()
		for _, tag := range []string{"a", "b"} {
			for range perTag {
				r, err := s.NewReader(b.ctx, "q", tag, nil)
				require.NoError(t, err)
				rs = append(rs, r)
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						msgs, err := r.Receive(ctx, 3)
						if err != nil {
							if ctx.Err() == nil {
								errs <- err
							}
							return
						}
						for _, m := range msgs {
							got <- item{tag, string(m.Body)}
						}
					}
				}()
			}
		}
		// Every reader waits (and its tag's hint is known) before the
		// sends begin: the first send has readers to deliver to.
		waitOffered(t, s, "q", 2*perTag, "a", "b")
		for i := range senders {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := 0; j < total/senders; j += 2 {
					res, err := s.Send(ctx, "q", []tags.OutMessage{{Body: []byte(fmt.Sprint(i, "-", j))},
						{Body: []byte(fmt.Sprint(i, "-", j+1))}})
					if err == nil {
						err = errors.Join(res[0].Err, res[1].Err)
					}
					if err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		seen := map[item]bool{}
		for len(seen) < 2*total {
			select {
			case it := <-got:
				require.False(t, seen[it], "%v received twice", it)
				seen[it] = true
			case err := <-errs:
				t.Fatalf("failed: %v", err)
			case <-ctx.Done():
				t.Fatalf("received %d of %d", len(seen), 2*total)
			}
		}
		require.Positive(t, s.delivered.Load(), "sends delivered")
		t.Logf("%d of %d receives were deliveries", s.delivered.Load(), 2*total)
	})
}
