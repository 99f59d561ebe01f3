package tagq

import (
	"context"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	tagqv1 "github.com/tagq/tagq/gen/tagq/v1"
)

// Tracing. The client follows OpenTelemetry's global setup (otel.SetTracerProvider,
// otel.SetTextMapPropagator); without one it does nothing. When the context of a
// send carries a span, the propagator's fields (W3C traceparent and tracestate
// with the usual propagator) are added to each message's attributes, unless
// the message sets them itself. A Consumer runs each handler in a consumer span
// ("tagq process <queue>") linked to the producer's span; for messages
// received otherwise, ProducerSpanContext reads the link.

const tracerName = "github.com/tagq/tagq/clients/go"

// attrCarrier is a propagation carrier over outgoing message attributes.
type attrCarrier map[string]*tagqv1.MessageAttribute

func (c attrCarrier) Get(key string) string {
	if a := c[key]; a != nil {
		return a.GetStringValue()
	}
	return ""
}

func (c attrCarrier) Set(key, value string) {
	if _, set := c[key]; !set { // the message's own value wins
		c[key] = &tagqv1.MessageAttribute{Value: &tagqv1.MessageAttribute_StringValue{StringValue: value}}
	}
}

func (c attrCarrier) Keys() []string {
	out := make([]string, 0, len(c))
	for k := range c {
		out = append(out, k)
	}
	return out
}

// withTrace adds ctx's trace context to a message's attributes (a new map
// when it had none) and returns them.
func withTrace(ctx context.Context, a map[string]*tagqv1.MessageAttribute) map[string]*tagqv1.MessageAttribute {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return a
	}
	if a == nil {
		a = map[string]*tagqv1.MessageAttribute{}
	}
	otel.GetTextMapPropagator().Inject(ctx, attrCarrier(a))
	if len(a) == 0 {
		return nil
	}
	return a
}

// ProducerSpanContext is the span context of the span that sent m (from its
// attributes, with the global propagator), or an invalid one.
func ProducerSpanContext(m *Message) trace.SpanContext {
	ctx := otel.GetTextMapPropagator().Extract(context.Background(), attrCarrier(m.GetAttributes()))
	return trace.SpanContextFromContext(ctx)
}

// processSpan starts the consumer span of handling m of queue, linked to
// its producer's span.
func processSpan(ctx context.Context, queue string, m *Message) (context.Context, trace.Span) {
	opts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindConsumer), trace.WithAttributes(
		attribute.String("messaging.system", "tagq"),
		attribute.String("messaging.destination.name", queue),
		attribute.String("messaging.message.id", m.GetMessageId()),
		attribute.Int64("messaging.tagq.receive_count", int64(m.GetReceiveCount())),
	)}
	if sc := ProducerSpanContext(m); sc.IsValid() {
		opts = append(opts, trace.WithLinks(trace.Link{SpanContext: sc}))
	}
	return otel.Tracer(tracerName).Start(ctx, "tagq process "+queue, opts...)
}

// endSpan records the handler's outcome on span and ends it.
func endSpan(span trace.Span, err error) {
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}

var _ propagation.TextMapCarrier = attrCarrier(nil)
