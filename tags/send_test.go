package tags

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

// Sends on the production clock take the fast path (plain XADDs and
// sendpost.lua in one MULTI) against limits cached per process. Another
// process changing or deleting the queue makes the cache stale: the send
// must then be exactly what send.lua would have done.
func TestSendFastPathFollowsTheQueueItIsSentTo(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		prod := func() *Store {
			s, err := New(b.ctx, Config{Client: b.rdb, Prefix: b.prefix, JanitorInterval: -1, Logger: testLogger(t)})
			require.NoError(t, err)
			t.Cleanup(func() { _ = s.Close() })
			return s
		}
		s, other := prod(), prod()
		b.queue("q")
		v := "eu"
		b.tag("q", "eu", func(c *TagConfig) { c.Filter = &Filter{Conditions: []Condition{{Name: "region", Value: &v}}} })
		stream := b.s.qkeys("q").stream
		res, err := s.Send(b.ctx, "q", []OutMessage{{Body: []byte("a")},
			{Body: []byte("b"), Attributes: map[string]Attribute{"region": {String: "eu"}}}})
		require.NoError(t, err)
		require.NoError(t, res[0].Err)
		require.NoError(t, res[1].Err)
		_, cached := s.limits.Load("q")
		require.True(t, cached, "the fast path ran")
		require.Equal(t, int64(2), b.state("q", "default").Available)
		require.Equal(t, int64(1), b.state("q", "eu").Available, "sendpost counts what a filter admits")

		// Smaller limit set elsewhere: refused per entry, nothing stored.
		small := int32(MinMaxMessageBytes)
		_, err = other.UpdateQueue(b.ctx, "q", QueueUpdate{MaxMessageBytes: &small})
		require.NoError(t, err)
		res, err = s.Send(b.ctx, "q", []OutMessage{{Body: bytes.Repeat([]byte("x"), 2000)}, {Body: []byte("c")}})
		require.NoError(t, err)
		requireReason(t, res[0].Err, ReasonMessageTooLarge)
		require.NoError(t, res[1].Err)
		require.Equal(t, int64(3), b.rdb.XLen(b.ctx, stream).Val(), "the refused message is not in the stream")
		require.Equal(t, int64(3), b.state("q", "default").Available)

		// A default delay set elsewhere applies at once.
		delay := int32(60)
		_, err = other.UpdateQueue(b.ctx, "q", QueueUpdate{DelaySeconds: &delay})
		require.NoError(t, err)
		_, err = s.Send(b.ctx, "q", []OutMessage{{Body: []byte("d")}})
		require.NoError(t, err)
		st := b.state("q", "default")
		require.Equal(t, int64(1), st.Delayed)
		require.Equal(t, int64(3), st.Available)

		// Deleted elsewhere: QUEUE_NOT_FOUND, and no stream left behind.
		require.NoError(t, other.DeleteQueue(b.ctx, "q", false))
		_, err = s.Send(b.ctx, "q", []OutMessage{{Body: []byte("e")}})
		requireReason(t, err, ReasonQueueNotFound)
		require.Zero(t, b.rdb.Exists(b.ctx, stream).Val())
	})
}
