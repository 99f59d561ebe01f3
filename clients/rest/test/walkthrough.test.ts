// The README's curl walk-throughs ("A walk-through with curl" and "Dead
// letters"), step by step through the generated REST client, against the
// tagqd at TAGQ_HTTP_ADDR (run_tests.sh starts one), checking every answer.
import assert from "node:assert/strict";
import { test } from "node:test";
import { createTagqClient, must, TagqRestError, type components } from "../src/client.js";

type Message = components["schemas"]["v1Message"];

const addr = process.env["TAGQ_HTTP_ADDR"];
if (!addr) throw new Error("TAGQ_HTTP_ADDR is not set: run ./run_tests.sh, which starts a tagqd");
const client = createTagqClient({ baseUrl: `http://${addr}` });

const b64 = (s: string) => Buffer.from(s).toString("base64");
const text = (m: Message) => Buffer.from(m.body ?? "", "base64").toString();

async function tagState(queue: string, name: string) {
  const { tag } = must(await client.GET("/v1/queues/{queue}/tags/{name}", { params: { path: { queue, name } } }));
  assert.ok(tag?.state, `tag ${queue}/${name} has a state`);
  return tag.state;
}

test("the curl walk-through: a queue, two tags, receive, delete, nack, long poll", async () => {
  const created = must(await client.POST("/v1/queues", { body: { name: "orders" } }));
  assert.equal(created.queue?.name, "orders");
  assert.equal(created.queue?.default_tag_name, "default");
  assert.equal(created.queue?.redrive_policy, null, "an unset message field is null");
  for (const name of ["billing", "shipping"]) {
    const { tag } = must(await client.POST("/v1/queues/{queue}/tags", { params: { path: { queue: "orders" } }, body: { name } }));
    assert.equal(tag?.name, name);
  }

  const sent = must(
    await client.POST("/v1/queues/{queue}/messages:batchSend", {
      params: { path: { queue: "orders" } },
      body: {
        entries: [
          { id: "1", body: b64("order 1") },
          { id: "2", body: b64("order 2") },
          { id: "3", body: b64("order 3"), attributes: { region: { string_value: "eu" } } },
        ],
      },
    }),
  );
  assert.deepEqual(sent.successful?.map((r) => r.id).sort(), ["1", "2", "3"]);
  assert.deepEqual(sent.failed, []);

  // Each tag receives all three, independently.
  const receive = async (tag: string) =>
    must(
      await client.POST("/v1/queues/{queue}/messages:receive", {
        params: { path: { queue: "orders" } },
        body: { tag, max_messages: 10 },
      }),
    ).messages ?? [];
  const billing = await receive("billing");
  const shipping = await receive("shipping");
  for (const got of [billing, shipping]) {
    assert.deepEqual(got.map(text).sort(), ["order 1", "order 2", "order 3"]);
    assert.ok(got.every((m) => m.receive_count === 1 && m.receipt_handle));
    assert.equal(got.find((m) => text(m) === "order 3")?.attributes?.["region"]?.string_value, "eu");
  }
  assert.deepEqual(billing.map((m) => m.message_id).sort(), shipping.map((m) => m.message_id).sort());

  // Billing deletes them by receipt handle alone (it names the queue and
  // tag); shipping still holds them in flight.
  for (const m of billing) {
    must(await client.POST("/v1/messages:delete", { body: { receipt_handle: m.receipt_handle } }));
  }
  const b = await tagState("orders", "billing");
  assert.equal(b.deleted_total, "3", "64-bit counters are strings");
  assert.equal(b.in_flight, "0");
  assert.equal(b.available, "0");
  const s = await tagState("orders", "shipping");
  assert.equal(s.in_flight, "3");
  assert.equal(s.deleted_total, "0");

  // Give one back at once (a nack): it is shipping's again, receive_count 2.
  const nacked = shipping[0]!;
  must(
    await client.POST("/v1/queues/{queue}/messages:changeVisibility", {
      params: { path: { queue: "orders" } },
      body: { receipt_handle: nacked.receipt_handle, visibility_seconds: 0 },
    }),
  );
  // Long polling: wait up to 10 s for a message (this one returns at once).
  const again = must(
    await client.POST("/v1/queues/{queue}/messages:receive", {
      params: { path: { queue: "orders" } },
      body: { tag: "shipping", wait_seconds: 10 },
    }),
  ).messages ?? [];
  assert.equal(again.length, 1);
  assert.equal(again[0]!.message_id, nacked.message_id);
  assert.equal(again[0]!.receive_count, 2);
  assert.notEqual(again[0]!.receipt_handle, nacked.receipt_handle, "a new handle on every receive");
  const s2 = await tagState("orders", "shipping");
  assert.equal(s2.in_flight, "3");
  assert.equal(s2.received_total, "4");
});

test("errors: a JSON status with ErrorInfo naming the field", async () => {
  const r = await client.POST("/v1/queues", { body: { name: "has space" } });
  assert.equal(r.response.status, 400);
  assert.equal(r.data, undefined);
  assert.equal(r.error?.code, 3, "INVALID_ARGUMENT");
  const err = new TagqRestError(r.response.status, r.error!);
  assert.equal(err.reason, "INVALID_NAME");
  assert.equal(err.field, "queue.name");
  assert.ok(r.error?.details?.some((d) => d["@type"] === "type.googleapis.com/google.rpc.BadRequest"));

  await assert.rejects(
    async () => must(await client.GET("/v1/queues/{name}", { params: { path: { name: "no-such-queue" } } })),
    (e: unknown) => e instanceof TagqRestError && e.httpStatus === 404 && e.reason === "QUEUE_NOT_FOUND",
  );
});

