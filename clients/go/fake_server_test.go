package tagq_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	tagq "github.com/tagq/tagq/clients/go"
	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
)

// Tests of the client's timing run on driven time: inside a
// testing/synctest bubble, where the clock is fake and moves only when
// every goroutine of the bubble is durably blocked. The Consumer and the
// Publisher start all their goroutines and timers from the caller's
// goroutine, so created in the bubble they run on its clock. Real TCP
// cannot block durably, so the server is a fake MessageService in the same
// bubble, reached over net.Pipe (channel-based; grpc's bufconn, on
// sync.Cond, works too). It records what the client sent and at what fake
// instant, so that the tests assert exact times and take no wall time.

// pipeListener is a net.Listener whose connections are net.Pipe pairs
// made by its dial; its cut breaks those open now (a network failure).
type pipeListener struct {
	links
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "pipe" }

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

func (l *pipeListener) dial(ctx context.Context, _ string) (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case l.conns <- server:
	case <-l.done:
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	l.add(client, server)
	return client, nil
}

// fakeServer is an in-process MessageService (the calls the client's
// Consumer and Publisher make) that records them with the bubble's clock.
type fakeServer struct {
	tagqv1.UnimplementedMessageServiceServer
	start time.Time
	ln    *pipeListener

	mu        sync.Mutex
	log       []string
	consumes  int   // Consume streams opened so far
	publishes int   // Publish streams opened so far
	msgs      int   // messages pushed so far
	refuse    error // when set, how every new stream ends at once
	streams   chan *fakeConsume
}

// newFakeServer starts a fake server in the bubble; it stops when the test
// ends.
func newFakeServer(t *testing.T) *fakeServer {
	t.Helper()
	f := &fakeServer{start: time.Now(), ln: newPipeListener(), streams: make(chan *fakeConsume, 64)}
	s := grpc.NewServer()
	tagqv1.RegisterMessageServiceServer(s, f)
	served := make(chan struct{})
	go func() { defer close(served); _ = s.Serve(f.ln) }()
	t.Cleanup(func() { s.Stop(); <-served })
	return f
}

// dial is a Client of the fake, closed when the test ends.
func (f *fakeServer) dial(t *testing.T) *tagq.Client {
	t.Helper()
	c, err := tagq.Dial("passthrough:///fake", grpc.WithContextDialer(f.ln.dial),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// inBubble runs test in a synctest bubble with a fake server and a client
// of it: time.Now there is the fake's start plus the time test has let
// pass (the bubble's clock starts at midnight, 1 January 2000 UTC).
func inBubble(t *testing.T, test func(t *testing.T, f *fakeServer, c *tagq.Client)) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		f := newFakeServer(t)
		test(t, f, f.dial(t))
	})
}

// bounded is a context that ends after wait, on the bubble's clock: a call
// waiting on it fails rather than hangs.
func bounded(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	t.Cleanup(cancel)
	return ctx
}

// now is the time since the fake started.
func (f *fakeServer) now() time.Duration { return time.Since(f.start) }

// note records an event at the current instant: "<since start> <kind>
// <details>", kind as "ack#2" (on the second Consume stream) or "delete".
func (f *fakeServer) note(format string, args ...any) {
	e := fmt.Sprintf("%v ", f.now()) + fmt.Sprintf(format, args...)
	f.mu.Lock()
	f.log = append(f.log, e)
	f.mu.Unlock()
}

// events are the records of the given kinds (without the stream number),
// in order.
func (f *fakeServer) events(kinds ...string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := []string{}
	for _, e := range f.log {
		kind := strings.Fields(e)[1]
		kind, _, _ = strings.Cut(kind, "#")
		for _, k := range kinds {
			if kind == k {
				out = append(out, e)
			}
		}
	}
	return out
}

// refuseStreams makes every stream opened from now on end at once with
// err; nil accepts them again.
func (f *fakeServer) refuseStreams(err error) {
	f.mu.Lock()
	f.refuse = err
	f.mu.Unlock()
}

var errUnavailable = status.Error(codes.Unavailable, "the fake is unavailable")

