// A batching publisher over MessageService.Publish.
import type { MessageInitShape } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";

import { ERROR_DOMAIN, TagqError, toAttributes, toBytes, type Attributes, type Body } from "./core.js";
import { withTrace } from "./tracing.js";
import type { PublishRequestSchema, PublishResponse, SendMessageBatchEntrySchema } from "./gen/tagq/v1/message_pb.js";
import type { TagqClient } from "./index.js";
import { Outbox } from "./outbox.js";

type PublishRequestInit = MessageInitShape<typeof PublishRequestSchema>;
type EntryInit = MessageInitShape<typeof SendMessageBatchEntrySchema>;

/** Options of {@link TagqClient.publisher}. */
export interface PublisherOptions {
  /** Messages per frame, 1-100 (default 100). */
  maxMessages?: number;
  /**
   * Bytes per frame (bodies plus attribute names and values), default 1 MiB.
   * A message larger than this goes alone.
   */
  maxBytes?: number;
  /** How long the first message of a frame waits for others, in ms (default 10). */
  maxDelayMs?: number;
  /** Frames sent and not yet answered, 1-64 (default 4). */
  maxInFlight?: number;
  /**
   * Times a frame is sent when its stream breaks (UNAVAILABLE, e.g. the
   * server shutting down) before it was answered: it is sent again on a new
   * stream (default 3 in all; a resend may store the messages twice if the
   * first attempt was stored but its answer lost).
   */
  maxAttempts?: number;
}

/** Options of {@link Publisher.publish}. */
export interface PublishOptions {
  /** Up to 32 attributes; names of [A-Za-z0-9_.-], not starting with "DLQ." or "AWS.SQS." (reserved). */
  attributes?: Attributes;
  /** 0-900 s; unset: the queue's delay. */
  delaySeconds?: number;
  /** Deduplication id (1-128 printable ASCII; see TagqClient.send), kept when the frame is sent again. */
  deduplicationId?: string;
  /** The message's topic: required on a topic queue, refused elsewhere. */
  topic?: string;
  /** The message's priority on a priority queue: 1-16, 1 highest (unset: 8). */
  priority?: number;
}

interface Entry {
  init: EntryInit;
  resolve: (id: string) => void;
  reject: (e: unknown) => void;
}

/** Messages for one queue, sent as one Publish frame. */
interface Batch {
  queue: string;
  entries: Entry[];
  bytes: number;
  timer: NodeJS.Timeout | undefined;
  attempts: number;
  /** The stream it was last sent on. */
  stream: PublishStream | undefined;
  /** Resolves once every entry is resolved or rejected. */
  done: Promise<void>;
  settle: () => void;
}

interface PublishStream {
  outbox: Outbox<PublishRequestInit>;
  frames: PublishRequestInit[];
  ended: Promise<void>;
}

const RETRY_BASE_MS = 100;

function entryError(reason: string, message: string, field: string): TagqError {
  return new TagqError({ code: Code.InvalidArgument, message, reason, domain: ERROR_DOMAIN, metadata: field ? { field } : {} });
}

/**
 * Publishes messages in batches over one Publish stream: publish() adds a
 * message to the frame being filled for its queue; a frame goes when it
 * holds maxMessages or maxBytes, or maxDelayMs after its first message, with
 * up to maxInFlight frames awaiting their answers (matched by seq).
 *
 * ```ts
 * const pub = c.publisher({ maxDelayMs: 5 });
 * const ids = await Promise.all(orders.map((o) => pub.publish("orders", JSON.stringify(o))));
 * await pub.close();
 * ```
 *
 * Frames in flight are stored concurrently, so messages of different frames
 * may be stored out of publish order. The stream ends by itself after a
 * second with nothing to send (so an idle publisher does not keep Node
 * running); the next publish opens a new one. close() when done.
 */
export class Publisher {
  private readonly maxMessages: number;
  private readonly maxBytes: number;
  private readonly maxDelayMs: number;
  private readonly maxInFlight: number;
  private readonly maxAttempts: number;
  private readonly filling = new Map<string, Batch>();
  private readonly ready: Batch[] = [];
  private readonly inFlight = new Map<number, Batch>();
  private seq = 0;
  private stream: PublishStream | undefined;
  private idleTimer: NodeJS.Timeout | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private closed = false;

