/**
 * TypeScript client of tagq, a gRPC-first message queue.
 *
 * A thin layer over the generated tagq.v1 services, talking gRPC (HTTP/2)
 * through `@connectrpc/connect-node`'s gRPC transport:
 *
 * ```ts
 * const c = new TagqClient("http://127.0.0.1:9090");
 * await c.createQueue("orders");
 * await c.createTag("orders", "billing");
 * await c.send("orders", "order 1", { attributes: { region: "eu" } });
 * for (const m of await c.receive("orders", { tag: "billing", maxMessages: 10 })) {
 *   await c.delete(m.receiptHandle);
 * }
 * ```
 *
 * The Consume and Publish streams: {@link TagqClient.consume} (an async
 * iterable of messages to ack, nack, extend or dead-letter, with a worker:
 * `consumer.run(handler, { concurrency })`) and {@link TagqClient.publisher}
 * (batched publishing).
 *
 * Tracing: with `@opentelemetry/api` installed (an optional peer
 * dependency) and an OpenTelemetry setup, sends carry the active span's W3C
 * trace context in each message's attributes, and a worker runs each
 * handler in a consumer span linked to the producer's (see
 * {@link producerSpanContext}).
 *
 * Every server error is thrown as a {@link TagqError}: the gRPC code, the
 * `google.rpc.ErrorInfo` reason (QUEUE_NOT_FOUND, RECEIPT_HANDLE_STALE, ...)
 * and the request field at fault.
 *
 * What the calls return can be given to `JSON.stringify`: each message has
 * a toJSON giving its protobuf JSON (int64 counters such as
 * `tag.state.available`, bigint in code, as decimal strings; Timestamps as
 * RFC 3339 strings).
 *
 * @module
 */
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, createClient, type Client, type Interceptor } from "@connectrpc/connect";
import { createGrpcTransport, Http2SessionManager, type GrpcTransportOptions } from "@connectrpc/connect-node";

import { Consumer, type ConsumeOptions } from "./consumer.js";
import { AccessService, Permission } from "./gen/tagq/v1/access_pb.js";
import { call, toAttributes, toBytes, type Attributes, type Body } from "./core.js";
import { withTrace } from "./tracing.js";
import type { ErrorInfo } from "./gen/google/rpc/error_details_pb.js";
import {
  MessageService,
  type BatchResultError,
  type DeadLetter,
  type Message,
  type MessageAttribute,
} from "./gen/tagq/v1/message_pb.js";
import { CancellingSessionManager } from "./h2.js";
import { jsonFriendlyAnswers } from "./json.js";
import { Publisher, type PublisherOptions } from "./publisher.js";
import {
  OverflowPolicy,
  QueueSchema,
  QueueService,
  TagFilter_Operator,
  TagSchema,
  type Queue,
  type QueueState,
  type RedrivePolicy,
  type Tag,
  type TagFilter,
  type TagState,
} from "./gen/tagq/v1/queue_pb.js";
import { MessageMoveTask_State, RedriveService, type MessageMoveTask } from "./gen/tagq/v1/redrive_pb.js";

export { ERROR_DOMAIN, TagqError, type Attributes, type Body } from "./core.js";
export {
  Consumer,
  Poison,
  StreamMessage,
  Worker,
  defaultBackoff,
  type ConsumeOptions,
  type DeadLetterInfo,
  type FlowLimits,
  type Handler,
  type RunOptions,
} from "./consumer.js";
export { Publisher, type PublishOptions, type PublisherOptions } from "./publisher.js";
export { DeadLetterReasons, Reasons, type Reason } from "./reasons.js";
export { producerSpanContext, TRACER_NAME, type ProducerSpanContext } from "./tracing.js";
export { AccessService, Code, MessageMoveTask_State, MessageService, OverflowPolicy, Permission, QueueService, RedriveService, TagFilter_Operator };
export type {
  BatchResultError,
  DeadLetter,
  ErrorInfo,
  Message,
  MessageAttribute,
  MessageMoveTask,
  Queue,
  QueueState,
  RedrivePolicy,
  Tag,
  TagFilter,
  TagState,
};

