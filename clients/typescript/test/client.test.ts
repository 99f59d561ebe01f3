// Tests of the TypeScript client against a real tagqd on its embedded
// in-memory store (see testing/tagqd.ts).
import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { after, before, describe, test } from "node:test";

import { equals, fromJson } from "@bufbuild/protobuf";
import { timestampMs } from "@bufbuild/protobuf/wkt";

import { TagSchema } from "../src/gen/tagq/v1/queue_pb.js";
import { Code, MessageMoveTask_State, OverflowPolicy, TagqClient, TagqError, attributesOf, textOf, type Message } from "../src/index.js";
import { startTagqd, type Tagqd } from "../testing/tagqd.js";

let tagqd: Tagqd | undefined;
let httpAddr = "";
let c: TagqClient;

before(async () => {
  tagqd = await startTagqd();
  httpAddr = tagqd.httpAddr;
  c = new TagqClient(`http://${tagqd.grpcAddr}`);
});

after(async () => {
  c?.close();
  if (tagqd) assert.equal(await tagqd.stop(), 0, "tagqd did not exit cleanly on SIGTERM");
});

/** Asserts that p rejects with a TagqError of this reason (and field, code), and returns it. */
async function rejectsWith(p: Promise<unknown>, reason: string, want: { field?: string; code?: Code } = {}): Promise<TagqError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof TagqError, `not a TagqError: ${e}`);
    assert.equal(e.reason, reason, e.message);
    assert.equal(e.domain, "tagq");
    if (want.field !== undefined) assert.equal(e.field, want.field);
    if (want.code !== undefined) assert.equal(e.code, want.code, e.codeName);
    return e;
  }
  assert.fail(`resolved; wanted ${reason}`);
}

/** Receives until n messages came (or 10 s passed). */
async function receiveN(queue: string, tag: string, n: number): Promise<Message[]> {
  const got: Message[] = [];
  const deadline = Date.now() + 10_000;
  while (got.length < n && Date.now() < deadline) {
    got.push(...(await c.receive(queue, { tag, maxMessages: n - got.length, waitSeconds: 1 })));
  }
  return got;
}

