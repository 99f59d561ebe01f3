package tags

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Send stores messages in one atomic step. Each message is checked first;
// the invalid ones get an error in their result and are not stored, the
// valid ones are all stored. The error return is for the whole call (queue
// not found, backend unavailable): then nothing was stored.
func (s *Store) Send(ctx context.Context, queue string, msgs []OutMessage) ([]SendResult, error) {
	if e := checkName("queue", "queue", queue); e != nil {
		return nil, e
	}
	if len(msgs) == 0 || len(msgs) > MaxBatchEntries {
		return nil, invalid(ReasonBatchTooLarge, "entries", "a batch has 1-%d entries, got %d", MaxBatchEntries, len(msgs))
	}
	results := make([]SendResult, len(msgs))
	args := make([]any, 1, 1+4*len(msgs))
	sent := make([]int, 0, len(msgs))
	for i, m := range msgs {
		size, e := checkMessageAttributes(m.Attributes)
		if e == nil {
			e = checkRange("delay_seconds", m.DelaySeconds, 0, MaxDelaySeconds)
		}
		size += len(m.Body)
		if e == nil && size == 0 {
			e = invalid(ReasonInvalidArgumentRange, "body", "a message needs a body or attributes")
		}
		if e == nil && size > MaxMaxMessageBytes {
			e = tooLarge(size, MaxMaxMessageBytes)
		}
		if e != nil {
			results[i].Err = e
			continue
		}
		delay := int32(-1)
		if m.DelaySeconds != nil {
			delay = *m.DelaySeconds
		}
		args = append(args, size, delay, m.Body, encodeAttrs(m.Attributes))
		sent = append(sent, i)
	}
	if len(sent) == 0 {
		return results, nil
	}
	args[0] = len(sent)
	if done, err := s.sendFast(ctx, queue, args, sent, results); done || err != nil {
		if err != nil {
			return nil, err
		}
		return results, nil
	}
	k := s.qkeys(queue)
	res, err := scriptSend.Run(ctx, s.rdb, []string{k.meta, k.stream, k.filters, k.delayed}, args...).Slice()
	if err != nil {
		return nil, mapErr(err, queue, "")
	}
	for j, r := range res {
		i := sent[j]
		parts, _ := r.([]any)
		if len(parts) == 1 {
			id, _ := parts[0].(string)
			results[i] = SendResult{ID: id, SendTime: idTime(id)}
			continue
		}
		size, _ := args[1+4*j].(int)
		results[i].Err = tooLarge(size, int(asInt64(parts[1])))
	}
	return results, nil
}

func tooLarge(size, limit int) *Error {
	e := invalid(ReasonMessageTooLarge, "body", "message is %d bytes (body plus attribute names and values); the queue allows %d",
		size, limit)
	e.Metadata = map[string]string{"size": strconv.Itoa(size), "limit": strconv.Itoa(limit)}
	return e
}

// sendLimits are the queue attributes a send's fast path checks against,
// cached per queue; sendpost.lua refuses a send made against stale ones.
type sendLimits struct {
	maxBytes int
	delay    int
}

func (s *Store) limitsOf(ctx context.Context, queue string) (sendLimits, bool) {
	if v, ok := s.limits.Load(queue); ok {
		return v.(sendLimits), true
	}
	m, err := s.rdb.HMGet(ctx, s.qkeys(queue).meta, "mmb", "delay").Result()
	if err != nil || len(m) != 2 || m[0] == nil || m[1] == nil {
		return sendLimits{}, false // the slow path tells what is wrong
	}
	mmb, _ := strconv.Atoi(m[0].(string))
	delay, _ := strconv.Atoi(m[1].(string))
	l := sendLimits{maxBytes: mmb, delay: delay}
	s.limits.Store(queue, l)
	return l, true
}

// sendFast stores a checked batch (args as send.lua takes them, sent the
// entries they hold) with plain XADDs followed by sendpost.lua in one
// MULTI, so no body passes through Lua. It does so only on the production
// clock, for undelayed messages within the queue's cached limits; it
// reports false, having stored nothing, when send.lua must do it. Batches
// sent concurrently (Publish frames, SendMessageBatch calls) share one
// round trip: see sendCoalescer.
func (s *Store) sendFast(ctx context.Context, queue string, args []any, sent []int, results []SendResult) (bool, error) {
	if s.rdb.testClock {
		return false, nil
	}
	lim, ok := s.limitsOf(ctx, queue)
	if !ok || lim.delay != 0 {
		return false, nil
	}
	for j := range sent {
		size, delay := args[1+4*j].(int), args[2+4*j].(int32)
		if delay > 0 || size > lim.maxBytes {
			return false, nil // delayed, or (by the cache) too large: send.lua decides
		}
	}
	f := &fastSend{queue: queue, args: args, sent: sent, results: results, done: make(chan struct{})}
	s.sends.submit(s, f)
	select {
	case <-f.done:
	case <-ctx.Done():
		// The batch may still be stored: not acknowledged, so the caller
		// may send it again (at-least-once), never lost.
		return true, ctx.Err()
	}
	return f.ok, f.err
}

