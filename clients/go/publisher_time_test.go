package tagq_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	tagq "github.com/tagq/tagq/clients/go"
)

// The Publisher's timing on driven time (fake_server_test.go).

// stopAtEnd stops p when the test ends (in the bubble, before its
// goroutines must be gone).
func stopAtEnd(t *testing.T, p *tagq.Publisher) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = p.Stop(ctx)
	})
}

func ready(r *tagq.PublishResult) bool {
	select {
	case <-r.Ready():
		return true
	default:
		return false
	}
}

// A frame that does not fill goes MaxDelay after its first message, not
// before (later messages of its queue join it, and do not delay it); each
// queue's frame has its own delay. A frame that fills goes at once, and so
// does a partial one at Flush or Stop.
func TestPublisherTime_FramesGoWhenFullOrAfterMaxDelay(t *testing.T) {
	inBubble(t, func(t *testing.T, f *fakeServer, c *tagq.Client) {
		ctx := bounded(t)
		p := c.NewPublisher(tagq.PublisherConfig{MaxDelay: 50 * time.Millisecond, MaxMessages: 3})
		stopAtEnd(t, p)
		msg := func(body string) tagq.Outgoing { return tagq.Outgoing{Body: []byte(body)} }

		a1 := p.Publish(ctx, "q1", msg("a1"))
		time.Sleep(30 * time.Millisecond)
		a2 := p.Publish(ctx, "q1", msg("a2"))
		b1 := p.Publish(ctx, "q2", msg("b1"))
		time.Sleep(20*time.Millisecond - time.Nanosecond)
		synctest.Wait()
		require.Empty(t, f.events("publish", "frame"), "nothing sent before the delay")
		require.False(t, ready(a1))

		time.Sleep(time.Nanosecond)
		synctest.Wait()
		require.Equal(t, []string{"50ms publish#1", "50ms frame#1 q1 a1,a2"}, f.events("publish", "frame"))
		for body, r := range map[string]*tagq.PublishResult{"a1": a1, "a2": a2} {
			require.True(t, ready(r), "%s answered with its frame", body)
			id, err := r.Get(ctx)
			require.NoError(t, err)
			require.Equal(t, "q1/"+body, id)
		}
		require.False(t, ready(b1), "q2's frame has its own delay")

		time.Sleep(30 * time.Millisecond)
		synctest.Wait()
		require.Equal(t, []string{"50ms frame#1 q1 a1,a2", "80ms frame#1 q2 b1"}, f.events("frame"))
		require.True(t, ready(b1))

		full := []*tagq.PublishResult{p.Publish(ctx, "q3", msg("c1")), p.Publish(ctx, "q3", msg("c2")),
			p.Publish(ctx, "q3", msg("c3"))}
		synctest.Wait()
		require.Equal(t, []string{"50ms frame#1 q1 a1,a2", "80ms frame#1 q2 b1", "80ms frame#1 q3 c1,c2,c3"},
			f.events("frame"), "a full frame at once")
		for _, r := range full {
			require.True(t, ready(r))
		}

		time.Sleep(10 * time.Millisecond)
		d1 := p.Publish(ctx, "q4", msg("d1"))
		require.NoError(t, p.Flush(ctx))
		require.True(t, ready(d1))
		e1 := p.Publish(ctx, "q5", msg("e1"))
		require.NoError(t, p.Stop(ctx))
		require.True(t, ready(e1))
		require.Equal(t, []string{"50ms frame#1 q1 a1,a2", "80ms frame#1 q2 b1", "80ms frame#1 q3 c1,c2,c3",
			"90ms frame#1 q4 d1", "90ms frame#1 q5 e1", "90ms publish-close#1"},
			f.events("frame", "publish-close"), "Flush and Stop send at once")
	})
}

// A Publisher whose streams the server ends at once (unavailable) opens
// them again with the Consumer's growing backoff and sends its frame on
// the first stream that takes it.
func TestPublisherTime_ReconnectBackoff(t *testing.T) {
	inBubble(t, func(t *testing.T, f *fakeServer, c *tagq.Client) {
		ctx := context.Background()
		f.refuseStreams(errUnavailable)
		p := c.NewPublisher(tagq.PublisherConfig{Logger: quiet})
		stopAtEnd(t, p)
		r := p.Publish(ctx, "q", tagq.Outgoing{Body: []byte("a")})
		time.Sleep(60 * time.Second)
		at := eventTimes(t, f.events("publish"))
		require.Equal(t, 10*time.Millisecond, at[0], "the first stream opens with the first frame (MaxDelay 10ms)")
		requireBackoff(t, at)
		require.False(t, ready(r))

		f.refuseStreams(nil)
		id, err := get(t, r) // within 10s
		require.NoError(t, err)
		require.Equal(t, "q/a", id)
		frames := f.events("frame")
		require.Len(t, frames, 1)
		require.Equal(t, eventTimes(t, frames)[0], eventTimes(t, f.events("publish"))[len(at)],
			"sent on the stream that took it")
		require.NoError(t, p.Stop(bounded(t)))
	})
}