/** A message's attributes as plain values (string, or Uint8Array for binary ones). */
export function attributesOf(m: Message): Attributes {
  const out: Attributes = {};
  for (const [k, v] of Object.entries(m.attributes)) {
    if (v.value.case !== undefined) out[k] = v.value.value;
  }
  return out;
}

/** A message's body decoded as UTF-8. */
export function textOf(m: Message): string {
  return new TextDecoder().decode(m.body);
}

/** Drops the keys whose value is undefined (so proto3 optional fields stay unset). */
function defined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** Attributes of a new queue; unset ones take the server's defaults (see queue.proto). */
export interface QueueAttributes {
  /** Default delay of a sent message, 0-900 s (default 0). */
  delaySeconds?: number;
  /** Default visibility timeout of a received message, 0-43200 s (default 30). */
  visibilityTimeoutSeconds?: number;
  /** Default long-poll wait of a receive, 0-20 s (default 0). */
  receiveWaitSeconds?: number;
  /** Retention after a message becomes visible, 60-1209600 s (default 4 days). */
  messageRetentionSeconds?: number;
  /** Largest message (body plus attribute names and values), 1024-1048576 bytes. */
  maxMessageBytes?: number;
  /** Send messages a tag received maxReceiveCount times to this dead-letter queue. */
  redrivePolicy?: { deadLetterQueue: string; maxReceiveCount: number };
  /**
   * Server-side retry backoff (README "Retry backoff"): a message that comes
   * back to a tag (its visibility ran out, or {@link TagqClient.nackWithBackoff})
   * waits a backoff drawn from [b, min(max, 2b)] s first, b = min(max,
   * min * 2^(n-1)) after the tag's n-th receive. 0 <= min <= max <= 43200.
   */
  retryPolicy?: { minBackoffSeconds: number; maxBackoffSeconds: number };
  /** This queue is a dead-letter queue. Fixed at creation. */
  deadLetterQueue?: boolean;
  /** Messages with the same topic are delivered in order. Fixed at creation. */
  topicQueue?: boolean;
  /**
   * A priority queue: each tag receives priority 1 first, 16 last, FIFO within
   * a priority, except that every 10th message it hands out is its oldest
   * waiting one; redeliveries come first. Fixed at creation; not with topicQueue.
   */
  priorityQueue?: boolean;
  /**
   * Streams the queue is split into, 1-64 (default 1), each in a Redis
   * Cluster hash slot of its own. Every tag reads every partition; order
   * holds per topic per tag, none across partitions. Fixed at creation; not
   * with deadLetterQueue or priorityQueue. Read back as Queue.partitions.
   */
  partitions?: number;
  /** Keep messages for the whole retention even once every tag deleted them. */
  retainAckedMessages?: boolean;
  /** Free-form labels. */
  userAttributes?: Record<string, string>;
  /** Name of the tag created with the queue (default "default"). */
  defaultTagName?: string;
  /** Most messages the queue holds (0n: no cap). See overflowPolicy. */
  maxRetainedMessages?: bigint;
  /** Most bytes of messages the queue holds (0n: no cap), at least maxMessageBytes. */
  maxRetainedBytes?: bigint;
  /**
   * Beyond a cap: refuse sends with QUEUE_FULL (OverflowPolicy.REJECT_NEW,
   * the default) or drop the oldest messages (OverflowPolicy.DROP_OLDEST).
   */
  overflowPolicy?: OverflowPolicy;
  /**
   * A message sent without a deduplicationId gets its body's SHA-256 as
   * one: the same body within 5 minutes is stored once (attributes aside).
   */
  contentBasedDeduplication?: boolean;
}

/**
 * The attributes {@link TagqClient.updateQueue} can change; `redrivePolicy: null`
 * and `retryPolicy: null` remove those policies.
 */
export type QueueUpdate = Partial<
  Pick<
    QueueAttributes,
    | "delaySeconds"
    | "visibilityTimeoutSeconds"
    | "receiveWaitSeconds"
    | "messageRetentionSeconds"
    | "maxMessageBytes"
    | "retainAckedMessages"
    | "userAttributes"
    | "maxRetainedMessages"
    | "maxRetainedBytes"
    | "overflowPolicy"
    | "contentBasedDeduplication"
  >
> & { redrivePolicy?: QueueAttributes["redrivePolicy"] | null; retryPolicy?: QueueAttributes["retryPolicy"] | null };

