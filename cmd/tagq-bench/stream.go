package main

// tagq-stream: tagq through its streaming API (Publish and Consume), with
// the generated stubs. A producer keeps one Publish stream with a window of
// frames in flight (4 frames of a batch; 8 of one message); a consumer
// keeps one Consume stream with --stream-credit messages outstanding and
// acknowledges each pushed frame's messages in one request (acks are sent,
// not confirmed, like JetStream's plain Ack). When the run is over, the
// streams are closed cleanly: the server applies the acks sent and ends
// them.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
)

// publishWindow is the frames a producer keeps in flight: 4, or 8 when
// each frame holds one message (the streaming measurements' setting).
func publishWindow(batch int) int {
	if batch == 1 {
		return 8
	}
	return 4
}

// streamProducer is one Publish stream.
type streamProducer struct {
	stream   grpc.BidiStreamingClient[tagqv1.PublishRequest, tagqv1.PublishResponse]
	cancel   context.CancelFunc
	queue    string
	slots    chan struct{} // one per frame in flight
	seq      uint64
	sent     int64
	answered atomic.Int64
	stored   atomic.Int64  // messages the server answered as stored
	done     chan struct{} // the reader ended
	mu       sync.Mutex
	err      error // the first failure: a frame's error, or the stream's
}

func openPublish(ctx context.Context, m tagqv1.MessageServiceClient, queue string, window int) (*streamProducer, error) {
	ctx, cancel := context.WithCancel(ctx)
	st, err := m.Publish(ctx)
	if err != nil {
		cancel()
		return nil, err
	}
	p := &streamProducer{stream: st, cancel: cancel, queue: queue, slots: make(chan struct{}, window), done: make(chan struct{})}
	go p.read()
	return p, nil
}

func (p *streamProducer) fail(err error) {
	p.mu.Lock()
	if p.err == nil {
		p.err = err
	}
	p.mu.Unlock()
}

func (p *streamProducer) failure() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// read takes the answers: each frees its frame's slot; a frame that failed
// (as a whole, or any entry of it) is the producer's failure.
func (p *streamProducer) read() {
	defer close(p.done)
	for {
		resp, err := p.stream.Recv()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				p.fail(err)
			}
			return
		}
		if e := resp.GetError(); e != nil {
			p.fail(fmt.Errorf("publish frame %d: %s: %s", resp.GetSeq(), e.GetReason(), e.GetMessage()))
		} else if f := resp.GetFailed(); len(f) > 0 {
			p.fail(fmt.Errorf("publish frame %d: %d entries failed, first: %s: %s", resp.GetSeq(), len(f), f[0].GetReason(), f[0].GetMessage()))
		}
		p.stored.Add(int64(len(resp.GetSuccessful())))
		p.answered.Add(1)
		select {
		case <-p.slots:
		default:
			p.fail(fmt.Errorf("publish frame %d answered, but no frame was in flight", resp.GetSeq()))
		}
	}
}

// send sends one frame once the window has room; it gives up, sending
// nothing, when stop closes first.
func (p *streamProducer) send(entries []*tagqv1.SendMessageBatchEntry, stop <-chan struct{}) (bool, error) {
	select {
	case p.slots <- struct{}{}:
	case <-p.done:
		return false, cmpErr(p.failure(), errors.New("the Publish stream ended"))
	case <-stop:
		return false, nil
	}
	if err := p.failure(); err != nil {
		return false, err
	}
	p.seq++
	if err := p.stream.Send(&tagqv1.PublishRequest{Seq: p.seq, Queue: p.queue, Entries: entries}); err != nil {
		return false, cmpErr(p.failure(), err)
	}
	p.sent++
	return true, nil
}

// close ends the stream cleanly: the server answers the frames in flight
// and ends it. It fails if any frame failed or was not answered.
func (p *streamProducer) close() error {
	defer p.cancel()
	if err := p.stream.CloseSend(); err != nil {
		p.fail(err)
	}
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		p.fail(errors.New("the Publish stream did not end within 10 s of closing"))
	}
	if err := p.failure(); err != nil {
		return err
	}
	if a := p.answered.Load(); a != p.sent {
		return fmt.Errorf("%d publish frames sent, %d answered", p.sent, a)
	}
	return nil
}

