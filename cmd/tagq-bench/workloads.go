package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
)

// env is what every workload gets.
type env struct {
	// w1Systems: which of tagq, tagq-stream, tagq-sqs, floor and raw W1
	// runs (nil: all); see w1Runs.
	w1Systems map[string]bool
	ctx       context.Context
	rdb       redis.UniversalClient // the Redis both systems use: a client, or a cluster's
	// nodes are the Redis processes the meter reads: rdb, or every node of
	// the cluster (cluster.go).
	nodes   []redisNode
	cluster bool
	prefix  string // tagqd's key prefix
	// partitions is the partitions of W1's and W2's tagq queues
	// (--partitions; 1: today's queue).
	partitions  int
	spreadShown map[string]bool
	// got, when set, sees every message W1's tagq and tagq-stream rows
	// receive, with the queue's name (tests).
	got      func(queue string, m *tagqv1.Message)
	m        tagqv1.MessageServiceClient
	q        tagqv1.QueueServiceClient
	pid      int                         // tagqd's
	floor    tagqv1.MessageServiceClient // the floor server (floor.go), for W1
	floorPID int
	peers    []peer // the peer systems that answered (peers.go)
	// streaming: tagqd serves Publish and Consume (stream.go); each
	// Consume stream keeps streamCredit messages outstanding.
	streaming    bool
	streamCredit int
	// sqsAddr is tagqd's SQS endpoint (host:port; "" when W1 leaves out
	// tagq-sqs); goawsURL the peer goaws's, when it answers (sqs.go).
	sqsAddr  string
	goawsURL string
	dur      time.Duration
	body     []byte
	rawKey   func(name string) string
	maxAhead int64 // producers stop this far ahead of consumers
}

func i32(v int32) *int32 { return &v }

// ---- tagq side

func (e *env) tagqQueue(name string, tags int, cfg *tagqv1.Queue) {
	if cfg == nil {
		cfg = &tagqv1.Queue{}
	}
	cfg.Name = name
	_, _ = e.q.DeleteQueue(e.ctx, &tagqv1.DeleteQueueRequest{Name: name, Force: true})
	if _, err := e.q.CreateQueue(e.ctx, &tagqv1.CreateQueueRequest{Queue: cfg}); err != nil {
		panic(fmt.Sprintf("create %s: %v", name, err))
	}
	for i := 1; i < tags; i++ {
		if _, err := e.q.CreateTag(e.ctx, &tagqv1.CreateTagRequest{Queue: name, Tag: &tagqv1.Tag{Name: fmt.Sprintf("t%d", i)}}); err != nil {
			panic(err)
		}
	}
}

func tagNames(tags int) []string {
	out := []string{"default"}
	for i := 1; i < tags; i++ {
		out = append(out, fmt.Sprintf("t%d", i))
	}
	return out
}

func (e *env) tagqSend(queue string, batch int, body func() []byte) error {
	return sendVia(e.ctx, e.m, queue, batch, body)
}

func sendVia(ctx context.Context, m tagqv1.MessageServiceClient, queue string, batch int, body func() []byte) error {
	return sendEntries(ctx, m, queue, bodyEntries(batch, body))
}

// bodyEntries is a batch of entries with bodies from body.
func bodyEntries(batch int, body func() []byte) []*tagqv1.SendMessageBatchEntry {
	entries := make([]*tagqv1.SendMessageBatchEntry, batch)
	for i := range entries {
		entries[i] = &tagqv1.SendMessageBatchEntry{Id: strconv.Itoa(i), Body: body()}
	}
	return entries
}

// sendEntries sends entries: one by SendMessage, more by
// SendMessageBatch. An entry the server refused is an error: a run that
// goes on would count messages that were never stored.
func sendEntries(ctx context.Context, m tagqv1.MessageServiceClient, queue string, entries []*tagqv1.SendMessageBatchEntry) error {
	if len(entries) == 1 {
		_, err := m.SendMessage(ctx, &tagqv1.SendMessageRequest{Queue: queue, Body: entries[0].GetBody(), Topic: entries[0].GetTopic()})
		return err
	}
	r, err := m.SendMessageBatch(ctx, &tagqv1.SendMessageBatchRequest{Queue: queue, Entries: entries})
	if f := r.GetFailed(); err == nil && len(f) > 0 {
		err = fmt.Errorf("send batch: %d entries failed, first: %s: %s", len(f), f[0].GetReason(), f[0].GetMessage())
	}
	return err
}