function queueMessage(name: string, a: QueueAttributes | QueueUpdate): Queue {
  return create(QueueSchema, {
    name,
    ...defined({ ...a, redrivePolicy: a.redrivePolicy ?? undefined, retryPolicy: a.retryPolicy ?? undefined }),
  });
}

/** Options of a new tag. */
export interface TagOptions {
  /**
   * First message the tag reads, by send time. Unset: messages sent from now
   * on; "oldest" (or the Unix epoch): the oldest retained message.
   */
  startTime?: Date | "oldest";
  /**
   * Deliver only messages whose attributes match: name -> required string
   * value, or null for "has the attribute". 1-10 conditions.
   */
  filter?: Record<string, string | null>;
  /** With filter: any condition suffices (default: all must hold). */
  matchAny?: boolean;
  /** Visibility timeout for this tag, 0-43200 s; unset: the queue's. */
  visibilityTimeoutSeconds?: number;
  /** Free-form labels. */
  userAttributes?: Record<string, string>;
}

/** Options of {@link TagqClient.send}. */
export interface SendOptions {
  /** Up to 32 attributes; names of [A-Za-z0-9_.-], not starting with "DLQ." or "AWS.SQS." (reserved). */
  attributes?: Attributes;
  /** 0-900 s; unset: the queue's delay. */
  delaySeconds?: number;
  /**
   * 1-128 printable ASCII characters: a send with an id the queue stored a
   * message under in the last 5 minutes stores nothing and returns that
   * message's id, so a send whose outcome is unknown can be repeated.
   */
  deduplicationId?: string;
  /**
   * Required on a topic queue (each tag receives a topic's messages in send
   * order, one at a time), refused elsewhere: 1-128 characters of [A-Za-z0-9_.:-].
   */
  topic?: string;
  /** On a priority queue: 1-16, 1 highest; unset or 0: the default, 8. Refused elsewhere. */
  priority?: number;
}

/** One entry of {@link TagqClient.sendBatch}: a body, or a body with options. */
export type BatchEntry = Body | ({ body: Body } & SendOptions);

/** A batch entry the server refused. */
export interface BatchEntryError {
  /** Index of the entry in the array given. */
  index: number;
  /** ErrorInfo-style reason, e.g. RESERVED_ATTRIBUTE. */
  reason: string;
  /** The request field at fault, e.g. entries[1].attributes. */
  field: string;
  message: string;
}

/** The outcome of {@link TagqClient.sendBatch}. */
export interface SendBatchResult {
  /** Per entry, in order: the new message id, or undefined if it was refused. */
  messageIds: (string | undefined)[];
  /** The refused entries (the others were stored, in one atomic step). */
  failed: BatchEntryError[];
}

/** Options of {@link TagqClient.receive}. */
export interface ReceiveOptions {
  /** The tag to receive for; unset or "": the queue's default tag. */
  tag?: string;
  /** 1-100; unset: 1. */
  maxMessages?: number;
  /** Long-poll wait for the first message, 0-20 s; unset: the queue's receive_wait_seconds. */
  waitSeconds?: number;
  /** How long the messages stay hidden from this tag, 0-43200 s; unset: the tag's or queue's. */
  visibilitySeconds?: number;
  /** Aborts the call (it then throws a TagqError with Code.Canceled). */
  signal?: AbortSignal;
}

/** Options of {@link TagqClient.iterate}. */
export interface IterateOptions {
  /** Long-poll wait of each receive, 0-20 s (default 20). */
  waitSeconds?: number;
  /** Messages per receive, 1-100 (default 10). */
  maxMessages?: number;
  /** Visibility timeout of the received messages; unset: the tag's or queue's. */
  visibilitySeconds?: number;
  /** Ends the iteration (without an error) when aborted. */
  signal?: AbortSignal;
}

/** Options of {@link TagqClient.peek}. */
export interface PeekOptions {
  /** Peek these messages (1-100) instead of the next ones available to the tag. */
  messageIds?: string[];
  /** Without messageIds: the tag whose next messages to peek; unset: the default tag. */
  tag?: string;
  /** Without messageIds: 1-100; unset: 1. */
  maxMessages?: number;
}