describe("two tags and a dead-letter queue", () => {
  const q = "ts-orders";
  const dlq = "ts-orders-dlq";
  let ids: string[] = [];
  let billing: Message[] = [];
  let shipping: Message[] = [];

  test("create the DLQ, the queue with its redrive policy, and two tags", async () => {
    const d = await c.createQueue(dlq, { deadLetterQueue: true });
    assert.equal(d.deadLetterQueue, true);
    const created = await c.createQueue(q, { redrivePolicy: { deadLetterQueue: dlq, maxReceiveCount: 2 } });
    assert.equal(created.redrivePolicy?.deadLetterQueue, dlq);
    assert.equal(created.redrivePolicy?.maxReceiveCount, 2);
    assert.equal((await c.createTag(q, "billing")).name, "billing");
    assert.equal((await c.createTag(q, "shipping")).name, "shipping");
    assert.deepEqual((await c.listTags(q)).map((t) => t.name), ["billing", "default", "shipping"]);
    assert.deepEqual((await c.getQueue(dlq)).sourceQueues, [q]);
  });

  test("send three messages, one with attributes", async () => {
    ids = [
      await c.send(q, "first"),
      await c.send(q, new TextEncoder().encode("second")),
      await c.send(q, "third", { attributes: { region: "eu", raw: new Uint8Array([0, 1, 255]) } }),
    ];
    assert.equal(new Set(ids).size, 3);
  });

  test("each tag receives all three, independently", async () => {
    billing = await receiveN(q, "billing", 3);
    shipping = await receiveN(q, "shipping", 3);
    for (const got of [billing, shipping]) {
      assert.deepEqual(got.map((m) => m.messageId), ids);
      assert.deepEqual(got.map(textOf), ["first", "second", "third"]);
      assert.deepEqual(attributesOf(got[2]), { region: "eu", raw: new Uint8Array([0, 1, 255]) });
      assert.deepEqual(attributesOf(got[0]), {});
      for (const m of got) assert.equal(m.receiveCount, 1);
    }
    assert.equal(billing[0].tag, "billing");
    assert.equal(shipping[0].tag, "shipping");
    assert.notEqual(billing[0].receiptHandle, shipping[0].receiptHandle);
    assert.deepEqual(await c.receive(q, { tag: "billing" }), [], "billing has nothing left");
  });

  test("billing deletes; shipping dead-letters one with a reason", async () => {
    for (const m of billing) await c.delete(m.receiptHandle); // the handle names its queue
    await c.delete(billing[0].receiptHandle, { queue: q }); // twice: not an error
    await c.dead(shipping[2].receiptHandle, { reason: "BAD_ADDRESS", description: "no such street" });

    const b = (await c.getTag(q, "billing")).state!;
    const s = (await c.getTag(q, "shipping")).state!;
    assert.equal(b.deletedTotal, 3n);
    assert.equal(b.inFlight, 0n);
    assert.equal(s.deadTotal, 1n);
    assert.equal(s.inFlight, 2n);
  });

  test("the dead letter in the DLQ says where it came from and why", async () => {
    const check = (d: Message) => {
      assert.equal(textOf(d), "third");
      assert.equal(d.deadLetter?.sourceQueueName, q);
      assert.equal(d.deadLetter?.sourceTag, "shipping");
      assert.equal(d.deadLetter?.reason, "BAD_ADDRESS");
      assert.equal(d.deadLetter?.description, "no such street");
      assert.equal(d.deadLetter?.originalMessageId, ids[2]);
      assert.equal(d.deadLetter?.originalReceiveCount, 1);
      assert.ok(d.deadLetter?.deadTimestamp, "deadTimestamp is set");
      const attrs = attributesOf(d);
      assert.equal(attrs["DLQ.sourceQueue"], q);
      assert.equal(attrs["region"], "eu");
    };
    const peeked = await c.peek(dlq, { maxMessages: 10 });
    assert.equal(peeked.length, 1);
    check(peeked[0]);
    assert.equal(peeked[0].receiptHandle, "", "peek hands out no receipt handle");

    // Received and kept in flight: the DLQ still needs it, so a message move
    // below covers it. (A dead letter every DLQ tag has deleted is done with:
    // a move leaves it.)
    const [received] = await receiveN(dlq, "", 1);
    check(received);
    assert.ok(received.receiptHandle);
  });

  test("a message received maxReceiveCount (2) times is dead-lettered on the next receive", async () => {
    const first = shipping[0];
    await c.changeVisibility(first.receiptHandle, 0); // nack
    const [again] = await receiveN(q, "shipping", 1);
    assert.equal(again.messageId, first.messageId);
    assert.equal(again.receiveCount, 2);
    await rejectsWith(c.changeVisibility(first.receiptHandle, 0), "RECEIPT_HANDLE_STALE", { code: Code.FailedPrecondition });
    await c.changeVisibility(again.receiptHandle, 0, { queue: q });
    assert.deepEqual(await c.receive(q, { tag: "shipping", maxMessages: 10 }), [], "dead-lettered, not delivered");

    const d = (await c.peek(dlq, { maxMessages: 10 })).find((m) => m.deadLetter?.reason === "MAX_RECEIVE_COUNT_EXCEEDED");
    assert.ok(d, "no MAX_RECEIVE_COUNT_EXCEEDED dead letter");
    assert.equal(d.deadLetter?.originalMessageId, first.messageId);
    assert.equal(d.deadLetter?.originalReceiveCount, 2);
    assert.equal(d.deadLetter?.sourceTag, "shipping");
  });

  test("a message move brings the dead letters back to their tag only", async () => {
    const task = await c.startMessageMove(dlq, { sourceQueue: q });
    assert.ok(task.taskId);
    const deadline = Date.now() + 10_000;
    let state = task.state;
    while (state === MessageMoveTask_State.RUNNING && Date.now() < deadline) {
      await sleep(50);
      state = (await c.listMessageMoves(dlq)).find((t) => t.taskId === task.taskId)!.state;
    }
    assert.equal(state, MessageMoveTask_State.COMPLETED);
    // In dead-letter order: the consumer's dead letter, then the one that
    // exceeded maxReceiveCount.
    const back = await receiveN(q, "shipping", 2);
    assert.deepEqual(back.map(textOf), ["third", "first"]);
    for (const m of back) {
      assert.equal(m.moveCount, 1);
      assert.equal(m.receiveCount, 1);
    }
    assert.deepEqual(attributesOf(back[0]), { region: "eu", raw: new Uint8Array([0, 1, 255]) }, "DLQ.sourceQueue is dropped");
    assert.deepEqual(await c.receive(q, { tag: "billing" }), [], "billing does not get them again");
    assert.deepEqual(await c.peek(dlq), []);
    const [done] = await c.listMessageMoves(dlq);
    assert.equal(done.taskId, task.taskId);
    assert.equal(done.movedMessages, 2n);
  });

  test("a DLQ in use is deleted only with force", async () => {
    await rejectsWith(c.deleteQueue(dlq), "DEAD_LETTER_QUEUE_IN_USE", { code: Code.FailedPrecondition });
    await c.deleteQueue(dlq, { force: true });
    assert.equal((await c.getQueue(q)).redrivePolicy, undefined);
    await c.deleteQueue(q);
    await rejectsWith(c.getQueue(q), "QUEUE_NOT_FOUND", { code: Code.NotFound });
  });
});