func (e *env) tagqDelete(queue string, msgs []*tagqv1.Message) error {
	return deleteVia(e.ctx, e.m, queue, msgs)
}

func deleteVia(ctx context.Context, m tagqv1.MessageServiceClient, queue string, msgs []*tagqv1.Message) error {
	if len(msgs) == 1 {
		_, err := m.DeleteMessage(ctx, &tagqv1.DeleteMessageRequest{Queue: queue, ReceiptHandle: msgs[0].GetReceiptHandle()})
		return err
	}
	entries := make([]*tagqv1.DeleteMessageBatchEntry, len(msgs))
	for i, msg := range msgs {
		entries[i] = &tagqv1.DeleteMessageBatchEntry{Id: strconv.Itoa(i), ReceiptHandle: msg.GetReceiptHandle()}
	}
	_, err := m.DeleteMessageBatch(ctx, &tagqv1.DeleteMessageBatchRequest{Queue: queue, Entries: entries})
	return err
}

// loop runs producers and consumers until the duration ends; producers
// stay at most maxAhead messages ahead of what consumers finished.
type loop struct {
	produced, consumed atomic.Int64
	stop               chan struct{}
	wg                 sync.WaitGroup
	errOnce            sync.Once
	err                error
}

func (l *loop) fail(err error) {
	l.errOnce.Do(func() { l.err = err })
}

func (l *loop) stopped() bool {
	select {
	case <-l.stop:
		return true
	default:
		return false
	}
}

func (e *env) run(producers, consumers int, produce func(l *loop) error, consume func(l *loop, i int) error) (*loop, time.Duration) {
	return e.runIdx(producers, consumers, func(l *loop, _ int) error { return produce(l) }, consume)
}

// runIdx is run with each producer told its index, for systems where a
// producer owns a channel or stream of its own.
func (e *env) runIdx(producers, consumers int, produce, consume func(l *loop, i int) error) (*loop, time.Duration) {
	return e.runIdxThen(producers, consumers, produce, consume, nil)
}

// runIdxThen is runIdx calling atStop (if not nil) once the duration is
// over, before it waits for the producers and consumers to return: to end
// what they may be blocked on.
func (e *env) runIdxThen(producers, consumers int, produce, consume func(l *loop, i int) error, atStop func()) (*loop, time.Duration) {
	l := &loop{stop: make(chan struct{})}
	start := time.Now()
	for i := range producers {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for !l.stopped() {
				if l.produced.Load()-l.consumed.Load() > e.maxAhead {
					time.Sleep(time.Millisecond)
					continue
				}
				if err := produce(l, i); err != nil {
					l.fail(err)
					return
				}
			}
		}()
	}
	for i := range consumers {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for !l.stopped() {
				if err := consume(l, i); err != nil && !l.stopped() {
					l.fail(err)
					return
				}
			}
		}()
	}
	time.Sleep(e.dur)
	close(l.stop)
	elapsed := time.Since(start)
	if atStop != nil {
		atStop()
	}
	l.wg.Wait()
	return l, elapsed
}

// ---- raw side: XADD / XREADGROUP / XACK through go-redis, same batching.

func (e *env) rawStream(name string, groups int) string {
	k := e.rawKey(name)
	e.rdb.Del(e.ctx, k)
	for g := 0; g < groups; g++ {
		e.rdb.XGroupCreateMkStream(e.ctx, k, "g"+strconv.Itoa(g), "$")
	}
	return k
}

func (e *env) rawSend(key string, batch int, body func() []byte) error {
	if batch == 1 {
		return e.rdb.XAdd(e.ctx, &redis.XAddArgs{Stream: key, Values: []any{"b", body()}}).Err()
	}
	p := e.rdb.Pipeline()
	for range batch {
		p.XAdd(e.ctx, &redis.XAddArgs{Stream: key, Values: []any{"b", body()}})
	}
	_, err := p.Exec(e.ctx)
	return err
}