/** Options of {@link TagqClient.startMessageMove}. */
export interface MessageMoveOptions {
  /** Only dead letters of this source queue. */
  sourceQueue?: string;
  /** Only dead letters of this source tag. */
  sourceTag?: string;
  /** 1-10000; unset: 500. */
  maxMessagesPerSecond?: number;
}

/** Options of the client: connect-node's gRPC transport options, less baseUrl, and an API key. */
export type TagqClientOptions = Omit<GrpcTransportOptions, "baseUrl"> & {
  /**
   * An API key for a tagqd started with --auth, sent as
   * `authorization: Bearer <apiKey>` on every call, streams included. Use
   * https:// except on loopback: over plaintext the key crosses the
   * network in the clear.
   */
  apiKey?: string;
};

/** An interceptor that sends the API key with every call. */
function bearer(apiKey: string): Interceptor {
  return (next) => (req) => {
    req.header.set("authorization", `Bearer ${apiKey}`);
    return next(req);
  };
}

/**
 * A connection to a tagqd's gRPC port. Calls share one HTTP/2 connection,
 * opened on first use; an idle connection does not keep Node running.
 */
export class TagqClient {
  /** The generated QueueService client, for what the methods here do not cover. */
  readonly queues: Client<typeof QueueService>;
  /** The generated MessageService client. */
  readonly messages: Client<typeof MessageService>;
  /** The generated RedriveService client. */
  readonly redrive: Client<typeof RedriveService>;
  /** The generated AccessService client: principals, API keys and permissions. */
  readonly access: Client<typeof AccessService>;
  private readonly sessionManager: Http2SessionManager | undefined;

  /**
   * @param baseUrl tagqd's gRPC address, e.g. "http://127.0.0.1:9090"
   *   (https:// for TLS).
   * @param options connect-node gRPC transport options: interceptors,
   *   nodeOptions (TLS), pingIntervalMs, defaultTimeoutMs, ...; and apiKey.
   */
  constructor(baseUrl = "http://127.0.0.1:9090", options: TagqClientOptions = {}) {
    const { apiKey, ...transportOptions } = options;
    if (apiKey) options = { ...transportOptions, interceptors: [...(transportOptions.interceptors ?? []), bearer(apiKey)] };
    else options = transportOptions;
    if (!options.sessionManager) {
      this.sessionManager = new CancellingSessionManager(
        baseUrl,
        {
          pingIntervalMs: options.pingIntervalMs,
          pingIdleConnection: options.pingIdleConnection,
          pingTimeoutMs: options.pingTimeoutMs,
          idleConnectionTimeoutMs: options.idleConnectionTimeoutMs,
        },
        options.nodeOptions,
      );
    }
    const transport = createGrpcTransport({
      ...options,
      baseUrl,
      sessionManager: options.sessionManager ?? this.sessionManager,
      // What the calls answer can be given to JSON.stringify (int64 as strings).
      interceptors: [...(options.interceptors ?? []), jsonFriendlyAnswers],
    });
    this.queues = createClient(QueueService, transport);
    this.messages = createClient(MessageService, transport);
    this.redrive = createClient(RedriveService, transport);
    this.access = createClient(AccessService, transport);
  }

  /**
   * Closes the HTTP/2 connection (calls in progress fail). A later call
   * opens a new one. Not needed to let Node exit.
   */
  close(): void {
    this.sessionManager?.abort();
  }

  // Queues and tags.

  /** Creates a queue and its default tag. Errors: INVALID_NAME, QUEUE_ALREADY_EXISTS, ... */
  async createQueue(name: string, attrs: QueueAttributes & { noDefaultTag?: boolean } = {}): Promise<Queue> {
    const { noDefaultTag, ...rest } = attrs;
    return (await call(this.queues.createQueue({ queue: queueMessage(name, rest), noDefaultTag: noDefaultTag ?? false })))
      .queue!;
  }

  /** Returns a queue's attributes and state. Errors: QUEUE_NOT_FOUND. */
  async getQueue(name: string): Promise<Queue> {
    return (await call(this.queues.getQueue({ name }))).queue!;
  }

