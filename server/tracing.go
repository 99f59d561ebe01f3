package server

import (
	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc/filters"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc/stats"
)

// TracePropagator is how trace context travels: W3C trace context
// (traceparent, tracestate) and baggage, in gRPC metadata, REST headers and
// (set by the clients) message attributes.
var TracePropagator = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})

// tracing is the gRPC server's stats handler that makes a server span of
// every call (a REST call's too, the gateway's call carrying its
// traceparent header; an in-process call's, inprocess.go), continuing the
// caller's trace when it sends one. Health checks are left out; no
// per-message events (a stream's messages would flood its span); gRPC
// metrics are Prometheus's (metrics.go), not OpenTelemetry's.
func tracing(tp trace.TracerProvider) stats.Handler {
	return otelgrpc.NewServerHandler(
		otelgrpc.WithTracerProvider(tp),
		otelgrpc.WithPropagators(TracePropagator),
		otelgrpc.WithMeterProvider(noop.NewMeterProvider()),
		otelgrpc.WithFilter(filters.Not(filters.HealthCheck())),
	)
}