describe("bounded memory", () => {
  test("a queue without a default tag and with a cap refuses sends beyond it", async () => {
    const q = await c.createQueue("ts-capped", { noDefaultTag: true, maxRetainedMessages: 1n });
    assert.equal(q.defaultTagName, "");
    assert.equal(q.maxRetainedMessages, 1n);
    assert.equal(q.overflowPolicy, OverflowPolicy.REJECT_NEW);
    await c.send("ts-capped", "one");
    await rejectsWith(c.send("ts-capped", "two"), "QUEUE_FULL", { code: Code.ResourceExhausted });
    await rejectsWith(c.receive("ts-capped"), "TAG_NOT_FOUND", { field: "tag", code: Code.NotFound });
    const u = await c.updateQueue("ts-capped", { overflowPolicy: OverflowPolicy.DROP_OLDEST });
    assert.equal(u.overflowPolicy, OverflowPolicy.DROP_OLDEST);
    await c.send("ts-capped", "three");
    assert.equal((await c.getQueue("ts-capped")).state?.droppedTotal, 1n);
    await c.deleteQueue("ts-capped");
  });
});

describe("errors", () => {
  test("a queue name with a space: INVALID_NAME on queue.name", async () => {
    const e = await rejectsWith(c.createQueue("has space"), "INVALID_NAME", { field: "queue.name", code: Code.InvalidArgument });
    assert.equal(e.codeName, "InvalidArgument");
    assert.ok(e.message.length > 0);
  });

  test("a garbled receipt handle: INVALID_RECEIPT_HANDLE", async () => {
    await c.createQueue("ts-errors");
    await rejectsWith(c.delete("garbled"), "INVALID_RECEIPT_HANDLE", { code: Code.InvalidArgument });
    await rejectsWith(c.delete("garbled", { queue: "ts-errors" }), "INVALID_RECEIPT_HANDLE", { code: Code.InvalidArgument });
    await rejectsWith(c.changeVisibility("garbled", 5), "INVALID_RECEIPT_HANDLE");
  });

  test("missing queue and no redrive policy", async () => {
    await rejectsWith(c.receive("ts-nope"), "QUEUE_NOT_FOUND", { code: Code.NotFound });
    await rejectsWith(c.send("ts-nope", "x"), "QUEUE_NOT_FOUND");
    await c.send("ts-errors", "x");
    const [m] = await receiveN("ts-errors", "", 1);
    await rejectsWith(c.dead(m.receiptHandle), "NOT_A_SOURCE_QUEUE", { code: Code.FailedPrecondition });
  });

  test("sendBatch reports refused entries and stores the others", async () => {
    await c.createQueue("ts-batch");
    const r = await c.sendBatch("ts-batch", ["a", { body: "b", attributes: { "DLQ.mine": "x" } }, { body: new Uint8Array([99]), attributes: { k: "v" } }]);
    assert.equal(r.failed.length, 1);
    assert.equal(r.failed[0].index, 1);
    assert.equal(r.failed[0].reason, "RESERVED_ATTRIBUTE");
    assert.ok(r.messageIds[0] && r.messageIds[2]);
    assert.equal(r.messageIds[1], undefined);
    const got = await receiveN("ts-batch", "", 2);
    assert.deepEqual(got.map(textOf), ["a", "c"]);
    assert.deepEqual(attributesOf(got[1]), { k: "v" });
  });
});