  /** Lists every queue (optionally only those whose name starts with prefix), in name order. */
  async listQueues(opts: { prefix?: string } = {}): Promise<Queue[]> {
    const out: Queue[] = [];
    let pageToken = "";
    do {
      const r = await call(this.queues.listQueues({ prefix: opts.prefix ?? "", pageSize: 1000, pageToken }));
      out.push(...r.queues);
      pageToken = r.nextPageToken;
    } while (pageToken);
    return out;
  }

  /** Changes the attributes given (only those); `redrivePolicy: null` removes the policy. */
  async updateQueue(name: string, update: QueueUpdate): Promise<Queue> {
    const paths = Object.keys(update)
      .filter((k) => (update as Record<string, unknown>)[k] !== undefined)
      .map((k) => k.replace(/[A-Z]/g, (c) => "_" + c.toLowerCase()));
    const r = await call(this.queues.updateQueue({ queue: queueMessage(name, update), updateMask: { paths } }));
    return r.queue!;
  }

  /**
   * Deletes a queue with its messages and tags. A dead-letter queue that
   * other queues' redrive policies name needs `force` (it removes those
   * policies); otherwise: DEAD_LETTER_QUEUE_IN_USE.
   */
  async deleteQueue(name: string, opts: { force?: boolean } = {}): Promise<void> {
    await call(this.queues.deleteQueue({ name, force: opts.force ?? false }));
  }

  /** Drops every message of a queue; returns how many. */
  async purgeQueue(name: string): Promise<bigint> {
    return (await call(this.queues.purgeQueue({ name }))).purgedMessages;
  }

  /** Adds a tag: an independent reader of the queue. Errors: TAG_ALREADY_EXISTS, TOO_MANY_TAGS, ... */
  async createTag(queue: string, name: string, opts: TagOptions = {}): Promise<Tag> {
    const tag = create(TagSchema, defined({ name, visibilityTimeoutSeconds: opts.visibilityTimeoutSeconds, userAttributes: opts.userAttributes }));
    if (opts.startTime !== undefined) {
      tag.startTime = timestampFromDate(opts.startTime === "oldest" ? new Date(0) : opts.startTime);
    }
    if (opts.filter) {
      tag.filter = {
        $typeName: "tagq.v1.TagFilter",
        operator: opts.matchAny ? TagFilter_Operator.OR : TagFilter_Operator.AND,
        conditions: Object.entries(opts.filter).map(([n, v]) => ({
          $typeName: "tagq.v1.AttributeCondition" as const,
          name: n,
          stringValue: v ?? undefined,
        })),
      };
    }
    return (await call(this.queues.createTag({ queue, tag }))).tag!;
  }

  /** Returns a tag with its exact state counters. Errors: TAG_NOT_FOUND. */
  async getTag(queue: string, name: string): Promise<Tag> {
    return (await call(this.queues.getTag({ queue, name }))).tag!;
  }

  /** Lists a queue's tags in name order. */
  async listTags(queue: string): Promise<Tag[]> {
    const out: Tag[] = [];
    let pageToken = "";
    do {
      const r = await call(this.queues.listTags({ queue, pageSize: 1000, pageToken }));
      out.push(...r.tags);
      pageToken = r.nextPageToken;
    } while (pageToken);
    return out;
  }

  /** Removes a tag, its in-flight messages and its counters. */
  async deleteTag(queue: string, name: string): Promise<void> {
    await call(this.queues.deleteTag({ queue, name }));
  }

  /**
   * Moves a tag's cursor (DESIGN S22) and returns the tag with its state
   * after. `{ time }`: the retained messages sent at or after it are
   * available again to this tag alone ("oldest": all of them; a time at or
   * after now: none, only what is sent from now on). `{ messageId }`: that
   * message and every later one (MESSAGE_NOT_FOUND when the queue no
   * longer retains it). What the tag had in flight is dropped from it (its
   * receipt handles settle nothing any more); its totals and settings stay.
   */
  async seekTag(queue: string, name: string, to: { time: Date | "oldest" } | { messageId: string }): Promise<Tag> {
    const target =
      "messageId" in to
        ? { case: "messageId" as const, value: to.messageId }
        : { case: "time" as const, value: timestampFromDate(to.time === "oldest" ? new Date(0) : to.time) };
    return (await call(this.queues.seekTag({ queue, name, target }))).tag!;
  }

  // Messages.

