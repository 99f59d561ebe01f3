package tagq_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"

	tagq "github.com/tagq/tagq/clients/go"
)

func get(t *testing.T, r *tagq.PublishResult) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	id, err := r.Get(ctx)
	require.NotErrorIs(t, err, context.DeadlineExceeded, "no result in time")
	return id, err
}

func stopPublisher(t *testing.T, p *tagq.Publisher) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	require.NoError(t, p.Stop(ctx))
}

// drain receives every available message of a queue's default tag and
// returns their bodies, counted.
func drain(t *testing.T, c *tagq.Client, q string) map[string]int {
	t.Helper()
	bodies := map[string]int{}
	for {
		msgs, err := c.Receive(context.Background(), q, tagq.ReceiveOptions{Max: 100, Visibility: time.Minute})
		require.NoError(t, err)
		if len(msgs) == 0 {
			return bodies
		}
		for _, m := range msgs {
			bodies[string(m.GetBody())]++
		}
	}
}

// frameCounter counts Publish frames sent and answered through a client
// interceptor, to see how many are in flight at once.
type frameCounter struct {
	inflight, peak atomic.Int32
	frames         atomic.Int32
}

func (fc *frameCounter) intercept(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string,
	streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	s, err := streamer(ctx, desc, cc, method, opts...)
	if err != nil || !strings.HasSuffix(method, "/Publish") {
		return s, err
	}
	return &countedStream{ClientStream: s, fc: fc}, nil
}

type countedStream struct {
	grpc.ClientStream
	fc *frameCounter
}

func (s *countedStream) SendMsg(m any) error {
	n := s.fc.inflight.Add(1)
	s.fc.frames.Add(1)
	for p := s.fc.peak.Load(); n > p && !s.fc.peak.CompareAndSwap(p, n); p = s.fc.peak.Load() {
	}
	return s.ClientStream.SendMsg(m)
}

func (s *countedStream) RecvMsg(m any) error {
	err := s.ClientStream.RecvMsg(m)
	if err == nil {
		s.fc.inflight.Add(-1)
	}
	return err
}

// Many goroutines publish at once: every result has its own message id,
// every message arrives, in frames of many messages, a few in flight at
// once (never more than MaxInFlight).
func TestPublisher_ManyGoroutines(t *testing.T) {
	const goroutines, each = 8, 250
	var fc frameCounter
	c, err := tagq.Dial(addr, grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithStreamInterceptor(fc.intercept))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	queue(t, c, "p-many", tagq.QueueOptions{})
	p := c.NewPublisher(tagq.PublisherConfig{MaxInFlight: 3})
	results := make([][]*tagq.PublishResult, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				results[g] = append(results[g], p.Publish(context.Background(), "p-many", tagq.Outgoing{Body: fmt.Appendf(nil, "g%d-%d", g, i)}))
			}
		})
	}
	wg.Wait()
	ids := map[string]bool{}
	for g := range results {
		for _, r := range results[g] {
			id, err := get(t, r)
			require.NoError(t, err)
			require.NotEmpty(t, id)
			require.False(t, ids[id], "message id %s given twice", id)
			ids[id] = true
		}
	}
	stopPublisher(t, p)
	require.Len(t, ids, goroutines*each)
	bodies := drain(t, c, "p-many")
	require.Len(t, bodies, goroutines*each)
	for b, n := range bodies {
		require.Equal(t, 1, n, "%s stored once", b)
	}
	require.Less(t, int(fc.frames.Load()), goroutines*each/5, "messages go in frames of many")
	require.LessOrEqual(t, fc.peak.Load(), int32(3), "frames in flight")
	require.Greater(t, fc.peak.Load(), int32(1), "frames are pipelined")
}

// A frame to a queue that does not exist fails as a whole: every message of
// it gets QUEUE_NOT_FOUND; frames to other queues are not affected.
func TestPublisher_MissingQueueFailsEveryMessageOfItsFrame(t *testing.T) {
	c := client(t)
	queue(t, c, "p-there", tagq.QueueOptions{})
	p := c.NewPublisher(tagq.PublisherConfig{})
	var missing []*tagq.PublishResult
	for i := range 5 {
		missing = append(missing, p.Publish(context.Background(), "p-not-there", tagq.Outgoing{Body: fmt.Appendf(nil, "%d", i)}))
	}
	ok := p.Publish(context.Background(), "p-there", tagq.Outgoing{Body: []byte("fine")})
	for _, r := range missing {
		_, err := get(t, r)
		var e *tagq.Error
		require.ErrorAs(t, err, &e)
		require.Equal(t, "QUEUE_NOT_FOUND", e.Reason)
		require.Equal(t, codes.NotFound, e.Code)
	}
	id, err := get(t, ok)
	require.NoError(t, err)
	require.NotEmpty(t, id)
	stopPublisher(t, p)
}

