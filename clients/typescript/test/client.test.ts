// Tests of the TypeScript client against a real tagqd (built from this
// repo, or TAGQD_BIN), on its embedded store.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";

import { TagqClient, TagqError, attributesOf } from "../src/index.js";

const root = resolve(import.meta.dirname, "../../../..");
let proc: ChildProcess;
let grpc = "";
let http = "";
let dir = "";

before(async () => {
  let bin = process.env.TAGQD_BIN ?? "";
  if (!bin) {
    dir = mkdtempSync(join(tmpdir(), "tagqd-ts-"));
    bin = join(dir, "tagqd");
    execFileSync("go", ["build", "-o", bin, "./cmd/tagqd"], { cwd: root, stdio: "inherit" });
  }
  proc = spawn(bin, ["--grpc-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0", "--log-level", "warn"], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const lines = createInterface({ input: proc.stdout! });
  for await (const line of lines) {
    if (line.startsWith("TAGQ_READY ")) {
      const f = Object.fromEntries(line.split(" ").slice(1).map((kv) => kv.split("=")));
      grpc = f.grpc;
      http = f.http;
      break;
    }
  }
  assert.ok(grpc, "tagqd did not start");
});

after(async () => {
  const exited = new Promise<number | null>((r) => proc.once("exit", (code) => r(code)));
  proc.kill("SIGTERM");
  assert.equal(await exited, 0, "tagqd exited with an error");
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const text = (b: Uint8Array) => new TextDecoder().decode(b);

test("two tags and a DLQ: send, receive on both, delete, dead-letter, read the dead letter", async () => {
  const c = new TagqClient(`http://${grpc}`);
  await c.createQueue("ts-dlq", { deadLetterQueue: true });
  await c.createQueue("ts-orders", { redriveTo: "ts-dlq", maxReceiveCount: 3 });
  await c.createTag("ts-orders", "billing");
  await c.createTag("ts-orders", "shipping");
  const ids = [
    await c.send("ts-orders", "first"),
    await c.send("ts-orders", new TextEncoder().encode("second")),
    await c.send("ts-orders", "third", { attributes: { region: "eu", raw: new Uint8Array([0, 1]) } }),
  ];
  const billing = await c.receive("ts-orders", { tag: "billing", maxMessages: 10 });
  const shipping = await c.receive("ts-orders", { tag: "shipping", maxMessages: 10 });
  assert.deepEqual(billing.map((m) => m.messageId), ids);
  assert.deepEqual(shipping.map((m) => text(m.body)), ["first", "second", "third"]);
  assert.deepEqual(attributesOf(shipping[2]), { region: "eu", raw: new Uint8Array([0, 1]) });
  assert.equal(billing[0].receiveCount, 1);
  assert.equal(billing[0].tag, "billing");

  for (const m of billing) await c.delete("ts-orders", m.receiptHandle);
  await c.dead("ts-orders", shipping[2].receiptHandle, { reason: "BAD_ADDRESS", description: "no such street" });

  const dead = await c.peek("ts-dlq");
  assert.equal(dead.length, 1);
  const d = dead[0];
  assert.equal(text(d.body), "third");
  assert.equal(attributesOf(d)["DLQ.sourceQueue"], "ts-orders");
  assert.equal(d.deadLetter?.sourceQueueName, "ts-orders");
  assert.equal(d.deadLetter?.sourceTag, "shipping");
  assert.equal(d.deadLetter?.reason, "BAD_ADDRESS");
  assert.equal(d.deadLetter?.description, "no such street");
  assert.equal(d.deadLetter?.originalMessageId, ids[2]);
  assert.equal(d.deadLetter?.originalReceiveCount, 1);

  const b = (await c.getTag("ts-orders", "billing")).state!;
  const s = (await c.getTag("ts-orders", "shipping")).state!;
  assert.equal(b.deletedTotal, 3n);
  assert.equal(s.deadTotal, 1n);
  assert.equal(s.inFlight, 2n);
  assert.deepEqual((await c.getQueue("ts-dlq")).sourceQueues, ["ts-orders"]);
});

test("errors carry the ErrorInfo reason and field", async () => {
  const c = new TagqClient(`http://${grpc}`);
  await assert.rejects(c.createQueue("has space"), (e: unknown) => {
    assert.ok(e instanceof TagqError);
    assert.equal(e.reason, "INVALID_NAME");
    assert.equal(e.field, "queue.name");
    return true;
  });
  await c.createQueue("ts-errors");
  await assert.rejects(c.delete("ts-errors", "garbled"), (e: unknown) => e instanceof TagqError && e.reason === "INVALID_RECEIPT_HANDLE");
  await assert.rejects(c.receive("nope"), (e: unknown) => e instanceof TagqError && e.reason === "QUEUE_NOT_FOUND");
});

async function waitingReceives(): Promise<number> {
  const body = await (await fetch(`http://${http}/metrics`)).text();
  const line = body.split("\n").find((l) => l.startsWith("tagq_receives_waiting "));
  return line ? Number(line.split(" ")[1]) : 0;
}

test("iterate yields a message sent while it waits", async () => {
  const c = new TagqClient(`http://${grpc}`);
  await c.createQueue("ts-iter");
  const abort = new AbortController();
  const got = (async () => {
    for await (const m of c.iterate("ts-iter", "", { waitSeconds: 10, signal: abort.signal })) {
      await c.delete("ts-iter", m.receiptHandle);
      return text(m.body);
    }
  })();
  const deadline = Date.now() + 10_000;
  while ((await waitingReceives()) < 1) {
    assert.ok(Date.now() < deadline, "the receive never started waiting");
  }
  await c.send("ts-iter", "late");
  assert.equal(await got, "late");
  abort.abort();
});
