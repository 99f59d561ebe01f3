/**
 * TypeScript client of tagq, over gRPC (connect-node's gRPC transport).
 *
 *   const c = new TagqClient("http://127.0.0.1:9090");
 *   await c.createQueue("orders");
 *   await c.send("orders", "order 1", { attributes: { region: "eu" } });
 *   for (const m of await c.receive("orders", { tag: "billing", maxMessages: 10 })) {
 *     await c.delete("orders", m.receiptHandle);
 *   }
 *
 * Server errors are thrown as TagqError: gRPC code, ErrorInfo reason
 * (QUEUE_NOT_FOUND, RECEIPT_HANDLE_STALE, ...) and the request field at fault.
 */
import { create, fromBinary } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, type Client } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";

import { MessageAttributeSchema, MessageService, type Message, type MessageAttribute } from "./gen/tagq/v1/message_pb.js";
import { QueueService, QueueSchema, TagFilter_Operator, TagSchema, type Queue, type Tag } from "./gen/tagq/v1/queue_pb.js";
import { RedriveService, type MessageMoveTask } from "./gen/tagq/v1/redrive_pb.js";
import { ErrorInfoSchema } from "./gen/tagqclient/rpc_pb.js";

export type { Message, Queue, Tag, MessageMoveTask };
export { Code };

/** An error tagqd returned. */
export class TagqError extends Error {
  constructor(
    readonly code: Code,
    message: string,
    /** ErrorInfo reason, e.g. QUEUE_NOT_FOUND. */
    readonly reason: string,
    /** The request field at fault, e.g. queue.name. */
    readonly field: string,
    readonly metadata: Record<string, string>,
  ) {
    super(message);
    this.name = "TagqError";
  }
}

function wrap(err: unknown): unknown {
  if (!(err instanceof Error)) return err;
  const ce = ConnectError.from(err);
  let reason = "";
  let metadata: Record<string, string> = {};
  for (const d of ce.details) {
    // Incoming details are raw: the type name and the encoded message.
    if ("type" in d && d.type === "google.rpc.ErrorInfo") {
      const info = fromBinary(ErrorInfoSchema, d.value);
      reason = info.reason;
      metadata = { ...info.metadata };
    }
  }
  return new TagqError(ce.code, ce.rawMessage, reason, metadata["field"] ?? "", metadata);
}

async function call<T>(p: Promise<T>): Promise<T> {
  try {
    return await p;
  } catch (e) {
    throw wrap(e);
  }
}

type Body = Uint8Array | string;
type Attrs = Record<string, string | Uint8Array>;

function body(b: Body): Uint8Array {
  return typeof b === "string" ? new TextEncoder().encode(b) : b;
}

function attrs(a?: Attrs): Record<string, MessageAttribute> {
  const out: Record<string, MessageAttribute> = {};
  for (const [k, v] of Object.entries(a ?? {})) {
    out[k] = create(MessageAttributeSchema, {
      value: typeof v === "string" ? { case: "stringValue", value: v } : { case: "binaryValue", value: v },
    });
  }
  return out;
}

/** A message's attributes as plain values. */
export function attributesOf(m: Message): Attrs {
  const out: Attrs = {};
  for (const [k, v] of Object.entries(m.attributes)) {
    if (v.value.case !== undefined) out[k] = v.value.value;
  }
  return out;
}

export interface QueueOptions {
  visibilityTimeoutSeconds?: number;
  delaySeconds?: number;
  messageRetentionSeconds?: number;
  receiveWaitSeconds?: number;
  maxMessageBytes?: number;
  deadLetterQueue?: boolean;
  /** Dead-letter queue for messages a tag received maxReceiveCount times. */
  redriveTo?: string;
  maxReceiveCount?: number;
  defaultTagName?: string;
}

export interface TagOptions {
  /** Read every retained message (default: messages sent from now on). */
  fromOldest?: boolean;
  /** Attribute name -> required string value (null: the attribute is present). */
  filter?: Record<string, string | null>;
  anyOf?: boolean;
  visibilityTimeoutSeconds?: number;
}

export interface ReceiveOptions {
  tag?: string;
  maxMessages?: number;
  waitSeconds?: number;
  visibilitySeconds?: number;
  signal?: AbortSignal;
}

/** A connection to a tagqd. */
export class TagqClient {
  readonly queues: Client<typeof QueueService>;
  readonly messages: Client<typeof MessageService>;
  readonly redrive: Client<typeof RedriveService>;

  constructor(baseUrl = "http://127.0.0.1:9090") {
    const transport = createGrpcTransport({ baseUrl });
    this.queues = createClient(QueueService, transport);
    this.messages = createClient(MessageService, transport);
    this.redrive = createClient(RedriveService, transport);
  }

  /** Creates a queue (with its default tag). */
  async createQueue(name: string, o: QueueOptions = {}): Promise<Queue> {
    const q = create(QueueSchema, {
      name,
      visibilityTimeoutSeconds: o.visibilityTimeoutSeconds,
      delaySeconds: o.delaySeconds,
      messageRetentionSeconds: o.messageRetentionSeconds,
      receiveWaitSeconds: o.receiveWaitSeconds,
      maxMessageBytes: o.maxMessageBytes,
      deadLetterQueue: o.deadLetterQueue ?? false,
      defaultTagName: o.defaultTagName ?? "",
      redrivePolicy: o.redriveTo ? { deadLetterQueue: o.redriveTo, maxReceiveCount: o.maxReceiveCount ?? 5 } : undefined,
    });
    return (await call(this.queues.createQueue({ queue: q }))).queue!;
  }