// An entry the server refuses fails alone, with the reason and field a
// unary SendMessage would give; the rest of its frame is stored.
func TestPublisher_EntryErrorsAreErrors(t *testing.T) {
	c := client(t)
	queue(t, c, "p-small", tagq.QueueOptions{MaxMessageBytes: 1024})
	p := c.NewPublisher(tagq.PublisherConfig{})
	big := p.Publish(context.Background(), "p-small", tagq.Outgoing{Body: make([]byte, 2000)})
	small := p.Publish(context.Background(), "p-small", tagq.Outgoing{Body: []byte("ok")})
	_, err := get(t, big)
	var e *tagq.Error
	require.ErrorAs(t, err, &e)
	_, unary := c.Send(context.Background(), "p-small", tagq.Outgoing{Body: make([]byte, 2000)})
	var u *tagq.Error
	require.ErrorAs(t, unary, &u)
	require.Equal(t, u.Reason, e.Reason)
	require.Equal(t, u.Field, e.Field)
	require.Equal(t, u.Code, e.Code)
	_, err = get(t, small)
	require.NoError(t, err)
	stopPublisher(t, p)
}

// Stop sends what waits for its frame to fill (MaxDelay is a minute here)
// and returns once it is answered; Publish after Stop fails.
func TestPublisher_StopFlushes(t *testing.T) {
	c := client(t)
	queue(t, c, "p-stop", tagq.QueueOptions{})
	p := c.NewPublisher(tagq.PublisherConfig{MaxDelay: time.Minute})
	var rs []*tagq.PublishResult
	for i := range 10 {
		rs = append(rs, p.Publish(context.Background(), "p-stop", tagq.Outgoing{Body: fmt.Appendf(nil, "%d", i)}))
	}
	for _, r := range rs {
		select {
		case <-r.Ready():
			t.Fatal("sent before the frame filled or MaxDelay passed")
		default:
		}
	}
	stopPublisher(t, p)
	for _, r := range rs {
		select {
		case <-r.Ready():
		default:
			t.Fatal("Stop returned before every message had its result")
		}
		_, err := get(t, r)
		require.NoError(t, err)
	}
	require.Len(t, drain(t, c, "p-stop"), 10)
	_, err := get(t, p.Publish(context.Background(), "p-stop", tagq.Outgoing{Body: []byte("late")}))
	require.ErrorIs(t, err, tagq.ErrPublisherStopped)
	stopPublisher(t, p) // twice is fine
}

func TestPublisher_Flush(t *testing.T) {
	c := client(t)
	queue(t, c, "p-flush", tagq.QueueOptions{})
	p := c.NewPublisher(tagq.PublisherConfig{MaxDelay: time.Minute})
	defer stopPublisher(t, p)
	r := p.Publish(context.Background(), "p-flush", tagq.Outgoing{Body: []byte("x")})
	require.NoError(t, within(t, "Flush", func() error { return p.Flush(context.Background()) }))
	select {
	case <-r.Ready():
	default:
		t.Fatal("Flush returned before the message had its result")
	}
	_, err := get(t, r)
	require.NoError(t, err)
}

// logRecorder keeps the messages of the records logged to it.
type logRecorder struct {
	mu   sync.Mutex
	msgs []string
}

func (l *logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (l *logRecorder) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.msgs = append(l.msgs, r.Message)
	return nil
}
func (l *logRecorder) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logRecorder) WithGroup(string) slog.Handler      { return l }
func (l *logRecorder) has(s string) bool                  { return l.count(s) > 0 }

// count is how many messages logged contain s.
func (l *logRecorder) count(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, m := range l.msgs {
		if strings.Contains(m, s) {
			n++
		}
	}
	return n
}