describe("queues and tags", () => {
  test("update, list, filtered tag from the oldest message, purge, delete tag", async () => {
    const q = "ts-admin";
    await c.createQueue(q, { userAttributes: { team: "a" }, defaultTagName: "main" });
    const u = await c.updateQueue(q, { visibilityTimeoutSeconds: 45, userAttributes: { team: "b" } });
    assert.equal(u.visibilityTimeoutSeconds, 45);
    assert.deepEqual(u.userAttributes, { team: "b" });
    assert.equal((await c.getQueue(q)).defaultTagName, "main");
    assert.deepEqual((await c.listQueues({ prefix: "ts-adm" })).map((x) => x.name), [q]);

    await c.send(q, "eu", { attributes: { region: "eu" } });
    await c.send(q, "us", { attributes: { region: "us" } });
    await c.createTag(q, "eu-only", { startTime: "oldest", filter: { region: "eu" }, visibilityTimeoutSeconds: 5 });
    await c.createTag(q, "late"); // from now on: sees neither
    const tag = await c.getTag(q, "eu-only");
    assert.equal(tag.visibilityTimeoutSeconds, 5);
    assert.equal(tag.filter?.conditions[0]?.stringValue, "eu");
    assert.deepEqual((await receiveN(q, "eu-only", 1)).map(textOf), ["eu"]);
    assert.deepEqual(await c.receive(q, { tag: "eu-only", maxMessages: 10 }), []);
    assert.deepEqual(await c.receive(q, { tag: "late", maxMessages: 10 }), []);
    assert.deepEqual((await c.peek(q, { tag: "main", maxMessages: 10 })).map(textOf), ["eu", "us"]);

    assert.equal(await c.purgeQueue(q), 2n);
    await c.deleteTag(q, "late");
    await rejectsWith(c.getTag(q, "late"), "TAG_NOT_FOUND", { code: Code.NotFound, field: "name" });
  });

  test("seekTag replays a tag from a time or a message id (S22); other tags stay", async () => {
    const q = "ts-seek";
    await c.createQueue(q);
    await c.createTag(q, "audit");
    const ids = [await c.send(q, "a"), await c.send(q, "b"), await c.send(q, "c")];
    const got = await receiveN(q, "default", 3);
    assert.deepEqual(got.map(textOf), ["a", "b", "c"]);
    await c.delete(got[0]!.receiptHandle);

    let t = await c.seekTag(q, "default", { time: "oldest" });
    assert.equal(t.state?.available, 3n);
    assert.equal(t.state?.inFlight, 0n, "in flight dropped");
    assert.equal(t.state?.deletedTotal, 1n, "totals stay");
    await c.delete(got[1]!.receiptHandle); // from before the seek: deletes nothing
    assert.equal((await c.getTag(q, "default")).state?.available, 3n);

    t = await c.seekTag(q, "default", { messageId: ids[1]! });
    assert.equal(t.state?.available, 2n);
    const again = await c.receive(q, { maxMessages: 10 });
    assert.deepEqual(again.map((m) => [textOf(m), m.receiveCount]), [["b", 1], ["c", 1]]);
    t = await c.seekTag(q, "default", { time: new Date(Date.now() + 3_600_000) });
    assert.equal(t.state?.available, 0n);
    assert.equal((await c.getTag(q, "audit")).state?.available, 3n);

    await rejectsWith(c.seekTag(q, "default", { messageId: "1-1" }), "MESSAGE_NOT_FOUND", { code: Code.NotFound, field: "message_id" });
    await rejectsWith(c.seekTag(q, "default", { messageId: "yesterday" }), "INVALID_ARGUMENT_RANGE", {
      code: Code.InvalidArgument,
      field: "message_id",
    });
    await rejectsWith(c.seekTag(q, "missing", { time: "oldest" }), "TAG_NOT_FOUND", { field: "name" });
  });

  test("JSON.stringify of what the calls return: int64 counters as strings", async () => {
    const q = "ts-json";
    await c.createQueue(q);
    await c.createTag(q, "t", { startTime: "oldest" });
    await c.send(q, "a");
    await c.send(q, "b");
    const [m] = await receiveN(q, "t", 1);
    const tag = await c.getTag(q, "t");
    assert.equal(typeof tag.state!.available, "bigint"); // still bigint in code: JSON.stringify alone would throw

    const json = JSON.parse(JSON.stringify(tag));
    assert.equal(json.name, "t");
    assert.deepEqual(
      [json.state.available, json.state.inFlight, json.state.receivedTotal, json.state.deadTotal],
      ["1", "1", "1", "0"], // exact, zeros included
    );
    assert.equal(Date.parse(json.createTime), timestampMs(tag.createTime!));
    assert.ok(equals(TagSchema, fromJson(TagSchema, json), tag), "the JSON reads back as the same tag");
    // Nested messages, lists and the other answers too.
    assert.equal(JSON.parse(JSON.stringify(tag.state)).available, "1");
    const mj = JSON.parse(JSON.stringify(m));
    assert.equal(mj.messageId, m.messageId);
    assert.equal(Buffer.from(mj.body, "base64").toString(), "a");
    assert.equal(Date.parse(mj.sendTime), timestampMs(m.sendTime!));
    assert.equal(JSON.parse(JSON.stringify(await c.listTags(q))).length, 2);
    assert.equal(JSON.parse(JSON.stringify(await c.getQueue(q))).name, q);
    assert.deepEqual(JSON.parse(JSON.stringify(await c.peek(q, { tag: "t", maxMessages: 10 }))).map((x: { body: string }) => x.body), [
      Buffer.from("b").toString("base64"),
    ]);
  });
});

