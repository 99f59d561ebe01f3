package server

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
)

// With a tracer provider, every call is a server span that continues the
// caller's trace (W3C traceparent in the metadata), whether it comes over
// gRPC or in process (InProcess); health checks are not.
func TestTracing_ServerSpansContinueTheCallersTrace(t *testing.T) {
	t.Parallel()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	b := setup(t, func(c *Config) { c.TracerProvider = tp })

	// The health check first: a span of it, had there been one, would be
	// there before the others'. (A server span ends after its answer has
	// gone: the client may see the answer first, so the spans are waited
	// for.)
	_, err := healthpb.NewHealthClient(b.conn).Check(b.ctx, &healthpb.HealthCheckRequest{})
	require.NoError(t, err)
	for i, conn := range []grpc.ClientConnInterface{b.conn, b.srv.InProcess()} {
		q := tagqv1.NewQueueServiceClient(conn)
		const traceID, parentID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
		ctx := metadata.AppendToOutgoingContext(b.ctx, "traceparent", "00-"+traceID+"-"+parentID+"-01")
		_, err = q.CreateQueue(ctx, &tagqv1.CreateQueueRequest{Queue: &tagqv1.Queue{Name: fmt.Sprintf("orders%d", i)}})
		require.NoError(t, err)
		_, err = q.GetQueue(b.ctx, &tagqv1.GetQueueRequest{Name: "nope"}) // a new trace
		require.Error(t, err)

		require.Eventually(t, func() bool { return len(exp.GetSpans()) >= 2 }, 10*time.Second, time.Millisecond)
		spans := exp.GetSpans()
		require.Len(t, spans, 2, "no span for the health check")
		create, get := spans[0], spans[1]
		require.Equal(t, "tagq.v1.QueueService/CreateQueue", create.Name)
		require.Equal(t, trace.SpanKindServer, create.SpanKind)
		require.Equal(t, traceID, create.SpanContext.TraceID().String())
		require.Equal(t, parentID, create.Parent.SpanID().String())
		require.True(t, create.Parent.IsRemote())

		require.Equal(t, "tagq.v1.QueueService/GetQueue", get.Name)
		require.NotEqual(t, traceID, get.SpanContext.TraceID().String())
		require.Equal(t, "NOT_FOUND", attr(get, "rpc.grpc.status_code", "rpc.response.status_code"))
		exp.Reset()
	}
}

// attr finds the first of keys among the span's attributes, as a string
// (semantic-convention names differ between otelgrpc versions).
func attr(s tracetest.SpanStub, keys ...string) string {
	for _, k := range keys {
		for _, a := range s.Attributes {
			if string(a.Key) == k {
				return a.Value.Emit()
			}
		}
	}
	return ""
}
