package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
	"github.com/tagq/tagq/tags"
)

// Limits of a Consume stream (DESIGN §2 Streaming).
const (
	DefaultMaxOutstandingMessages = 100
	MaxMaxOutstandingMessages     = 10000
	DefaultMaxOutstandingBytes    = 64 << 20
	MinMaxOutstandingBytes        = 1 << 10
	MaxMaxOutstandingBytes        = 1 << 30
	maxNackDelayMs                = tags.MaxVisibilitySeconds * 1000
)

// ReasonServerShuttingDown is the ErrorInfo reason of a stream the server
// ended because it is shutting down: reconnect (to another replica).
const ReasonServerShuttingDown = tags.ReasonServerShuttingDown

// consumer is one Consume stream: the messages pushed and not yet settled
// (by delivery id), the credit left, and the confirmations to send.
type consumer struct {
	svc     *messageService
	stream  grpc.BidiStreamingServer[tagqv1.ConsumeRequest, tagqv1.ConsumeResponse]
	queue   string
	tag     string
	confirm bool
	sendMu  sync.Mutex // stream.Send is not safe for concurrent use
	// closedByClient: the client closed its side, so pushes no longer come
	// but the stream still takes answers (see push).
	closedByClient atomic.Bool

	mu       sync.Mutex
	next     uint64 // last delivery id given
	out      map[uint64]pushed
	outBytes int64
	maxMsgs  int
	maxBytes int64
	avgSize  int64 // running mean of pushed message sizes, to size receives under a byte limit
	// nextExpiry is the earliest deadline in out (zero: none known), so
	// expireLocked scans out only when one may have passed.
	nextExpiry time.Time
	submits    int // settlements submitted and not yet durable
	confs      []*tagqv1.ConsumeConfirmation
	changed    chan struct{} // cap 1: credit freed, limits changed, a submit done
	confReady  chan struct{} // cap 1: confirmations queued
}

type pushed struct {
	d        tags.Delivery
	size     int64
	deadline time.Time // when its visibility ends unless extended: then it no longer counts
}

func (s *messageService) Consume(stream grpc.BidiStreamingServer[tagqv1.ConsumeRequest, tagqv1.ConsumeResponse]) error {
	ctx := stream.Context()
	first, err := stream.Recv()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil
		}
		return err
	}
	open := first.GetOpen()
	if open == nil {
		return fieldError(tags.ReasonInvalidArgumentRange, "open", "the first request of a Consume stream must carry open")
	}
	c := &consumer{svc: s, stream: stream, queue: open.GetQueue(), confirm: open.GetConfirm(),
		out: map[uint64]pushed{}, maxMsgs: DefaultMaxOutstandingMessages, maxBytes: DefaultMaxOutstandingBytes,
		changed: make(chan struct{}, 1), confReady: make(chan struct{}, 1)}
	if err := c.setLimits("open.", open.MaxOutstandingMessages, open.MaxOutstandingBytes); err != nil {
		return err
	}
	reader, err := s.store.OpenReader(ctx, open.GetQueue(), open.GetTag(), open.VisibilitySeconds)
	if err != nil {
		return withField(notFoundField(open, err), "open.")
	}
	defer reader.Close()
	c.tag = reader.Tag()
	s.streams.Add(1)
	defer s.streams.Add(-1)

	pushCtx, stopPush := context.WithCancel(ctx)
	defer stopPush()
	ended := make(chan error, 1) // the request side: nil when the client closed it, else why it failed
	go func() {
		err := c.handle(first, true)
		for err == nil {
			var req *tagqv1.ConsumeRequest
			if req, err = stream.Recv(); err == nil {
				err = c.handle(req, false)
			}
		}
		if errors.Is(err, io.EOF) {
			err = nil
			c.closedByClient.Store(true)
		}
		ended <- err
		stopPush()
	}()
	go func() {
		select {
		case <-s.drain:
			stopPush()
		case <-pushCtx.Done():
		}
	}()
	var confDone chan struct{}
	if c.confirm {
		confDone = make(chan struct{})
		go func() { defer close(confDone); c.sendConfirmations(pushCtx) }()
	}

	pushErr := c.push(pushCtx, reader)
	stopPush()
	if confDone != nil {
		<-confDone
	}
	switch {
	case ctx.Err() != nil: // broken: the client went away; the rest come back at their deadlines
		return ctx.Err()
	case pushErr != nil:
		c.giveBackAll()
		if named := notFoundField(open, pushErr); named != pushErr { // the tag went away: open.tag
			return withField(named, "open.")
		}
		return pushErr
	}
	select {
	case err := <-ended:
		if err != nil { // a request the stream cannot take
			c.giveBackAll()
			return err
		}
		// A clean close: settle what came, give back the rest at once.
		c.waitSettled(ctx, 0)
		c.giveBackAll()
		c.flushConfirmations()
		return nil
	default:
	}
	// Shutting down: no more pushes; settlements still come in for a short
	// grace, then the rest go back at once.
	c.waitSettled(ctx, s.drainGrace)
	c.giveBackAll()
	c.flushConfirmations()
	return statusWith(codes.Unavailable, ReasonServerShuttingDown, "the server is shutting down: consume again", "", nil)
}

