// Trace propagation against a real tagqd, with OpenTelemetry's SDK and an
// in-memory exporter. node --test runs each file in a process of its own,
// so the globals set here touch no other test.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { context, propagation, trace, SpanKind, SpanStatusCode } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";

import { TagqClient, TRACER_NAME, attributesOf, producerSpanContext, type StreamMessage } from "../src/index.js";
import { startTagqd, type Tagqd } from "../testing/tagqd.js";

let tagqd: Tagqd | undefined;
let c: TagqClient;
const exporter = new InMemorySpanExporter();

before(async () => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
  tagqd = await startTagqd();
  c = new TagqClient(`http://${tagqd.grpcAddr}`);
});

after(async () => {
  c?.close();
  if (tagqd) assert.equal(await tagqd.stop(), 0, "tagqd did not exit cleanly on SIGTERM");
});

/** p, or a rejection after ms. */
async function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
  });
  try {
    return await Promise.race([p, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

const tracer = () => trace.getTracer("tagq-test");

describe("tracing", () => {
  test("sends carry the active span's traceparent; a message's own value wins", async () => {
    const q = "ts-trace-send";
    await c.createQueue(q);
    await c.send(q, "untraced");
    const { traceId, spanId } = await tracer().startActiveSpan("produce", async (span) => {
      await c.send(q, "one", { attributes: { region: "eu" } });
      await c.sendBatch(q, ["two", { body: "three", attributes: { traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" } }]);
      const pub = c.publisher();
      await pub.publish(q, "four");
      await pub.close();
      span.end();
      return span.spanContext();
    });
    const got = new Map<string, Record<string, string | Uint8Array>>();
    const deadline = Date.now() + 10_000;
    while (got.size < 5 && Date.now() < deadline) {
      for (const m of await c.receive(q, { maxMessages: 10, waitSeconds: 1 })) got.set(new TextDecoder().decode(m.body), attributesOf(m));
    }
    assert.equal(got.size, 5);
    const want = `00-${traceId}-${spanId}-01`;
    assert.deepEqual(got.get("untraced"), {}, "no span, no attributes");
    assert.deepEqual(got.get("one"), { region: "eu", traceparent: want });
    assert.deepEqual(got.get("two"), { traceparent: want });
    assert.deepEqual(got.get("three"), { traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" });
    assert.deepEqual(got.get("four"), { traceparent: want });
    const sc = producerSpanContext(got.get("one")!);
    assert.equal(sc?.traceId, traceId);
    assert.equal(sc?.spanId, spanId);
    assert.equal(producerSpanContext(got.get("untraced")!), undefined);
    assert.equal(producerSpanContext({ traceparent: "not a traceparent" }), undefined);
  });

  test("a worker runs each handler in a consumer span linked to the producer's", async () => {
    const q = "ts-trace-consume";
    await c.createQueue(q);
    const producer = await tracer().startActiveSpan("produce", async (span) => {
      await c.send(q, "ok");
      await c.send(q, "fails");
      span.end();
      return span.spanContext();
    });
    exporter.reset();
    const seen = new Map<string, string | undefined>(); // body -> the active span's id in the handler
    let done!: () => void;
    const both = new Promise<void>((r) => (done = r));
    const worker = c.consume({ queue: q }).run(
      (m: StreamMessage) => {
        const body = new TextDecoder().decode(m.body);
        seen.set(body, trace.getActiveSpan()?.spanContext().spanId);
        if (seen.size === 2) done();
        if (body === "fails") throw new Error("handler failed");
      },
      { concurrency: 2, backoff: () => 60_000, onError: () => undefined },
    );
    await within(both, 10_000, "both messages handled");
    await within(worker.stop(), 10_000, "the worker's stop");

    const spans = exporter.getFinishedSpans().filter((s) => s.instrumentationScope.name === TRACER_NAME);
    assert.equal(spans.length, 2);
    for (const s of spans) {
      assert.equal(s.name, `tagq process ${q}`);
      assert.equal(s.kind, SpanKind.CONSUMER);
      assert.equal(s.attributes["messaging.system"], "tagq");
      assert.equal(s.attributes["messaging.destination.name"], q);
      assert.equal(s.attributes["messaging.tagq.receive_count"], 1);
      assert.equal(typeof s.attributes["messaging.message.id"], "string");
      assert.equal(s.links.length, 1);
      assert.equal(s.links[0]!.context.traceId, producer.traceId);
      assert.equal(s.links[0]!.context.spanId, producer.spanId);
      assert.notEqual(s.spanContext().traceId, producer.traceId, "linked, not a child");
    }
    const bySpan = new Map(spans.map((s) => [s.spanContext().spanId, s]));
    const ok = bySpan.get(seen.get("ok")!);
    const failed = bySpan.get(seen.get("fails")!);
    assert.ok(ok && failed, "each handler ran in its own span");
    assert.equal(ok.status.code, SpanStatusCode.UNSET);
    assert.equal(failed.status.code, SpanStatusCode.ERROR);
    assert.equal(failed.status.message, "handler failed");
    assert.equal(failed.events[0]?.name, "exception");
  });
});