func (e *env) rawRead(key, group, consumer string, count int, block time.Duration) ([]redis.XMessage, error) {
	res, err := e.rdb.XReadGroup(e.ctx, &redis.XReadGroupArgs{Group: group, Consumer: consumer, Streams: []string{key, ">"},
		Count: int64(count), Block: block}).Result()
	if err == redis.Nil {
		return nil, nil
	}
	if err != nil || len(res) == 0 {
		return nil, err
	}
	return res[0].Messages, nil
}

func (e *env) rawAck(key, group string, msgs []redis.XMessage) error {
	ids := make([]string, len(msgs))
	for i, m := range msgs {
		ids[i] = m.ID
	}
	return e.rdb.XAck(e.ctx, key, group, ids...).Err()
}

// ---- W1: one queue, 1 KiB, 4 producers x 4 consumers, send+receive+delete.

func (e *env) w1(batch int) []result {
	name := fmt.Sprintf("W1 batch %d", batch)
	e.tagqQueue("w1", 1, e.partitioned())
	e.keySpread(os.Stdout, "w1")
	var out []result
	var unary *result
	if e.w1Runs("tagq") {
		r := e.w1via(e.m, e.pid, "tagq", name, batch)
		r.partitions = e.partitions
		unary = &r
		out = append(out, r)
	}
	if e.w1Runs("tagq-stream") {
		out = append(out, e.streamW1(name, batch)...)
	}
	if e.w1Runs("tagq-sqs") || e.goawsURL != "" {
		out = append(out, e.sqsW1(name, batch, unary)...)
		e.tagqQueue("w1", 1, e.partitioned())
	}

	key := e.rawStream("w1", 1)
	if e.floor != nil && e.w1Runs("floor") {
		out = append(out, e.w1via(e.floor, e.floorPID, "floor", name, batch))
		key = e.rawStream("w1", 1)
	}
	if !e.w1Runs("raw") {
		e.rdb.Del(e.ctx, key)
		return append(out, e.peersW1(name, batch)...)
	}

	body := func() []byte { return e.body }
	mt := startMeter(e.ctx, e.nodes, 0)
	l, el := e.run(4, 4, func(l *loop) error {
		err := e.rawSend(key, batch, body)
		l.produced.Add(int64(batch))
		return err
	}, func(l *loop, i int) error {
		msgs, err := e.rawRead(key, "g0", "c"+strconv.Itoa(i), batch, time.Second)
		if err != nil || len(msgs) == 0 {
			return err
		}
		if err := e.rawAck(key, "g0", msgs); err != nil {
			return err
		}
		l.consumed.Add(int64(len(msgs)))
		return nil
	})
	r := result{workload: name, system: "raw", msgs: l.consumed.Load()}
	mt.stop(&r)
	r.elapsed = el
	e.rdb.Del(e.ctx, key)
	out = append(out, check(r, l))
	return append(out, e.peersW1(name, batch)...)
}

// w1Runs says whether W1 runs system (--w1-systems).
func (e *env) w1Runs(system string) bool { return e.w1Systems == nil || e.w1Systems[system] }

// w1via runs W1 through tagq's MessageService API on a server: tagqd, or
// the floor server (on the raw stream, as the raw run).
func (e *env) w1via(m tagqv1.MessageServiceClient, pid int, system, name string, batch int) result {
	body := func() []byte { return e.body }
	sl := streamLoad{workload: name, queue: "w1", producers: 4, consumers: 4,
		batch: batch, entries: func() []*tagqv1.SendMessageBatchEntry { return bodyEntries(batch, body) }}
	if e.got != nil && system == "tagq" {
		sl.got = func(m *tagqv1.Message) { e.got("w1", m) }
	}
	return e.runUnary(m, pid, system, sl)
}