// setLimits checks and applies outstanding limits (nil: keep).
// A flow may set 0 messages (pause); open needs at least 1.
func (c *consumer) setLimits(prefix string, msgs *int32, bytes *int64) error {
	least := int32(1)
	if prefix == "flow." {
		least = 0
	}
	if msgs != nil && (*msgs < least || *msgs > MaxMaxOutstandingMessages) {
		return fieldError(tags.ReasonInvalidArgumentRange, prefix+"max_outstanding_messages",
			"max_outstanding_messages must be between %d and %d, got %d", least, MaxMaxOutstandingMessages, *msgs)
	}
	if bytes != nil && (*bytes < MinMaxOutstandingBytes || *bytes > MaxMaxOutstandingBytes) {
		return fieldError(tags.ReasonInvalidArgumentRange, prefix+"max_outstanding_bytes",
			"max_outstanding_bytes must be between %d and %d, got %d", MinMaxOutstandingBytes, MaxMaxOutstandingBytes, *bytes)
	}
	c.mu.Lock()
	if msgs != nil {
		c.maxMsgs = int(*msgs)
	}
	if bytes != nil {
		c.maxBytes = *bytes
	}
	c.mu.Unlock()
	c.ping()
	return nil
}

func (c *consumer) confirmed() {
	select {
	case c.confReady <- struct{}{}:
	default:
	}
}

func (c *consumer) ping() {
	select {
	case c.changed <- struct{}{}:
	default:
	}
}

// room is how many messages the next receive may take (0: no credit).
func (c *consumer) room() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.expireLocked(time.Now())
	n := min(c.maxMsgs-len(c.out), tags.MaxBatchEntries)
	if n <= 0 || len(c.out) == 0 {
		return max(n, 0)
	}
	left := c.maxBytes - c.outBytes
	if left <= 0 {
		return 0
	}
	if c.avgSize > 0 {
		n = int(min(int64(n), max(left/c.avgSize, 1)))
	}
	return n
}

// waitCredit waits for credit: a settlement, a flow change, or the next
// outstanding deadline. False when ctx ended.
func (c *consumer) waitCredit(ctx context.Context) bool {
	var expiry <-chan time.Time
	if d := c.untilExpiry(); d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		expiry = t.C
	}
	select {
	case <-c.changed:
	case <-expiry:
	case <-ctx.Done():
		return false
	}
	return true
}

// untilExpiry is how long until the earliest outstanding deadline (0:
// none).
func (c *consumer) untilExpiry() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.nextExpiry.IsZero() {
		return 0
	}
	return max(time.Until(c.nextExpiry), time.Millisecond)
}

