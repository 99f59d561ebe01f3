// Tests of the apiKey option against a real tagqd started with --auth and a
// bootstrap admin key (see testing/tagqd.ts).
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";

import { Code, Permission, TagqClient, TagqError } from "../src/index.js";
import { startTagqd, type Tagqd } from "../testing/tagqd.js";

const adminKey = "the TypeScript client's bootstrap admin key";
let tagqd: Tagqd | undefined;
let dir = "";
const clients: TagqClient[] = [];

function client(apiKey?: string): TagqClient {
  const c = new TagqClient(`http://${tagqd!.grpcAddr}`, apiKey ? { apiKey } : {});
  clients.push(c);
  return c;
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), "tagq-ts-auth-"));
  writeFileSync(join(dir, "admin.key"), adminKey);
  tagqd = await startTagqd("--auth", "--admin-key-file", join(dir, "admin.key"));
});

after(async () => {
  for (const c of clients) c.close();
  if (tagqd) assert.equal(await tagqd.stop(), 0, "tagqd did not exit cleanly on SIGTERM");
  rmSync(dir, { recursive: true, force: true });
});

async function rejection(p: Promise<unknown>): Promise<TagqError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof TagqError, `not a TagqError: ${e}`);
    return e;
  }
  assert.fail("resolved");
}

test("apiKey: none is refused, the admin's and an issued one work, streams too", async () => {
  const none = await rejection(client().createQueue("ts-auth-none"));
  assert.equal(none.code, Code.Unauthenticated);
  assert.equal(none.reason, "UNAUTHENTICATED");

  const admin = client(adminKey);
  await admin.createQueue("ts-auth");
  await admin.access.createPrincipal({ principal: { name: "ts-app" } });
  await admin.access.setPermission({ grant: { principal: "ts-app", queue: "ts-auth", permission: Permission.SEND_RECEIVE } });
  const { apiKey } = await admin.access.issueKey({ principal: "ts-app" });
  assert.match(apiKey, /^tagq_[0-9a-f]{16}_/);

  const app = client(apiKey);
  await app.send("ts-auth", "unary");
  const pub = app.publisher();
  await pub.publish("ts-auth", "streamed");
  await pub.close();
  const bodies = (await app.receive("ts-auth", { maxMessages: 10 })).map((m) => new TextDecoder().decode(m.body)).sort();
  assert.deepEqual(bodies, ["streamed", "unary"]);

  const denied = await rejection(app.getQueue("ts-auth"));
  assert.equal(denied.code, Code.PermissionDenied);
  assert.equal(denied.metadata["permission"], "GET_QUEUE_INFO");
  assert.equal(denied.metadata["queue"], "ts-auth");
});
