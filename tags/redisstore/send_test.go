package redisstore

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/tagq/tagq/tags"
)

// Sends on the production clock take the fast path (plain XADDs and
// sendpost.lua in one MULTI) against limits cached per process. Another
// process changing or deleting the queue makes the cache stale: the send
// must then be exactly what send.lua would have done.
func TestSendFastPathFollowsTheQueueItIsSentTo(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		prod := func() *Store {
			s, err := New(b.ctx, Config{Client: b.rdb, Prefix: b.prefix, Logger: testLogger(t)})
			require.NoError(t, err)
			t.Cleanup(func() { _ = s.Close() })
			return s
		}
		s, other := prod(), prod()
		b.queue("q")
		v := "eu"
		b.tag("q", "eu", func(c *tags.TagConfig) {
			c.Filter = &tags.Filter{Conditions: []tags.Condition{{Name: "region", Value: &v}}}
		})
		stream := b.s.qkeys("q").stream
		res, err := s.Send(b.ctx, "q", []tags.OutMessage{{Body: []byte("a")},
			{Body: []byte("b"), Attributes: map[string]tags.Attribute{"region": {String: "eu"}}}})
		require.NoError(t, err)
		require.NoError(t, res[0].Err)
		require.NoError(t, res[1].Err)
		_, cached := s.limits.Load("q")
		require.True(t, cached, "the fast path ran")
		require.Equal(t, int64(2), b.state("q", "default").Available)
		require.Equal(t, int64(1), b.state("q", "eu").Available, "sendpost counts what a filter admits")

		// Smaller limit set elsewhere: refused per entry, nothing stored.
		small := int32(tags.MinMaxMessageBytes)
		_, err = other.UpdateQueue(b.ctx, "q", tags.QueueUpdate{MaxMessageBytes: &small})
		require.NoError(t, err)
		res, err = s.Send(b.ctx, "q", []tags.OutMessage{{Body: bytes.Repeat([]byte("x"), 2000)}, {Body: []byte("c")}})
		require.NoError(t, err)
		requireReason(t, res[0].Err, tags.ReasonMessageTooLarge)
		require.NoError(t, res[1].Err)
		require.Equal(t, int64(3), b.rdb.XLen(b.ctx, stream).Val(), "the refused message is not in the stream")
		require.Equal(t, int64(3), b.state("q", "default").Available)

		// A default delay set elsewhere applies at once.
		delay := int32(60)
		_, err = other.UpdateQueue(b.ctx, "q", tags.QueueUpdate{DelaySeconds: &delay})
		require.NoError(t, err)
		_, err = s.Send(b.ctx, "q", []tags.OutMessage{{Body: []byte("d")}})
		require.NoError(t, err)
		st := b.state("q", "default")
		require.Equal(t, int64(1), st.Delayed)
		require.Equal(t, int64(3), st.Available)

		// Deleted elsewhere: QUEUE_NOT_FOUND, and no stream left behind.
		require.NoError(t, other.DeleteQueue(b.ctx, "q", false))
		_, err = s.Send(b.ctx, "q", []tags.OutMessage{{Body: []byte("e")}})
		requireReason(t, err, tags.ReasonQueueNotFound)
		require.Zero(t, b.rdb.Exists(b.ctx, stream).Val())
	})
}

// Concurrent sends share round trips (one MULTI per slot): every message
// is stored once, under its own id, and counted on its own queue.
func TestSendFastPathConcurrentBatchesAcrossQueues(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		s, err := New(b.ctx, Config{Client: b.rdb, Prefix: b.prefix, Logger: testLogger(t)})
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
					msgs := make([]tags.OutMessage, size)
					for j := range msgs {
						msgs[j] = tags.OutMessage{Body: []byte(fmt.Sprintf("%d-%d-%d", g, i, j))}
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

// scriptCounter counts the script calls a client makes, alone or in
// pipelines and transactions.
type scriptCounter struct{ n atomic.Int64 }

func (h *scriptCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *scriptCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.count(cmd)
		return next(ctx, cmd)
	}
}

func (h *scriptCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, c := range cmds {
			h.count(c)
		}
		return next(ctx, cmds)
	}
}

func (h *scriptCounter) count(cmd redis.Cmder) {
	if name := strings.ToLower(cmd.Name()); name == "eval" || name == "evalsha" {
		h.n.Add(1)
	}
}

// framesOf is n batches of msgs on queue, for execSends.
func framesOf(queue string, n int, msgs []tags.OutMessage) []*fastSend {
	out := make([]*fastSend, n)
	for f := range out {
		fs := &fastSend{queue: queue, results: make([]tags.SendResult, len(msgs)), done: make(chan struct{}), asked: time.Now()}
		for i, m := range msgs {
			fs.entries = append(fs.entries, sendEntry{size: len(m.Body), delay: -1, body: m.Body, attrs: encodeAttrs(m.Attributes)})
			fs.sent = append(fs.sent, i)
		}
		out[f] = fs
	}
	return out
}

