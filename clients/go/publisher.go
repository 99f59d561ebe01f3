package tagq

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"time"

	"google.golang.org/grpc/codes"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
)

// Limits of a Publish stream, as the server has them.
const (
	maxFrameEntries   = 100
	maxFramesInFlight = 64
)

// PublisherConfig configures a Publisher. Every field has a default.
type PublisherConfig struct {
	// MaxMessages per frame (one SendMessageBatch), 1-100. Default 100.
	MaxMessages int
	// MaxBytes per frame: bodies, attribute names and values. A message
	// larger than this goes in a frame of its own. Default 1 MiB.
	MaxBytes int
	// MaxDelay is how long a message waits for its frame to fill before
	// the frame is sent anyway. Default 10 ms.
	MaxDelay time.Duration
	// MaxInFlight is how many frames may await their answer on the stream
	// at once, 1-64. Default 4.
	MaxInFlight int
	// MaxPendingBytes bounds the bytes of messages published and not yet
	// answered (waiting for their frame, or in flight); Publish blocks
	// beyond it until answers come or its context ends. Default 64 MiB.
	MaxPendingBytes int64
	// Logger. Default slog.Default().
	Logger *slog.Logger
	// DeduplicateRetries gives each message published without a
	// DeduplicationID a random one, kept when its frame is sent again, so
	// a frame stored before its answer was lost is answered, not stored
	// twice (within the server's 5-minute deduplication window): exactly
	// once instead of at least once. On a queue with
	// content_based_deduplication the random id replaces the body's.
	// Default false.
	DeduplicateRetries bool
}

// ErrPublisherStopped is the error of a message published after Stop, or
// left unanswered when Stop's context ended (it may or may not have been
// stored).
var ErrPublisherStopped = errors.New("tagq: publisher stopped")

// PublishResult is the outcome of one Publish: the message id once the
// server has stored the message, or why not.
type PublishResult struct {
	ready chan struct{}
	id    string
	err   error
}

// Ready is closed when the result is known.
func (r *PublishResult) Ready() <-chan struct{} { return r.ready }

