// Trace context across the queue, as the Go client does (clients/go/tracing.go).
//
// `@opentelemetry/api` is an optional peer dependency: when it is installed,
// the client follows OpenTelemetry's global setup (tracer provider,
// propagator, context manager: what the OpenTelemetry SDK registers), and
// without it (or without a setup) it does nothing. A send, sendBatch or
// publish from a context with a valid span adds the propagator's fields (W3C
// `traceparent` and `tracestate` with the usual propagator) to each
// message's attributes, unless the message sets them itself. A
// Consumer.run worker runs each handler in a consumer span
// `tagq process <queue>` linked to the producer's span;
// producerSpanContext reads that link for messages received otherwise.
import { createRequire } from "node:module";

import type { Attributes } from "./core.js";

type OtelApi = typeof import("@opentelemetry/api");

/** OpenTelemetry's API when the application has it installed. (CommonJS or
 * ESM, it keeps its globals in one registry, so either sees the app's setup.) */
const otel: OtelApi | undefined = (() => {
  try {
    return createRequire(import.meta.url)("@opentelemetry/api") as OtelApi;
  } catch {
    return undefined;
  }
})();

/** The tracer name of the consumer spans (the package's name, as Go's is its module path). */
export const TRACER_NAME = "@tagq/client";

/** A span context read from a message's attributes: OpenTelemetry's SpanContext, structurally. */
export interface ProducerSpanContext {
  traceId: string;
  spanId: string;
  traceFlags: number;
  isRemote?: boolean;
}

const setter = {
  set(carrier: Attributes, key: string, value: string) {
    if (!(key in carrier)) carrier[key] = value; // the message's own value wins
  },
};

const getter = {
  get(carrier: Attributes, key: string): string | undefined {
    const v = carrier[key];
    return typeof v === "string" ? v : undefined;
  },
  keys(carrier: Attributes): string[] {
    return Object.keys(carrier);
  },
};

/**
 * The attributes of a message sent now: a's, plus the active context's trace
 * context when it has a valid span (a new object; a is not changed).
 */
export function withTrace(a: Attributes | undefined): Attributes | undefined {
  if (!otel) return a;
  const ctx = otel.context.active();
  const sc = otel.trace.getSpanContext(ctx);
  if (!sc || !otel.trace.isSpanContextValid(sc)) return a;
  const out: Attributes = { ...a };
  otel.propagation.inject(ctx, out, setter);
  return out;
}

/**
 * The span context of the span that sent a message, from its attributes
 * (with the global propagator), or undefined. For a message of
 * {@link TagqClient.receive}: `producerSpanContext(attributesOf(m))`; of a
 * consumer: `producerSpanContext(m.attributes)`.
 */
export function producerSpanContext(attributes: Attributes): ProducerSpanContext | undefined {
  if (!otel) return undefined;
  const sc = otel.trace.getSpanContext(otel.propagation.extract(otel.ROOT_CONTEXT, attributes, getter));
  return sc && otel.trace.isSpanContextValid(sc) ? sc : undefined;
}

/** What a consumer span records of its message. */
export interface Processed {
  queue: string;
  messageId: string;
  receiveCount: number;
  attributes: Attributes;
}

/**
 * Runs fn in the consumer span of handling m ("tagq process <queue>", linked
 * to its producer's span); a throw sets the span's status to error.
 */
export async function inProcessSpan<T>(m: Processed, fn: () => T | Promise<T>): Promise<T> {
  if (!otel) return await fn();
  const api = otel;
  const link = producerSpanContext(m.attributes);
  const options = {
    kind: api.SpanKind.CONSUMER,
    attributes: {
      "messaging.system": "tagq",
      "messaging.destination.name": m.queue,
      "messaging.message.id": m.messageId,
      "messaging.tagq.receive_count": m.receiveCount,
    },
    links: link ? [{ context: link }] : [],
  };
  return api.trace.getTracer(TRACER_NAME).startActiveSpan(`tagq process ${m.queue}`, options, async (span) => {
    try {
      return await fn();
    } catch (e) {
      span.recordException(e instanceof Error ? e : String(e));
      span.setStatus({ code: api.SpanStatusCode.ERROR, message: e instanceof Error ? e.message : String(e) });
      throw e;
    } finally {
      span.end();
    }
  });
}
