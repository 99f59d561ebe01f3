// AWS SDK for JavaScript v3 (@aws-sdk/client-sqs, the JSON protocol)
// against tagq's SQS endpoint: TAGQ_SQS_ENDPOINT (http://host:port), with
// AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (any, with authentication off;
// a tagq key's SigV4 credentials with it). The SDK checks MD5OfBody and
// MD5OfMessageBody itself and fails the call on a wrong one; this test
// checks MD5OfMessageAttributes with its own reading of SQS's algorithm.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import {
  SQSClient, CreateQueueCommand, GetQueueUrlCommand, SendMessageCommand, SendMessageBatchCommand,
  ReceiveMessageCommand, DeleteMessageBatchCommand, ChangeMessageVisibilityCommand, GetQueueAttributesCommand,
  DeleteQueueCommand, QueueDoesNotExist,
} from "@aws-sdk/client-sqs";

const endpoint = process.env.TAGQ_SQS_ENDPOINT;
assert.ok(endpoint, "TAGQ_SQS_ENDPOINT is required");
const sqs = new SQSClient({ endpoint, region: "us-east-1", maxAttempts: 1 });
const run = `js${process.pid}`;

// SQS's MD5OfMessageAttributes: names in order, each as length-prefixed
// name and type, a transport byte (1 string/number, 2 binary), and the
// length-prefixed value.
function md5OfAttributes(attrs) {
  const h = createHash("md5");
  const put = (b) => {
    const n = Buffer.alloc(4);
    n.writeUInt32BE(b.length);
    h.update(n);
    h.update(b);
  };
  for (const name of Object.keys(attrs).sort()) {
    const a = attrs[name];
    put(Buffer.from(name, "utf8"));
    put(Buffer.from(a.DataType, "utf8"));
    if (a.DataType.startsWith("Binary")) {
      h.update(Buffer.from([2]));
      put(Buffer.from(a.BinaryValue));
    } else {
      h.update(Buffer.from([1]));
      put(Buffer.from(a.StringValue, "utf8"));
    }
  }
  return h.digest("hex");
}

async function receiveAll(url, n, extra = {}) {
  const got = [];
  while (got.length < n) {
    const r = await sqs.send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, WaitTimeSeconds: 2, ...extra }));
    assert.ok(r.Messages?.length, `received ${got.length} of ${n}`);
    got.push(...r.Messages);
  }
  return got;
}

test("a queue read by two tags, each a queue URL of its own", async () => {
  const { QueueUrl: queue } = await sqs.send(new CreateQueueCommand({ QueueName: `${run}-orders` }));
  assert.equal(queue, `${endpoint}/000000000000/${run}-orders`);
  const { QueueUrl: billing } = await sqs.send(new CreateQueueCommand({ QueueName: `${run}-orders~billing` }));
  assert.equal((await sqs.send(new GetQueueUrlCommand({ QueueName: `${run}-orders~billing` }))).QueueUrl, billing);

  const attrs = {
    region: { DataType: "String", StringValue: "eu" },
    amount: { DataType: "Number", StringValue: "12.50" },
    raw: { DataType: "Binary", BinaryValue: Uint8Array.from([0, 1, 254, 255]) },
  };
  const sent = await sqs.send(new SendMessageCommand({ QueueUrl: queue, MessageBody: "first ✓", MessageAttributes: attrs }));
  assert.equal(sent.MD5OfMessageAttributes, md5OfAttributes(attrs));
  const batch = await sqs.send(new SendMessageBatchCommand({
    QueueUrl: billing,
    Entries: [
      { Id: "a", MessageBody: "second" },
      { Id: "b", MessageBody: "third" },
      { Id: "bad", MessageBody: "x", MessageAttributes: { n: { DataType: "Number", StringValue: "NaN?" } } },
    ],
  }));
  assert.deepEqual(batch.Successful.map((s) => s.Id).sort(), ["a", "b"]);
  assert.equal(batch.Failed.length, 1);
  assert.equal(batch.Failed[0].Id, "bad");
  assert.equal(batch.Failed[0].SenderFault, true);

  for (const url of [queue, billing]) {
    const got = await receiveAll(url, 3, { MessageAttributeNames: ["All"], MessageSystemAttributeNames: ["All"] });
    assert.deepEqual(got.map((m) => m.Body).sort(), ["first ✓", "second", "third"]);
    assert.equal(new Set(got.map((m) => m.MessageId)).size, 3, "each message once per tag");
    const first = got.find((m) => m.Body === "first ✓");
    assert.equal(first.MD5OfMessageAttributes, md5OfAttributes(first.MessageAttributes));
    assert.deepEqual(Array.from(first.MessageAttributes.raw.BinaryValue), [0, 1, 254, 255]);
    assert.equal(first.MessageAttributes.amount.DataType, "Number");
    assert.equal(first.Attributes.ApproximateReceiveCount, "1");

    // One back at once, then delete all.
    await sqs.send(new ChangeMessageVisibilityCommand({ QueueUrl: url, ReceiptHandle: got[0].ReceiptHandle, VisibilityTimeout: 0 }));
    const [again] = await receiveAll(url, 1, { MessageSystemAttributeNames: ["ApproximateReceiveCount"] });
    assert.equal(again.Attributes.ApproximateReceiveCount, "2");
    got[0] = again;
    const del = await sqs.send(new DeleteMessageBatchCommand({
      QueueUrl: url, Entries: got.map((m, i) => ({ Id: `m${i}`, ReceiptHandle: m.ReceiptHandle })),
    }));
    assert.equal(del.Successful.length, 3);
  }
  const a = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: billing, AttributeNames: ["All"] }));
  assert.equal(a.Attributes.ApproximateNumberOfMessages, "0");
  assert.equal(a.Attributes.ApproximateNumberOfMessagesNotVisible, "0");
  await sqs.send(new DeleteQueueCommand({ QueueUrl: queue }));
  await assert.rejects(sqs.send(new GetQueueUrlCommand({ QueueName: `${run}-orders` })), QueueDoesNotExist);
});

test("a FIFO queue keeps each group's order", async () => {
  const { QueueUrl: q } = await sqs.send(new CreateQueueCommand({
    QueueName: `${run}-jobs.fifo`, Attributes: { FifoQueue: "true", ContentBasedDeduplication: "true" },
  }));
  const entries = [];
  for (let i = 0; i < 10; i++) entries.push({ Id: `e${i}`, MessageBody: `g${i % 2}-${i}`, MessageGroupId: `g${i % 2}` });
  const r = await sqs.send(new SendMessageBatchCommand({ QueueUrl: q, Entries: entries }));
  assert.equal(r.Successful.length, 10);
  const seen = { g0: [], g1: [] };
  for (let n = 0; n < 10;) {
    const got = await receiveAll(q, 1, { MessageSystemAttributeNames: ["MessageGroupId"] });
    for (const m of got) {
      seen[m.Attributes.MessageGroupId].push(Number(m.Body.split("-")[1]));
      n++;
    }
    await sqs.send(new DeleteMessageBatchCommand({ QueueUrl: q, Entries: got.map((m, i) => ({ Id: `d${i}`, ReceiptHandle: m.ReceiptHandle })) }));
  }
  assert.deepEqual(seen.g0, [0, 2, 4, 6, 8]);
  assert.deepEqual(seen.g1, [1, 3, 5, 7, 9]);
});