// streamConsumer is one Consume stream. Its consumer goroutine both reads
// the stream and sends the acks: a hand-off to another goroutine per frame
// cost W3's p99 several times over on this busy machine.
type streamConsumer struct {
	stream grpc.BidiStreamingClient[tagqv1.ConsumeRequest, tagqv1.ConsumeResponse]
	cancel context.CancelFunc
	mu     sync.Mutex // Send and CloseSend may not run at once
	closed bool       // CloseSend called: no more acks
	guard  *time.Timer
	ids    []uint64
	// poison, when set, picks the messages not to acknowledge: they are
	// nacked at once when nack is set, else left to their visibility
	// timeout; only the others count as received.
	poison func(*tagqv1.Message) bool
	nack   bool
	nacks  []*tagqv1.ConsumeNack
}

func openConsume(ctx context.Context, m tagqv1.MessageServiceClient, queue, tag string, credit int) (*streamConsumer, error) {
	ctx, cancel := context.WithCancel(ctx)
	st, err := m.Consume(ctx)
	if err == nil {
		err = st.Send(&tagqv1.ConsumeRequest{Open: &tagqv1.ConsumeOpen{Queue: queue, Tag: tag,
			MaxOutstandingMessages: i32(int32(credit))}})
	}
	if err != nil {
		cancel()
		return nil, err
	}
	return &streamConsumer{stream: st, cancel: cancel}, nil
}

// receive waits for the next pushed frame, calls got with each message,
// and acknowledges them all in one request. Once closeSend was called it
// neither acknowledges nor counts what still comes, and returns io.EOF
// when the stream has ended cleanly.
func (c *streamConsumer) receive(got func(*tagqv1.Message)) (int, error) {
	resp, err := c.stream.Recv()
	if err != nil {
		return 0, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return 0, nil
	}
	c.ids, c.nacks = c.ids[:0], c.nacks[:0]
	for _, m := range resp.GetMessages() {
		if c.poison != nil && c.poison(m.GetMessage()) {
			if c.nack {
				c.nacks = append(c.nacks, &tagqv1.ConsumeNack{DeliveryId: m.GetDeliveryId()})
			}
			continue
		}
		if got != nil {
			got(m.GetMessage())
		}
		c.ids = append(c.ids, m.GetDeliveryId())
	}
	if len(c.ids) == 0 && len(c.nacks) == 0 {
		return 0, nil
	}
	return len(c.ids), c.stream.Send(&tagqv1.ConsumeRequest{Acks: c.ids, Nacks: c.nacks})
}

// closeSend ends the stream cleanly, from any goroutine: the server
// applies the acks sent, gives what it pushed and was not acknowledged back
// at once, and ends the stream. If it has not ended in 10 s, it is
// cancelled.
func (c *streamConsumer) closeSend() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	c.guard = time.AfterFunc(10*time.Second, c.cancel)
	return c.stream.CloseSend()
}

// close ends the stream cleanly and reads it to its end; call it when no
// receive is running. It fails if the stream ended otherwise than cleanly.
func (c *streamConsumer) close() error {
	defer c.cancel()
	if err := c.closeSend(); err != nil {
		return err
	}
	defer c.guard.Stop()
	for {
		if _, err := c.stream.Recv(); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			if status.Code(err) == codes.Canceled {
				return errors.New("the Consume stream did not end within 10 s of closing")
			}
			return err
		}
	}
}

func cmpErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// streamsServed tells whether the server serves the streaming RPCs: a
// Publish stream closed at once ends cleanly, or UNIMPLEMENTED.
func streamsServed(ctx context.Context, m tagqv1.MessageServiceClient) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	st, err := m.Publish(ctx)
	if err == nil {
		if err = st.CloseSend(); err == nil {
			_, err = st.Recv()
		}
	}
	switch {
	case errors.Is(err, io.EOF):
		return true, nil
	case status.Code(err) == codes.Unimplemented:
		return false, nil
	default:
		return false, err
	}
}

// streamLoad is one tagq-stream run: producers send frames of batch
// entries (entries makes a frame's entries), consumers[i] reads tag
// tags[i % len(tags)].
type streamLoad struct {
	workload, queue      string
	tags                 []string
	producers, consumers int
	batch                int
	entries              func() []*tagqv1.SendMessageBatchEntry
	pace                 func(send func() error) func(l *loop) error // nil: as fast as the window allows
	got                  func(m *tagqv1.Message)
	poison               func(m *tagqv1.Message) bool // see streamConsumer
	nack                 bool
	// The server: tagqd (nil via) as system "tagq-stream", or another
	// (the floor) as system, its process pid.
	via    tagqv1.MessageServiceClient
	pid    int
	system string
}