  /** Sends one message; returns its id. Errors: QUEUE_NOT_FOUND, MESSAGE_TOO_LARGE, INVALID_ATTRIBUTE, ... */
  async send(queue: string, body: Body, opts: SendOptions = {}): Promise<string> {
    const r = await call(
      this.messages.sendMessage({ queue, body: toBytes(body), attributes: toAttributes(withTrace(opts.attributes)), ...defined({ delaySeconds: opts.delaySeconds, deduplicationId: opts.deduplicationId, topic: opts.topic, priority: opts.priority }) }),
    );
    return r.messageId;
  }

  /**
   * Sends 1-100 messages. The valid entries are stored in one atomic step;
   * the refused ones are reported in `failed` (not thrown).
   */
  async sendBatch(queue: string, entries: BatchEntry[]): Promise<SendBatchResult> {
    const r = await call(
      this.messages.sendMessageBatch({
        queue,
        entries: entries.map((e, i) => {
          const o = typeof e === "string" || e instanceof Uint8Array ? { body: e } : e;
          return { id: String(i), body: toBytes(o.body), attributes: toAttributes(withTrace(o.attributes)), ...defined({ delaySeconds: o.delaySeconds, deduplicationId: o.deduplicationId, topic: o.topic, priority: o.priority }) };
        }),
      }),
    );
    const messageIds: (string | undefined)[] = new Array(entries.length).fill(undefined);
    for (const s of r.successful) messageIds[Number(s.id)] = s.messageId;
    const failed = r.failed.map((f) => ({ index: Number(f.id), reason: f.reason, field: f.field, message: f.message }));
    return { messageIds, failed };
  }

  /**
   * Receives up to maxMessages for a tag, waiting up to waitSeconds for the
   * first. Each message has a new receiptHandle for delete, changeVisibility
   * and dead. Returns [] when none came in time.
   */
  async receive(queue: string, opts: ReceiveOptions = {}): Promise<Message[]> {
    const req = {
      queue,
      tag: opts.tag ?? "",
      ...defined({ maxMessages: opts.maxMessages, waitSeconds: opts.waitSeconds, visibilitySeconds: opts.visibilitySeconds }),
    };
    return (await call(this.messages.receiveMessage(req, { signal: opts.signal }))).messages;
  }

  /**
   * Acknowledges a message for the tag that received it. The receipt handle
   * names its queue and tag, so no queue is needed; opts.queue, when given,
   * must be the handle's. Deleting twice or with an older handle is not an
   * error. Errors: INVALID_RECEIPT_HANDLE.
   */
  async delete(receiptHandle: string, opts: { queue?: string } = {}): Promise<void> {
    await call(this.messages.deleteMessage({ queue: opts.queue ?? "", receiptHandle }));
  }

  /**
   * Hides an in-flight message for seconds from now; 0 makes it visible at
   * once (a nack). Errors: RECEIPT_HANDLE_STALE once it was received again or deleted.
   */
  async changeVisibility(receiptHandle: string, seconds: number, opts: { queue?: string } = {}): Promise<void> {
    await call(this.messages.changeMessageVisibility({ queue: opts.queue ?? "", receiptHandle, visibilitySeconds: seconds }));
  }

  /**
   * Gives a received message back after its queue's retry backoff
   * (retryPolicy; at once on a queue without one).
   */
  async nackWithBackoff(receiptHandle: string, opts: { queue?: string } = {}): Promise<void> {
    await call(this.messages.changeMessageVisibility({ queue: opts.queue ?? "", receiptHandle, retryBackoff: true }));
  }

  /**
   * Dead-letters a received message now: an ACK for its tag that moves it to
   * the queue's dead-letter queue with the reason (default
   * CONSUMER_DEAD_LETTERED). Errors: NOT_A_SOURCE_QUEUE (no redrive
   * policy), RECEIPT_HANDLE_STALE.
   */
  async dead(receiptHandle: string, opts: { reason?: string; description?: string; queue?: string } = {}): Promise<void> {
    await call(
      this.messages.deadMessage({
        queue: opts.queue ?? "",
        receiptHandle,
        reason: opts.reason ?? "",
        description: opts.description ?? "",
      }),
    );
  }