// expireLocked drops the deliveries whose visibility ended unsettled: the
// message is visible again (and may come back on this stream under a new
// delivery id), so it holds no credit. A settlement of such a delivery
// later is one of a delivery not outstanding.
func (c *consumer) expireLocked(now time.Time) {
	if !c.nextExpiry.IsZero() && now.Before(c.nextExpiry) {
		return
	}
	next := time.Time{}
	for id, p := range c.out {
		if !now.Before(p.deadline) {
			delete(c.out, id)
			c.outBytes -= p.size
			continue
		}
		if next.IsZero() || p.deadline.Before(next) {
			next = p.deadline
		}
	}
	c.nextExpiry = next
}

// push receives and pushes while there is credit, until ctx ends.
func (c *consumer) push(ctx context.Context, r tags.TagReader) error {
	for ctx.Err() == nil {
		n := c.room()
		if n == 0 {
			if !c.waitCredit(ctx) {
				return nil
			}
			continue
		}
		msgs, err := r.Receive(ctx, n)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, tags.ErrClosed) {
				return nil
			}
			return err
		}
		resp := c.admit(msgs)
		if len(resp.Messages) == 0 {
			continue
		}
		// Received as the push stopped: given back when the stream ends.
		// They are sent all the same when the client closed its side (it
		// reads until the end): a receive no client saw would still count,
		// one receive nearer the redrive policy.
		if ctx.Err() != nil && !c.closedByClient.Load() {
			continue
		}
		if err := c.send(resp); err != nil {
			return err
		}
	}
	return nil
}

// admit records received messages as outstanding under new delivery ids.
// Those over the byte limit (the receive was sized on the mean) go back
// at once.
func (c *consumer) admit(msgs []tags.Message) *tagqv1.ConsumeResponse {
	resp := &tagqv1.ConsumeResponse{Messages: make([]*tagqv1.ConsumeMessage, 0, len(msgs))}
	var back []tags.Settlement
	now := time.Now()
	c.mu.Lock()
	for i := range msgs {
		m := &msgs[i]
		size := int64(len(m.Body))
		if len(c.out) > 0 && c.outBytes+size > c.maxBytes {
			back = append(back, tags.Settlement{Kind: tags.SettleVisibility, Delivery: m.Delivery(c.queue)})
			continue
		}
		c.next++
		c.out[c.next] = pushed{d: m.Delivery(c.queue), size: size, deadline: now.Add(m.VisibleFor)}
		c.outBytes += size
		if c.avgSize == 0 {
			c.avgSize = max(size, 1)
		} else {
			c.avgSize += (size - c.avgSize) / 8
		}
		resp.Messages = append(resp.Messages, &tagqv1.ConsumeMessage{DeliveryId: c.next, Message: toMessage(*m)})
	}
	c.mu.Unlock()
	if len(back) > 0 {
		c.submit(back, nil)
	}
	return resp
}

func (c *consumer) send(resp *tagqv1.ConsumeResponse) error {
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	return c.stream.Send(resp)
}