  async getQueue(name: string): Promise<Queue> {
    return (await call(this.queues.getQueue({ name }))).queue!;
  }

  async deleteQueue(name: string, opts: { force?: boolean } = {}): Promise<void> {
    await call(this.queues.deleteQueue({ name, force: opts.force ?? false }));
  }

  /** Adds a tag: an independent reader of the queue. */
  async createTag(queue: string, name: string, o: TagOptions = {}): Promise<Tag> {
    const tag = create(TagSchema, { name, visibilityTimeoutSeconds: o.visibilityTimeoutSeconds });
    if (o.fromOldest) tag.startTime = { $typeName: "google.protobuf.Timestamp", seconds: 0n, nanos: 0 };
    if (o.filter) {
      tag.filter = {
        $typeName: "tagq.v1.TagFilter",
        operator: o.anyOf ? TagFilter_Operator.OR : TagFilter_Operator.AND,
        conditions: Object.entries(o.filter).map(([n, v]) => ({
          $typeName: "tagq.v1.AttributeCondition" as const,
          name: n,
          stringValue: v ?? undefined,
        })),
      };
    }
    return (await call(this.queues.createTag({ queue, tag }))).tag!;
  }

  async getTag(queue: string, name: string): Promise<Tag> {
    return (await call(this.queues.getTag({ queue, name }))).tag!;
  }

  /** Sends one message and returns its id. */
  async send(queue: string, b: Body, o: { attributes?: Attrs; delaySeconds?: number } = {}): Promise<string> {
    const r = await call(this.messages.sendMessage({ queue, body: body(b), attributes: attrs(o.attributes), delaySeconds: o.delaySeconds }));
    return r.messageId;
  }

  /** Sends up to 100 messages in one atomic step; throws if any is refused. */
  async sendBatch(queue: string, bodies: Body[]): Promise<string[]> {
    const r = await call(this.messages.sendMessageBatch({ queue, entries: bodies.map((b, i) => ({ id: String(i), body: body(b) })) }));
    if (r.failed.length > 0) {
      const f = r.failed[0];
      throw new TagqError(Code.InvalidArgument, f.message, f.reason, f.field, {});
    }
    const ids: string[] = new Array(bodies.length).fill("");
    for (const s of r.successful) ids[Number(s.id)] = s.messageId;
    return ids;
  }

  /** Receives up to maxMessages for a tag ("" = the default tag), waiting up to waitSeconds. */
  async receive(queue: string, o: ReceiveOptions = {}): Promise<Message[]> {
    const r = await call(
      this.messages.receiveMessage(
        { queue, tag: o.tag ?? "", maxMessages: o.maxMessages ?? 1, waitSeconds: o.waitSeconds, visibilitySeconds: o.visibilitySeconds },
        { signal: o.signal },
      ),
    );
    return r.messages;
  }

  /** Acknowledges a message for the tag that received it. */
  async delete(queue: string, receiptHandle: string): Promise<void> {
    await call(this.messages.deleteMessage({ queue, receiptHandle }));
  }

  /** Hides a message for seconds more; 0 gives it back at once (a nack). */
  async changeVisibility(queue: string, receiptHandle: string, seconds: number): Promise<void> {
    await call(this.messages.changeMessageVisibility({ queue, receiptHandle, visibilitySeconds: seconds }));
  }

  /** Dead-letters a received message now (the queue needs a redrive policy). */
  async dead(queue: string, receiptHandle: string, o: { reason?: string; description?: string } = {}): Promise<void> {
    await call(this.messages.deadMessage({ queue, receiptHandle, reason: o.reason ?? "", description: o.description ?? "" }));
  }

  /** The next messages a tag would receive, without receiving them. */
  async peek(queue: string, o: { tag?: string; maxMessages?: number } = {}): Promise<Message[]> {
    return (await call(this.messages.peekMessage({ queue, tag: o.tag ?? "", maxMessages: o.maxMessages ?? 10 }))).messages;
  }

  /** Long-polls a tag and yields its messages until the signal aborts (the caller deletes them). */
  async *iterate(queue: string, tag = "", o: { waitSeconds?: number; signal?: AbortSignal } = {}): AsyncGenerator<Message> {
    while (!o.signal?.aborted) {
      let msgs: Message[];
      try {
        msgs = await this.receive(queue, { tag, maxMessages: 10, waitSeconds: o.waitSeconds ?? 20, signal: o.signal });
      } catch (e) {
        if (o.signal?.aborted) return;
        throw e;
      }
      yield* msgs;
    }
  }

  async startMessageMove(deadLetterQueue: string, o: { sourceQueue?: string; sourceTag?: string; maxMessagesPerSecond?: number } = {}): Promise<MessageMoveTask> {
    const r = await call(this.redrive.startMessageMove({ deadLetterQueue, sourceQueue: o.sourceQueue ?? "", sourceTag: o.sourceTag ?? "", maxMessagesPerSecond: o.maxMessagesPerSecond ?? 0 }));
    return r.task!;
  }

  async listMessageMoves(deadLetterQueue: string): Promise<MessageMoveTask[]> {
    return (await call(this.redrive.listMessageMoves({ deadLetterQueue }))).tasks;
  }
}
