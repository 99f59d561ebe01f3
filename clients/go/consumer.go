package tagq

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
)

// Handler processes one message. Return nil to delete it, an error to
// retry it later (with a backoff), or an error wrapping *Poison to
// dead-letter it now.
type Handler interface {
	Handle(ctx context.Context, m *Message) error
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, m *Message) error

// Handle calls f.
func (f HandlerFunc) Handle(ctx context.Context, m *Message) error { return f(ctx, m) }

// Poison is a handler's verdict that a message can never be processed: the
// Consumer dead-letters it with Reason instead of retrying it.
type Poison struct {
	Reason string // e.g. INVALID_PAYLOAD; default CONSUMER_DEAD_LETTERED
	Err    error  // the cause; its text becomes the dead letter's description
}

func (p *Poison) Error() string { return fmt.Sprintf("poison message (%s): %v", p.Reason, p.Err) }
func (p *Poison) Unwrap() error { return p.Err }

// PoisonError makes a handler error that dead-letters the message.
func PoisonError(reason string, err error) error { return &Poison{Reason: reason, Err: err} }

// Limits of a Consume stream, as the server checks them: a value outside
// them would end the stream with INVALID_ARGUMENT, so the Consumer clamps.
const (
	maxOutstandingMessages = 10000
	minOutstandingBytes    = 1 << 10
	maxOutstandingBytes    = 1 << 30
	maxVisibilitySeconds   = 43200
	maxNackMilliseconds    = maxVisibilitySeconds * 1000
	maxDeadReasonBytes     = 256
	maxDeadDescBytes       = 4096
)

// settleTimeout bounds one unary settlement (delete, visibility change,
// dead-lettering) of a message whose stream broke. Its context is made when
// the handler has returned, never before: a handler may run for hours.
// A variable so that tests can show that a handler outlasting it still
// gets its delete.
var settleTimeout = 30 * time.Second

// ConsumerConfig configures a Consumer. Every field but Queue has a default.
type ConsumerConfig struct {
	Queue string
	// Tag to read; default the queue's default tag.
	Tag string
	// Workers run handlers concurrently. Default 1.
	Workers int
	// MaxOutstandingMessages bounds the messages the Consumer holds at
	// once: pushed by the server and not yet settled, whether a handler
	// runs them or they wait for a worker. It is the stream's credit: the
	// server pushes no more. Default 2×Workers, so that a worker that
	// finishes finds its next message here instead of waiting a round trip
	// to the server, while few messages sit unhandled in one process. At
	// most 10000. Below Workers, some workers stay idle.
	MaxOutstandingMessages int
	// MaxOutstandingBytes bounds the body bytes held the same way, 1 KiB to
	// 1 GiB. Default 64 MiB (the server's default). A message larger than
	// the limit still comes when the Consumer holds nothing else.
	MaxOutstandingBytes int64
	// Visibility is how long a message stays hidden from other receivers of
	// the tag; the Consumer renews it every third of it while the message
	// is held (waiting for a worker or being handled). Default 30s (whole
	// seconds, rounded up; at least 1s).
	Visibility time.Duration
	// MaxExtension is how long after its arrival the Consumer stops
	// renewing a message's visibility (as Pub/Sub's
	// ReceiveSettings.MaxExtension): a handler still running then may see
	// the message received again elsewhere once its visibility runs out.
	// Default 60 minutes; negative: never renew.
	MaxExtension time.Duration
	// Deprecated: Wait was the long-poll wait of each receive. The Consumer
	// now holds one Consume stream open, which the server pushes messages
	// on as they come; Wait is ignored.
	Wait time.Duration
	// Backoff is how long a failed message stays hidden before it is
	// retried, given how many times the tag received it. Exact to the
	// millisecond on the stream (the old whole-second truncation is gone);
	// rounded up to whole seconds for a message whose stream broke while
	// its handler ran. At most 12 hours. Default: exponential from 1s,
	// doubling, capped at 5 minutes, with ±20% jitter.
	Backoff func(receiveCount int) time.Duration
	// ServerBackoff leaves the backoff of a failed message to its queue's
	// retry policy (QueueOptions.RetryBackoff): the nack carries no delay
	// and Backoff is not called. On a queue without a policy a failed
	// message comes back at once.
	ServerBackoff bool
	// Logger. Default slog.Default().
	Logger *slog.Logger
}