  /** @internal Use {@link TagqClient.publisher}. */
  constructor(
    private readonly client: TagqClient,
    opts: PublisherOptions = {},
  ) {
    const int = (name: string, v: number, lo: number, hi: number) => {
      if (!Number.isInteger(v) || v < lo || v > hi) throw new RangeError(`${name} must be an integer between ${lo} and ${hi}, got ${v}`);
      return v;
    };
    this.maxMessages = int("maxMessages", opts.maxMessages ?? 100, 1, 100);
    this.maxBytes = int("maxBytes", opts.maxBytes ?? 1 << 20, 1, 1 << 30);
    this.maxDelayMs = int("maxDelayMs", opts.maxDelayMs ?? 10, 0, 60_000);
    this.maxInFlight = int("maxInFlight", opts.maxInFlight ?? 4, 1, 64);
    this.maxAttempts = int("maxAttempts", opts.maxAttempts ?? 3, 1, 100);
  }

  /** Frames sent and not yet answered. */
  get framesInFlight(): number {
    return this.inFlight.size;
  }

  /**
   * Publishes a message; resolves with its id once stored. Rejects with a
   * TagqError: per message (MESSAGE_TOO_LARGE, INVALID_ATTRIBUTE, ...; code
   * InvalidArgument) or for its whole frame (QUEUE_NOT_FOUND, ...; the
   * server's code), or a transport failure.
   */
  publish(queue: string, body: Body, opts: PublishOptions = {}): Promise<string> {
    if (this.closed) {
      return Promise.reject(new TagqError({ code: Code.FailedPrecondition, message: "the publisher is closed" }));
    }
    const bytes = toBytes(body);
    const attributes = withTrace(opts.attributes);
    const init: EntryInit = { id: "", body: bytes, attributes: toAttributes(attributes) };
    if (opts.delaySeconds !== undefined) init.delaySeconds = opts.delaySeconds;
    if (opts.deduplicationId !== undefined) init.deduplicationId = opts.deduplicationId;
    if (opts.topic !== undefined) init.topic = opts.topic;
    if (opts.priority !== undefined) init.priority = opts.priority;
    let size = bytes.length + 8;
    for (const [k, v] of Object.entries(attributes ?? {})) size += k.length + (typeof v === "string" ? Buffer.byteLength(v) : v.length) + 8;

    let b = this.filling.get(queue);
    if (b && b.entries.length > 0 && b.bytes + size > this.maxBytes) {
      this.seal(b);
      b = undefined;
    }
    if (!b) {
      b = this.newBatch(queue);
      this.filling.set(queue, b);
      const batch = b;
      if (this.maxDelayMs > 0) batch.timer = setTimeout(() => this.seal(batch), this.maxDelayMs);
      else queueMicrotask(() => this.seal(batch));
    }
    init.id = String(b.entries.length);
    const p = new Promise<string>((resolve, reject) => b.entries.push({ init, resolve, reject }));
    b.bytes += size;
    if (b.entries.length >= this.maxMessages || b.bytes >= this.maxBytes) this.seal(b);
    return p;
  }

  /** Sends every frame being filled now and resolves once every message published so far is answered. */
  async flush(): Promise<void> {
    for (const b of [...this.filling.values()]) this.seal(b);
    await Promise.all([...this.ready, ...this.inFlight.values()].map((b) => b.done));
  }

  /**
   * Flushes, then ends the stream and waits until it ended. publish() then
   * rejects (FailedPrecondition).
   */
  async close(): Promise<void> {
    this.closed = true;
    await this.flush();
    clearTimeout(this.idleTimer);
    const s = this.stream;
    this.stream = undefined;
    if (s) {
      s.outbox.end();
      await s.ended;
    }
  }

  private newBatch(queue: string): Batch {
    let settle!: () => void;
    const done = new Promise<void>((r) => (settle = r));
    return { queue, entries: [], bytes: 0, timer: undefined, attempts: 0, stream: undefined, done, settle };
  }