// Frames in flight when the stream breaks are sent again on a new stream:
// every message gets an id and is stored (at least once).
func TestPublisher_ResendsWhenTheStreamBreaks(t *testing.T) {
	c := client(t)
	queue(t, c, "p-resend", tagq.QueueOptions{})
	px := newProxy(t, addr)
	logs := &logRecorder{}
	p := dial(t, px.Addr()).NewPublisher(tagq.PublisherConfig{MaxMessages: 10, MaxInFlight: 8, Logger: slog.New(logs)})
	var all []*tagq.PublishResult
	for round := 0; round < 20 && !logs.has("sending its unanswered frames again"); round++ {
		var rs []*tagq.PublishResult
		for i := range 400 {
			rs = append(rs, p.Publish(context.Background(), "p-resend", tagq.Outgoing{Body: fmt.Appendf(nil, "r%d-%d", round, i)}))
		}
		_, err := get(t, rs[50]) // some frames answered, more in flight
		require.NoError(t, err)
		px.cut()
		all = append(all, rs...)
	}
	require.True(t, logs.has("sending its unanswered frames again"), "a stream broke with frames in flight")
	want := map[string]bool{}
	for _, r := range all {
		id, err := get(t, r)
		require.NoError(t, err)
		want[id] = true
	}
	stopPublisher(t, p)
	require.Len(t, want, len(all), "an id per message")
	bodies := drain(t, c, "p-resend")
	require.Len(t, bodies, len(all), "every message stored (some maybe twice)")
}

// With DeduplicateRetries, frames sent again after the stream broke are
// answered, not stored again: every message is stored exactly once, under
// the id its result carries.
func TestPublisher_DeduplicateRetriesStoresOnce(t *testing.T) {
	c := client(t)
	queue(t, c, "p-dedup", tagq.QueueOptions{})
	px := newProxy(t, addr)
	logs := &logRecorder{}
	p := dial(t, px.Addr()).NewPublisher(tagq.PublisherConfig{MaxMessages: 10, MaxInFlight: 8, Logger: slog.New(logs),
		DeduplicateRetries: true})
	var all []*tagq.PublishResult
	for round := 0; round < 20 && !logs.has("sending its unanswered frames again"); round++ {
		var rs []*tagq.PublishResult
		for i := range 400 {
			rs = append(rs, p.Publish(context.Background(), "p-dedup", tagq.Outgoing{Body: fmt.Appendf(nil, "r%d-%d", round, i)}))
		}
		_, err := get(t, rs[50])
		require.NoError(t, err)
		px.cut()
		all = append(all, rs...)
	}
	require.True(t, logs.has("sending its unanswered frames again"), "a stream broke with frames in flight")
	ids := map[string]bool{}
	for _, r := range all {
		id, err := get(t, r)
		require.NoError(t, err)
		ids[id] = true
	}
	stopPublisher(t, p)
	require.Len(t, ids, len(all), "an id per message")
	stored := map[string]bool{}
	for {
		msgs, err := c.Receive(context.Background(), "p-dedup", tagq.ReceiveOptions{Max: 100, Visibility: time.Minute})
		require.NoError(t, err)
		if len(msgs) == 0 {
			break
		}
		for _, m := range msgs {
			require.False(t, stored[string(m.GetBody())], "%s stored twice", m.GetBody())
			stored[string(m.GetBody())] = true
			require.True(t, ids[m.GetMessageId()], "stored under an id no result carries")
		}
	}
	require.Len(t, stored, len(all), "every message stored once")
}

// Client.Send and SendBatch carry DeduplicationID: a repeat answers with
// the first message's id and stores nothing.
func TestClient_SendWithDeduplicationID(t *testing.T) {
	c := client(t)
	queue(t, c, "c-dedup", tagq.QueueOptions{})
	ctx := context.Background()
	first, err := c.Send(ctx, "c-dedup", tagq.Outgoing{Body: []byte("a"), DeduplicationID: "order-7"})
	require.NoError(t, err)
	again, err := c.Send(ctx, "c-dedup", tagq.Outgoing{Body: []byte("a"), DeduplicationID: "order-7"})
	require.NoError(t, err)
	require.Equal(t, first, again)
	ids, err := c.SendBatch(ctx, "c-dedup", tagq.Outgoing{Body: []byte("a"), DeduplicationID: "order-7"},
		tagq.Outgoing{Body: []byte("b")})
	require.NoError(t, err)
	require.Equal(t, first, ids[0])
	require.NotEqual(t, first, ids[1])
	require.Equal(t, map[string]int{"a": 1, "b": 1}, drain(t, c, "c-dedup"))
}
