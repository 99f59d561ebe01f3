// Two tags read one queue; a tag serializes with JSON.stringify; a missing
// tag is an error naming the field.
//
// check_install.sh (in CI) compiles this against the packed @tagq/client
// installed in a scratch project, with the package's own types, and runs
// it against a live tagqd: it exits non-zero if anything is not as shown
// in the comments.
import assert from "node:assert/strict";

import { TagqClient, TagqError, attributesOf, textOf } from "@tagq/client";
import { TagSchema } from "@tagq/client/gen/tagq/v1/queue_pb";

const c = new TagqClient(`http://${process.argv[2] ?? "127.0.0.1:9090"}`);
const q = `quickstart-${process.pid}`;
await c.createQueue(q);
try {
  await c.createTag(q, "billing"); // tags are independent readers
  await c.createTag(q, "shipping");
  const sent = await c.send(q, "order 1", { attributes: { region: "eu" } });
  for (const tag of ["billing", "shipping"]) {
    const [m, ...more] = await c.receive(q, { tag, maxMessages: 10, waitSeconds: 5 });
    assert.ok(m && more.length === 0);
    assert.equal(m.messageId, sent);
    assert.deepEqual(attributesOf(m), { region: "eu" });
    console.log(tag, "got", textOf(m)); // billing got order 1, shipping got order 1
    await c.delete(m.receiptHandle);
  }

  const tag = await c.getTag(q, "billing");
  assert.equal(tag.$typeName, TagSchema.typeName);
  const json = JSON.stringify(tag); // int64 counters as decimal strings
  console.log(json);
  assert.equal(JSON.parse(json).state.deletedTotal, "1");

  try {
    await c.getTag(q, "no-such-tag");
    assert.fail("getTag of a missing tag returned");
  } catch (e) {
    assert.ok(e instanceof TagqError);
    console.log(e.reason, e.field); // TAG_NOT_FOUND name
    assert.deepEqual([e.reason, e.field], ["TAG_NOT_FOUND", "name"]);
  }
} finally {
  await c.deleteQueue(q);
  c.close();
}