// runStream runs a load through the streaming API on the queue (which the
// caller created). Messages counted are those received and acknowledged
// over all tags; producers are held back by the first tag's consumers.
func (e *env) runStream(sl streamLoad) (r result) {
	m, pid := e.m, e.pid
	r = result{workload: sl.workload, system: "tagq-stream"}
	if sl.via != nil {
		m, pid, r.system = sl.via, sl.pid, sl.system
	}
	fail := func(err error) result {
		r.note = "error: " + err.Error()
		return r
	}
	prods := make([]*streamProducer, sl.producers)
	cons := make([]*streamConsumer, sl.consumers)
	var closeErr error
	closeAll := func() {
		for _, c := range cons {
			if c != nil {
				closeErr = cmpErr(closeErr, c.close())
			}
		}
		for _, p := range prods {
			if p != nil {
				closeErr = cmpErr(closeErr, p.close())
				r.sent += p.stored.Load()
			}
		}
	}
	var err error
	for i := range cons {
		if cons[i], err = openConsume(e.ctx, m, sl.queue, sl.tags[i%len(sl.tags)], e.streamCredit); err != nil {
			closeAll()
			return fail(err)
		}
		cons[i].poison, cons[i].nack = sl.poison, sl.nack
	}
	for i := range prods {
		if prods[i], err = openPublish(e.ctx, m, sl.queue, publishWindow(sl.batch)); err != nil {
			closeAll()
			return fail(err)
		}
	}
	steps := make([]func(l *loop) error, sl.producers)
	for i, p := range prods {
		var cur *loop       // the run's, set by the step before it sends
		if sl.pace != nil { // the pacer counts what it sends
			paced := sl.pace(func() error { _, err := p.send(sl.entries(), cur.stop); return err })
			steps[i] = func(l *loop) error { cur = l; return paced(l) }
			continue
		}
		steps[i] = func(l *loop) error {
			ok, err := p.send(sl.entries(), l.stop)
			if ok {
				l.produced.Add(int64(sl.batch))
			}
			return err
		}
	}
	var delivered atomic.Int64
	mt := startMeter(e.ctx, e.nodes, pid)
	l, el := e.runIdxThen(sl.producers, sl.consumers, func(l *loop, i int) error {
		return steps[i](l)
	}, func(l *loop, i int) error {
		n, err := cons[i].receive(sl.got)
		delivered.Add(int64(n))
		if i%len(sl.tags) == 0 {
			l.consumed.Add(int64(n))
		}
		return err
	}, func() {
		// The consumers wait in Recv: end their streams.
		for _, c := range cons {
			_ = c.closeSend()
		}
	})
	r.msgs = delivered.Load()
	mt.stop(&r)
	r.elapsed = el
	closeAll()
	r = check(r, l)
	if closeErr != nil && r.note == "" {
		r.note = "error: " + closeErr.Error()
	}
	return r
}

// batchEntries makes a producer's frame: batch entries of the body,
// shared by every frame (a frame is marshalled when sent).
func batchEntries(body []byte, batch int) func() []*tagqv1.SendMessageBatchEntry {
	entries := make([]*tagqv1.SendMessageBatchEntry, batch)
	for i := range entries {
		entries[i] = &tagqv1.SendMessageBatchEntry{Id: strconv.Itoa(i), Body: body}
	}
	return func() []*tagqv1.SendMessageBatchEntry { return entries }
}

// streamW1 is W1 through the streaming API: 4 producers x 4 consumers.
func (e *env) streamW1(name string, batch int) []result {
	if !e.streaming {
		return nil
	}
	e.tagqQueue("w1s", 1, e.partitioned())
	e.keySpread(os.Stdout, "w1s")
	defer func() { _, _ = e.q.DeleteQueue(e.ctx, &tagqv1.DeleteQueueRequest{Name: "w1s", Force: true}) }()
	sl := streamLoad{workload: name, queue: "w1s", tags: tagNames(1), producers: 4, consumers: 4,
		batch: batch, entries: batchEntries(e.body, batch)}
	if e.got != nil {
		sl.got = func(m *tagqv1.Message) { e.got("w1s", m) }
	}
	r := e.runStream(sl)
	r.partitions = e.partitions
	return []result{r}
}