// DefaultBackoff doubles from 1s per receive, up to 5 minutes, ±20%.
func DefaultBackoff(receiveCount int) time.Duration {
	d := time.Second << min(max(receiveCount-1, 0), 9)
	d = min(d, 5*time.Minute)
	return time.Duration(float64(d) * (0.8 + 0.4*rand.Float64()))
}

// Consumer runs a Handler for every message of one tag, over one Consume
// stream at a time. Run starts it; Stop or StopAndCancel (or the end of
// Run's context) stops it.
type Consumer struct {
	c       *Client
	cfg     ConsumerConfig
	h       Handler
	log     *slog.Logger
	visSecs int32

	mu       sync.Mutex
	work     *sync.Cond // pending grew, or stopping
	room     *sync.Cond // an orphan was settled, or stopping
	state    int        // idle, running, done
	stopping bool
	hard     bool
	stopCh   chan struct{} // closed when a stop begins
	done     chan struct{} // closed when Run has returned (or at a Stop before Run)
	hcancel  context.CancelFunc
	runErr   error

	pending []*delivery // pushed, waiting for a worker, in arrival order
	cur     *session    // the stream in use; nil between streams
	// orphans are messages whose stream broke while their handler ran:
	// they are renewed and settled by receipt handle with the unary calls,
	// and still count against the outstanding limits (the next stream
	// opens with less credit).
	orphans     map[*delivery]struct{}
	orphanBytes int64
	// orphanOf finds an orphan by message id, so that the same message
	// pushed again (the server gave it back while its handler ran) waits
	// for that handler's verdict instead of running a second time.
	orphanOf map[string]*delivery

	bg sync.WaitGroup // unary settlements and renewals in flight
}

const (
	stateIdle = iota
	stateRunning
	stateDone
)

// delivery is one message pushed on one stream.
type delivery struct {
	id       uint64 // the stream's delivery id
	m        *Message
	s        *session
	size     int64
	received time.Time
	running  bool      // a handler has it
	parked   *delivery // the same message pushed again while this one was an orphan
	waitsFor *delivery // set on a parked delivery: the orphan it waits for
	expired  bool      // MaxExtension passed: no more renewals (logged once)
}

// settleKind is what is done to a message once handled.
type settleKind int

const (
	settleAck settleKind = iota
	settleNack
	settleDead
	settleGiveBack // a nack at once, for a message no handler ran
)

type settlement struct {
	kind   settleKind
	d      *delivery
	delay  time.Duration // nack
	server bool          // nack: the queue's retry backoff instead of delay
	reason string        // dead
	desc   string        // dead
}

// session is one Consume stream. Its fields but stream and cancel are
// guarded by the Consumer's mu.
type session struct {
	stream grpc.BidiStreamingClient[tagqv1.ConsumeRequest, tagqv1.ConsumeResponse]
	cancel context.CancelFunc
	wake   chan struct{} // cap 1: pend has something, or it may be time to close

	held        map[uint64]*delivery   // pushed and not settled by us
	running     int                    // of held, those a handler runs
	parked      int                    // of held, those waiting for their orphan's verdict
	pend        *tagqv1.ConsumeRequest // settlements and flow not yet sent
	unconfirmed map[uint64]settlement  // sent (or about to be), not yet confirmed durable
	credit      int32                  // the limits the server has for this stream
	creditBytes int64
	broken      bool // Recv failed: settle by receipt handle now
	paused      bool // stopping: told the server to push nothing more
	closed      bool // CloseSend done (or about to be): nothing more may be sent
	answered    bool // the server sent something: the open was accepted
}

func (s *session) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *session) request() *tagqv1.ConsumeRequest {
	if s.pend == nil {
		s.pend = &tagqv1.ConsumeRequest{}
	}
	return s.pend
}