// Get waits for the result: the message id, or an error (*Error for a
// refusal by the server, e.g. QUEUE_NOT_FOUND or MESSAGE_TOO_LARGE). It
// returns ctx's error when ctx ends first; the message is still being
// published.
func (r *PublishResult) Get(ctx context.Context) (messageID string, err error) {
	select {
	case <-r.ready:
		return r.id, r.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

func (r *PublishResult) set(id string, err error) {
	r.id, r.err = id, err
	close(r.ready)
}

// Publisher sends messages over one Publish stream, in frames: it gathers
// the messages of each queue into a frame of up to MaxMessages / MaxBytes,
// sends it when full or MaxDelay after its first message, and keeps up to
// MaxInFlight frames awaiting their answers. It is safe for concurrent use.
//
// Delivery is at least once: when the stream breaks (the server went away
// or is shutting down), the frames not yet answered are sent again on a
// new stream. A frame the server had stored but whose answer was lost is
// then stored twice (two message ids for one Publish; the result carries
// the second) — unless its messages carry deduplication ids (Outgoing's,
// or PublisherConfig.DeduplicateRetries), which make the resent frame's
// answer that of the first store. Frames are stored concurrently, so messages of different
// frames, even of one queue, may be stored out of order.
type Publisher struct {
	c   *Client
	cfg PublisherConfig
	log *slog.Logger

	ctx    context.Context // of the streams; cancelled when Stop gives up
	cancel context.CancelFunc

	mu       sync.Mutex
	open     map[string]*pubBatch // per queue: the frame being filled
	queued   []*pubFrame          // sealed, not yet sent (resends first)
	live     map[uint64]*pubFrame // sealed and not answered
	seq      uint64
	pending  int64         // bytes published and not answered
	space    chan struct{} // closed (and replaced) when pending drops
	stopping bool
	wake     chan struct{} // cap 1
	done     chan struct{} // closed when the stream loop has ended
}

// pubBatch is a frame being filled.
type pubBatch struct {
	queue   string
	entries []*tagqv1.SendMessageBatchEntry
	results []*PublishResult
	bytes   int64
	timer   *time.Timer
}

// pubFrame is a sealed frame: sent, or waiting to be.
type pubFrame struct {
	req     *tagqv1.PublishRequest
	results []*PublishResult
	bytes   int64
	done    chan struct{}
}

// NewPublisher makes a Publisher. Stop it to send what it holds and
// release its stream.
func (c *Client) NewPublisher(cfg PublisherConfig) *Publisher {
	if cfg.MaxMessages <= 0 || cfg.MaxMessages > maxFrameEntries {
		cfg.MaxMessages = maxFrameEntries
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = 1 << 20
	}
	if cfg.MaxDelay <= 0 {
		cfg.MaxDelay = 10 * time.Millisecond
	}
	if cfg.MaxInFlight <= 0 {
		cfg.MaxInFlight = 4
	}
	cfg.MaxInFlight = min(cfg.MaxInFlight, maxFramesInFlight)
	if cfg.MaxPendingBytes <= 0 {
		cfg.MaxPendingBytes = 64 << 20
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &Publisher{c: c, cfg: cfg, log: cfg.Logger, ctx: ctx, cancel: cancel,
		open: map[string]*pubBatch{}, live: map[uint64]*pubFrame{},
		space: make(chan struct{}), wake: make(chan struct{}, 1), done: make(chan struct{})}
	go p.loop()
	return p
}

func (p *Publisher) poke() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

func size(m Outgoing) int64 {
	n := len(m.Body)
	for k, v := range m.Attributes {
		n += len(k) + len(v)
	}
	return int64(n)
}

// Publish queues m for queue and returns its result at once. ctx bounds
// only the wait for room when MaxPendingBytes are already pending.
func (p *Publisher) Publish(ctx context.Context, queue string, m Outgoing) *PublishResult {
	r := &PublishResult{ready: make(chan struct{})}
	n := size(m)
	if err := p.acquire(ctx, n); err != nil {
		r.set("", err)
		return r
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopping {
		p.releaseLocked(n)
		r.set("", ErrPublisherStopped)
		return r
	}
	b := p.open[queue]
	if b != nil && b.bytes+n > int64(p.cfg.MaxBytes) {
		p.sealLocked(b)
		b = nil
	}
	if b == nil {
		b = &pubBatch{queue: queue}
		p.open[queue] = b
		b.timer = time.AfterFunc(p.cfg.MaxDelay, func() {
			p.mu.Lock()
			defer p.mu.Unlock()
			if p.open[queue] == b {
				p.sealLocked(b)
			}
		})
	}
	id := m.DeduplicationID
	if id == "" && p.cfg.DeduplicateRetries {
		id = rand.Text() // 26 characters of base32, 130 bits
	}
	b.entries = append(b.entries, &tagqv1.SendMessageBatchEntry{Id: strconv.Itoa(len(b.entries)), Body: m.Body,
		Attributes: withTrace(ctx, attrs(m.Attributes)), DelaySeconds: secs(m.Delay), DeduplicationId: dedupID(id), Topic: m.Topic,
		Priority: m.Priority})
	b.results = append(b.results, r)
	b.bytes += n
	if len(b.entries) >= p.cfg.MaxMessages {
		p.sealLocked(b)
	}
	return r
}

// acquire waits until n more bytes may be pending (a message larger than
// the whole limit waits for nothing else to be pending).
func (p *Publisher) acquire(ctx context.Context, n int64) error {
	for {
		p.mu.Lock()
		if p.pending == 0 || p.pending+n <= p.cfg.MaxPendingBytes {
			p.pending += n
			p.mu.Unlock()
			return nil
		}
		space := p.space
		p.mu.Unlock()
		select {
		case <-space:
		case <-ctx.Done():
			return fmt.Errorf("tagq: waiting for room to publish: %w", ctx.Err())
		}
	}
}

func (p *Publisher) releaseLocked(n int64) {
	p.pending -= n
	close(p.space)
	p.space = make(chan struct{})
}

// sealLocked turns an open batch into a frame to send.
func (p *Publisher) sealLocked(b *pubBatch) {
	b.timer.Stop()
	delete(p.open, b.queue)
	p.seq++
	f := &pubFrame{req: &tagqv1.PublishRequest{Seq: p.seq, Queue: b.queue, Entries: b.entries},
		results: b.results, bytes: b.bytes, done: make(chan struct{})}
	p.queued = append(p.queued, f)
	p.live[p.seq] = f
	p.poke()
}

// Flush sends the messages waiting for their frame to fill and waits
// until every message published before the call has its result, or ctx
// ends.
func (p *Publisher) Flush(ctx context.Context) error {
	p.mu.Lock()
	for _, b := range p.open {
		p.sealLocked(b)
	}
	frames := make([]*pubFrame, 0, len(p.live))
	for _, f := range p.live {
		frames = append(frames, f)
	}
	p.mu.Unlock()
	for _, f := range frames {
		select {
		case <-f.done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// Stop flushes, then closes the stream. Publish after Stop fails with
// ErrPublisherStopped. When ctx ends first, the messages still
// unanswered get ErrPublisherStopped (they may or may not have been
// stored) and Stop returns ctx's error. Safe to call more than once.
func (p *Publisher) Stop(ctx context.Context) error {
	p.mu.Lock()
	p.stopping = true
	for _, b := range p.open {
		p.sealLocked(b)
	}
	p.mu.Unlock()
	p.poke()
	select {
	case <-p.done:
		return nil
	case <-ctx.Done():
		p.cancel()
		<-p.done // prompt: the stream's context is cancelled
		return ctx.Err()
	}
}

// loop runs streams while there are frames to send, until stopped.
func (p *Publisher) loop() {
	defer close(p.done)
	failures := 0
	for {
		p.mu.Lock()
		for len(p.queued) == 0 && !(p.stopping && len(p.live) == 0) && p.ctx.Err() == nil {
			p.mu.Unlock()
			select {
			case <-p.wake:
			case <-p.ctx.Done():
			}
			p.mu.Lock()
		}
		finished := p.stopping && len(p.live) == 0
		p.mu.Unlock()
		if finished || p.ctx.Err() != nil {
			p.failAll(fmt.Errorf("%w before the server answered: the message may or may not be stored", ErrPublisherStopped))
			return
		}
		answered, back, err := p.stream()
		if answered {
			failures = 0
		}
		if err == nil || p.ctx.Err() != nil {
			p.requeue(back)
			continue // closed cleanly, or stopped: go round
		}
		if !retryable(err) || p.c.closed() {
			// Refused for good (e.g. UNIMPLEMENTED by an old server, or
			// the Client was closed): the frames sealed so far fail with
			// the stream's error; later ones try a new stream.
			p.fail(back, err)
			p.mu.Lock()
			queued := p.queued
			p.queued = nil
			p.mu.Unlock()
			p.fail(queued, err)
			continue
		}
		p.requeue(back)
		wait := retryDelay(failures)
		failures++
		if len(back) > 0 {
			p.log.Warn("tagq publisher: stream ended; sending its unanswered frames again", "err", err,
				"frames", len(back), "retry_in", wait)
		} else {
			p.log.Info("tagq publisher: stream ended", "err", err)
		}
		sleep(p.ctx, wait, nil)
	}
}

// failAll resolves every message not yet answered with err.
func (p *Publisher) failAll(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, b := range p.open {
		p.sealLocked(b)
	}
	for seq, f := range p.live {
		p.resolveLocked(seq, f, nil, err)
	}
	p.queued = nil
}

// fail resolves frames with err.
func (p *Publisher) fail(frames []*pubFrame, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, f := range frames {
		p.resolveLocked(f.req.GetSeq(), f, nil, err)
	}
}

// requeue puts frames a stream left unanswered back in front of the
// queue, to be sent again.
func (p *Publisher) requeue(frames []*pubFrame) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.queued = append(frames, p.queued...)
}

// stream sends frames on one Publish stream and matches its answers. It
// returns when the stream ends: err is nil when it was closed cleanly
// (stopping, with nothing left), else why it ended; back are the frames
// sent and not answered, in seq order.
func (p *Publisher) stream() (answered bool, back []*pubFrame, err error) {
	sctx, cancel := context.WithCancel(p.ctx)
	defer cancel()
	st, err := p.c.Messages.Publish(sctx)
	if err != nil {
		return false, nil, wrap(err)
	}
	inflight := map[uint64]*pubFrame{} // guarded by p.mu
	recvErr := make(chan error, 1)
	var got sync.WaitGroup
	got.Go(func() {
		for {
			resp, err := st.Recv()
			if err != nil {
				recvErr <- err
				return
			}
			p.mu.Lock()
			answered = true
			if f := inflight[resp.GetSeq()]; f != nil {
				delete(inflight, resp.GetSeq())
				p.resolveLocked(resp.GetSeq(), f, resp, nil)
			}
			p.mu.Unlock()
			p.poke()
		}
	})
	finish := func(err error) (bool, []*pubFrame, error) {
		cancel()
		got.Wait()
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, f := range inflight {
			back = append(back, f)
		}
		slices.SortFunc(back, func(a, b *pubFrame) int { return cmp.Compare(a.req.GetSeq(), b.req.GetSeq()) })
		return answered, back, err
	}
	for {
		p.mu.Lock()
		var send []*pubFrame
		for len(p.queued) > 0 && len(inflight) < p.cfg.MaxInFlight {
			f := p.queued[0]
			p.queued = p.queued[1:]
			inflight[f.req.GetSeq()] = f
			send = append(send, f)
		}
		closing := p.stopping && len(p.live) == 0
		p.mu.Unlock()
		for _, f := range send {
			if err := st.Send(f.req); err != nil {
				break // Recv says why; the frame is in flight, so sent again
			}
		}
		if closing {
			// The server answers what it has, then ends the stream OK.
			_ = st.CloseSend()
			select {
			case err := <-recvErr:
				if errors.Is(err, io.EOF) {
					err = nil
				}
				return finish(wrap(err))
			case <-p.ctx.Done():
				return finish(p.ctx.Err())
			}
		}
		select {
		case <-p.wake:
		case err := <-recvErr:
			if errors.Is(err, io.EOF) {
				err = errors.New("tagq: the server ended the Publish stream")
			}
			return finish(wrap(err))
		case <-p.ctx.Done():
			return finish(p.ctx.Err())
		}
	}
}

// entryField turns a field of a frame's entry ("entries[3].body") into
// the field SendMessage would name ("body").
var entryField = regexp.MustCompile(`^entries\[\d+\]\.?`)

// resolveLocked gives each message of an answered (or failed) frame its
// result.
func (p *Publisher) resolveLocked(seq uint64, f *pubFrame, resp *tagqv1.PublishResponse, err error) {
	if _, ok := p.live[seq]; !ok {
		return
	}
	delete(p.live, seq)
	if err == nil && resp.GetError() != nil {
		err = fromStreamError(resp.GetError())
	}
	if err != nil {
		for _, r := range f.results {
			r.set("", err)
		}
	} else {
		set := make([]bool, len(f.results))
		for _, s := range resp.GetSuccessful() {
			if i, e := strconv.Atoi(s.GetId()); e == nil && i >= 0 && i < len(f.results) && !set[i] {
				f.results[i].set(s.GetMessageId(), nil)
				set[i] = true
			}
		}
		for _, x := range resp.GetFailed() {
			if i, e := strconv.Atoi(x.GetId()); e == nil && i >= 0 && i < len(f.results) && !set[i] {
				// Entry errors carry no code on the wire; the server's
				// are all argument checks (MESSAGE_TOO_LARGE, …), which a
				// unary SendMessage reports as INVALID_ARGUMENT.
				f.results[i].set("", &Error{Code: codes.InvalidArgument, Reason: x.GetReason(),
					Field: entryField.ReplaceAllString(x.GetField(), ""), Message: x.GetMessage()})
				set[i] = true
			}
		}
		for i, ok := range set {
			if !ok {
				f.results[i].set("", &Error{Code: codes.Internal, Reason: "INTERNAL",
					Message: "the server's answer to the frame did not mention this message"})
			}
		}
	}
	close(f.done)
	p.releaseLocked(f.bytes)
}
