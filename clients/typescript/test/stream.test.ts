// Tests of the streaming consumer, its worker and the publisher against a
// real tagqd (see testing/tagqd.ts). Every wait is bounded.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { ConnectError, type Interceptor } from "@connectrpc/connect";

import type { PublishResponse } from "../src/gen/tagq/v1/message_pb.js";
import { Code, Poison, TagqClient, TagqError, defaultBackoff, type StreamMessage } from "../src/index.js";
import { startTagqd, type Tagqd } from "../testing/tagqd.js";

let tagqd: Tagqd | undefined;
let c: TagqClient;

before(async () => {
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

/** The next message of a consumer, within 5 s. */
async function nextOf(it: AsyncIterator<StreamMessage>, what = "the next message"): Promise<StreamMessage> {
  const r = await within(it.next(), 5_000, what);
  assert.ok(!r.done, `the consumer ended before ${what}`);
  return r.value;
}

/** Asserts that p rejects with a TagqError of this reason (and code, field), and returns it. */
async function rejectsWith(p: Promise<unknown>, reason: string, want: { code?: Code; field?: string } = {}): Promise<TagqError> {
  try {
    await within(p, 10_000, `a ${reason} rejection`);
  } catch (e) {
    assert.ok(e instanceof TagqError, `not a TagqError: ${e}`);
    assert.equal(e.reason, reason, e.message);
    if (want.code !== undefined) assert.equal(e.code, want.code, e.codeName);
    if (want.field !== undefined) assert.equal(e.field, want.field);
    return e;
  }
  assert.fail(`resolved; wanted ${reason}`);
}

async function tagState(queue: string, tag = "default") {
  return (await c.getTag(queue, tag)).state!;
}

/** Unary receives until n messages came, within 10 s. */
async function receiveN(queue: string, n: number) {
  const got = [];
  const deadline = Date.now() + 10_000;
  while (got.length < n && Date.now() < deadline) {
    got.push(...(await c.receive(queue, { maxMessages: Math.min(n - got.length, 100), waitSeconds: 1 })));
  }
  return got;
}

describe("consume", () => {
  test("acks update the tag's counters; messages carry plain values", async () => {
    const q = "tss-ack";
    await c.createQueue(q);
    await c.sendBatch(q, ["a", "b", { body: "c", attributes: { region: "eu", raw: new Uint8Array([1, 2]) } }, "d"]);

    // With confirm: each ack resolves once durable.
    const consumer = c.consume({ queue: q, confirm: true, visibilitySeconds: 60 });
    const it = consumer[Symbol.asyncIterator]();
    const first = [await nextOf(it), await nextOf(it), await nextOf(it)];
    assert.deepEqual(first.map((m) => m.text()), ["a", "b", "c"]);
    assert.deepEqual(first[2].attributes, { region: "eu", raw: new Uint8Array([1, 2]) });
    for (const m of first) {
      assert.equal(typeof m.deliveryId, "number");
      assert.equal(m.receiveCount, 1);
      assert.equal(m.tag, "default");
      assert.ok(m.sendTime instanceof Date);
      assert.ok(m.receiptHandle);
    }
    assert.equal(new Set(first.map((m) => m.deliveryId)).size, 3);
    JSON.stringify(first[0]); // no bigint anywhere
    await within(Promise.all(first.map((m) => m.ack())), 5_000, "confirmed acks");
    let s = await tagState(q);
    assert.equal(s.deletedTotal, 3n);
    assert.equal(s.receivedTotal, 4n);
    assert.equal(s.inFlight, 1n);

    // Without confirm: close() sends the ack and waits until it is applied.
    const d = await nextOf(it);
    assert.equal(d.text(), "d");
    void d.ack();
    await within(consumer.close(), 5_000, "close");
    s = await tagState(q);
    assert.equal(s.deletedTotal, 4n);
    assert.equal(s.inFlight, 0n);
    assert.equal(s.available, 0n);
    assert.deepEqual(await it.next(), { value: undefined, done: true });
  });

  test("never more than maxOutstandingMessages unsettled (3 of 10)", async () => {
    const q = "tss-credit";
    await c.createQueue(q);
    await c.sendBatch(q, Array.from({ length: 10 }, (_, i) => `m${i}`));
    const consumer = c.consume({ queue: q, maxOutstandingMessages: 3, confirm: true, visibilitySeconds: 60 });
    const it = consumer[Symbol.asyncIterator]();
    const held: StreamMessage[] = [];
    const seen = new Set<string>();
    let most = 0;
    while (seen.size < 10) {
      const m = await nextOf(it, `message ${seen.size + 1} of 10`);
      seen.add(m.messageId);
      held.push(m);
      most = Math.max(most, held.length, consumer.outstanding);
      assert.ok(consumer.outstanding <= 3, `${consumer.outstanding} messages outstanding`);
      if (held.length === 3) {
        // The server took no more than the credit from the tag either.
        assert.equal((await tagState(q)).inFlight, 3n);
        assert.ok(consumer.outstanding <= 3, `${consumer.outstanding} messages outstanding`);
        await held.shift()!.ack();
      }
    }
    assert.equal(most, 3);
    for (const m of held) await m.ack();
    await within(consumer.close(), 5_000, "close");
    const s = await tagState(q);
    assert.equal(s.deletedTotal, 10n);
    assert.equal(s.receivedTotal, 10n);
  });

  test("an aborted stream leaves its messages to their deadline; settlements then go by receipt handle", async () => {
    const q = "tss-abort";
    await c.createQueue(q);
    await c.sendBatch(q, ["m1", "m2", "m3", "m4", "m5"]);
    const abort = new AbortController();
    const consumer = c.consume({ queue: q, visibilitySeconds: 1, confirm: true, signal: abort.signal });
    const it = consumer[Symbol.asyncIterator]();
    const m1 = await nextOf(it);
    const m2 = await nextOf(it);
    await within(m1.ack(), 5_000, "ack of m1");
    assert.equal(consumer.outstanding, 4, "m2 handed out, m3-m5 received");

    const aborted = Date.now();
    abort.abort();
    assert.deepEqual(await within(it.next(), 5_000, "the end of the iteration"), { value: undefined, done: true });
    await within(consumer.close(), 5_000, "close after abort"); // quiet: no error
    assert.ok(consumer.ended);

    // Not given back at once: still in flight until their deadline.
    assert.deepEqual(await c.receive(q, { maxMessages: 10 }), []);
    // m2 is acknowledged after the stream broke: a DeleteMessage by its handle.
    await within(m2.ack(), 5_000, "ack of m2 by receipt handle");

    const back = await receiveN(q, 3);
    const waited = Date.now() - aborted;
    assert.deepEqual(back.map((m) => new TextDecoder().decode(m.body)).sort(), ["m3", "m4", "m5"]);
    for (const m of back) assert.equal(m.receiveCount, 2);
    assert.ok(waited >= 200, `back after ${waited} ms: not at their deadline`);
    assert.deepEqual(await c.receive(q, { maxMessages: 10 }), [], "m1 and m2 do not come back");
    assert.equal((await tagState(q)).deletedTotal, 2n);
  });

  test("close() gives the unsettled messages back at once", async () => {
    const q = "tss-close";
    await c.createQueue(q);
    await c.sendBatch(q, ["m1", "m2", "m3", "m4"]);
    const consumer = c.consume({ queue: q, visibilitySeconds: 600 });
    const it = consumer[Symbol.asyncIterator]();
    const m1 = await nextOf(it);
    await nextOf(it);
    await nextOf(it);
    void m1.ack();
    await within(consumer.close(), 5_000, "close");

    const back = await c.receive(q, { maxMessages: 10 }); // no wait
    assert.deepEqual(back.map((m) => new TextDecoder().decode(m.body)), ["m2", "m3", "m4"]);
    for (const m of back) assert.equal(m.receiveCount, 2);
    assert.equal((await tagState(q)).deletedTotal, 1n);
  });

  test("breaking out of for await closes the stream cleanly", async () => {
    const q = "tss-break";
    await c.createQueue(q);
    await c.sendBatch(q, ["m1", "m2"]);
    const consumer = c.consume({ queue: q, visibilitySeconds: 600 });
    for await (const m of consumer) {
      void m.ack();
      break;
    }
    assert.ok(consumer.ended);
    const back = await c.receive(q, { maxMessages: 10 });
    assert.deepEqual(back.map((m) => new TextDecoder().decode(m.body)), ["m2"]);
    assert.equal((await tagState(q)).deletedTotal, 1n);
  });

  test("nack with a 200 ms delay", async () => {
    const q = "tss-nack";
    await c.createQueue(q);
    const id = await c.send(q, "again");
    const consumer = c.consume({ queue: q, confirm: true, visibilitySeconds: 60 });
    const it = consumer[Symbol.asyncIterator]();
    const m = await nextOf(it);
    const t0 = Date.now();
    await within(m.nack(200), 5_000, "confirmed nack");
    assert.ok(m.settled);
    assert.deepEqual(await c.receive(q), [], "hidden for the delay");
    const again = await nextOf(it, "the nacked message again");
    const waited = Date.now() - t0;
    assert.equal(again.messageId, id);
    assert.equal(again.receiveCount, 2);
    assert.ok(waited >= 190, `back after ${waited} ms`);
    await again.ack();
    await within(consumer.close(), 5_000, "close");
  });

  test("dead sends the message to the DLQ with the reason; without a redrive policy: NOT_A_SOURCE_QUEUE", async () => {
    const q = "tss-dead";
    const dlq = "tss-dead-dlq";
    await c.createQueue(dlq, { deadLetterQueue: true });
    await c.createQueue(q, { redrivePolicy: { deadLetterQueue: dlq, maxReceiveCount: 5 } });
    const id = await c.send(q, "poison", { attributes: { k: "v" } });
    const consumer = c.consume({ queue: q, confirm: true, visibilitySeconds: 60 });
    const it = consumer[Symbol.asyncIterator]();
    const m = await nextOf(it);
    await within(m.dead("BAD_PAYLOAD", "cannot parse"), 5_000, "confirmed dead");
    await within(consumer.close(), 5_000, "close");
    assert.equal((await tagState(q)).deadTotal, 1n);
    const [d] = await c.peek(dlq, { maxMessages: 10 });
    assert.equal(d?.deadLetter?.reason, "BAD_PAYLOAD");
    assert.equal(d.deadLetter?.description, "cannot parse");
    assert.equal(d.deadLetter?.originalMessageId, id);
    assert.equal(d.deadLetter?.sourceTag, "default");

    const plain = "tss-dead-plain";
    await c.createQueue(plain);
    await c.send(plain, "x");
    const other = c.consume({ queue: plain, confirm: true, visibilitySeconds: 60 });
    const oit = other[Symbol.asyncIterator]();
    const x = await nextOf(oit);
    await rejectsWith(x.dead("WHATEVER"), "NOT_A_SOURCE_QUEUE", { code: Code.FailedPrecondition });
    await within(other.close(), 5_000, "close");
  });

  test("unsettled messages are renewed every third of the visibility, up to maxExtensionSeconds", async () => {
    const q = "tss-renew";
    await c.createQueue(q);
    await c.send(q, "slow");
    const consumer = c.consume({ queue: q, visibilitySeconds: 2, maxExtensionSeconds: 2, maxOutstandingMessages: 1 });
    const it = consumer[Symbol.asyncIterator]();
    const m = await nextOf(it);
    const got = Date.now();
    // Past its first deadline (2 s) it is still hidden: renewed.
    while (Date.now() - got < 2_600) {
      assert.deepEqual(await c.receive(q), [], `visible again after ${Date.now() - got} ms`);
    }
    // Renewal stops at 2 s: at its last deadline, within 2 s more, it is
    // visible again and no longer holds the stream's credit, so the stream
    // gets it again.
    const back = await within(nextOf(it), 8_000, "came back");
    const held = Date.now() - got;
    assert.equal(back.messageId, m.messageId, "never came back");
    assert.equal(back.receiveCount, 2);
    assert.ok(held >= 2_600 && held < 8_000, `came back after ${held} ms`);
    await back.ack();
    await within(consumer.close(), 5_000, "close");
  });

  test("settlements out of range are refused locally and the stream goes on", async () => {
    const q = "tss-range";
    await c.createQueue(q);
    await c.send(q, "x");
    const consumer = c.consume({ queue: q, confirm: true, visibilitySeconds: 60 });
    const it = consumer[Symbol.asyncIterator]();
    const m = await nextOf(it);
    await rejectsWith(m.extend(0), "INVALID_ARGUMENT_RANGE", { code: Code.InvalidArgument, field: "visibility_seconds" });
    await within(m.extend(30), 5_000, "confirmed extend");
    await rejectsWith(m.nack(43_200_001), "INVALID_ARGUMENT_RANGE", { field: "delay_milliseconds" });
    await rejectsWith(m.dead("x".repeat(257)), "INVALID_ARGUMENT_RANGE", { field: "reason" });
    assert.equal(m.settled, false, "a refused settlement does not settle");
    await within(m.ack(), 5_000, "confirmed ack");
    assert.equal(m.settled, true);
    await within(consumer.close(), 5_000, "close");
    assert.equal((await tagState(q)).deletedTotal, 1n);
  });

  test("open errors end the iteration: QUEUE_NOT_FOUND, INVALID_ARGUMENT on open.max_outstanding_messages", async () => {
    const missing = c.consume({ queue: "tss-nope", visibilitySeconds: 5 });
    await rejectsWith(missing[Symbol.asyncIterator]().next(), "QUEUE_NOT_FOUND", { code: Code.NotFound });
    await rejectsWith(missing.close(), "QUEUE_NOT_FOUND");
    // Without visibilitySeconds the consumer reads the tag's first: same error.
    await rejectsWith(c.consume({ queue: "tss-nope" })[Symbol.asyncIterator]().next(), "QUEUE_NOT_FOUND");

    await c.createQueue("tss-open");
    const bad = c.consume({ queue: "tss-open", maxOutstandingMessages: 0 });
    await rejectsWith(bad[Symbol.asyncIterator]().next(), "INVALID_ARGUMENT_RANGE", {
      code: Code.InvalidArgument,
      field: "open.max_outstanding_messages",
    });
  });
});

describe("worker", () => {
  test("defaultBackoff: 1 s doubling to 5 min, ±20 %", () => {
    for (let i = 0; i < 50; i++) {
      const within20 = (v: number, base: number) => v >= base * 0.8 && v <= base * 1.2;
      assert.ok(within20(defaultBackoff(1), 1000));
      assert.ok(within20(defaultBackoff(2), 2000));
      assert.ok(within20(defaultBackoff(4), 8000));
      assert.ok(within20(defaultBackoff(9), 256_000));
      assert.ok(within20(defaultBackoff(10), 300_000));
      assert.ok(within20(defaultBackoff(4000), 300_000));
      assert.ok(within20(defaultBackoff(0), 1000));
    }
  });

  test("resolve acks, throw nacks with the backoff, Poison dead-letters", async () => {
    const q = "tsw-contract";
    const dlq = "tsw-contract-dlq";
    await c.createQueue(dlq, { deadLetterQueue: true });
    await c.createQueue(q, { redrivePolicy: { deadLetterQueue: dlq, maxReceiveCount: 10 } });
    const [okId, failId, poisonId] = (await c.sendBatch(q, ["ok", "fail-once", "poison"])).messageIds;

    const log: string[] = [];
    const errors: unknown[] = [];
    const backoffs: number[] = [];
    let failedAt = 0;
    let retriedAfter = -1;
    let finished!: () => void;
    const allDone = new Promise<void>((r) => (finished = r));
    let handled = 0;
    const consumer = c.consume({ queue: q, confirm: true, visibilitySeconds: 60 });
    const worker = consumer.run(
      async (m) => {
        log.push(`${m.text()}#${m.receiveCount}`);
        try {
          if (m.text() === "poison") throw new Poison("BAD_PAYLOAD", "not JSON");
          if (m.text() === "fail-once" && m.receiveCount === 1) {
            failedAt = Date.now();
            throw new Error("try again");
          }
          if (m.text() === "fail-once") retriedAfter = Date.now() - failedAt;
        } finally {
          if (++handled === 4) finished();
        }
      },
      {
        concurrency: 2,
        backoff: (n) => {
          backoffs.push(n);
          return 300;
        },
        onError: (e) => errors.push(e),
      },
    );
    await within(allDone, 10_000, "four handler calls");
    await within(worker.stop(), 5_000, "stop");
    await worker.done;

    assert.deepEqual(log.sort(), ["fail-once#1", "fail-once#2", "ok#1", "poison#1"]);
    assert.deepEqual(backoffs, [1], "backoff of the first receive");
    assert.ok(retriedAfter >= 290, `retried after ${retriedAfter} ms, not after the 300 ms backoff`);
    assert.equal(errors.length, 1);
    assert.equal((errors[0] as Error).message, "try again");
    const s = await tagState(q);
    assert.equal(s.deletedTotal, 2n);
    assert.equal(s.deadTotal, 1n);
    assert.equal(s.inFlight, 0n);
    assert.equal(s.available, 0n);
    const [d] = await c.peek(dlq, { maxMessages: 10 });
    assert.equal(d?.deadLetter?.originalMessageId, poisonId);
    assert.equal(d.deadLetter?.reason, "BAD_PAYLOAD");
    assert.equal(d.deadLetter?.description, "not JSON");
    assert.ok(okId && failId);
  });

  test("runs up to concurrency handlers at once; stop() waits for them and their acks", async () => {
    const q = "tsw-concurrency";
    await c.createQueue(q);
    await c.sendBatch(q, Array.from({ length: 8 }, (_, i) => `m${i}`));
    let running = 0;
    let most = 0;
    let started = 0;
    let threeRunning!: () => void;
    const three = new Promise<void>((r) => (threeRunning = r));
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let fourStarted!: () => void;
    const four = new Promise<void>((r) => (fourStarted = r));
    const finishedHandlers: string[] = [];
    const consumer = c.consume({ queue: q, visibilitySeconds: 60 });
    const worker = consumer.run(
      async (m) => {
        running++;
        started++;
        most = Math.max(most, running);
        if (running === 3) threeRunning();
        if (started === 4) fourStarted();
        await gate; // the first three wait here until all three run
        running--;
        finishedHandlers.push(m.text());
      },
      { concurrency: 3 },
    );
    await within(three, 5_000, "three handlers at once");
    release();
    await within(four, 5_000, "a fourth handler");
    const stopped = worker.stop();
    await within(stopped, 5_000, "stop");
    assert.equal(most, 3);
    assert.equal(running, 0, "stop() returned while handlers ran");
    // Every handler that started finished and its message was acked (stop's close applies them).
    const s = await tagState(q);
    assert.equal(s.deletedTotal, BigInt(finishedHandlers.length));
    assert.equal(s.inFlight, 0n);
    assert.equal(s.available, BigInt(8 - finishedHandlers.length), "the messages not handled went back at once");
  });

  test("run's done rejects when the stream fails", async () => {
    const consumer = c.consume({ queue: "tsw-nope", visibilitySeconds: 5 });
    const worker = consumer.run(() => undefined);
    await rejectsWith(worker.done, "QUEUE_NOT_FOUND", { code: Code.NotFound });
  });
});

/** Counts Publish frames: entries per frame, and the most sent and not yet answered. */
function frameCounter(): { interceptor: Interceptor; frames: number[]; mostInFlight: () => number } {
  const frames: number[] = [];
  let inFlight = 0;
  let most = 0;
  const interceptor: Interceptor = (next) => async (req) => {
    if (!req.stream || req.method.name !== "Publish") return next(req);
    const input = req.message;
    const counted = (async function* () {
      for await (const f of input) {
        frames.push((f as unknown as { entries: unknown[] }).entries.length);
        most = Math.max(most, ++inFlight);
        yield f;
      }
    })();
    const res = await next({ ...req, message: counted });
    if (!res.stream) return res;
    const output = res.message;
    return {
      ...res,
      message: (async function* () {
        for await (const r of output) {
          inFlight--;
          yield r;
        }
      })(),
    };
  };
  return { interceptor, frames, mostInFlight: () => most };
}

describe("publisher", () => {
  test("500 messages at once: batched frames, at most maxInFlight in flight, distinct ids, all arrive", async () => {
    const q = "tsp-many";
    await c.createQueue(q);
    const counter = frameCounter();
    const pc = new TagqClient(`http://${tagqd!.grpcAddr}`, { interceptors: [counter.interceptor] });
    try {
      const pub = pc.publisher({ maxMessages: 100, maxInFlight: 4 });
      const bodies = Array.from({ length: 500 }, (_, i) => `msg-${i}`);
      const pending = bodies.map((b) => pub.publish(q, b, { attributes: { i: b } }));
      assert.equal(pub.framesInFlight, 4, "five full frames: four go, one waits");
      const ids = await within(Promise.all(pending), 10_000, "500 publishes");
      await within(pub.close(), 5_000, "publisher close");
      assert.equal(new Set(ids).size, 500);
      assert.deepEqual(counter.frames, [100, 100, 100, 100, 100]);
      assert.ok(counter.mostInFlight() <= 4, `${counter.mostInFlight()} frames in flight`);

      const consumer = c.consume({ queue: q, maxOutstandingMessages: 500, visibilitySeconds: 60 });
      const got = new Map<string, string>();
      const it = consumer[Symbol.asyncIterator]();
      while (got.size < 500) {
        const m = await nextOf(it, `message ${got.size + 1} of 500`);
        got.set(m.messageId, m.text());
        assert.equal(m.attributes["i"], m.text());
        void m.ack();
      }
      await within(consumer.close(), 5_000, "close");
      assert.deepEqual([...got.keys()].sort(), [...ids].sort());
      bodies.forEach((b, i) => assert.equal(got.get(ids[i]), b, `the id publish(${b}) resolved with is another message's`));
      assert.equal((await tagState(q)).deletedTotal, 500n);
    } finally {
      pc.close();
    }
  });

  test("answers are matched by seq, whatever their order", async () => {
    const q = "tsp-seq";
    await c.createQueue(q);
    // Holds the answers of the first two frames and delivers them last seq first.
    const swap: Interceptor = (next) => async (req) => {
      const res = await next(req);
      if (!res.stream || req.method.name !== "Publish") return res;
      const output = res.message as AsyncIterable<PublishResponse>;
      return {
        ...res,
        message: (async function* () {
          const held: PublishResponse[] = [];
          for await (const r of output) {
            if (held.length < 2) {
              held.push(r);
              if (held.length === 2) yield* held.sort((x, y) => Number(y.seq - x.seq));
              continue;
            }
            yield r;
          }
          if (held.length < 2) yield* held;
        })(),
      };
    };
    const pc = new TagqClient(`http://${tagqd!.grpcAddr}`, { interceptors: [swap] });
    try {
      const pub = pc.publisher({ maxMessages: 2 });
      const bodies = ["a", "b", "c", "d"];
      const ids = await within(Promise.all(bodies.map((b) => pub.publish(q, b))), 10_000, "publishes");
      await within(pub.close(), 5_000, "publisher close");
      const peeked = await c.peek(q, { messageIds: ids });
      assert.deepEqual(
        ids.map((id) => new TextDecoder().decode(peeked.find((m) => m.messageId === id)?.body)),
        bodies,
      );
    } finally {
      pc.close();
    }
  });

  test("frames of a broken stream (UNAVAILABLE) are sent again on a new one", async () => {
    const q = "tsp-retry";
    await c.createQueue(q);
    let calls = 0;
    const failFirst: Interceptor = (next) => async (req) => {
      if (req.stream && req.method.name === "Publish" && ++calls === 1) {
        throw new ConnectError("injected: connection lost", Code.Unavailable);
      }
      return next(req);
    };
    const pc = new TagqClient(`http://${tagqd!.grpcAddr}`, { interceptors: [failFirst] });
    try {
      const pub = pc.publisher();
      const ids = await within(Promise.all([pub.publish(q, "x"), pub.publish(q, "y")]), 10_000, "publishes");
      await within(pub.close(), 5_000, "publisher close");
      assert.equal(calls, 2, "one broken stream, one good");
      assert.deepEqual((await c.peek(q, { messageIds: ids })).map((m) => new TextDecoder().decode(m.body)), ["x", "y"]);
    } finally {
      pc.close();
    }
  });

  test("a missing queue: every promise rejects with QUEUE_NOT_FOUND", async () => {
    const pub = c.publisher({ maxMessages: 50 });
    const all = Array.from({ length: 120 }, (_, i) => pub.publish("tsp-nope", `m${i}`));
    const results = await within(Promise.allSettled(all), 10_000, "answers");
    for (const r of results) {
      assert.equal(r.status, "rejected");
      const e = (r as PromiseRejectedResult).reason;
      assert.ok(e instanceof TagqError, `not a TagqError: ${e}`);
      assert.equal(e.reason, "QUEUE_NOT_FOUND");
      assert.equal(e.code, Code.NotFound);
    }
    await within(pub.close(), 5_000, "publisher close");
  });

  test("a refused entry rejects alone, with its reason and field", async () => {
    const q = "tsp-entry";
    await c.createQueue(q);
    const pub = c.publisher();
    const [a, b, d] = await within(
      Promise.allSettled([pub.publish(q, "a"), pub.publish(q, "b", { attributes: { "DLQ.mine": "x" } }), pub.publish(q, "d", { delaySeconds: 0 })]),
      10_000,
      "answers",
    );
    await within(pub.close(), 5_000, "publisher close");
    assert.equal(a.status, "fulfilled");
    assert.equal(d.status, "fulfilled");
    assert.equal(b.status, "rejected");
    const e = (b as PromiseRejectedResult).reason;
    assert.ok(e instanceof TagqError);
    assert.equal(e.reason, "RESERVED_ATTRIBUTE");
    assert.equal(e.code, Code.InvalidArgument);
    assert.match(e.field, /^entries\[1\]\./);
    assert.deepEqual((await receiveN(q, 2)).map((m) => new TextDecoder().decode(m.body)), ["a", "d"]);
  });

  test("flush() sends a frame before maxDelayMs; publish after close rejects", async () => {
    const q = "tsp-flush";
    await c.createQueue(q);
    const pub = c.publisher({ maxDelayMs: 60_000 });
    let id = "";
    const p = pub.publish(q, "now").then((x) => (id = x));
    await within(pub.flush(), 5_000, "flush");
    assert.ok(id, "flush resolved before the message was answered");
    await p;
    await within(pub.close(), 5_000, "publisher close");
    await assert.rejects(pub.publish(q, "late"), (e: unknown) => e instanceof TagqError && e.code === Code.FailedPrecondition);
  });

  test("an unreachable server: every promise rejects with UNAVAILABLE after the retries", async () => {
    const dead = new TagqClient("http://127.0.0.1:1");
    try {
      const pub = dead.publisher({ maxAttempts: 2 });
      const results = await within(Promise.allSettled([pub.publish("q", "a"), pub.publish("q", "b")]), 10_000, "failures");
      for (const r of results) {
        assert.equal(r.status, "rejected");
        assert.equal(((r as PromiseRejectedResult).reason as TagqError).code, Code.Unavailable);
      }
      await within(pub.close(), 5_000, "publisher close");
    } finally {
      dead.close();
    }
  });
});