  /** Reads messages without receiving them: by id, or the next ones available to a tag. No receipt handles. */
  async peek(queue: string, opts: PeekOptions = {}): Promise<Message[]> {
    const req = { queue, messageIds: opts.messageIds ?? [], tag: opts.tag ?? "", ...defined({ maxMessages: opts.maxMessages }) };
    return (await call(this.messages.peekMessage(req))).messages;
  }

  /**
   * Long-polls a tag ("" = the default tag) and yields its messages one by
   * one, until `signal` aborts (the iteration then just ends) or an error is
   * thrown. The caller deletes (or nacks, or dead-letters) each message.
   * Messages received but not yet yielded when the loop stops (a `break`, a
   * throw, an abort) are made visible again at once.
   *
   * ```ts
   * for await (const m of c.iterate("orders", "billing", { signal })) {
   *   await handle(m);
   *   await c.delete(m.receiptHandle);
   * }
   * ```
   */
  async *iterate(queue: string, tag = "", opts: IterateOptions = {}): AsyncGenerator<Message, void, undefined> {
    const { signal } = opts;
    while (!signal?.aborted) {
      let batch: Message[];
      try {
        batch = await this.receive(queue, {
          tag,
          maxMessages: opts.maxMessages ?? 10,
          waitSeconds: opts.waitSeconds ?? 20,
          visibilitySeconds: opts.visibilitySeconds,
          signal,
        });
      } catch (e) {
        if (signal?.aborted) return;
        throw e;
      }
      let next = 0;
      try {
        while (next < batch.length && !signal?.aborted) {
          yield batch[next++];
        }
      } finally {
        // Hand back what the caller never saw (best effort), in one call:
        // one deadline for all, so they come back in the order received.
        const rest = batch.slice(next);
        if (rest.length > 0) {
          const entries = rest.map((m, i) => ({ id: String(i), receiptHandle: m.receiptHandle, visibilitySeconds: 0 }));
          await call(this.messages.changeMessageVisibilityBatch({ queue, entries })).catch(() => undefined);
        }
      }
    }
  }

  // Streams.

  /**
   * Opens a Consume stream on a tag: an async iterable of messages (at most
   * maxOutstandingMessages/Bytes unsettled at a time), each with ack(),
   * nack(delayMs), extend(seconds) and dead(reason, description); unsettled
   * messages have their visibility renewed. `close()` ends it cleanly;
   * `run(handler, { concurrency })` runs a worker on it.
   *
   * ```ts
   * const consumer = c.consume({ queue: "orders", tag: "billing", maxOutstandingMessages: 10 });
   * for await (const m of consumer) {
   *   console.log(m.text());
   *   m.ack();
   * }
   * ```
   */
  consume(opts: ConsumeOptions): Consumer {
    return new Consumer(this, opts);
  }

  /**
   * A publisher that batches messages into frames of one Publish stream
   * (maxMessages, maxBytes, maxDelayMs; maxInFlight frames awaiting answers).
   * `publish(queue, body, opts)` resolves with the message id.
   */
  publisher(opts: PublisherOptions = {}): Publisher {
    return new Publisher(this, opts);
  }

  // Redrive.

  /**
   * Starts moving a dead-letter queue's dead letters back to the tags they
   * died in. Errors: NOT_A_DEAD_LETTER_QUEUE, MOVE_IN_PROGRESS.
   */
  async startMessageMove(deadLetterQueue: string, opts: MessageMoveOptions = {}): Promise<MessageMoveTask> {
    const r = await call(
      this.redrive.startMessageMove({
        deadLetterQueue,
        sourceQueue: opts.sourceQueue ?? "",
        sourceTag: opts.sourceTag ?? "",
        maxMessagesPerSecond: opts.maxMessagesPerSecond ?? 0,
      }),
    );
    return r.task!;
  }

  /** Lists a dead-letter queue's recent move tasks, newest first. */
  async listMessageMoves(deadLetterQueue: string): Promise<MessageMoveTask[]> {
    return (await call(this.redrive.listMessageMoves({ deadLetterQueue }))).tasks;
  }

  /** Stops a running move task; messages moved stay moved. */
  async cancelMessageMove(deadLetterQueue: string, taskId: string): Promise<MessageMoveTask> {
    return (await call(this.redrive.cancelMessageMove({ deadLetterQueue, taskId }))).task!;
  }
}
