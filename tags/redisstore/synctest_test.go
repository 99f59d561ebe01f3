package redisstore

import (
	"context"
	"net"
	"testing"
	"testing/synctest"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/tagq/tagq/tags"
)

// Long-poll timing, driven by a fake clock: miniredis over net.Pipe inside a
// synctest bubble, where Redis TIME, our timers and time.Now all follow the
// bubble's clock, and time jumps only when every goroutine is blocked.

func syncBundle(t *testing.T) *bundle {
	m := miniredis.NewMiniRedis()
	t.Cleanup(m.Close)
	rdb := redis.NewClient(&redis.Options{
		Addr:                  "127.0.0.1:1", // never dialled; an IP literal needs no DNS inside the bubble
		Dialer:                func(context.Context, string, string) (net.Conn, error) { return m.Dial() },
		ContextTimeoutEnabled: true,
	})
	t.Cleanup(func() { _ = rdb.Close() }) // runs after the store's Close: ends the watchers' XREADs
	return newBundle(t, rdb, true)
}

func TestS6_LongPollWaitsAtMostWaitSeconds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := syncBundle(t)
		b.queue("q")
		start := time.Now()
		got := b.receive("q", "", 1, func(o *tags.ReceiveOptions) { o.WaitSeconds = i32(7) })
		require.Empty(t, got)
		require.Equal(t, 7*time.Second, time.Since(start))
	})
}

func TestS6_QueueDefaultWaitApplies(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := syncBundle(t)
		b.queue("q", func(c *tags.QueueConfig) { c.ReceiveWaitSeconds = i32(3) })
		start := time.Now()
		got, err := b.s.Receive(b.ctx, "q", "", tags.ReceiveOptions{MaxMessages: 1})
		require.NoError(t, err)
		require.Empty(t, got)
		require.Equal(t, 3*time.Second, time.Since(start))
	})
}

func TestS6_LongPollIsWokenByVisibilityExpiry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := syncBundle(t)
		b.queue("q", func(c *tags.QueueConfig) { c.VisibilityTimeoutSeconds = i32(5) })
		b.send("q", "m")
		require.Len(t, b.receive("q", "", 1), 1)
		start := time.Now()
		got := b.receive("q", "", 1, func(o *tags.ReceiveOptions) { o.WaitSeconds = i32(20) })
		require.Equal(t, []string{"m"}, bodies(got))
		require.Equal(t, 2, got[0].ReceiveCount)
		require.Equal(t, 5*time.Second, time.Since(start).Round(time.Millisecond))
	})
}

func TestS6_LongPollIsWokenByDelayExpiry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := syncBundle(t)
		b.queue("q")
		b.sendMsgs("q", tags.OutMessage{Body: []byte("later"), DelaySeconds: i32(9)})
		start := time.Now()
		got := b.receive("q", "", 1, func(o *tags.ReceiveOptions) { o.WaitSeconds = i32(20) })
		require.Equal(t, []string{"later"}, bodies(got))
		require.Equal(t, 9*time.Second, time.Since(start).Round(time.Millisecond))
	})
}

func TestS6_DeadlineLearnedByOneWaiterWakesAnother(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := syncBundle(t)
		b.queue("q", func(c *tags.QueueConfig) { c.VisibilityTimeoutSeconds = i32(10) })
		start := func(wait int32) <-chan []tags.Message {
			ch := make(chan []tags.Message, 1)
			go func() { ch <- b.receive("q", "", 1, func(o *tags.ReceiveOptions) { o.WaitSeconds = i32(wait) }) }()
			synctest.Wait() // registered, in this order
			return ch
		}
		w1, w2, w3 := start(20), start(2), start(20)
		t0 := time.Now()
		b.send("q", "m")
		require.Equal(t, []string{"m"}, bodies(<-w1)) // w1 holds m until t0+10s
		// The deadline reaches w2 (wake stream); w2 leaves after 2 s. w3
		// never ran the script since, yet must get m when it is visible again.
		require.Empty(t, <-w2)
		got := <-w3
		require.Equal(t, []string{"m"}, bodies(got))
		require.Equal(t, 2, got[0].ReceiveCount)
		require.Equal(t, 10*time.Second, time.Since(t0).Round(time.Millisecond))
	})
}