// fastSend is one batch on the fast path, and its outcome.
type fastSend struct {
	queue   string
	args    []any
	sent    []int
	results []SendResult
	adds    []*redis.StringCmd
	check   *redis.Cmd
	post    []any
	ok      bool // stored (or failed for good: err); false: send.lua must do it
	err     error
	done    chan struct{}
}

// sendCoalescer runs the fast-path batches that arrive together in one
// pipelined transaction (one MULTI per cluster slot): while one round trip
// runs, the next batches gather, so an idle store adds no wait.
type sendCoalescer struct {
	mu       sync.Mutex
	pending  []*fastSend
	flushing bool
}

func (c *sendCoalescer) submit(s *Store, f *fastSend) {
	c.mu.Lock()
	c.pending = append(c.pending, f)
	start := !c.flushing
	c.flushing = true
	c.mu.Unlock()
	if start {
		go c.run(s)
	}
}

func (c *sendCoalescer) run(s *Store) {
	for {
		c.mu.Lock()
		batch := c.pending
		c.pending = nil
		if len(batch) == 0 {
			c.flushing = false
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
		s.flushSends(batch)
	}
}

// sendFlushTimeout bounds one coalesced round trip.
const sendFlushTimeout = 10 * time.Second

func (s *Store) flushSends(batch []*fastSend) {
	ctx, cancel := context.WithTimeout(context.Background(), sendFlushTimeout)
	defer cancel()
	// A transaction may not span cluster slots: on a cluster, one per queue
	// (run together); on one server, one for all.
	if _, cluster := s.rdb.UniversalClient.(*redis.ClusterClient); cluster {
		byQueue := map[string][]*fastSend{}
		for _, f := range batch {
			byQueue[f.queue] = append(byQueue[f.queue], f)
		}
		if len(byQueue) > 1 {
			var wg sync.WaitGroup
			for _, fs := range byQueue {
				wg.Add(1)
				go func() { defer wg.Done(); s.execSends(ctx, fs) }()
			}
			wg.Wait()
			return
		}
	}
	s.execSends(ctx, batch)
}

func (s *Store) execSends(ctx context.Context, batch []*fastSend) {
	pipe := s.rdb.TxPipeline()
	post := scriptSendPost.build(false)
	for _, f := range batch {
		k := s.qkeys(f.queue)
		largest := 0
		f.post = make([]any, 0, 3+len(f.sent))
		f.post = append(f.post, len(f.sent), 0, 0)
		f.adds = make([]*redis.StringCmd, len(f.sent))
		for j := range f.sent {
			largest = max(largest, f.args[1+4*j].(int))
			values := []any{"b", f.args[3+4*j]}
			attrs := f.args[4+4*j].(string)
			if attrs != "" {
				values = append(values, "a", attrs)
			}
			f.adds[j] = pipe.XAdd(ctx, &redis.XAddArgs{Stream: k.stream, NoMkStream: true, Values: values})
			f.post = append(f.post, attrs)
		}
		f.post[1] = largest
		f.check = post.EvalSha(ctx, pipe, []string{k.meta, k.stream, k.filters}, f.post...)
	}
	_, _ = pipe.Exec(ctx) // errors are read per command
	for _, f := range batch {
		f.ok, f.err = s.finishFastSend(ctx, f)
		close(f.done)
	}
}

// finishFastSend reads one batch's replies into its results.
func (s *Store) finishFastSend(ctx context.Context, f *fastSend) (bool, error) {
	k := s.qkeys(f.queue)
	if err := f.check.Err(); err != nil {
		switch {
		case redis.HasErrorPrefix(err, "NOSCRIPT"):
			// Redis lost its scripts (a restart) after the XADDs ran: they
			// stand; count them.
			for _, a := range f.adds {
				if a.Err() != nil {
					return true, mapErr(a.Err(), f.queue, "")
				}
			}
			f.post[2] = 1
			if err := scriptSendPost.Run(ctx, s.rdb, []string{k.meta, k.stream, k.filters}, f.post...).Err(); err != nil {
				return true, mapErr(err, f.queue, "")
			}
		case redis.HasErrorPrefix(err, "STALE_LIMITS"), redis.HasErrorPrefix(err, "NO_STREAM"):
			s.limits.Delete(f.queue)
			return false, nil
		default:
			s.limits.Delete(f.queue)
			return true, mapErr(err, f.queue, "")
		}
	}
	for j, i := range f.sent {
		id, err := f.adds[j].Result()
		if err != nil {
			return true, mapErr(err, f.queue, "")
		}
		f.results[i] = SendResult{ID: id, SendTime: idTime(id)}
	}
	return true, nil
}