// NewConsumer makes a Consumer; Run starts it.
func (c *Client) NewConsumer(cfg ConsumerConfig, h Handler) *Consumer {
	if cfg.Workers <= 0 {
		cfg.Workers = 1
	}
	if cfg.MaxOutstandingMessages <= 0 {
		cfg.MaxOutstandingMessages = 2 * cfg.Workers
	}
	cfg.MaxOutstandingMessages = min(cfg.MaxOutstandingMessages, maxOutstandingMessages)
	if cfg.MaxOutstandingBytes <= 0 {
		cfg.MaxOutstandingBytes = 64 << 20
	}
	cfg.MaxOutstandingBytes = min(max(cfg.MaxOutstandingBytes, minOutstandingBytes), maxOutstandingBytes)
	if cfg.Visibility < time.Second {
		cfg.Visibility = 30 * time.Second
	}
	visSecs := int32(min((cfg.Visibility+time.Second-1)/time.Second, maxVisibilitySeconds))
	cfg.Visibility = time.Duration(visSecs) * time.Second
	if cfg.MaxExtension == 0 {
		cfg.MaxExtension = 60 * time.Minute
	}
	if cfg.Backoff == nil {
		cfg.Backoff = DefaultBackoff
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	co := &Consumer{c: c, cfg: cfg, h: h, visSecs: visSecs,
		log:    cfg.Logger.With("queue", cfg.Queue, "tag", cfg.Tag),
		stopCh: make(chan struct{}), done: make(chan struct{}),
		orphans: map[*delivery]struct{}{}, orphanOf: map[string]*delivery{}}
	co.work = sync.NewCond(&co.mu)
	co.room = sync.NewCond(&co.mu)
	return co
}

// ErrConsumerRunning is returned by Run while the Consumer already runs.
var ErrConsumerRunning = errors.New("tagq: Consumer.Run called more than once")

// Run consumes messages until the Consumer is stopped (Stop,
// StopAndCancel, or the end of ctx, which stops it as Stop does), then
// returns nil once every handler in progress has finished and its
// settlement was sent.
//
// It keeps one Consume stream open and reopens it (with a growing backoff)
// when it breaks: the server went away, or is shutting down
// (SERVER_SHUTTING_DOWN). It returns an error when the server refuses the
// stream for good (the queue or tag does not exist, an argument is out of
// range): after the handlers in progress have finished.
//
// Handlers get a context with ctx's values that only StopAndCancel
// cancels. A Consumer runs once: Run while it runs returns
// ErrConsumerRunning; Run once it was stopped (or had run) returns nil at
// once.
func (co *Consumer) Run(ctx context.Context) error {
	co.mu.Lock()
	switch co.state {
	case stateDone:
		co.mu.Unlock()
		return nil
	case stateRunning:
		co.mu.Unlock()
		return ErrConsumerRunning
	}
	co.state = stateRunning
	// Streams and settlements must outlive ctx: when it ends the Consumer
	// still sends the acks of the handlers finishing and closes the stream
	// cleanly.
	base := context.WithoutCancel(ctx)
	hctx, hcancel := context.WithCancel(base)
	co.hcancel = hcancel
	if co.hard {
		hcancel()
	}
	co.mu.Unlock()
	defer hcancel()

	go func() {
		select {
		case <-ctx.Done():
			co.beginStop(false)
		case <-co.done:
		}
	}()

	var workers sync.WaitGroup
	for range co.cfg.Workers {
		workers.Go(func() { co.worker(hctx) })
	}
	renewStop, renewDone := make(chan struct{}), make(chan struct{})
	go func() { defer close(renewDone); co.renew(base, renewStop) }()

	co.streams(base)

	workers.Wait()
	// No handler runs any more, so nothing is left to renew; stop renewals
	// before waiting for the background calls they would add to.
	close(renewStop)
	<-renewDone
	co.bg.Wait()
	co.mu.Lock()
	co.state = stateDone
	err := co.runErr
	co.mu.Unlock()
	close(co.done)
	return err
}

// Stop stops the Consumer softly: it takes no more messages, lets the
// handlers in progress finish and sends their settlements, then closes the
// stream cleanly, so that the server gives back at once the messages that
// were waiting for a worker (they are not left in flight until their
// visibility runs out). It returns when Run has returned, or with ctx's
// error when ctx ends first (the stop goes on; StopAndCancel hurries it).
// Safe to call more than once, and before Run (Run then returns at once).
func (co *Consumer) Stop(ctx context.Context) error {
	co.beginStop(false)
	return co.wait(ctx)
}

// StopAndCancel is Stop that also cancels the contexts of the handlers in
// progress. A handler that then returns an error has its message given
// back at once (no backoff: the failure was the stop's doing); one that
// returns nil still has its message deleted.
func (co *Consumer) StopAndCancel(ctx context.Context) error {
	co.beginStop(true)
	return co.wait(ctx)
}

func (co *Consumer) wait(ctx context.Context) error {
	select {
	case <-co.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (co *Consumer) beginStop(hard bool) {
	co.mu.Lock()
	if !co.stopping {
		co.stopping = true
		close(co.stopCh)
	}
	if co.state == stateIdle {
		co.state = stateDone
		close(co.done)
	}
	if hard && !co.hard {
		co.hard = true
		if co.hcancel != nil {
			co.hcancel()
		}
	}
	s := co.cur
	if s != nil {
		co.pauseLocked(s)
	}
	co.work.Broadcast()
	co.room.Broadcast()
	co.mu.Unlock()
	if s != nil {
		s.poke() // it may be time to close the stream
	}
}

// pauseLocked stops a stopping stream's pushes (a flow of 0 messages), so
// that the settlements of the last handlers do not make room for pushes: a
// message pushed now would only go back at the close, its receive count
// raised for nothing (which counts towards the redrive policy's
// MaxReceiveCount).
func (co *Consumer) pauseLocked(s *session) {
	if s.closed || s.paused {
		return
	}
	zero := int32(0)
	s.paused = true
	s.credit = zero
	s.request().Flow = &tagqv1.ConsumeFlow{MaxOutstandingMessages: &zero}
}

// streams opens a Consume stream and serves it, again and again, until the
// Consumer stops.
func (co *Consumer) streams(ctx context.Context) {
	failures := 0
	for {
		co.mu.Lock()
		// Messages of broken streams still being handled count against the
		// limits: open only when there is room for one more.
		for !co.stopping && len(co.orphans) >= co.cfg.MaxOutstandingMessages {
			co.room.Wait()
		}
		if co.stopping {
			co.mu.Unlock()
			return
		}
		credit, creditBytes := co.creditLocked(0)
		co.mu.Unlock()

		s, err := co.open(ctx, credit, creditBytes)
		if err == nil {
			err = co.serve(s)
			if s.answered {
				failures = 0
			}
			if err == nil {
				return // closed cleanly: we were stopping
			}
		}
		if !retryable(err) || co.c.closed() {
			co.log.Error("tagq consumer: the server refused the stream", "err", err)
			co.mu.Lock()
			co.runErr = err
			co.mu.Unlock()
			co.beginStop(false)
			return
		}
		wait := retryDelay(failures)
		failures++
		co.mu.Lock()
		stopping := co.stopping
		co.mu.Unlock()
		if stopping {
			return
		}
		co.log.Warn("tagq consumer: stream ended; reconnecting", "err", err, "retry_in", wait)
		if !sleep(ctx, wait, co.stopCh) {
			return
		}
	}
}

// creditLocked is the credit of a stream with parked deliveries: the
// limits less what the orphans hold. A parked delivery and its orphan are
// one message: counting both would let a long orphan take the stream's
// last credit and starve the stream.
func (co *Consumer) creditLocked(parked int) (int32, int64) {
	n := int32(max(co.cfg.MaxOutstandingMessages-len(co.orphans)+parked, 1))
	b := max(co.cfg.MaxOutstandingBytes-co.orphanBytes, minOutstandingBytes)
	return n, b
}

// open starts a stream and sends its open request.
func (co *Consumer) open(ctx context.Context, credit int32, creditBytes int64) (*session, error) {
	sctx, cancel := context.WithCancel(ctx)
	st, err := co.c.Messages.Consume(sctx)
	if err != nil {
		cancel()
		return nil, wrap(err)
	}
	vis := co.visSecs
	err = st.Send(&tagqv1.ConsumeRequest{Open: &tagqv1.ConsumeOpen{Queue: co.cfg.Queue, Tag: co.cfg.Tag,
		MaxOutstandingMessages: &credit, MaxOutstandingBytes: &creditBytes, VisibilitySeconds: &vis,
		// Confirmations say when an ack is durable: until then a
		// settlement is redone by receipt handle if the stream breaks.
		Confirm: true}})
	if err != nil {
		// Send reports io.EOF for a stream that ended; Recv has the status.
		_, rerr := st.Recv()
		cancel()
		if rerr == nil {
			rerr = err
		}
		return nil, wrap(rerr)
	}
	return &session{stream: st, cancel: cancel, wake: make(chan struct{}, 1), held: map[uint64]*delivery{},
		unconfirmed: map[uint64]settlement{}, credit: credit, creditBytes: creditBytes}, nil
}

// serve reads s until it ends. It returns nil when the stream ended after
// the Consumer closed it (a clean stop), else why it ended.
func (co *Consumer) serve(s *session) error {
	co.mu.Lock()
	co.cur = s
	if co.stopping {
		co.pauseLocked(s)
	}
	co.mu.Unlock()
	sent := make(chan struct{})
	go func() { defer close(sent); co.sender(s) }()
	s.poke() // a stop may have begun while the stream opened
	var err error
	for {
		var resp *tagqv1.ConsumeResponse
		if resp, err = s.stream.Recv(); err != nil {
			break
		}
		co.received(s, resp)
	}
	co.mu.Lock()
	clean := s.closed && errors.Is(err, io.EOF)
	co.endLocked(s, clean)
	co.mu.Unlock()
	s.cancel()
	<-sent
	if clean {
		return nil
	}
	if errors.Is(err, io.EOF) {
		return errors.New("tagq: the server ended the Consume stream")
	}
	return wrap(err)
}

// received takes a response: messages to hand out, confirmations to note.
func (co *Consumer) received(s *session, resp *tagqv1.ConsumeResponse) {
	now := time.Now()
	co.mu.Lock()
	defer co.mu.Unlock()
	s.answered = true
	for _, cm := range resp.GetMessages() {
		d := &delivery{id: cm.GetDeliveryId(), m: cm.GetMessage(), s: s, size: int64(len(cm.GetMessage().GetBody())), received: now}
		s.held[d.id] = d
		if co.stopping {
			// Held, not handed out: the server gives it back when the
			// stream closes (or, if it breaks, we do).
			continue
		}
		if o := co.orphanOf[d.m.GetMessageId()]; o != nil && o.parked == nil {
			// The server gave this message back while its handler still
			// runs (its stream broke): wait for that handler's verdict
			// rather than run it twice.
			o.parked, d.waitsFor = d, o
			s.parked++
			co.raiseCreditLocked()
			continue
		}
		co.pending = append(co.pending, d)
		co.work.Signal()
	}
	for _, c := range resp.GetConfirmations() {
		st, final := s.unconfirmed[c.GetDeliveryId()]
		if c.GetOperation() != tagqv1.ConsumeOperation_CONSUME_OPERATION_EXTEND && final {
			delete(s.unconfirmed, c.GetDeliveryId())
		}
		if c.GetError() == nil {
			continue
		}
		e := fromStreamError(c.GetError())
		log := co.log.With("delivery", c.GetDeliveryId(), "operation", c.GetOperation().String(), "err", e)
		if final {
			log = log.With("message", st.d.m.GetMessageId())
		}
		switch {
		case c.GetOperation() == tagqv1.ConsumeOperation_CONSUME_OPERATION_EXTEND:
			log.Warn("tagq consumer: could not extend visibility; the message may be received again")
		case e.Reason == "RECEIPT_HANDLE_STALE":
			log.Warn("tagq consumer: the message was received again (or expired) before it was settled")
		case c.GetOperation() == tagqv1.ConsumeOperation_CONSUME_OPERATION_DEAD:
			log.Error("tagq consumer: dead-lettering failed; the message will be received again")
		default:
			log.Warn("tagq consumer: settlement failed")
		}
	}
}

// endLocked forgets a stream that ended. Clean (we closed it after the
// handlers finished): what waited for a worker went back to the tag.
// Broken: running handlers become orphans, the waiting messages are given
// back by receipt handle, and settlements not confirmed are redone.
func (co *Consumer) endLocked(s *session, clean bool) {
	if co.cur == s {
		co.cur = nil
	}
	s.broken = !clean
	s.closed = true
	kept := co.pending[:0]
	for _, d := range co.pending {
		if d.s != s {
			kept = append(kept, d)
		}
	}
	clear(co.pending[len(kept):])
	co.pending = kept
	for _, d := range s.held {
		switch {
		case d.running && !clean:
			co.orphans[d] = struct{}{}
			co.orphanBytes += d.size
			co.orphanOf[d.m.GetMessageId()] = d
		case d.running:
			// A clean close waits for the handlers: not reached.
		case d.waitsFor != nil:
			d.waitsFor.parked = nil
			if !clean {
				co.unary(settlement{kind: settleGiveBack, d: d})
			}
		case !clean:
			co.unary(settlement{kind: settleGiveBack, d: d})
		}
	}
	s.held = nil
	for _, st := range s.unconfirmed {
		co.unary(st)
	}
	s.unconfirmed = nil
	s.pend = nil
}

// sender sends s's settlements as they gather (one request carries all
// that came meanwhile), and closes the stream when the Consumer stops and
// no handler of this stream runs.
func (co *Consumer) sender(s *session) {
	ctx := s.stream.Context()
	for {
		select {
		case <-s.wake:
		case <-ctx.Done():
			return
		}
		co.mu.Lock()
		req := s.pend
		s.pend = nil
		closing := co.stopping && s.running == 0 && !s.closed
		if closing {
			s.closed = true
		}
		co.mu.Unlock()
		if req != nil {
			if err := s.stream.Send(req); err != nil {
				return // Recv reports why; unconfirmed settlements are redone
			}
		}
		if closing {
			// The server applies what came, gives back the rest at once,
			// sends the last confirmations and ends the stream OK.
			_ = s.stream.CloseSend()
			return
		}
	}
}

// worker runs handlers on pending messages until the Consumer stops.
func (co *Consumer) worker(ctx context.Context) {
	for {
		co.mu.Lock()
		for len(co.pending) == 0 && !co.stopping {
			co.work.Wait()
		}
		if co.stopping {
			co.mu.Unlock()
			return
		}
		d := co.pending[0]
		co.pending[0] = nil
		co.pending = co.pending[1:]
		d.running = true
		d.s.running++
		co.mu.Unlock()

		err := co.safeHandle(ctx, d.m)
		co.finish(d, co.verdict(d, err))
	}
}

// safeHandle runs the handler, turning a panic into an error.
func (co *Consumer) safeHandle(ctx context.Context, m *Message) (err error) {
	ctx, span := processSpan(ctx, co.cfg.Queue, m)
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("handler panicked: %v", p)
		}
		endSpan(span, err)
	}()
	return co.h.Handle(ctx, m)
}

// verdict turns a handler's result into a settlement.
func (co *Consumer) verdict(d *delivery, err error) settlement {
	log := co.log.With("message", d.m.GetMessageId())
	var poison *Poison
	switch {
	case err == nil:
		return settlement{kind: settleAck, d: d}
	case errors.As(err, &poison):
		reason := poison.Reason
		if reason == "" {
			reason = "CONSUMER_DEAD_LETTERED"
		}
		desc := ""
		if poison.Err != nil {
			desc = poison.Err.Error()
		}
		// Out-of-range text would end the stream (INVALID_ARGUMENT).
		return settlement{kind: settleDead, d: d, reason: truncate(reason, maxDeadReasonBytes),
			desc: truncate(desc, maxDeadDescBytes)}
	}
	co.mu.Lock()
	hard := co.hard
	co.mu.Unlock()
	if hard {
		log.Info("tagq consumer: handler failed while stopping; giving the message back", "err", err)
		return settlement{kind: settleNack, d: d}
	}
	if co.cfg.ServerBackoff {
		log.Info("tagq consumer: handler failed; retrying after the queue's backoff", "err", err)
		return settlement{kind: settleNack, d: d, server: true}
	}
	wait := min(max(co.cfg.Backoff(int(d.m.GetReceiveCount())), 0), maxNackMilliseconds*time.Millisecond)
	log.Info("tagq consumer: handler failed; retrying later", "err", err, "retry_in", wait)
	return settlement{kind: settleNack, d: d, delay: wait}
}

// truncate cuts s to at most n bytes of valid UTF-8.
func truncate(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}

// finish settles a handled message: on its stream if that is still up,
// else (an orphan) through the message parked for it or by receipt handle.
func (co *Consumer) finish(d *delivery, st settlement) {
	co.mu.Lock()
	if _, orphan := co.orphans[d]; orphan {
		delete(co.orphans, d)
		co.orphanBytes -= d.size
		if co.orphanOf[d.m.GetMessageId()] == d {
			delete(co.orphanOf, d.m.GetMessageId())
		}
		co.raiseCreditLocked()
		co.room.Broadcast()
		if p := d.parked; p != nil && !p.s.closed {
			// The message came again on the live stream: settle that
			// delivery with this verdict (an ack deletes it, whichever
			// receipt it names).
			st.d = p
			p.waitsFor = nil
			p.s.parked--
			co.settleOnStreamLocked(st)
			co.mu.Unlock()
			p.s.poke()
			return
		}
		co.unary(st)
		co.mu.Unlock()
		return
	}
	d.running = false
	d.s.running--
	if co.stopping && st.kind == settleNack && st.delay == 0 && !st.server {
		// Left unsettled, the clean close gives it back at once, the same
		// as this nack; sent now, it would make room for a push.
		co.mu.Unlock()
		d.s.poke()
		return
	}
	co.settleOnStreamLocked(st)
	co.mu.Unlock()
	d.s.poke()
}

// settleOnStreamLocked queues a settlement on the message's (live) stream.
func (co *Consumer) settleOnStreamLocked(st settlement) {
	s, d := st.d.s, st.d
	delete(s.held, d.id)
	req := s.request()
	switch st.kind {
	case settleAck:
		req.Acks = append(req.Acks, d.id)
	case settleNack, settleGiveBack:
		ms := int32(st.delay / time.Millisecond)
		if st.delay%time.Millisecond != 0 {
			ms++ // never shorter than asked
		}
		n := &tagqv1.ConsumeNack{DeliveryId: d.id, DelayMilliseconds: proto.Int32(min(ms, maxNackMilliseconds))}
		if st.server {
			n.DelayMilliseconds = nil // the queue's retry backoff
		}
		req.Nacks = append(req.Nacks, n)
	case settleDead:
		req.Deads = append(req.Deads, &tagqv1.ConsumeDead{DeliveryId: d.id, Reason: st.reason, Description: st.desc})
	}
	s.unconfirmed[d.id] = st
}

// raiseCreditLocked gives the live stream back the credit an orphan held.
func (co *Consumer) raiseCreditLocked() {
	s := co.cur
	if s == nil || s.closed || co.stopping {
		return
	}
	n, b := co.creditLocked(s.parked)
	if n == s.credit && b == s.creditBytes {
		return
	}
	s.credit, s.creditBytes = n, b
	s.request().Flow = &tagqv1.ConsumeFlow{MaxOutstandingMessages: &n, MaxOutstandingBytes: &b}
	s.poke()
}

// unary settles by receipt handle in the background (Run waits for it).
// Its context starts now, after the handler returned. WaitForReady rides
// out a reconnect in progress.
func (co *Consumer) unary(st settlement) {
	co.bg.Go(func() {
		ctx, cancel := context.WithTimeout(context.Background(), settleTimeout)
		defer cancel()
		h := st.d.m.GetReceiptHandle()
		var err error
		what := ""
		switch st.kind {
		case settleAck:
			what = "delete"
			_, err = co.c.Messages.DeleteMessage(ctx, &tagqv1.DeleteMessageRequest{Queue: co.cfg.Queue, ReceiptHandle: h},
				grpc.WaitForReady(true))
		case settleNack, settleGiveBack:
			what = "nack"
			// Whole seconds here: round up, so a retry never comes sooner
			// than the backoff asked.
			secs := int32(min((st.delay+time.Second-1)/time.Second, maxVisibilitySeconds))
			if st.server {
				secs = 0
			}
			_, err = co.c.Messages.ChangeMessageVisibility(ctx, &tagqv1.ChangeMessageVisibilityRequest{Queue: co.cfg.Queue,
				ReceiptHandle: h, VisibilitySeconds: secs, RetryBackoff: st.server}, grpc.WaitForReady(true))
		case settleDead:
			what = "dead-letter"
			_, err = co.c.Messages.DeadMessage(ctx, &tagqv1.DeadMessageRequest{Queue: co.cfg.Queue, ReceiptHandle: h,
				Reason: st.reason, Description: st.desc}, grpc.WaitForReady(true))
		}
		if err = wrap(err); err == nil {
			return
		}
		log := co.log.With("message", st.d.m.GetMessageId(), "err", err)
		switch {
		case ReasonOf(err) == "RECEIPT_HANDLE_STALE" && st.kind == settleGiveBack:
			// Already back with the tag (the server gave it back itself).
		case ReasonOf(err) == "RECEIPT_HANDLE_STALE":
			log.Warn("tagq consumer: " + what + " by receipt handle: the message was received again or expired meanwhile")
		case st.kind == settleAck:
			log.Warn("tagq consumer: delete failed; the message will be received again")
		default:
			log.Warn("tagq consumer: " + what + " failed; the message comes back at its visibility deadline")
		}
	})
}

// renew extends the visibility of every held message every third of the
// visibility, until Run ends: on the stream for the live stream's messages
// (one request for all), by receipt handle for orphans.
func (co *Consumer) renew(ctx context.Context, stop <-chan struct{}) {
	if co.cfg.MaxExtension < 0 {
		return
	}
	t := time.NewTicker(co.cfg.Visibility / 3)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case now := <-t.C:
			co.mu.Lock()
			if s := co.cur; s != nil && !s.closed && len(s.held) > 0 {
				req := s.request()
				req.Extends = req.Extends[:0] // not sent yet: these supersede them
				for _, d := range s.held {
					if secs, ok := co.extension(d, now); ok {
						req.Extends = append(req.Extends, &tagqv1.ConsumeExtend{DeliveryId: d.id, VisibilitySeconds: secs})
					}
				}
				s.poke()
			}
			for d := range co.orphans {
				if d.parked != nil {
					continue // its new delivery is renewed on the stream
				}
				if secs, ok := co.extension(d, now); ok {
					co.bg.Go(func() { co.renewOrphan(ctx, d, secs) })
				}
			}
			co.mu.Unlock()
		}
	}
}