// streamW2 is W2's deliveries through the streaming API: 4 producers
// (batch 10), one consumer stream per tag.
func (e *env) streamW2(name string, tags int) []result {
	if !e.streaming {
		return nil
	}
	e.tagqQueue("w2s", tags, e.partitioned())
	defer func() { _, _ = e.q.DeleteQueue(e.ctx, &tagqv1.DeleteQueueRequest{Name: "w2s", Force: true}) }()
	r := e.runStream(streamLoad{workload: name, queue: "w2s", tags: tagNames(tags), producers: 4, consumers: tags,
		batch: 10, entries: batchEntries(e.body, 10)})
	r.partitions = e.partitions
	return []result{r}
}

// streamW3 is W3 through the streaming API: one producer sending one
// stamped message per frame at the pace given, 4 consumer streams.
func (e *env) streamW3(name string, pace func(send func() error) func(l *loop) error) []result {
	if !e.streaming {
		return nil
	}
	e.tagqQueue("w3s", 1, nil)
	defer func() { _, _ = e.q.DeleteQueue(e.ctx, &tagqv1.DeleteQueueRequest{Name: "w3s", Force: true}) }()
	sl := streamLoad{workload: name, queue: "w3s", tags: tagNames(1), producers: 1, consumers: 4, batch: 1,
		entries: func() []*tagqv1.SendMessageBatchEntry {
			return []*tagqv1.SendMessageBatchEntry{{Id: "0", Body: stamped(len(e.body))}}
		},
		pace: pace}
	out := []result{e.latencyRun(sl)}
	if e.floor != nil {
		// The same through the floor server's streams, on the raw stream.
		defer e.rdb.Del(e.ctx, e.rawStream("w3s", 1))
		sl.via, sl.pid, sl.system = e.floor, e.floorPID, "floor-stream"
		out = append(out, e.latencyRun(sl))
	}
	return out
}

// latencyRun is runStream with the latency of every message received.
func (e *env) latencyRun(sl streamLoad) result {
	lat := &latencies{}
	sl.got = func(m *tagqv1.Message) { lat.add(since(m.GetBody())) }
	r := e.runStream(sl)
	r.p50, r.p99, r.max = lat.pct()
	return r
}

// streamW4 is W4 through the streaming API: 4 producers (batch 10), 4
// consumer streams that acknowledge good messages and nack poison at once
// (nack) or leave it to the 1 s visibility timeout; max receive count 3.
func (e *env) streamW4(poisonPct int, nack bool) []result {
	if !e.streaming {
		return nil
	}
	name := fmt.Sprintf("W4 %d%% poison", poisonPct)
	vis := int32(30)
	if !nack {
		name += ", timeout"
		vis = 1
	}
	e.tagqQueue("w4s-dlq", 1, &tagqv1.Queue{DeadLetterQueue: true})
	e.tagqQueue("w4s", 1, &tagqv1.Queue{VisibilityTimeoutSeconds: i32(vis),
		RedrivePolicy: &tagqv1.RedrivePolicy{DeadLetterQueue: "w4s-dlq", MaxReceiveCount: 3}})
	defer func() {
		_, _ = e.q.DeleteQueue(e.ctx, &tagqv1.DeleteQueueRequest{Name: "w4s", Force: true})
		_, _ = e.q.DeleteQueue(e.ctx, &tagqv1.DeleteQueueRequest{Name: "w4s-dlq", Force: true})
	}()
	// Frames of 10 where, over every 100 messages, poisonPct are poison.
	good, bad := make([]byte, len(e.body)), make([]byte, len(e.body))
	bad[0] = 'P'
	var seq atomic.Int64
	entries := func() []*tagqv1.SendMessageBatchEntry {
		out := make([]*tagqv1.SendMessageBatchEntry, 10)
		for i := range out {
			b := good
			if int(seq.Add(1)%100) < poisonPct {
				b = bad
			}
			out[i] = &tagqv1.SendMessageBatchEntry{Id: strconv.Itoa(i), Body: b}
		}
		return out
	}
	r := e.runStream(streamLoad{workload: name, queue: "w4s", tags: tagNames(1), producers: 4, consumers: 4, batch: 10,
		entries: entries, nack: nack, poison: func(m *tagqv1.Message) bool { return m.GetBody()[0] == 'P' }})
	dlq, _ := e.q.GetTag(e.ctx, &tagqv1.GetTagRequest{Queue: "w4s-dlq", Name: "default"})
	if r.note == "" {
		r.note = "good messages deleted/s"
	}
	r.note += fmt.Sprintf("; %d dead-lettered", dlq.GetTag().GetState().GetAvailable())
	return []result{r}
}
