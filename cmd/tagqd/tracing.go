package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/tagq/tagq/internal/version"
)

// newTracerProvider sets up OpenTelemetry tracing from the standard OTEL_*
// variables, or returns nil: tracing is off unless OTEL_TRACES_EXPORTER is
// "otlp" or an OTLP endpoint is set (OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), and OTEL_SDK_DISABLED=true or
// OTEL_TRACES_EXPORTER=none turn it off. The exporter speaks OTLP over gRPC
// and reads the rest itself (OTEL_EXPORTER_OTLP_HEADERS, _INSECURE,
// _CERTIFICATE, _TIMEOUT, ...); the SDK reads OTEL_TRACES_SAMPLER(_ARG) and
// OTEL_BSP_*; the resource OTEL_SERVICE_NAME (default "tagqd") and
// OTEL_RESOURCE_ATTRIBUTES.
func newTracerProvider(ctx context.Context, log *slog.Logger) (*sdktrace.TracerProvider, error) {
	exporter := strings.ToLower(strings.TrimSpace(os.Getenv("OTEL_TRACES_EXPORTER")))
	endpoint := os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
	if endpoint == "" {
		endpoint = os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT")
	}
	switch {
	case strings.EqualFold(os.Getenv("OTEL_SDK_DISABLED"), "true"), exporter == "none":
		return nil, nil
	case exporter == "" && endpoint == "":
		return nil, nil
	case exporter != "" && exporter != "otlp":
		return nil, fmt.Errorf("OTEL_TRACES_EXPORTER: %q is not supported (otlp or none)", exporter)
	}
	proto := os.Getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if proto == "" {
		proto = os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	if proto != "" && proto != "grpc" {
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL: %q is not supported (grpc)", proto)
	}
	exp, err := otlptracegrpc.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("OTLP trace exporter: %w", err)
	}
	info := version.Get()
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", "tagqd"), attribute.String("service.version", info.Version)),
		resource.WithFromEnv(), resource.WithTelemetrySDK(), resource.WithHost())
	if err != nil {
		return nil, fmt.Errorf("OpenTelemetry resource: %w", err)
	}
	log.Info("tracing on: OTLP over gRPC", "endpoint", endpoint)
	return sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res)), nil
}
