package tagq_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/embedded"
	"go.opentelemetry.io/otel/trace/noop"

	tagq "github.com/tagq/tagq/clients/go"
)

// recorder is a tracer provider that keeps the spans started with it (the
// client depends on OpenTelemetry's API only, so the test needs no SDK).
type recorder struct {
	embedded.TracerProvider
	mu    sync.Mutex
	spans []*recSpan
}

type recTracer struct {
	embedded.Tracer
	r *recorder
}

type recSpan struct {
	noop.Span
	name  string
	cfg   trace.SpanConfig
	sc    trace.SpanContext
	mu    sync.Mutex
	ended bool
	code  codes.Code
}

func (r *recorder) Tracer(string, ...trace.TracerOption) trace.Tracer { return recTracer{r: r} }

func (t recTracer) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	t.r.mu.Lock() // spans may start on several goroutines (a Consumer's workers)
	defer t.r.mu.Unlock()
	s := &recSpan{name: name, cfg: trace.NewSpanStartConfig(opts...), sc: trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{9}, SpanID: trace.SpanID{byte(len(t.r.spans) + 1)}, TraceFlags: trace.FlagsSampled})}
	t.r.spans = append(t.r.spans, s)
	return trace.ContextWithSpan(ctx, s), s
}

func (s *recSpan) SpanContext() trace.SpanContext { return s.sc }
func (s *recSpan) IsRecording() bool              { return true }
func (s *recSpan) SetStatus(c codes.Code, _ string) {
	s.mu.Lock()
	s.code = c
	s.mu.Unlock()
}
func (s *recSpan) End(...trace.SpanEndOption) {
	s.mu.Lock()
	s.ended = true
	s.mu.Unlock()
}

// useTracing sets OpenTelemetry's globals for one test (not parallel).
func useTracing(t *testing.T) *recorder {
	r := &recorder{}
	prevTP, prevProp := otel.GetTracerProvider(), otel.GetTextMapPropagator()
	otel.SetTracerProvider(r)
	otel.SetTextMapPropagator(propagation.TraceContext{})
	t.Cleanup(func() { otel.SetTracerProvider(prevTP); otel.SetTextMapPropagator(prevProp) })
	return r
}

// Not parallel: OpenTelemetry's globals.
// A send from a traced context carries its trace context in the message's
// attributes (unless the message sets it), and a Consumer handles the
// message in a consumer span linked to the producer's.
func TestTracing_SendCarriesTheTraceAndConsumersLinkToIt(t *testing.T) {
	rec := useTracing(t)
	c := client(t)
	queue(t, c, "traced", tagq.QueueOptions{})
	producer := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{0x4b, 0xf9}, SpanID: trace.SpanID{0xf0, 0x67},
		TraceFlags: trace.FlagsSampled})
	ctx := trace.ContextWithSpanContext(context.Background(), producer)
	const want = "00-4bf90000000000000000000000000000-f067000000000000-01"

	_, err := c.Send(ctx, "traced", tagq.Outgoing{Body: []byte("one"), Attributes: map[string]string{"k": "v"}})
	require.NoError(t, err)
	_, err = c.SendBatch(ctx, "traced", tagq.Outgoing{Body: []byte("two")},
		tagq.Outgoing{Body: []byte("own"), Attributes: map[string]string{"traceparent": "00-11111111111111111111111111111111-2222222222222222-01"}})
	require.NoError(t, err)
	_, err = c.Send(context.Background(), "traced", tagq.Outgoing{Body: []byte("untraced")})
	require.NoError(t, err)

	got, err := c.Peek(context.Background(), "traced", "", 10)
	require.NoError(t, err)
	require.Len(t, got, 4)
	byBody := map[string]*tagq.Message{}
	for _, m := range got {
		byBody[string(m.GetBody())] = m
	}
	require.Equal(t, want, byBody["one"].GetAttributes()["traceparent"].GetStringValue())
	require.Equal(t, "v", byBody["one"].GetAttributes()["k"].GetStringValue())
	require.Equal(t, want, byBody["two"].GetAttributes()["traceparent"].GetStringValue())
	require.Equal(t, "00-11111111111111111111111111111111-2222222222222222-01",
		byBody["own"].GetAttributes()["traceparent"].GetStringValue(), "the message's own value wins")
	require.NotContains(t, byBody["untraced"].GetAttributes(), "traceparent")
	require.Equal(t, producer.TraceID(), tagq.ProducerSpanContext(byBody["one"]).TraceID())
	require.False(t, tagq.ProducerSpanContext(byBody["untraced"]).IsValid())

	// The consumer: "one" fails once, the rest succeed.
	handled := make(chan string, 8)
	var failedOnce sync.Once
	stop := run(t, c.NewConsumer(tagq.ConsumerConfig{Queue: "traced", Wait: time.Second,
		Backoff: func(int) time.Duration { return 0 }},
		tagq.HandlerFunc(func(ctx context.Context, m *tagq.Message) error {
			span := trace.SpanFromContext(ctx)
			require.True(t, span.SpanContext().IsValid(), "the handler runs in the consumer span")
			fail := false
			if string(m.GetBody()) == "one" {
				failedOnce.Do(func() { fail = true })
			}
			handled <- string(m.GetBody())
			if fail {
				return errors.New("try again")
			}
			return nil
		})))
	seen := map[string]int{}
	for len(seen) < 4 || seen["one"] < 2 {
		select {
		case b := <-handled:
			seen[b]++
		case <-time.After(wait):
			t.Fatalf("handled %v", seen)
		}
	}
	stop()

	rec.mu.Lock()
	defer rec.mu.Unlock()
	require.Len(t, rec.spans, 5)
	var linked, failed int
	for _, s := range rec.spans {
		require.Equal(t, "tagq process traced", s.name)
		require.Equal(t, trace.SpanKindConsumer, s.cfg.SpanKind())
		s.mu.Lock()
		require.True(t, s.ended)
		if s.code == codes.Error {
			failed++
		}
		s.mu.Unlock()
		for _, l := range s.cfg.Links() {
			if l.SpanContext.TraceID() == producer.TraceID() && l.SpanContext.SpanID() == producer.SpanID() {
				linked++
			}
		}
	}
	require.Equal(t, 3, linked, "one (twice) and two link to the producer; own and untraced do not")
	require.Equal(t, 1, failed)
}
