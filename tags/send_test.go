package tags

import (
	"bytes"
	"fmt"
	"sync"
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

// Concurrent sends share round trips (one MULTI per slot): every message
// is stored once, under its own id, and counted on its own queue.
func TestSendFastPathConcurrentBatchesAcrossQueues(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		s, err := New(b.ctx, Config{Client: b.rdb, Prefix: b.prefix, JanitorInterval: -1, Logger: testLogger(t)})
		require.NoError(t, err)
		defer s.Close()
		queues := []string{"qa", "qb", "qc"}
		for _, q := range queues {
			b.queue(q)
		}
		const senders, batches, size = 6, 20, 5
		var wg sync.WaitGroup
		ids := make([][]string, senders)
		errs := make([]error, senders)
		for g := range senders {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range batches {
					msgs := make([]OutMessage, size)
					for j := range msgs {
						msgs[j] = OutMessage{Body: []byte(fmt.Sprintf("%d-%d-%d", g, i, j))}
					}
					q := queues[(g+i)%len(queues)]
					res, err := s.Send(b.ctx, q, msgs)
					if err != nil {
						errs[g] = err
						return
					}
					for _, r := range res {
						if r.Err != nil {
							errs[g] = r.Err
							return
						}
						ids[g] = append(ids[g], q+"/"+r.ID) // ids are per queue
					}
				}
			}()
		}
		wg.Wait()
		for _, err := range errs {
			require.NoError(t, err)
		}
		total := int64(0)
		for _, q := range queues {
			n := b.rdb.XLen(b.ctx, b.s.qkeys(q).stream).Val()
			require.Equal(t, n, b.state(q, "default").Available, "queue %s counts what it stores", q)
			total += n
		}
		require.Equal(t, int64(senders*batches*size), total)
		seen := map[string]bool{}
		for _, list := range ids {
			for _, id := range list {
				require.False(t, seen[id], "id %s given twice", id)
				seen[id] = true
			}
		}
	})
}