// runUnary runs a load through the unary API of a server (tagqd, or the
// floor) on the queue (which the caller created): producers send batches
// of entries, consumers[i] receives up to batch messages of tag
// tags[i % len(tags)] (no tags: the default tag) long polling 1 s, calls
// got with each and deletes them in one call. Messages counted are those
// received and deleted over all tags; producers are held back by the first
// tag's consumers. Pacing and poison are the streaming runs' only.
func (e *env) runUnary(m tagqv1.MessageServiceClient, pid int, system string, sl streamLoad) result {
	if sl.pace != nil || sl.poison != nil {
		panic("runUnary: pace and poison are runStream's only")
	}
	var delivered atomic.Int64
	mt := startMeter(e.ctx, e.nodes, pid)
	l, el := e.run(sl.producers, sl.consumers, func(l *loop) error {
		if err := sendEntries(e.ctx, m, sl.queue, sl.entries()); err != nil {
			return err
		}
		l.produced.Add(int64(sl.batch))
		return nil
	}, func(l *loop, i int) error {
		tag, first := "", true
		if len(sl.tags) > 0 {
			tag, first = sl.tags[i%len(sl.tags)], i%len(sl.tags) == 0
		}
		r, err := m.ReceiveMessage(e.ctx, &tagqv1.ReceiveMessageRequest{Queue: sl.queue, Tag: tag, MaxMessages: i32(int32(sl.batch)),
			WaitSeconds: i32(1)})
		if err != nil || len(r.GetMessages()) == 0 {
			return err
		}
		if sl.got != nil {
			for _, msg := range r.GetMessages() {
				sl.got(msg)
			}
		}
		if err := deleteVia(e.ctx, m, sl.queue, r.GetMessages()); err != nil {
			return err
		}
		delivered.Add(int64(len(r.GetMessages())))
		if first {
			l.consumed.Add(int64(len(r.GetMessages())))
		}
		return nil
	})
	r := result{workload: sl.workload, system: system, msgs: delivered.Load(), sent: l.produced.Load()}
	mt.stop(&r)
	r.elapsed = el
	return check(r, l)
}

func check(r result, l *loop) result {
	if l.err != nil {
		r.note = "error: " + l.err.Error()
	}
	return r
}

// ---- W2: fan-out to N tags. Send-only cost, then deliveries/s.

func (e *env) w2(tags int) []result {
	body := func() []byte { return e.body }
	var out []result
	// Send only (no consumers): 4 producers, batch 10.
	name := fmt.Sprintf("W2 send-only, %d tags", tags)
	e.tagqQueue("w2", tags, e.partitioned())
	mt := startMeter(e.ctx, e.nodes, e.pid)
	l, el := e.run(4, 0, func(l *loop) error {
		err := e.tagqSend("w2", 10, body)
		l.produced.Add(10)
		l.consumed.Add(10) // no consumers: never throttle
		return err
	}, nil)
	r := result{workload: name, system: "tagq", msgs: l.produced.Load(), partitions: e.partitions}
	mt.stop(&r)
	r.elapsed = el
	out = append(out, check(r, l))
	_, _ = e.q.DeleteQueue(e.ctx, &tagqv1.DeleteQueueRequest{Name: "w2", Force: true})

	key := e.rawStream("w2", tags)
	mt = startMeter(e.ctx, e.nodes, 0)
	l, el = e.run(4, 0, func(l *loop) error {
		err := e.rawSend(key, 10, body)
		l.produced.Add(10)
		l.consumed.Add(10)
		return err
	}, nil)
	r = result{workload: name, system: "raw", msgs: l.produced.Load()}
	mt.stop(&r)
	r.elapsed = el
	out = append(out, check(r, l))
	e.rdb.Del(e.ctx, key)

	// Deliveries: 4 producers (batch 10), one consumer per tag (batch 10).
	name = fmt.Sprintf("W2 deliveries, %d tags", tags)
	e.tagqQueue("w2", tags, e.partitioned())
	names := tagNames(tags)
	var delivered atomic.Int64
	mt = startMeter(e.ctx, e.nodes, e.pid)
	l, el = e.run(4, tags, func(l *loop) error {
		err := e.tagqSend("w2", 10, body)
		l.produced.Add(10)
		return err
	}, func(l *loop, i int) error {
		r, err := e.m.ReceiveMessage(e.ctx, &tagqv1.ReceiveMessageRequest{Queue: "w2", Tag: names[i], MaxMessages: i32(10), WaitSeconds: i32(1)})
		if err != nil || len(r.GetMessages()) == 0 {
			return err
		}
		if err := e.tagqDelete("w2", r.GetMessages()); err != nil {
			return err
		}
		delivered.Add(int64(len(r.GetMessages())))
		if i == 0 {
			l.consumed.Add(int64(len(r.GetMessages()))) // throttle on the default tag
		}
		return nil
	})
	r = result{workload: name, system: "tagq", msgs: delivered.Load(), partitions: e.partitions}
	mt.stop(&r)
	r.elapsed = el
	out = append(out, check(r, l))
	_, _ = e.q.DeleteQueue(e.ctx, &tagqv1.DeleteQueueRequest{Name: "w2", Force: true})
	if tags == 16 { // DESIGN §7's 16 tags: the streaming API and the peers
		out = append(out, e.streamW2(name, tags)...)
	}

	key = e.rawStream("w2", tags)
	delivered.Store(0)
	mt = startMeter(e.ctx, e.nodes, 0)
	l, el = e.run(4, tags, func(l *loop) error {
		err := e.rawSend(key, 10, body)
		l.produced.Add(10)
		return err
	}, func(l *loop, i int) error {
		g := "g" + strconv.Itoa(i)
		msgs, err := e.rawRead(key, g, "c", 10, time.Second)
		if err != nil || len(msgs) == 0 {
			return err
		}
		if err := e.rawAck(key, g, msgs); err != nil {
			return err
		}
		delivered.Add(int64(len(msgs)))
		if i == 0 {
			l.consumed.Add(int64(len(msgs)))
		}
		return nil
	})
	r = result{workload: name, system: "raw", msgs: delivered.Load()}
	mt.stop(&r)
	r.elapsed = el
	e.rdb.Del(e.ctx, key)
	out = append(out, check(r, l))
	if tags == 16 { // DESIGN §7: 16 tags against the peers' 16 consumers
		out = append(out, e.peersW2(name, tags)...)
	}
	return out
}

