package redisstore

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tagq/tagq/tags"
)

// A consume stream's reader whose stream has ended (its context) must not
// take messages: nobody is left to push them to, so they would be given
// back having been received for nothing, their receive count one higher
// (closer to the redrive policy) and received_total counting a delivery
// no client saw. The chaos test found this on every few clean closes of a
// Consume stream: a wake-up and the close arrived together.
func TestReader_EndedContextReceivesNothing(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, b *bundle) {
		b.queue("q")
		b.send("q", "a", "b")
		r, err := b.s.NewReader(b.ctx, "q", "", nil)
		require.NoError(t, err)
		defer r.Close()
		ctx, cancel := context.WithCancel(b.ctx)
		cancel()
		msgs, err := r.Receive(ctx, 10)
		require.ErrorIs(t, err, context.Canceled)
		require.Empty(t, msgs)
		require.Equal(t, tags.TagState{Available: 2}, b.state("q", "default"))

		// A live context still receives both, with receive count 1.
		msgs, err = r.Receive(b.ctx, 10)
		require.NoError(t, err)
		require.Len(t, msgs, 2)
		for _, m := range msgs {
			require.EqualValues(t, 1, m.ReceiveCount)
		}
	})
}

// A reader that found its tag drained reads again only when something may
// have come: a send (here, from another store: seen by the watch), a nack,
// or a deadline. In between, a Receive waits without a read (a consume
// stream asked Redis twice per push for nothing before: 50,000 empty
// XREADGROUPs in a 25 s streaming W1 run).
func TestReader_DrainedTagWaitsForNews(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, b *bundle) {
		prod := prodStore(t, b) // the production clock: hints are followed
		b.queue("q")
		b.send("q", "a", "b")
		r, err := prod.NewReader(b.ctx, "q", "", nil)
		require.NoError(t, err)
		defer r.Close()
		require.True(t, r.mayHaveMore(), "nothing read yet")
		msgs, err := r.Receive(b.ctx, 10)
		require.NoError(t, err)
		require.Len(t, msgs, 2)
		require.False(t, r.mayHaveMore(), "fewer than asked, nothing more: drained")
		r2, err := prod.NewReader(b.ctx, "q", "", nil)
		require.NoError(t, err)
		defer r2.Close()
		require.False(t, r2.mayHaveMore(), "another reader of the tag here found it drained")

		b.send("q", "c") // another process's send
		require.Eventually(t, r.mayHaveMore, 10*time.Second, time.Millisecond, "the watch saw the send")
		more, err := r.Receive(b.ctx, 10)
		require.NoError(t, err)
		require.Equal(t, []string{"c"}, bodies(more))
		require.False(t, r.mayHaveMore())

		// A nack here makes the message due at once: read again.
		sb := &tags.SettleBatch{Queue: "q", Tag: more[0].Tag, Ops: []tags.Settlement{{Kind: tags.SettleVisibility, Delivery: more[0].Delivery("q")}}}
		require.NoError(t, prod.Settle(b.ctx, []*tags.SettleBatch{sb}))
		require.NoError(t, sb.Errs[0])
		require.True(t, r.mayHaveMore(), "a nack")
		again, err := r.Receive(b.ctx, 10)
		require.NoError(t, err)
		require.Equal(t, []string{"c"}, bodies(again))
		require.EqualValues(t, 2, again[0].ReceiveCount)

		// A full read may have left more: read again.
		b.send("q", "d", "e")
		require.Eventually(t, r.mayHaveMore, 10*time.Second, time.Millisecond)
		one, err := r.Receive(b.ctx, 1)
		require.NoError(t, err)
		require.Len(t, one, 1)
		require.True(t, r.mayHaveMore(), "a full read")
	})
}

// Readers of one tag share the news: a batch of sends wakes one of them,
// and one whose read is full wakes the next, until all is taken; every
// message reaches exactly one reader.
func TestReader_ReadersShareABurst(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, b *bundle) {
		prod := prodStore(t, b)
		b.queue("q")
		const readers, total = 4, 200
		ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
		defer cancel()
		got := make(chan string, total)
		errs := make(chan error, readers)
		var wg sync.WaitGroup
		var rs []*Reader
		defer func() { // the readers close once their Receives returned
			cancel()
			wg.Wait()
			for _, r := range rs {
				r.Close()
			}
		}()
		for range readers {
			r, err := prod.NewReader(b.ctx, "q", "", nil)
			require.NoError(t, err)
			rs = append(rs, r)
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					msgs, err := r.Receive(ctx, 5)
					if err != nil {
						if ctx.Err() == nil {
							errs <- err
						}
						return
					}
					for _, m := range msgs {
						got <- string(m.Body)
					}
				}
			}()
		}
		for i := 0; i < total; i += 50 {
			batch := make([]string, 50)
			for j := range batch {
				batch[j] = fmt.Sprint(i + j)
			}
			b.send("q", batch...)
		}
		seen := map[string]bool{}
		for len(seen) < total {
			select {
			case body := <-got:
				require.False(t, seen[body], "%s received twice", body)
				seen[body] = true
			case err := <-errs:
				t.Fatalf("a reader failed: %v", err)
			}
		}
	})
}