// deadline says how long a unary call has, as "within 1s" or "no deadline".
func deadline(ctx context.Context) string {
	if d, ok := ctx.Deadline(); ok {
		return fmt.Sprintf("within %v", time.Until(d))
	}
	return "no deadline"
}

func (f *fakeServer) DeleteMessage(ctx context.Context, r *tagqv1.DeleteMessageRequest) (*tagqv1.DeleteMessageResponse, error) {
	f.note("delete %s %s", r.GetReceiptHandle(), deadline(ctx))
	return &tagqv1.DeleteMessageResponse{}, nil
}

func (f *fakeServer) ChangeMessageVisibility(ctx context.Context, r *tagqv1.ChangeMessageVisibilityRequest) (*tagqv1.ChangeMessageVisibilityResponse, error) {
	f.note("visibility %s %ds %s", r.GetReceiptHandle(), r.GetVisibilitySeconds(), deadline(ctx))
	return &tagqv1.ChangeMessageVisibilityResponse{}, nil
}

func (f *fakeServer) DeadMessage(ctx context.Context, r *tagqv1.DeadMessageRequest) (*tagqv1.DeadMessageResponse, error) {
	f.note("dead-letter %s %s %s", r.GetReceiptHandle(), r.GetReason(), deadline(ctx))
	return &tagqv1.DeadMessageResponse{}, nil
}

// fakeConsume is an open Consume stream, for the test to push messages on
// or end.
type fakeConsume struct {
	f    *fakeServer
	n    int // the stream's number, from 1
	out  chan *tagqv1.ConsumeResponse
	end  chan error
	next uint64 // the last delivery id
}

// Consume records the open request and every settlement and flow change,
// confirms acks, nacks and dead-letterings at once, pushes what the test
// pushes, and ends OK when the client closes its side (as tagqd does,
// after the last confirmations).
func (f *fakeServer) Consume(st grpc.BidiStreamingServer[tagqv1.ConsumeRequest, tagqv1.ConsumeResponse]) error {
	req, err := st.Recv()
	if err != nil {
		return err
	}
	f.mu.Lock()
	f.consumes++
	cs := &fakeConsume{f: f, n: f.consumes, out: make(chan *tagqv1.ConsumeResponse, 64), end: make(chan error, 1)}
	refuse := f.refuse
	f.mu.Unlock()
	o := req.GetOpen()
	f.note("open#%d %s/%s credit %d vis %ds", cs.n, o.GetQueue(), o.GetTag(), o.GetMaxOutstandingMessages(), o.GetVisibilitySeconds())
	if refuse != nil {
		return refuse
	}
	f.streams <- cs
	ctx := st.Context()
	ended := make(chan error, 1)
	go func() {
		for {
			req, err := st.Recv()
			if err != nil {
				ended <- err
				return
			}
			if conf := cs.record(req); len(conf) > 0 {
				select {
				case cs.out <- &tagqv1.ConsumeResponse{Confirmations: conf}:
				case <-ctx.Done():
				}
			}
		}
	}()
	for {
		select {
		case resp := <-cs.out:
			if err := st.Send(resp); err != nil {
				return err
			}
		case err := <-ended:
			if !errors.Is(err, io.EOF) {
				f.note("broken#%d", cs.n)
				return err
			}
			// What the reader queued before the end goes out first.
			for {
				select {
				case resp := <-cs.out:
					if err := st.Send(resp); err != nil {
						return err
					}
				default:
					f.note("close#%d", cs.n)
					return nil
				}
			}
		case err := <-cs.end:
			f.note("end#%d", cs.n)
			return err
		}
	}
}

