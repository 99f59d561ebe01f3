package redisstore

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tagq/tagq/tags"
)

// countReads counts the reads s's client sends from now on: XREADGROUPs,
// and script calls (a receive script may read in it).
func countReads(b *bundle) (xreads, scripts *atomic.Int64) {
	xreads, scripts = new(atomic.Int64), new(atomic.Int64)
	b.rdb.AddHook(countHook{names: []string{"xreadgroup"}, n: xreads})
	b.rdb.AddHook(countHook{names: []string{"evalsha", "eval"}, n: scripts})
	return xreads, scripts
}

// A receive script that reads new messages itself (a quiet tag's: see
// smallReads) passes their bodies through Lua: it reads in chunks that the
// queue's max_message_bytes keeps within 4 MiB, and stops after the chunk
// that takes it there, as a topic or priority queue's does; the receive
// reads the rest in its next step, and gets all it asked for.
func TestReceive_AReadInTheScriptIsBoundedByBytes(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, b *bundle) {
		s := prodStore(t, b)
		b.queue("q", func(c *tags.QueueConfig) { c.MaxMessageBytes = i32(tags.MaxMaxMessageBytes) })
		// A quiet tag: its last receive got at most one message, a while
		// ago; and its hint is known (nothing due).
		none, err := s.Receive(b.ctx, "q", "", tags.ReceiveOptions{MaxMessages: 10})
		require.NoError(t, err)
		require.Empty(t, none)
		require.Eventually(t, func() bool { return s.smallReads("q", "default") }, 10*time.Second, time.Millisecond)
		require.False(t, s.dueMaybe("q", "default"))
		large := strings.Repeat("y", tags.MaxMaxMessageBytes)
		for range 6 {
			b.send("q", large)
		}
		xreads, scripts := countReads(b)
		got, err := s.Receive(b.ctx, "q", "", tags.ReceiveOptions{MaxMessages: 10})
		require.NoError(t, err)
		require.Len(t, got, 6)
		for _, m := range got {
			require.Equal(t, large, string(m.Body))
		}
		// 4 x 1 MiB in the first call, the other 2 in a second; both read
		// in the script (one call of 6 without the bound).
		require.EqualValues(t, 2, scripts.Load())
		require.Zero(t, xreads.Load())
		require.Equal(t, tags.TagState{InFlight: 6, ReceivedTotal: 6}, b.state("q", "default"))
	})
}