test("update_mask: PATCH changes only the fields it names, or those in the body", async () => {
  must(await client.POST("/v1/queues", { body: { name: "patched" } }));
  const { queue } = must(
    await client.PATCH("/v1/queues/{name}", {
      params: { path: { name: "patched" }, query: { update_mask: "visibility_timeout_seconds" } },
      body: { visibility_timeout_seconds: 90, delay_seconds: 7 },
    }),
  );
  assert.equal(queue?.visibility_timeout_seconds, 90);
  assert.equal(queue?.delay_seconds, 0, "not in update_mask, not changed");
  // Without update_mask, the fields present in the body are updated.
  const inferred = must(
    await client.PATCH("/v1/queues/{name}", { params: { path: { name: "patched" } }, body: { delay_seconds: 3 } }),
  );
  assert.equal(inferred.queue?.delay_seconds, 3);
  assert.equal(inferred.queue?.visibility_timeout_seconds, 90, "not in the body, not changed");
  const bad = await client.PATCH("/v1/queues/{name}", {
    params: { path: { name: "patched" }, query: { update_mask: "no_such_field" } },
    body: { delay_seconds: 1 },
  });
  assert.equal(bad.response.status, 400);
  assert.equal(new TagqRestError(400, bad.error!).field, "update_mask");
});

test("the dead-letters walk-through: dead-letter, peek the DLQ, a filtered tag, a move back", async () => {
  must(await client.POST("/v1/queues", { body: { name: "orders-dlq", dead_letter_queue: true } }));
  const { queue } = must(
    await client.POST("/v1/queues", {
      body: { name: "payments", redrive_policy: { dead_letter_queue: "orders-dlq", max_receive_count: 2 } },
    }),
  );
  assert.equal(queue?.redrive_policy?.dead_letter_queue, "orders-dlq");
  assert.equal(queue?.redrive_policy?.max_receive_count, 2);
  must(await client.POST("/v1/queues/{queue}/tags", { params: { path: { queue: "payments" } }, body: { name: "ledger" } }));
  const sent = must(
    await client.POST("/v1/queues/{queue}/messages", { params: { path: { queue: "payments" } }, body: { body: b64("payment 42") } }),
  );
  assert.ok(sent.message_id);

  // The ledger finds the message poison: dead-letter it now, with a reason.
  const got = must(
    await client.POST("/v1/queues/{queue}/messages:receive", { params: { path: { queue: "payments" } }, body: { tag: "ledger" } }),
  ).messages ?? [];
  assert.equal(got.length, 1);
  must(
    await client.POST("/v1/queues/{queue}/messages:dead", {
      params: { path: { queue: "payments" } },
      body: { receipt_handle: got[0]!.receipt_handle, reason: "BAD_ACCOUNT", description: "no such account" },
    }),
  );
  assert.equal((await tagState("payments", "ledger")).dead_total, "1");

  // The DLQ has it, with its origin.
  const peeked = must(
    await client.POST("/v1/queues/{queue}/messages:peek", { params: { path: { queue: "orders-dlq" } }, body: { max_messages: 10 } }),
  ).messages ?? [];
  assert.equal(peeked.length, 1);
  const dead = peeked[0]!;
  assert.equal(text(dead), "payment 42");
  assert.equal(dead.dead_letter?.source_queue_name, "payments");
  assert.equal(dead.dead_letter?.source_tag, "ledger");
  assert.equal(dead.dead_letter?.reason, "BAD_ACCOUNT");
  assert.equal(dead.dead_letter?.original_message_id, sent.message_id);
  assert.equal(dead.attributes?.["DLQ.sourceQueue"]?.string_value, "payments");

  // A tag on the DLQ that reads one source only.
  const { tag } = must(
    await client.POST("/v1/queues/{queue}/tags", {
      params: { path: { queue: "orders-dlq" } },
      body: {
        name: "from-payments",
        start_time: "1970-01-01T00:00:00Z",
        filter: { conditions: [{ name: "DLQ.sourceQueue", string_value: "payments" }] },
      },
    }),
  );
  assert.equal(tag?.filter?.conditions?.[0]?.string_value, "payments");
  assert.equal((await tagState("orders-dlq", "from-payments")).available, "1");

  // Move dead letters back, then cancel the move.
  const moved = must(
    await client.POST("/v1/queues/{dead_letter_queue}:startMessageMove", {
      params: { path: { dead_letter_queue: "orders-dlq" } },
      body: { source_queue: "payments", max_messages_per_second: 100 },
    }),
  );
  const taskId = moved.task?.task_id;
  assert.ok(taskId);
  const moves = must(
    await client.GET("/v1/queues/{dead_letter_queue}/messageMoves", { params: { path: { dead_letter_queue: "orders-dlq" } } }),
  );
  assert.ok(moves.tasks?.some((t) => t.task_id === taskId), "the move is listed");
  must(
    await client.POST("/v1/queues/{dead_letter_queue}/messageMoves/{task_id}:cancel", {
      params: { path: { dead_letter_queue: "orders-dlq", task_id: taskId } },
      body: {},
    }),
  );
  // Moved back to the ledger alone, or still in the DLQ if the cancel came first.
  const deadline = Date.now() + 5000;
  for (;;) {
    const ledger = await tagState("payments", "ledger");
    const dlq = await tagState("orders-dlq", "default");
    if (ledger.available === "1" || dlq.available === "1") break;
    assert.ok(Date.now() < deadline, `neither back nor in the DLQ: ${JSON.stringify({ ledger, dlq })}`);
    await new Promise((r) => setTimeout(r, 20));
  }
});