// ---- W3: end-to-end latency at a fixed rate with long polling.

func stamped(size int) []byte {
	b := make([]byte, size)
	binary.BigEndian.PutUint64(b, uint64(time.Now().UnixNano()))
	return b
}

func since(b []byte) time.Duration {
	return time.Duration(time.Now().UnixNano() - int64(binary.BigEndian.Uint64(b)))
}

// pacer makes producer steps that call send at a fixed rate, from the
// first call on.
func pacer(rate int) func(send func() error) func(l *loop) error {
	interval := time.Second / time.Duration(rate)
	return func(send func() error) func(l *loop) error {
		var next time.Time
		var mu sync.Mutex
		return func(l *loop) error {
			mu.Lock()
			if next.IsZero() {
				next = time.Now()
			}
			next = next.Add(interval)
			wait := time.Until(next)
			mu.Unlock()
			if wait > 0 {
				time.Sleep(wait)
			}
			l.produced.Add(1)
			return send()
		}
	}
}

func (e *env) w3(rate int) []result {
	name := fmt.Sprintf("W3 latency at %d msg/s", rate)
	pace := pacer(rate)
	e.tagqQueue("w3", 1, nil)
	out := []result{e.unaryW3(e.m, e.pid, "tagq", name, pace)}
	out = append(out, e.streamW3(name, pace)...)
	if e.floor != nil {
		key := e.rawStream("w3", 1)
		out = append(out, e.unaryW3(e.floor, e.floorPID, "floor", name, pace))
		e.rdb.Del(e.ctx, key)
	}

	key := e.rawStream("w3", 1)
	lat := &latencies{}
	mt := startMeter(e.ctx, e.nodes, 0)
	l, el := e.run(1, 4, pace(func() error {
		return e.rdb.XAdd(e.ctx, &redis.XAddArgs{Stream: key, Values: []any{"b", stamped(len(e.body))}}).Err()
	}), func(l *loop, i int) error {
		msgs, err := e.rawRead(key, "g0", "c"+strconv.Itoa(i), 10, time.Second)
		if err != nil || len(msgs) == 0 {
			return err
		}
		for _, m := range msgs {
			b, _ := m.Values["b"].(string)
			lat.add(since([]byte(b)))
		}
		l.consumed.Add(int64(len(msgs)))
		return e.rawAck(key, "g0", msgs)
	})
	r := result{workload: name, system: "raw", msgs: l.consumed.Load()}
	mt.stop(&r)
	r.elapsed = el
	r.p50, r.p99, r.max = lat.pct()
	e.rdb.Del(e.ctx, key)
	out = append(out, check(r, l))
	return append(out, e.peersW3(name, pace)...)
}