/** tagqd's gauge of receives waiting (long polling) for a message. */
async function waitingReceives(): Promise<number> {
  const text = await (await fetch(`http://${httpAddr}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith("tagq_receives_waiting "));
  return line ? Number(line.split(" ")[1]) : 0;
}

describe("iterate", () => {
  test("yields a message sent after it started waiting", async () => {
    await c.createQueue("ts-iter");
    const abort = new AbortController();
    const first = (async () => {
      for await (const m of c.iterate("ts-iter", "", { waitSeconds: 20, signal: abort.signal })) {
        await c.delete(m.receiptHandle);
        return textOf(m);
      }
      return "(ended without a message)";
    })();
    const deadline = Date.now() + 10_000;
    while ((await waitingReceives()) < 1) {
      assert.ok(Date.now() < deadline, "the receive never started waiting");
      await sleep(20);
    }
    await c.send("ts-iter", "late");
    assert.equal(await first, "late");
    abort.abort();
  });

  test("ends quietly when aborted while waiting", async () => {
    const abort = new AbortController();
    const seen: Message[] = [];
    const loop = (async () => {
      for await (const m of c.iterate("ts-iter", "", { waitSeconds: 20, signal: abort.signal })) seen.push(m);
    })();
    const deadline = Date.now() + 10_000;
    while ((await waitingReceives()) < 1) {
      assert.ok(Date.now() < deadline, "the receive never started waiting");
      await sleep(20);
    }
    const t0 = Date.now();
    abort.abort();
    await loop;
    assert.ok(Date.now() - t0 < 5_000, "abort did not end the long poll");
    assert.deepEqual(seen, []);
  });

  test("a break hands back the messages not yet yielded", async () => {
    await c.createQueue("ts-iter-break", { visibilityTimeoutSeconds: 600 });
    const sent = (await c.sendBatch("ts-iter-break", ["m1", "m2", "m3"])).messageIds;
    for await (const m of c.iterate("ts-iter-break", "", { waitSeconds: 1 })) {
      assert.equal(textOf(m), "m1");
      await c.delete(m.receiptHandle);
      break;
    }
    const rest = await c.receive("ts-iter-break", { maxMessages: 10 });
    assert.deepEqual(rest.map((m) => m.messageId), sent.slice(1));
    for (const m of rest) assert.equal(m.receiveCount, 2);
  });
});

describe("deduplication", () => {
  test("a deduplicationId, or the body with contentBasedDeduplication, stores one message", async () => {
    const q = "ts-dedup";
    await c.createQueue(q);
    const first = await c.send(q, "a", { deduplicationId: "order-1" });
    assert.equal(await c.send(q, "a again", { deduplicationId: "order-1" }), first);
    const batch = await c.sendBatch(q, [{ body: "b", deduplicationId: "order-1" }, "c"]);
    assert.equal(batch.messageIds[0], first);
    const pub = c.publisher();
    assert.equal(await pub.publish(q, "d", { deduplicationId: "order-1" }), first);
    await pub.close();
    await rejectsWith(c.send(q, "x", { deduplicationId: "no spaces" }), "INVALID_ARGUMENT_RANGE", {
      field: "deduplication_id",
      code: Code.InvalidArgument,
    });
    let got = await c.getQueue(q);
    assert.equal(got.state?.retainedMessages, 2n);
    assert.equal(got.state?.deduplicatedTotal, 3n);
    got = await c.updateQueue(q, { contentBasedDeduplication: true });
    assert.equal(got.contentBasedDeduplication, true);
    assert.equal(await c.send(q, "same"), await c.send(q, "same"));
    await c.deleteQueue(q);
  });
});

describe("priority queues", () => {
  test("priority 1 first, FIFO within a priority, the priority shown", async () => {
    const q = "ts-priorities";
    await c.createQueue(q, { priorityQueue: true });
    assert.equal((await c.getQueue(q)).priorityQueue, true);
    await c.sendBatch(q, [{ body: "low-1", priority: 16 }, { body: "low-2", priority: 16 }]);
    await c.send(q, "default");
    const pub = c.publisher();
    await pub.publish(q, "high", { priority: 1 });
    await pub.close();
    await rejectsWith(c.send(q, "bad", { priority: 17 }), "INVALID_ARGUMENT_RANGE", { field: "priority", code: Code.InvalidArgument });
    const got = await c.receive(q, { maxMessages: 10 });
    assert.deepEqual(got.map((m) => [m.priority, Buffer.from(m.body).toString()]),
      [[1, "high"], [8, "default"], [16, "low-1"], [16, "low-2"]]);
    await c.deleteQueue(q);
  });
});

describe("topic queues", () => {
  test("one message per topic at a time, in send order", async () => {
    const q = "ts-topics";
    await c.createQueue(q, { topicQueue: true });
    await c.sendBatch(q, [{ body: "a1", topic: "a" }, { body: "a2", topic: "a" }]);
    await c.send(q, "b1", { topic: "b" });
    const pub = c.publisher();
    await pub.publish(q, "a3", { topic: "a" });
    await pub.close();
    await rejectsWith(c.send(q, "no topic"), "INVALID_ARGUMENT_RANGE", { field: "topic", code: Code.InvalidArgument });
    const got = await c.receive(q, { maxMessages: 10 });
    assert.deepEqual(got.map((m) => [m.topic, Buffer.from(m.body).toString()]), [["a", "a1"], ["b", "b1"]]);
    assert.equal((await c.receive(q, { maxMessages: 10 })).length, 0);
    await c.delete(got[0].receiptHandle);
    assert.deepEqual((await c.receive(q, { maxMessages: 10 })).map((m) => Buffer.from(m.body).toString()), ["a2"]);
    await c.deleteQueue(q);
  });
});

describe("partitioned queues", () => {
  test("partitions set at creation; each tag receives every message once; bad counts name the field", async () => {
    const q = "ts-parts";
    assert.equal((await c.createQueue(q, { partitions: 4 })).partitions, 4);
    assert.equal((await c.getQueue(q)).partitions, 4);
    await c.createTag(q, "audit");
    const want: string[] = [];
    for (let b = 0; b < 4; b++) { // batches rotate over the partitions
      const bodies = [0, 1, 2].map((i) => `m${b}-${i}`);
      const r = await c.sendBatch(q, bodies.map((body) => ({ body })));
      assert.equal(new Set(r.messageIds).size, 3);
      want.push(...bodies);
    }
    assert.equal((await c.getQueue(q)).state?.retainedMessages, 12n, "a sum over the partitions");
    for (const tag of ["default", "audit"]) {
      const got = await receiveN(q, tag, want.length);
      for (const m of got) await c.delete(m.receiptHandle);
      assert.deepEqual(got.map(textOf).sort(), [...want].sort(), tag);
      assert.equal((await c.getTag(q, tag)).state?.deletedTotal, 12n, tag);
    }
    for (const bad of [{ partitions: 65 }, { partitions: 0 }, { partitions: 2, deadLetterQueue: true }, { partitions: 2, priorityQueue: true }]) {
      await rejectsWith(c.createQueue("ts-parts-bad", bad), "INVALID_ARGUMENT_RANGE", { field: "queue.partitions", code: Code.InvalidArgument });
    }
    await c.deleteQueue("ts-parts");
  });
});

// Retry backoff (README "Retry backoff"): set on create, shown, a nack with
// the queue's backoff ending a long poll only after it, a bad range named,
// removed with null.
describe("retry backoff", () => {
  test("the queue's policy, nackWithBackoff, bad input, removal", async () => {
    const q = "ts-retry";
    const created = await c.createQueue(q, { retryPolicy: { minBackoffSeconds: 1, maxBackoffSeconds: 1 } });
    assert.equal(created.retryPolicy?.minBackoffSeconds, 1);
    assert.equal(created.retryPolicy?.maxBackoffSeconds, 1);
    await c.send(q, "job");
    const [m] = await c.receive(q);
    assert.ok(m);
    const t0 = Date.now();
    await c.nackWithBackoff(m.receiptHandle);
    const again = await c.receive(q, { waitSeconds: 10 });
    assert.ok(Date.now() - t0 >= 900, "back only after the 1 s backoff");
    assert.equal(again[0]?.receiveCount, 2);

    await rejectsWith(c.updateQueue(q, { retryPolicy: { minBackoffSeconds: 5, maxBackoffSeconds: 1 } }), "INVALID_ARGUMENT_RANGE", {
      field: "queue.retry_policy.max_backoff_seconds",
      code: Code.InvalidArgument,
    });
    assert.equal((await c.getQueue(q)).retryPolicy?.maxBackoffSeconds, 1, "nothing changed");
    const removed = await c.updateQueue(q, { retryPolicy: null });
    assert.equal(removed.retryPolicy, undefined);
    await c.deleteQueue(q);
  });
});
