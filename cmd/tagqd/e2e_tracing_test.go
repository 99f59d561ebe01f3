package main

import (
	"context"
	"encoding/hex"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
)

// collector is an OTLP trace collector that keeps what it receives.
type collector struct {
	collectortrace.UnimplementedTraceServiceServer
	mu    sync.Mutex
	spans []*tracepb.ResourceSpans
}

func (c *collector) Export(_ context.Context, req *collectortrace.ExportTraceServiceRequest) (*collectortrace.ExportTraceServiceResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.spans = append(c.spans, req.GetResourceSpans()...)
	return &collectortrace.ExportTraceServiceResponse{}, nil
}

// find returns the service name and the span called name, if received.
func (c *collector) find(name string) (string, *tracepb.Span) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, rs := range c.spans {
		service := ""
		for _, a := range rs.GetResource().GetAttributes() {
			if a.GetKey() == "service.name" {
				service = a.GetValue().GetStringValue()
			}
		}
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				if s.GetName() == name {
					return service, s
				}
			}
		}
	}
	return "", nil
}

// Not parallel: the OTEL_* variables reach tagqd through the environment.
// tagqd exports a server span per call to the OTLP endpoint they name,
// continuing the caller's trace.
func TestE2E_TracesToAnOTLPCollector(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	col := &collector{}
	gs := grpc.NewServer()
	collectortrace.RegisterTraceServiceServer(gs, col)
	go func() { _ = gs.Serve(lis) }()
	t.Cleanup(gs.Stop)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+lis.Addr().String())
	t.Setenv("OTEL_EXPORTER_OTLP_INSECURE", "true")
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
	t.Setenv("OTEL_SERVICE_NAME", "tagqd-under-test")

	d := start(t, backend{name: "embedded"})
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	ctx := metadata.AppendToOutgoingContext(context.Background(), "traceparent", "00-"+traceID+"-00f067aa0ba902b7-01")
	_, err = d.q.CreateQueue(ctx, &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: "traced"}})
	require.NoError(t, err)

	var service string
	var span *tracepb.Span
	require.Eventually(t, func() bool {
		service, span = col.find("tagq.v1.QueueService/CreateQueue")
		return span != nil
	}, 20*time.Second, 20*time.Millisecond, "no span exported; tagqd:\n%s", d.proc.Stderr())
	require.Equal(t, "tagqd-under-test", service)
	require.Equal(t, traceID, hexID(span.GetTraceId()))
	require.Equal(t, tracepb.Span_SPAN_KIND_SERVER, span.GetKind())
}

func hexID(b []byte) string { return hex.EncodeToString(b) }

// Not parallel: sets the environment.
func TestNewTracerProvider_OffUnlessAskedAndRefusesWhatItCannotDo(t *testing.T) {
	for _, name := range []string{"OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
		"OTEL_SDK_DISABLED", "OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"} {
		t.Setenv(name, "")
	}
	ctx, log := context.Background(), slog.New(slog.DiscardHandler)
	tp, err := newTracerProvider(ctx, log)
	require.NoError(t, err)
	require.Nil(t, tp, "off by default")

	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4317")
	t.Setenv("OTEL_SDK_DISABLED", "true")
	tp, err = newTracerProvider(ctx, log)
	require.NoError(t, err)
	require.Nil(t, tp)
	t.Setenv("OTEL_SDK_DISABLED", "")
	t.Setenv("OTEL_TRACES_EXPORTER", "none")
	tp, err = newTracerProvider(ctx, log)
	require.NoError(t, err)
	require.Nil(t, tp)

	t.Setenv("OTEL_TRACES_EXPORTER", "zipkin")
	_, err = newTracerProvider(ctx, log)
	require.ErrorContains(t, err, "OTEL_TRACES_EXPORTER")
	t.Setenv("OTEL_TRACES_EXPORTER", "otlp")
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
	_, err = newTracerProvider(ctx, log)
	require.ErrorContains(t, err, "OTEL_EXPORTER_OTLP_PROTOCOL")

	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
	tp, err = newTracerProvider(ctx, log)
	require.NoError(t, err)
	require.NotNil(t, tp)
	require.NoError(t, tp.Shutdown(ctx))
}