// unaryW3 is W3's unary run through server m (pid its process), on
// queue w3: one producer sending one stamped message at the pace given, 4
// consumers long polling for up to 10 and deleting what they got. Through
// the floor server (floor.go: gRPC in front of XADD and a blocking
// XREADGROUP, no more) it is the least hop a message can take: what lies
// between it and raw Redis is gRPC's, between it and tagq is tagq's own
// work.
func (e *env) unaryW3(m tagqv1.MessageServiceClient, pid int, system, name string, pace func(send func() error) func(l *loop) error) result {
	lat := &latencies{}
	mt := startMeter(e.ctx, e.nodes, pid)
	l, el := e.run(1, 4, pace(func() error {
		_, err := m.SendMessage(e.ctx, &tagqv1.SendMessageRequest{Queue: "w3", Body: stamped(len(e.body))})
		return err
	}), func(l *loop, _ int) error {
		r, err := m.ReceiveMessage(e.ctx, &tagqv1.ReceiveMessageRequest{Queue: "w3", MaxMessages: i32(10), WaitSeconds: i32(1)})
		if err != nil || len(r.GetMessages()) == 0 {
			return err
		}
		for _, msg := range r.GetMessages() {
			lat.add(since(msg.GetBody()))
		}
		l.consumed.Add(int64(len(r.GetMessages())))
		return deleteVia(e.ctx, m, "w3", r.GetMessages())
	})
	r := result{workload: name, system: system, msgs: l.consumed.Load()}
	mt.stop(&r)
	r.elapsed = el
	r.p50, r.p99, r.max = lat.pct()
	return check(r, l)
}

// unaryW4 is W4's unary run through server m (pid its process): 4
// producers send batches of 10 to queue w4, 4 consumers receive up to 10,
// nack the poison among them in one ChangeMessageVisibilityBatch (when
// nack) and delete the rest in one call.
func (e *env) unaryW4(m tagqv1.MessageServiceClient, pid int, system, name string, body func() []byte, nack bool) result {
	var good atomic.Int64
	mt := startMeter(e.ctx, e.nodes, pid)
	l, el := e.run(4, 4, func(l *loop) error {
		err := sendEntries(e.ctx, m, "w4", bodyEntries(10, body))
		l.produced.Add(10)
		return err
	}, func(l *loop, _ int) error {
		r, err := m.ReceiveMessage(e.ctx, &tagqv1.ReceiveMessageRequest{Queue: "w4", MaxMessages: i32(10), WaitSeconds: i32(1)})
		if err != nil || len(r.GetMessages()) == 0 {
			return err
		}
		var ok []*tagqv1.Message
		var nacks []*tagqv1.ChangeMessageVisibilityBatchEntry
		for i, msg := range r.GetMessages() {
			if msg.GetBody()[0] == 'P' {
				nacks = append(nacks, &tagqv1.ChangeMessageVisibilityBatchEntry{Id: strconv.Itoa(i), ReceiptHandle: msg.GetReceiptHandle()})
			} else {
				ok = append(ok, msg)
			}
		}
		if len(nacks) > 0 && nack {
			if _, err := m.ChangeMessageVisibilityBatch(e.ctx, &tagqv1.ChangeMessageVisibilityBatchRequest{Queue: "w4", Entries: nacks}); err != nil {
				return err
			}
		}
		if len(ok) > 0 {
			if err := deleteVia(e.ctx, m, "w4", ok); err != nil {
				return err
			}
		}
		good.Add(int64(len(ok)))
		l.consumed.Add(int64(len(ok)))
		return nil
	})
	r := result{workload: name, system: system, msgs: good.Load(), note: "good messages deleted/s"}
	mt.stop(&r)
	r.elapsed = el
	return check(r, l)
}