// record notes a request of the stream and returns its confirmations.
func (cs *fakeConsume) record(req *tagqv1.ConsumeRequest) []*tagqv1.ConsumeConfirmation {
	var conf []*tagqv1.ConsumeConfirmation
	confirm := func(id uint64, op tagqv1.ConsumeOperation) {
		conf = append(conf, &tagqv1.ConsumeConfirmation{DeliveryId: id, Operation: op})
	}
	for _, id := range req.GetAcks() {
		cs.f.note("ack#%d d%d", cs.n, id)
		confirm(id, tagqv1.ConsumeOperation_CONSUME_OPERATION_ACK)
	}
	for _, n := range req.GetNacks() {
		cs.f.note("nack#%d d%d %v", cs.n, n.GetDeliveryId(), time.Duration(n.GetDelayMilliseconds())*time.Millisecond)
		confirm(n.GetDeliveryId(), tagqv1.ConsumeOperation_CONSUME_OPERATION_NACK)
	}
	for _, d := range req.GetDeads() {
		cs.f.note("dead#%d d%d %s", cs.n, d.GetDeliveryId(), d.GetReason())
		confirm(d.GetDeliveryId(), tagqv1.ConsumeOperation_CONSUME_OPERATION_DEAD)
	}
	if len(req.GetExtends()) > 0 {
		var ext []string
		for _, e := range req.GetExtends() {
			ext = append(ext, fmt.Sprintf("d%d %ds", e.GetDeliveryId(), e.GetVisibilitySeconds()))
		}
		// One request renews every held message: sorted for the record.
		slices.Sort(ext)
		cs.f.note("extend#%d %s", cs.n, strings.Join(ext, ", "))
	}
	if fl := req.GetFlow(); fl != nil {
		cs.f.note("flow#%d %d", cs.n, fl.GetMaxOutstandingMessages())
	}
	return conf
}

// push sends one message per body (receive count 1) and returns their
// delivery ids; message ids are m1, m2, … over the whole fake, receipt
// handles rh-m1, rh-m2, ….
func (cs *fakeConsume) push(bodies ...string) []uint64 {
	var msgs []*tagqv1.Message
	for _, b := range bodies {
		msgs = append(msgs, &tagqv1.Message{Body: []byte(b), ReceiveCount: 1})
	}
	return cs.pushMessages(msgs...)
}

// pushMessages sends msgs, giving each its message id and receipt handle.
func (cs *fakeConsume) pushMessages(msgs ...*tagqv1.Message) []uint64 {
	resp := &tagqv1.ConsumeResponse{}
	var ids []uint64
	for _, m := range msgs {
		cs.f.mu.Lock()
		cs.f.msgs++
		m.MessageId = fmt.Sprintf("m%d", cs.f.msgs)
		cs.f.mu.Unlock()
		m.ReceiptHandle = "rh-" + m.MessageId
		cs.next++
		ids = append(ids, cs.next)
		resp.Messages = append(resp.Messages, &tagqv1.ConsumeMessage{DeliveryId: cs.next, Message: m})
	}
	cs.out <- resp
	return ids
}

// fail ends the stream with err (a status, such as errUnavailable).
func (cs *fakeConsume) fail(err error) { cs.end <- err }

// stream waits for the next accepted Consume stream.
func (f *fakeServer) stream(t *testing.T) *fakeConsume {
	t.Helper()
	return recv(t, f.streams, "a Consume stream")
}

// Publish records every frame and answers it at once, each message stored
// under the id "<queue>/<body>".
func (f *fakeServer) Publish(st grpc.BidiStreamingServer[tagqv1.PublishRequest, tagqv1.PublishResponse]) error {
	f.mu.Lock()
	f.publishes++
	n := f.publishes
	refuse := f.refuse
	f.mu.Unlock()
	f.note("publish#%d", n)
	if refuse != nil {
		return refuse
	}
	for {
		req, err := st.Recv()
		if errors.Is(err, io.EOF) {
			f.note("publish-close#%d", n)
			return nil
		}
		if err != nil {
			return err
		}
		resp := &tagqv1.PublishResponse{Seq: req.GetSeq()}
		var bodies []string
		for _, e := range req.GetEntries() {
			bodies = append(bodies, string(e.GetBody()))
			resp.Successful = append(resp.Successful, &tagqv1.SendMessageBatchResult{Id: e.GetId(),
				MessageId: req.GetQueue() + "/" + string(e.GetBody())})
		}
		f.note("frame#%d %s %s", n, req.GetQueue(), strings.Join(bodies, ","))
		if err := st.Send(resp); err != nil {
			return err
		}
	}
}

// quiet is a logger for tests that expect warnings (reconnects) and do
// not read them.
var quiet = slog.New(slog.DiscardHandler)