// handle applies one request after the first: limits, then settlements. A
// request that is malformed ends the stream (its error); a settlement of a
// delivery id that is not outstanding is reported when confirmations are
// on, and otherwise ignored (S16).
func (c *consumer) handle(req *tagqv1.ConsumeRequest, first bool) error {
	if err := checkReadable(req); err != nil { // its decoding refused it (repeated.go)
		return err
	}
	if !first && req.GetOpen() != nil {
		return fieldError(tags.ReasonInvalidArgumentRange, "open", "open is allowed in the first request of a stream only")
	}
	if err := checkSettlements(req); err != nil {
		return err
	}
	if f := req.GetFlow(); f != nil {
		if err := c.setLimits("flow.", f.MaxOutstandingMessages, f.MaxOutstandingBytes); err != nil {
			return err
		}
	}
	var ops []tags.Settlement
	var ids []uint64
	var kinds []tagqv1.ConsumeOperation
	var unknown []*tagqv1.ConsumeConfirmation
	freed := false
	c.mu.Lock()
	take := func(id uint64, kind tagqv1.ConsumeOperation, settle bool) (tags.Delivery, bool) {
		p, ok := c.out[id]
		if !ok {
			unknown = append(unknown, &tagqv1.ConsumeConfirmation{DeliveryId: id, Operation: kind,
				Error: &tagqv1.StreamError{Code: int32(codes.InvalidArgument), Reason: tags.ReasonInvalidReceiptHandle,
					Message: fmt.Sprintf("delivery %d is not outstanding on this stream", id)}})
			return tags.Delivery{}, false
		}
		if settle {
			delete(c.out, id)
			c.outBytes -= p.size
			freed = true
		}
		ids = append(ids, id)
		kinds = append(kinds, kind)
		return p.d, true
	}
	for _, e := range req.GetExtends() {
		if p, ok := c.out[e.GetDeliveryId()]; ok {
			p.deadline = time.Now().Add(time.Duration(e.GetVisibilitySeconds()) * time.Second)
			c.out[e.GetDeliveryId()] = p
		}
		if d, ok := take(e.GetDeliveryId(), tagqv1.ConsumeOperation_CONSUME_OPERATION_EXTEND, false); ok {
			ops = append(ops, tags.Settlement{Kind: tags.SettleVisibility, Delivery: d, VisibilityMs: int64(e.GetVisibilitySeconds()) * 1000,
				Extend: true})
		}
	}
	for _, n := range req.GetNacks() {
		if d, ok := take(n.GetDeliveryId(), tagqv1.ConsumeOperation_CONSUME_OPERATION_NACK, true); ok {
			// No delay of its own: the queue's retry backoff (none: at once).
			ops = append(ops, tags.Settlement{Kind: tags.SettleVisibility, Delivery: d, VisibilityMs: int64(n.GetDelayMilliseconds()),
				Retry: n.DelayMilliseconds == nil})
		}
	}
	for _, x := range req.GetDeads() {
		if d, ok := take(x.GetDeliveryId(), tagqv1.ConsumeOperation_CONSUME_OPERATION_DEAD, true); ok {
			ops = append(ops, tags.Settlement{Kind: tags.SettleDead, Delivery: d, Reason: x.GetReason(), Description: x.GetDescription()})
		}
	}
	for _, a := range req.GetAcks() {
		if d, ok := take(a, tagqv1.ConsumeOperation_CONSUME_OPERATION_ACK, true); ok {
			ops = append(ops, tags.Settlement{Kind: tags.SettleAck, Delivery: d})
		}
	}
	if c.confirm && len(unknown) > 0 {
		c.confs = append(c.confs, unknown...)
	}
	c.mu.Unlock()
	if freed {
		c.ping()
	}
	if c.confirm && len(unknown) > 0 {
		c.confirmed()
	}
	if len(ops) == 0 {
		return nil
	}
	var done func(errs []error, err error)
	if c.confirm {
		done = func(errs []error, err error) {
			confs := make([]*tagqv1.ConsumeConfirmation, len(ids))
			for i, id := range ids {
				confs[i] = &tagqv1.ConsumeConfirmation{DeliveryId: id, Operation: kinds[i]}
				e := err
				if e == nil {
					e = errs[i]
				}
				if e != nil {
					confs[i].Error = toStreamError(e)
				}
			}
			c.mu.Lock()
			c.confs = append(c.confs, confs...)
			c.mu.Unlock()
			c.confirmed()
		}
	}
	c.submit(ops, done)
	return nil
}