// ---- W4: redrive with poison messages (max receive count 3).

// With nack the consumer sets a poison message visible again at once (one
// more RPC per batch holding one); without, it leaves it undeleted and the
// queue's 1 s visibility timeout brings it back, as after a crash. Raw
// Redis does the same in both: ack and re-add in the pipeline of the ack.
func (e *env) w4(poisonPct int, nack bool) []result {
	name := fmt.Sprintf("W4 %d%% poison", poisonPct)
	vis := int32(30)
	if !nack {
		name += ", timeout"
		vis = 1
	}
	var seq atomic.Int64
	body := func() []byte {
		b := make([]byte, len(e.body))
		if int(seq.Add(1)%100) < poisonPct {
			b[0] = 'P'
		}
		return b
	}
	var out []result
	e.tagqQueue("w4-dlq", 1, &tagqv1.Queue{DeadLetterQueue: true})
	e.tagqQueue("w4", 1, &tagqv1.Queue{VisibilityTimeoutSeconds: i32(vis),
		RedrivePolicy: &tagqv1.RedrivePolicy{DeadLetterQueue: "w4-dlq", MaxReceiveCount: 3}})
	r := e.unaryW4(e.m, e.pid, "tagq", name, body, nack)
	dlq, _ := e.q.GetTag(e.ctx, &tagqv1.GetTagRequest{Queue: "w4-dlq", Name: "default"})
	r.note += fmt.Sprintf("; %d dead-lettered", dlq.GetTag().GetState().GetAvailable())
	out = append(out, r)
	_, _ = e.q.DeleteQueue(e.ctx, &tagqv1.DeleteQueueRequest{Name: "w4", Force: true})
	_, _ = e.q.DeleteQueue(e.ctx, &tagqv1.DeleteQueueRequest{Name: "w4-dlq", Force: true})

	if nack && e.floor != nil {
		// The floor server: the same calls, each nack an XACK and a re-XADD
		// (to w4-dlq at the third attempt), on the raw stream.
		key, dkey := e.rawStream("w4", 1), e.rawKey("w4-dlq")
		r := e.unaryW4(e.floor, e.floorPID, "floor", name, body, nack)
		r.note += fmt.Sprintf("; %d dead-lettered", e.rdb.XLen(e.ctx, dkey).Val())
		out = append(out, r)
		e.rdb.Del(e.ctx, key, dkey)
	}

	// Raw: a poison message is acknowledged and re-added with its attempt
	// count; at the third attempt it goes to a DLQ stream.
	key, dkey := e.rawStream("w4", 1), e.rawKey("w4-dlq")
	var good atomic.Int64
	mt := startMeter(e.ctx, e.nodes, 0)
	l, el := e.run(4, 4, func(l *loop) error {
		err := e.rawSend(key, 10, body)
		l.produced.Add(10)
		return err
	}, func(l *loop, i int) error {
		msgs, err := e.rawRead(key, "g0", "c"+strconv.Itoa(i), 10, time.Second)
		if err != nil || len(msgs) == 0 {
			return err
		}
		p := e.rdb.Pipeline()
		for _, m := range msgs {
			b, _ := m.Values["b"].(string)
			if b[0] != 'P' {
				good.Add(1)
				continue
			}
			n, _ := strconv.Atoi(fmt.Sprint(m.Values["n"]))
			if n+1 >= 3 {
				p.XAdd(e.ctx, &redis.XAddArgs{Stream: dkey, Values: []any{"b", b}})
			} else {
				p.XAdd(e.ctx, &redis.XAddArgs{Stream: key, Values: []any{"b", b, "n", n + 1}})
			}
		}
		ids := make([]string, len(msgs))
		for i, m := range msgs {
			ids[i] = m.ID
		}
		p.XAck(e.ctx, key, "g0", ids...)
		_, err = p.Exec(e.ctx)
		l.consumed.Add(int64(len(msgs)))
		return err
	})
	r = result{workload: name, system: "raw", msgs: good.Load(), note: "good messages acked/s; retries re-XADDed"}
	mt.stop(&r)
	r.elapsed = el
	e.rdb.Del(e.ctx, key, dkey)
	return append(out, check(r, l))
}