// fastFrames are n batches of size messages on queue, bodies "<batch>-<i>",
// for execSends.
func fastFrames(queue string, n, size int) []*fastSend {
	out := make([]*fastSend, n)
	for f := range out {
		msgs := make([]tags.OutMessage, size)
		for i := range msgs {
			msgs[i].Body = []byte(fmt.Sprintf("%d-%d", f, i))
		}
		out[f] = framesOf(queue, 1, msgs)[0]
	}
	return out
}

// The batches of one queue that share a round trip are checked and counted
// by one sendpost.lua call, as one batch in their order: a cap or a write
// quota keeps the earlier batches' entries and refuses the later ones'.
func TestSendFastPathOneSendpostPerQueuePerRoundTrip(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		prod := prodStore(t, b)
		calls := &scriptCounter{}
		b.rdb.AddHook(calls)
		b.queue("capped", func(c *tags.QueueConfig) { c.MaxRetainedMessages = new(int64); *c.MaxRetainedMessages = 7 })
		b.queue("quota", func(c *tags.QueueConfig) { c.WriteQuotaPerSecond = i32(4) })
		b.queue("plain")
		for _, q := range []string{"capped", "quota", "plain"} {
			_, ok := prod.limitsOf(b.ctx, q)
			require.True(t, ok)
		}
		capped, quota, plain := fastFrames("capped", 3, 3), fastFrames("quota", 2, 3), fastFrames("plain", 2, 2)
		all := append(append(append([]*fastSend{}, capped[:2]...), plain[0], quota[0], capped[2], quota[1]), plain[1])
		before := calls.n.Load()
		if _, cluster := b.rdb.(*redis.ClusterClient); cluster {
			for _, g := range [][]*fastSend{capped, quota, plain} {
				prod.execSends(b.ctx, g)
			}
		} else {
			prod.execSends(b.ctx, all)
		}
		require.Equal(t, int64(3), calls.n.Load()-before, "one sendpost per queue")
		outcome := func(fs []*fastSend) [][]string {
			var out [][]string
			for _, f := range fs {
				<-f.done
				require.True(t, f.ok)
				require.NoError(t, f.err)
				var row []string
				for _, r := range f.results {
					switch {
					case r.Err != nil:
						row = append(row, tags.ReasonOf(r.Err))
					case r.ID != "":
						row = append(row, "ok")
					default:
						row = append(row, "?")
					}
				}
				out = append(out, row)
			}
			return out
		}
		full, over := tags.ReasonQueueFull, tags.ReasonQuotaExceeded
		require.Equal(t, [][]string{{"ok", "ok", "ok"}, {"ok", "ok", "ok"}, {"ok", full, full}}, outcome(capped))
		require.Equal(t, [][]string{{"ok", "ok", "ok"}, {"ok", over, over}}, outcome(quota))
		require.Equal(t, [][]string{{"ok", "ok"}, {"ok", "ok"}}, outcome(plain))
		require.Equal(t, []string{"0-0", "0-1", "0-2", "1-0", "1-1", "1-2", "2-0"}, bodies(b.receive("capped", "", 10)))
		require.Equal(t, []string{"0-0", "0-1", "0-2", "1-0"}, bodies(b.receive("quota", "", 10)))
		require.Equal(t, []string{"0-0", "0-1", "1-0", "1-1"}, bodies(b.receive("plain", "", 10)))
		b.requireSizes("capped", 21)
		require.Equal(t, int64(7), b.state("capped", "default").Available+b.state("capped", "default").InFlight)
	})
}

// A queue's batches in one round trip beyond maxGroupEntries go to further
// sendpost.lua calls (Lua's stack holds 8,000 arguments at most); a
// filtered tag counts what each batch brings it, attributes read from
// where the calls put them.
func TestSendFastPathLargeRoundTripsAndFilters(t *testing.T) {
	eachBackend(t, func(t *testing.T, b *bundle) {
		prod := prodStore(t, b)
		calls := &scriptCounter{}
		b.rdb.AddHook(calls)
		eu := "eu"
		b.queue("q")
		b.tag("q", "eu", func(c *tags.TagConfig) {
			c.Filter = &tags.Filter{Conditions: []tags.Condition{{Name: "region", Value: &eu}}}
		})
		_, ok := prod.limitsOf(b.ctx, "q")
		require.True(t, ok)
		msgs := make([]tags.OutMessage, 100)
		for i := range msgs {
			msgs[i].Body = []byte(fmt.Sprint(i))
			if i%4 == 0 {
				msgs[i].Attributes = map[string]tags.Attribute{"region": {String: "eu"}}
			}
		}
		frames := framesOf("q", 25, msgs) // 2,500 entries: three calls
		before := calls.n.Load()
		prod.execSends(b.ctx, frames)
		require.Equal(t, int64(3), calls.n.Load()-before)
		for _, f := range frames {
			require.True(t, f.ok)
			require.NoError(t, f.err)
			for _, r := range f.results {
				require.NoError(t, r.Err)
				require.NotEmpty(t, r.ID)
			}
		}
		require.Equal(t, tags.TagState{Available: 2500}, b.state("q", "default"))
		require.Equal(t, tags.TagState{Available: 625}, b.state("q", "eu"))
		size := 0
		for _, m := range msgs {
			size += len(m.Body)
		}
		b.requireSizes("q", int64(25*size))
	})
}