// checkSettlements refuses a request whose values are out of range, before
// any of it applies.
func checkSettlements(req *tagqv1.ConsumeRequest) error {
	for i, n := range req.GetNacks() {
		if d := n.GetDelayMilliseconds(); d < 0 || d > maxNackDelayMs {
			return fieldError(tags.ReasonInvalidArgumentRange, fmt.Sprintf("nacks[%d].delay_milliseconds", i),
				"delay_milliseconds must be between 0 and %d, got %d", maxNackDelayMs, d)
		}
	}
	for i, e := range req.GetExtends() {
		if v := e.GetVisibilitySeconds(); v < 1 || v > tags.MaxVisibilitySeconds {
			return fieldError(tags.ReasonInvalidArgumentRange, fmt.Sprintf("extends[%d].visibility_seconds", i),
				"visibility_seconds must be between 1 and %d, got %d", tags.MaxVisibilitySeconds, v)
		}
	}
	for i, d := range req.GetDeads() {
		if e := tags.CheckSettlement(tags.Settlement{Kind: tags.SettleDead, Reason: d.GetReason(), Description: d.GetDescription()}); e != nil {
			return withField(e, fmt.Sprintf("deads[%d].", i))
		}
	}
	return nil
}

// submit hands settlements to the server's settler, counting them until
// they are durable; done (may be nil) gets their outcome.
func (c *consumer) submit(ops []tags.Settlement, done func(errs []error, err error)) {
	c.mu.Lock()
	c.submits++
	c.mu.Unlock()
	c.svc.settler.submit(c.queue, c.tag, ops, func(errs []error, err error) {
		if done != nil {
			done(errs, err)
		}
		c.mu.Lock()
		c.submits--
		c.mu.Unlock()
		c.ping()
	})
}

// waitSettled waits until every submitted settlement is durable and, with
// a grace, until nothing is outstanding or the grace ends.
func (c *consumer) waitSettled(ctx context.Context, grace time.Duration) {
	var expire <-chan time.Time
	if grace > 0 {
		t := time.NewTimer(grace)
		defer t.Stop()
		expire = t.C
	}
	for {
		c.mu.Lock()
		done := c.submits == 0 && (grace <= 0 || len(c.out) == 0)
		c.mu.Unlock()
		if done {
			return
		}
		select {
		case <-c.changed:
		case <-expire:
			expire, grace = nil, 0 // now only wait for the submits
		case <-ctx.Done():
			return
		}
	}
}

// giveBackAll makes every outstanding message visible again at once and
// waits until that is durable.
func (c *consumer) giveBackAll() {
	c.mu.Lock()
	ops := make([]tags.Settlement, 0, len(c.out))
	for id, p := range c.out {
		ops = append(ops, tags.Settlement{Kind: tags.SettleVisibility, Delivery: p.d})
		delete(c.out, id)
	}
	c.outBytes = 0
	c.mu.Unlock()
	if len(ops) == 0 {
		return
	}
	done := make(chan struct{})
	c.svc.settler.submit(c.queue, c.tag, ops, func([]error, error) { close(done) })
	<-done
}

// sendConfirmations sends queued confirmations until ctx ends.
func (c *consumer) sendConfirmations(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.confReady:
		}
		if c.flushConfirmations() != nil {
			return
		}
	}
}

func (c *consumer) flushConfirmations() error {
	if !c.confirm {
		return nil
	}
	c.mu.Lock()
	confs := c.confs
	c.confs = nil
	c.mu.Unlock()
	if len(confs) == 0 {
		return nil
	}
	return c.send(&tagqv1.ConsumeResponse{Confirmations: confs})
}

// toStreamError is err as a StreamError: its code, ErrorInfo reason and
// field, and message.
func toStreamError(err error) *tagqv1.StreamError {
	st := status.Convert(toStatus(err))
	out := &tagqv1.StreamError{Code: int32(st.Code()), Message: st.Message()}
	if info := errorInfo(st); info != nil {
		out.Reason = info.GetReason()
		out.Field = info.GetMetadata()["field"]
	}
	return out
}