  private seal(b: Batch): void {
    if (this.filling.get(b.queue) !== b) return;
    clearTimeout(b.timer);
    this.filling.delete(b.queue);
    this.ready.push(b);
    this.pump();
  }

  /** Sends ready frames while fewer than maxInFlight await answers. */
  private pump(): void {
    if (this.retryTimer) return; // a broken stream: wait before the next one
    while (this.inFlight.size < this.maxInFlight && this.ready.length > 0) {
      const b = this.ready.shift()!;
      const seq = ++this.seq;
      const s = this.openStream();
      b.attempts++;
      b.stream = s;
      this.inFlight.set(seq, b);
      s.frames.push({ seq: BigInt(seq), queue: b.queue, entries: b.entries.map((e) => e.init) });
      s.outbox.wake();
    }
    this.idleCheck();
  }

  private openStream(): PublishStream {
    clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
    if (this.stream) return this.stream;
    const frames: PublishRequestInit[] = [];
    const outbox = new Outbox<PublishRequestInit>(() => frames.shift());
    const s: PublishStream = { outbox, frames, ended: Promise.resolve() };
    this.stream = s;
    s.ended = this.read(s);
    return s;
  }

  private async read(s: PublishStream): Promise<void> {
    let error: TagqError | undefined;
    try {
      // timeoutMs 0: no deadline (the transport's defaultTimeoutMs is for unary calls).
      for await (const r of this.client.messages.publish(s.outbox, { timeoutMs: 0 })) this.answer(r);
    } catch (e) {
      error = TagqError.from(e);
    }
    if (this.stream === s) this.stream = undefined;
    s.outbox.end();
    // Frames of this stream left unanswered.
    const lost = [...this.inFlight].filter(([, b]) => b.stream === s);
    for (const [seq] of lost) this.inFlight.delete(seq);
    const err =
      error ?? new TagqError({ code: Code.Unavailable, message: "the Publish stream ended before the frame was answered" });
    const retry: Batch[] = [];
    for (const [, b] of lost) {
      if (err.code === Code.Unavailable && b.attempts < this.maxAttempts) retry.push(b);
      else this.fail(b, err);
    }
    if (retry.length > 0) {
      // Sent again first, in their order, after a pause that grows with the attempts.
      this.ready.unshift(...retry);
      const wait = RETRY_BASE_MS * 2 ** (Math.min(...retry.map((b) => b.attempts)) - 1);
      clearTimeout(this.retryTimer);
      this.retryTimer = setTimeout(() => {
        this.retryTimer = undefined;
        this.pump();
      }, wait);
    } else {
      this.pump();
    }
  }

  private answer(r: PublishResponse): void {
    const seq = Number(r.seq);
    const b = this.inFlight.get(seq);
    if (!b) return;
    this.inFlight.delete(seq);
    if (r.error) {
      const { code, message, reason, field } = r.error;
      this.fail(b, new TagqError({ code: code as Code, message, reason, domain: ERROR_DOMAIN, metadata: field ? { field } : {} }));
    } else {
      const ok = new Map(r.successful.map((s) => [s.id, s.messageId]));
      const bad = new Map(r.failed.map((f) => [f.id, f]));
      for (const e of b.entries) {
        const id = ok.get(e.init.id!);
        const f = bad.get(e.init.id!);
        if (id !== undefined) e.resolve(id);
        else if (f) e.reject(entryError(f.reason, f.message, f.field));
        else e.reject(new TagqError({ code: Code.Internal, message: `the answer to frame ${seq} left out entry ${e.init.id}` }));
      }
      b.settle();
    }
    this.pump();
  }

  private fail(b: Batch, err: TagqError): void {
    for (const e of b.entries) e.reject(err);
    b.settle();
  }

  /** Ends the stream after a second with nothing to send or to wait for. */
  private idleCheck(): void {
    if (!this.stream || this.inFlight.size > 0 || this.ready.length > 0 || this.filling.size > 0 || this.idleTimer) return;
    const s = this.stream;
    this.idleTimer = setTimeout(() => {
      this.idleTimer = undefined;
      if (this.stream === s && this.inFlight.size === 0 && this.ready.length === 0) {
        this.stream = undefined;
        s.outbox.end();
      }
    }, 1000);
    this.idleTimer.unref();
  }
}
