// A streaming consumer over MessageService.Consume, and a worker that runs a
// handler per message on it.
import type { MessageInitShape } from "@bufbuild/protobuf";
import { timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";

import { ERROR_DOMAIN, TagqError, type Attributes } from "./core.js";
import { inProcessSpan } from "./tracing.js";
import {
  ConsumeOperation,
  type ConsumeConfirmation,
  type ConsumeMessage,
  type ConsumeRequestSchema,
  type ConsumeResponse,
  type StreamError,
} from "./gen/tagq/v1/message_pb.js";
import type { TagqClient } from "./index.js";
import { Outbox } from "./outbox.js";

type ConsumeRequestInit = MessageInitShape<typeof ConsumeRequestSchema>;

const MAX_VISIBILITY_SECONDS = 43_200;
const MAX_NACK_DELAY_MS = MAX_VISIBILITY_SECONDS * 1000;
const MAX_REASON_BYTES = 256;
const MAX_DESCRIPTION_BYTES = 4096;
/** Settlements per request frame (and a rough byte bound), far below the server's request limit. */
const MAX_FRAME_ITEMS = 1000;
const MAX_FRAME_BYTES = 1 << 20;

/** Options of {@link TagqClient.consume}. */
export interface ConsumeOptions {
  /** The queue to read. */
  queue: string;
  /** The tag to read; unset or "": the queue's default tag. */
  tag?: string;
  /** Messages pushed and not yet settled, 1-10000; unset: the server's 100. */
  maxOutstandingMessages?: number;
  /** Body bytes pushed and not yet settled, 1 KiB-1 GiB; unset: the server's 64 MiB. */
  maxOutstandingBytes?: number;
  /**
   * How long each pushed message stays hidden from the tag's other readers,
   * 0-43200 s; unset: the tag's, else the queue's visibility timeout (then
   * read once with getTag/getQueue when the consumer starts, to time the
   * renewals).
   */
  visibilitySeconds?: number;
  /**
   * Renew the visibility of unsettled messages (default true): every third
   * of the visibility, each is extended by the visibility again, until it is
   * settled or maxExtensionSeconds after it arrived.
   */
  autoExtend?: boolean;
  /**
   * How long automatic renewal goes on for one message, in seconds from its
   * arrival (default 3600); it then comes back at its last deadline, at most
   * one visibility later.
   */
  maxExtensionSeconds?: number;
  /**
   * Ask the server to confirm every settlement once durable (default false):
   * ack(), nack(), extend() and dead() then resolve when it is applied and
   * reject with the server's error (RECEIPT_HANDLE_STALE, NOT_A_SOURCE_QUEUE,
   * ...). Without it they resolve once the settlement is sent, and the
   * server ignores the ones that fail.
   */
  confirm?: boolean;
  /**
   * Breaks the stream when aborted: the iteration ends quietly and the
   * unsettled messages come back at their visibility deadlines (use close()
   * to give them back at once).
   */
  signal?: AbortSignal;
}

/** Where a dead letter came from and why (plain values). */
export interface DeadLetterInfo {
  sourceQueueName: string;
  sourceTag: string;
  deadTime: Date | undefined;
  originalMessageId: string;
  originalReceiveCount: number;
  reason: string;
  description: string;
}

/** Flow limits of a running consumer; see {@link Consumer.setFlow}. */
export interface FlowLimits {
  maxOutstandingMessages?: number;
  maxOutstandingBytes?: number;
}

type Settlement =
  | { kind: "ack" }
  | { kind: "nack"; delayMs: number }
  | { kind: "extend"; seconds: number }
  | { kind: "dead"; reason: string; description: string };

/** A settlement waiting to be sent, and who to tell. */
interface Pending {
  id: number;
  op: Settlement;
  /** Called when the frame carrying it is handed to the transport. */
  sent?: () => void;
  /** Called when it cannot go on this stream any more (it then goes by the unary calls). */
  unsent?: () => void;
}

interface Waiter {
  resolve: () => void;
  reject: (e: unknown) => void;
}

/**
 * A message pushed on a Consume stream: the message's fields as plain values
 * (numbers, strings, Dates; no bigint) and its settlement methods.
 *
 * Settle each message once: ack() deletes it for the tag, nack() makes it
 * visible again (after a delay), dead() sends it to the dead-letter queue.
 * extend() pushes its deadline further (any number of times). A second
 * settlement is a no-op that returns the first one's promise. A message
 * settled after its stream ended is settled with the unary calls by its
 * receipt handle (DeleteMessage, ChangeMessageVisibility, DeadMessage).
 * The promises need not be awaited: one nobody awaits fails silently.
 */
export class StreamMessage {
  /** The message's name on its stream (per stream, from 1). */
  readonly deliveryId: number;
  readonly messageId: string;
  readonly queue: string;
  /** The tag that received it. */
  readonly tag: string;
  readonly body: Uint8Array;
  /** Attributes as plain values: string, or Uint8Array for binary ones. */
  readonly attributes: Attributes;
  readonly sendTime: Date | undefined;
  /** For the unary calls (delete, changeVisibility, dead), also from another connection. */
  readonly receiptHandle: string;
  /** Times the tag received it, this time included. */
  readonly receiveCount: number;
  readonly firstReceiveTime: Date | undefined;
  /** Times it was moved back from a dead-letter queue. */
  readonly moveCount: number;
  /** Set on a message of a dead-letter queue. */
  readonly deadLetter: DeadLetterInfo | undefined;

  readonly #consumer: Consumer;
  #settlement: Promise<void> | undefined;

  /** @internal */
  constructor(consumer: Consumer, queue: string, cm: ConsumeMessage) {
    const m = cm.message;
    this.#consumer = consumer;
    this.deliveryId = Number(cm.deliveryId);
    this.queue = queue;
    this.messageId = m?.messageId ?? "";
    this.tag = m?.tag ?? "";
    this.body = m?.body ?? new Uint8Array();
    const attrs: Attributes = {};
    for (const [k, v] of Object.entries(m?.attributes ?? {})) {
      if (v.value.case !== undefined) attrs[k] = v.value.value;
    }
    this.attributes = attrs;
    this.sendTime = dateOf(m?.sendTime);
    this.receiptHandle = m?.receiptHandle ?? "";
    this.receiveCount = m?.receiveCount ?? 0;
    this.firstReceiveTime = dateOf(m?.firstReceiveTime);
    this.moveCount = m?.moveCount ?? 0;
    const d = m?.deadLetter;
    this.deadLetter = d && {
      sourceQueueName: d.sourceQueueName,
      sourceTag: d.sourceTag,
      deadTime: dateOf(d.deadTimestamp),
      originalMessageId: d.originalMessageId,
      originalReceiveCount: d.originalReceiveCount,
      reason: d.reason,
      description: d.description,
    };
  }

  /** The body decoded as UTF-8. */
  text(): string {
    return new TextDecoder().decode(this.body);
  }

  /** Whether ack, nack or dead was called. */
  get settled(): boolean {
    return this.#settlement !== undefined;
  }

  /** Deletes the message for its tag. */
  ack(): Promise<void> {
    return this.#settle({ kind: "ack" });
  }

  /** Makes the message visible again after delayMs (0-43200000; 0 = at once). */
  nack(delayMs = 0): Promise<void> {
    return this.#settle({ kind: "nack", delayMs });
  }

  /** Sends the message to the queue's dead-letter queue (reason default CONSUMER_DEAD_LETTERED). */
  dead(reason = "", description = ""): Promise<void> {
    return this.#settle({ kind: "dead", reason, description });
  }

  /**
   * Sets the message's deadline to now + seconds (1-43200). Automatic
   * renewal, if on, goes on from the new deadline. No-op once settled.
   */
  extend(seconds: number): Promise<void> {
    if (this.#settlement) return Promise.resolve();
    const bad = checkSettlement({ kind: "extend", seconds });
    if (bad) return quiet(Promise.reject(bad));
    return quiet(this.#consumer._settle(this, { kind: "extend", seconds }));
  }

  #settle(op: Settlement): Promise<void> {
    if (!this.#settlement) {
      const bad = checkSettlement(op);
      if (bad) return quiet(Promise.reject(bad)); // not settled: the stream never saw it
      this.#settlement = quiet(this.#consumer._settle(this, op)); // later calls get the same promise
    }
    return this.#settlement;
  }
}

/**
 * p, marked handled: whoever awaits it still sees its failure, but a
 * settlement nobody awaits (m.ack() in a loop) is no unhandled rejection.
 */
function quiet<T>(p: Promise<T>): Promise<T> {
  p.catch(() => undefined);
  return p;
}

function dateOf(t: Timestamp | undefined): Date | undefined {
  return t ? timestampDate(t) : undefined;
}

function utf8Length(s: string): number {
  return Buffer.byteLength(s, "utf8");
}

function rangeError(field: string, message: string): TagqError {
  return new TagqError({ code: Code.InvalidArgument, reason: "INVALID_ARGUMENT_RANGE", field, message });
}

/** Refuses a settlement the server would end the whole stream for. */
function checkSettlement(op: Settlement): TagqError | undefined {
  switch (op.kind) {
    case "nack":
      if (!Number.isInteger(op.delayMs) || op.delayMs < 0 || op.delayMs > MAX_NACK_DELAY_MS) {
        return rangeError("delay_milliseconds", `nack delay must be an integer between 0 and ${MAX_NACK_DELAY_MS} ms, got ${op.delayMs}`);
      }
      break;
    case "extend":
      if (!Number.isInteger(op.seconds) || op.seconds < 1 || op.seconds > MAX_VISIBILITY_SECONDS) {
        return rangeError("visibility_seconds", `extend must be an integer between 1 and ${MAX_VISIBILITY_SECONDS} s, got ${op.seconds}`);
      }
      break;
    case "dead":
      if (utf8Length(op.reason) > MAX_REASON_BYTES) return rangeError("reason", `reason is at most ${MAX_REASON_BYTES} bytes`);
      if (utf8Length(op.description) > MAX_DESCRIPTION_BYTES) {
        return rangeError("description", `description is at most ${MAX_DESCRIPTION_BYTES} bytes`);
      }
      break;
  }
  return undefined;
}

const operationOf: Record<Settlement["kind"], ConsumeOperation> = {
  ack: ConsumeOperation.ACK,
  nack: ConsumeOperation.NACK,
  extend: ConsumeOperation.EXTEND,
  dead: ConsumeOperation.DEAD,
};

function streamError(e: StreamError): TagqError {
  return new TagqError({
    code: e.code as Code,
    message: e.message,
    reason: e.reason,
    domain: ERROR_DOMAIN,
    metadata: e.field ? { field: e.field } : {},
  });
}

/** Per unsettled message: when it arrived, its deadline as we know it, its renewal timer. */
interface Tracked {
  m: StreamMessage;
  arrived: number;
  deadline: number;
  timer: NodeJS.Timeout | undefined;
}

/**
 * A Consume stream: an async iterable of {@link StreamMessage}s, at most
 * maxOutstandingMessages (and bytes) of them unsettled at a time.
 *
 * ```ts
 * const consumer = c.consume({ queue: "orders", tag: "billing", maxOutstandingMessages: 10 });
 * for await (const m of consumer) {
 *   await handle(m.text());
 *   m.ack();
 * }
 * ```
 *
 * The stream opens at once. Errors (QUEUE_NOT_FOUND, a broken connection,
 * the server shutting down: UNAVAILABLE with reason SERVER_SHUTTING_DOWN)
 * are thrown by the iteration and by close(). Leaving a `for await` loop
 * (break, throw) closes the consumer as close() does.
 */
export class Consumer implements AsyncIterable<StreamMessage> {
  private readonly opts: ConsumeOptions;
  private readonly confirm: boolean;
  private readonly abort = new AbortController();
  private readonly outbox: Outbox<ConsumeRequestInit>;
  private openFrame: ConsumeRequestInit | undefined;
  private pending: Pending[] = [];
  private flow: FlowLimits | undefined;
  private readonly tracked = new Map<number, Tracked>();
  private readonly awaiting = new Map<string, Waiter[]>();
  private buffer: StreamMessage[] = [];
  private readers: { resolve: (r: IteratorResult<StreamMessage, undefined>) => void; reject: (e: unknown) => void }[] = [];
  /** No more messages are handed out (close or a worker stopping). */
  private delivering = true;
  private closing = false;
  private finished = false;
  private error: TagqError | undefined;
  private errorThrown = false;
  private visibilityMs = 0;
  private readonly endedPromise: Promise<void>;
  private resolveEnded!: () => void;
  /** The caller's signal: break the stream, hand out nothing more. */
  private readonly onUserAbort = () => {
    this.stopDelivery();
    this.abort.abort();
  };
  private running = false;

  /** @internal Use {@link TagqClient.consume}. */
  constructor(
    private readonly client: TagqClient,
    opts: ConsumeOptions,
  ) {
    this.opts = { ...opts };
    this.confirm = opts.confirm ?? false;
    this.endedPromise = new Promise((r) => (this.resolveEnded = r));
    this.outbox = new Outbox(() => this.take());
    this.openFrame = {
      open: {
        queue: opts.queue,
        tag: opts.tag ?? "",
        confirm: this.confirm,
        maxOutstandingMessages: opts.maxOutstandingMessages,
        maxOutstandingBytes: opts.maxOutstandingBytes === undefined ? undefined : BigInt(opts.maxOutstandingBytes),
        visibilitySeconds: opts.visibilitySeconds,
      },
    };
    if (opts.signal?.aborted) this.onUserAbort();
    else opts.signal?.addEventListener("abort", this.onUserAbort, { once: true });
    void this.stream();
  }

  /** Messages received and not yet settled (handed out or not). */
  get outstanding(): number {
    return this.tracked.size;
  }

  /** Whether the stream has ended. */
  get ended(): boolean {
    return this.finished;
  }

  /**
   * Changes the outstanding limits of the running stream (0 messages is not
   * allowed; the server's range is 1-10000 messages, 1 KiB-1 GiB).
   */
  setFlow(limits: FlowLimits): void {
    const { maxOutstandingMessages: msgs, maxOutstandingBytes: bytes } = limits;
    if (msgs !== undefined && (!Number.isInteger(msgs) || msgs < 1 || msgs > 10_000)) {
      throw rangeError("flow.max_outstanding_messages", `maxOutstandingMessages must be an integer between 1 and 10000, got ${msgs}`);
    }
    if (bytes !== undefined && (!Number.isInteger(bytes) || bytes < 1024 || bytes > 1 << 30)) {
      throw rangeError("flow.max_outstanding_bytes", `maxOutstandingBytes must be an integer between 1024 and ${1 << 30}, got ${bytes}`);
    }
    if (this.finished || this.outbox.isEnded) return;
    this.flow = { ...this.flow, ...limits };
    this.outbox.wake();
  }

  [Symbol.asyncIterator](): AsyncIterator<StreamMessage, undefined> {
    return {
      next: () => this._next(),
      return: async () => {
        await this.close().catch(() => undefined);
        return { value: undefined, done: true };
      },
    };
  }

  /**
   * Closes the stream cleanly: stops handing out messages, sends the
   * settlements made so far, ends the request side and reads until the
   * server ends the stream, by which time those settlements are applied and
   * every unsettled message is visible again (at once). Settlements made
   * afterwards go by the unary calls. Rejects with the stream's error if it
   * failed (not if it was aborted).
   */
  async close(): Promise<void> {
    if (!this.closing) {
      this.closing = true;
      this.stopDelivery();
      // Given back by the server as the stream ends: no renewal for them.
      for (const t of this.tracked.values()) clearTimeout(t.timer);
      this.outbox.end();
    }
    await this.endedPromise;
    if (this.error) throw this.error;
  }

  /** Resolves when the stream has ended (never rejects). */
  whenEnded(): Promise<void> {
    return this.endedPromise;
  }

  /**
   * Runs handler for every message, up to concurrency at a time (default 1),
   * with the Go consumer's contract: a handler that resolves acks the
   * message, one that throws nacks it with a backoff (default
   * {@link defaultBackoff}), one that throws a {@link Poison} dead-letters
   * it. A handler may settle the message itself; then nothing more is done.
   * Unless maxOutstandingMessages was given, the stream's credit is set to
   * concurrency, so messages do not wait in memory.
   *
   * `worker.stop()` stops taking messages, lets running handlers finish and
   * settle, then closes the stream (the messages not started go back at
   * once). `worker.done` resolves once stopped, or rejects with the
   * stream's error if it failed (after the running handlers finished).
   */
  run(handler: Handler, opts: RunOptions = {}): Worker {
    if (this.running) throw new Error("this consumer already runs a worker");
    this.running = true;
    return new Worker(this, handler, opts, this.opts.maxOutstandingMessages === undefined);
  }

  /** @internal Stops handing out messages; pending next() calls end. */
  stopDelivery(): void {
    this.delivering = false;
    const readers = this.readers;
    this.readers = [];
    for (const r of readers) r.resolve({ value: undefined, done: true });
  }

  /** @internal The iterator's next (also the worker's). */
  _next(): Promise<IteratorResult<StreamMessage, undefined>> {
    if (this.delivering && this.buffer.length > 0) return Promise.resolve({ value: this.buffer.shift()!, done: false });
    if (!this.delivering) return Promise.resolve({ value: undefined, done: true });
    if (this.finished) {
      if (this.error && !this.errorThrown) {
        this.errorThrown = true;
        return Promise.reject(this.error);
      }
      return Promise.resolve({ value: undefined, done: true });
    }
    return new Promise((resolve, reject) => this.readers.push({ resolve, reject }));
  }

  private async stream(): Promise<void> {
    let error: TagqError | undefined;
    try {
      await this.resolveVisibility();
      if (this.abort.signal.aborted || this.closing) return;
      // timeoutMs 0: no deadline (the transport's defaultTimeoutMs is for unary calls).
      const responses = this.client.messages.consume(this.outbox, { signal: this.abort.signal, timeoutMs: 0 });
      for await (const r of responses) this.receive(r);
    } catch (e) {
      if (!this.abort.signal.aborted) error = TagqError.from(e);
    } finally {
      this.finish(error);
    }
  }

  /** Learns the visibility the server applies, to time renewals. */
  private async resolveVisibility(): Promise<void> {
    const { autoExtend = true, visibilitySeconds } = this.opts;
    if (!autoExtend) return;
    if (visibilitySeconds !== undefined) {
      this.visibilityMs = visibilitySeconds * 1000;
      return;
    }
    const q = await this.client.getQueue(this.opts.queue);
    const tag = await this.client.getTag(this.opts.queue, this.opts.tag || q.defaultTagName);
    this.visibilityMs = (tag.visibilityTimeoutSeconds ?? q.visibilityTimeoutSeconds ?? 30) * 1000;
  }

  private receive(r: ConsumeResponse): void {
    for (const cm of r.messages) this.admit(cm);
    for (const c of r.confirmations) this.confirmed(c);
  }

  private admit(cm: ConsumeMessage): void {
    const m = new StreamMessage(this, this.opts.queue, cm);
    const now = Date.now();
    const t: Tracked = { m, arrived: now, deadline: now + this.visibilityMs, timer: undefined };
    this.tracked.set(m.deliveryId, t);
    if (this.closing) return; // unsettled: the server gives it back as the stream ends
    this.scheduleRenewal(t);
    const reader = this.delivering ? this.readers.shift() : undefined;
    if (reader) reader.resolve({ value: m, done: false });
    else this.buffer.push(m);
  }

  /** Renews when two thirds of the visibility are left (or a third of a shorter deadline). */
  private scheduleRenewal(t: Tracked): void {
    clearTimeout(t.timer);
    t.timer = undefined;
    const v = this.visibilityMs;
    if (v < 1000 || this.closing || this.finished) return;
    const maxExt = (this.opts.maxExtensionSeconds ?? 3600) * 1000;
    if (Date.now() - t.arrived >= maxExt) return;
    const left = t.deadline - Date.now();
    const wait = Math.max(left - (2 * v) / 3, left / 3, 0);
    t.timer = setTimeout(() => this.renew(t, maxExt), wait);
    t.timer.unref();
  }

  private renew(t: Tracked, maxExt: number): void {
    t.timer = undefined;
    if (t.m.settled || this.closing || this.finished || !this.tracked.has(t.m.deliveryId)) return;
    const now = Date.now();
    if (now - t.arrived >= maxExt) return; // renewed long enough: it comes back at its deadline
    const seconds = Math.floor(this.visibilityMs / 1000);
    t.deadline = now + seconds * 1000;
    this.pending.push({ id: t.m.deliveryId, op: { kind: "extend", seconds } });
    if (this.confirm) this.expect(ConsumeOperation.EXTEND, t.m.deliveryId, { resolve: () => undefined, reject: () => undefined });
    this.outbox.wake();
    this.scheduleRenewal(t);
  }

  /** @internal The settlement of a message of this stream. */
  _settle(m: StreamMessage, op: Settlement): Promise<void> {
    const bad = checkSettlement(op);
    if (bad) return Promise.reject(bad);
    const t = this.tracked.get(m.deliveryId);
    if (op.kind === "extend") {
      if (t) {
        t.deadline = Date.now() + op.seconds * 1000;
        if (t.timer !== undefined) this.scheduleRenewal(t);
      }
    } else if (t) {
      clearTimeout(t.timer);
      this.tracked.delete(m.deliveryId);
      const i = this.buffer.indexOf(m);
      if (i >= 0) this.buffer.splice(i, 1);
    }
    if (this.finished || !t) return this.unary(m, op);
    return new Promise<void>((resolve, reject) => {
      const p: Pending = { id: m.deliveryId, op };
      const w: Waiter = { resolve, reject };
      p.unsent = () => {
        this.unexpect(operationOf[op.kind], m.deliveryId, w);
        this.unary(m, op).then(resolve, reject);
      };
      if (this.confirm) {
        this.expect(operationOf[op.kind], m.deliveryId, w);
      } else {
        p.sent = resolve;
      }
      this.pending.push(p);
      this.outbox.wake();
    });
  }

  /** Waits for the confirmation of a settlement (they come in order per delivery and operation). */
  private expect(op: ConsumeOperation, id: number, w: Waiter): void {
    const key = `${op}:${id}`;
    const list = this.awaiting.get(key) ?? [];
    list.push(w);
    this.awaiting.set(key, list);
  }

  private unexpect(op: ConsumeOperation, id: number, w: Waiter): void {
    const key = `${op}:${id}`;
    const list = this.awaiting.get(key)?.filter((x) => x !== w);
    if (list?.length) this.awaiting.set(key, list);
    else this.awaiting.delete(key);
  }

  /** Settles by receipt handle, for a message whose stream is gone. */
  private async unary(m: StreamMessage, op: Settlement): Promise<void> {
    const c = this.client;
    switch (op.kind) {
      case "ack":
        return c.delete(m.receiptHandle, { queue: m.queue });
      case "nack":
        return c.changeVisibility(m.receiptHandle, Math.ceil(op.delayMs / 1000), { queue: m.queue });
      case "extend":
        return c.changeVisibility(m.receiptHandle, op.seconds, { queue: m.queue });
      case "dead":
        return c.dead(m.receiptHandle, { reason: op.reason, description: op.description, queue: m.queue });
    }
  }

  /** Builds the next request frame from what is pending. */
  private take(): ConsumeRequestInit | undefined {
    if (this.openFrame) {
      const f = this.openFrame;
      this.openFrame = undefined;
      return f;
    }
    if (this.pending.length === 0 && !this.flow) return undefined;
    const frame = {
      acks: [] as bigint[],
      nacks: [] as { deliveryId: bigint; delayMilliseconds: number }[],
      extends: [] as { deliveryId: bigint; visibilitySeconds: number }[],
      deads: [] as { deliveryId: bigint; reason: string; description: string }[],
      flow: undefined as { maxOutstandingMessages?: number; maxOutstandingBytes?: bigint } | undefined,
    };
    if (this.flow) {
      const { maxOutstandingMessages, maxOutstandingBytes } = this.flow;
      frame.flow = { maxOutstandingMessages, maxOutstandingBytes: maxOutstandingBytes === undefined ? undefined : BigInt(maxOutstandingBytes) };
      this.flow = undefined;
    }
    let n = 0;
    let bytes = 0;
    while (n < this.pending.length && n < MAX_FRAME_ITEMS && bytes < MAX_FRAME_BYTES) {
      const { id, op } = this.pending[n++];
      const deliveryId = BigInt(id);
      bytes += 16;
      switch (op.kind) {
        case "ack":
          frame.acks.push(deliveryId);
          break;
        case "nack":
          frame.nacks.push({ deliveryId, delayMilliseconds: op.delayMs });
          break;
        case "extend":
          frame.extends.push({ deliveryId, visibilitySeconds: op.seconds });
          break;
        case "dead":
          frame.deads.push({ deliveryId, reason: op.reason, description: op.description });
          bytes += utf8Length(op.reason) + utf8Length(op.description);
          break;
      }
    }
    const taken = this.pending.splice(0, n);
    for (const p of taken) p.sent?.();
    if (this.pending.length > 0) this.outbox.wake(); // the rest in the next frame
    return frame;
  }

  private confirmed(c: ConsumeConfirmation): void {
    const key = `${c.operation}:${c.deliveryId}`;
    const list = this.awaiting.get(key);
    const w = list?.shift();
    if (list && list.length === 0) this.awaiting.delete(key);
    if (!w) return;
    if (c.error) w.reject(streamError(c.error));
    else w.resolve();
  }

  private finish(error: TagqError | undefined): void {
    if (this.finished) return;
    this.finished = true;
    this.error = error;
    this.opts.signal?.removeEventListener("abort", this.onUserAbort);
    for (const t of this.tracked.values()) clearTimeout(t.timer);
    this.tracked.clear();
    this.buffer = [];
    // Settlements never sent: by the unary calls.
    const unsent = this.pending;
    this.pending = [];
    this.flow = undefined;
    this.outbox.end();
    for (const p of unsent) p.unsent?.();
    // Sent and not confirmed: their outcome is unknown.
    const gone =
      error ??
      new TagqError({
        code: this.abort.signal.aborted ? Code.Canceled : Code.Unavailable,
        message: "the Consume stream ended before the settlement was confirmed",
      });
    for (const list of this.awaiting.values()) for (const w of list) w.reject(gone);
    this.awaiting.clear();
    const readers = this.readers;
    this.readers = [];
    for (const r of readers) {
      if (error && !this.errorThrown) {
        this.errorThrown = true;
        r.reject(error);
      } else {
        r.resolve({ value: undefined, done: true });
      }
    }
    this.resolveEnded();
  }
}

/** A handler of {@link Consumer.run}: resolve to ack, throw to nack with backoff, throw {@link Poison} to dead-letter. */
export type Handler = (m: StreamMessage) => unknown | Promise<unknown>;

/** Options of {@link Consumer.run}. */
export interface RunOptions {
  /** Handlers running at once (default 1). */
  concurrency?: number;
  /** Milliseconds a failed message stays hidden, given its receive count (default {@link defaultBackoff}). */
  backoff?: (receiveCount: number) => number;
  /**
   * Told about a handler that threw (not a Poison) and about a settlement
   * that failed; default: console.warn.
   */
  onError?: (err: unknown, m: StreamMessage) => void;
}

/**
 * A handler's verdict that a message can never be processed: the worker
 * dead-letters it with this reason and description instead of retrying.
 */
export class Poison extends Error {
  readonly reason: string;
  readonly description: string;
  constructor(reason = "CONSUMER_DEAD_LETTERED", description = "") {
    super(`poison message (${reason})${description ? `: ${description}` : ""}`);
    this.name = "Poison";
    this.reason = reason;
    this.description = description;
  }
}

/** Backoff of a failed message in ms: 1 s for the first receive, doubling, at most 5 min, ±20 %. */
export function defaultBackoff(receiveCount: number): number {
  const base = Math.min(1000 * 2 ** Math.min(Math.max(receiveCount - 1, 0), 9), 300_000);
  return Math.round(base * (0.8 + 0.4 * Math.random()));
}

/** A running {@link Consumer.run}. */
export class Worker {
  /** Resolves once stopped; rejects with the stream's error if it failed. */
  readonly done: Promise<void>;
  private stopping = false;
  private readonly active = new Set<Promise<void>>();
  private freed: (() => void) | undefined;

  /** @internal */
  constructor(
    private readonly consumer: Consumer,
    private readonly handler: Handler,
    opts: RunOptions,
    setCredit: boolean,
  ) {
    const concurrency = opts.concurrency ?? 1;
    if (!Number.isInteger(concurrency) || concurrency < 1) throw new RangeError(`concurrency must be a positive integer, got ${concurrency}`);
    const backoff = opts.backoff ?? defaultBackoff;
    const onError = opts.onError ?? ((err: unknown, m: StreamMessage) => console.warn(`tagq worker: message ${m.messageId}:`, err));
    if (setCredit) consumer.setFlow({ maxOutstandingMessages: Math.min(concurrency, 10_000) });
    this.done = this.loop(concurrency, backoff, onError);
    this.done.catch(() => undefined); // the caller may only ever call stop()
  }

  /** Stops taking messages, waits for the running handlers, and closes the stream cleanly. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.consumer.stopDelivery();
    this.freed?.();
    await this.done.catch(() => undefined);
  }

  private async loop(concurrency: number, backoff: (n: number) => number, onError: (err: unknown, m: StreamMessage) => void): Promise<void> {
    let failure: unknown;
    try {
      while (!this.stopping) {
        while (this.active.size >= concurrency && !this.stopping) {
          await new Promise<void>((r) => (this.freed = r));
        }
        if (this.stopping) break;
        const r = await this.consumer._next();
        if (r.done) break;
        const task = this.handle(r.value, backoff, onError);
        this.active.add(task);
        void task.then(() => {
          this.active.delete(task);
          const f = this.freed;
          this.freed = undefined;
          f?.();
        });
      }
    } catch (e) {
      failure = e;
    }
    await Promise.all(this.active);
    if (failure !== undefined) throw failure;
    await this.consumer.close();
  }

  private async handle(m: StreamMessage, backoff: (n: number) => number, onError: (err: unknown, m: StreamMessage) => void): Promise<void> {
    let ok = false;
    let err: unknown;
    try {
      await inProcessSpan(m, () => this.handler(m));
      ok = true;
    } catch (e) {
      err = e;
    }
    if (m.settled) return;
    try {
      if (ok) {
        await m.ack();
      } else if (err instanceof Poison) {
        await m.dead(err.reason, err.description);
      } else {
        onError(err, m);
        const ms = Math.round(backoff(m.receiveCount));
        await m.nack(Math.min(Math.max(ms, 0), MAX_NACK_DELAY_MS));
      }
    } catch (e) {
      onError(e, m);
    }
  }
}