// extension is how long to extend d's visibility by now, if at all.
func (co *Consumer) extension(d *delivery, now time.Time) (int32, bool) {
	left := d.received.Add(co.cfg.MaxExtension).Sub(now)
	if left <= 0 {
		if !d.expired {
			d.expired = true
			co.log.Warn("tagq consumer: MaxExtension reached; no more visibility renewals", "message", d.m.GetMessageId())
		}
		return 0, false
	}
	secs := min(co.visSecs, int32((left+time.Second-1)/time.Second))
	return max(secs, 1), true
}

func (co *Consumer) renewOrphan(ctx context.Context, d *delivery, secs int32) {
	// A renewal is due again in a third of the visibility: do not let
	// slow ones pile up.
	ctx, cancel := context.WithTimeout(ctx, co.cfg.Visibility/3)
	defer cancel()
	_, err := co.c.Messages.ChangeMessageVisibility(ctx, &tagqv1.ChangeMessageVisibilityRequest{Queue: co.cfg.Queue,
		ReceiptHandle: d.m.GetReceiptHandle(), VisibilitySeconds: secs}, grpc.WaitForReady(true))
	if err != nil {
		co.log.Warn("tagq consumer: could not extend visibility", "message", d.m.GetMessageId(), "err", wrap(err))
	}
}
