// Errors and value conversions shared by the unary client, the consumer
// and the publisher.
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";

import { ErrorInfoSchema } from "./gen/google/rpc/error_details_pb.js";
import { MessageAttributeSchema, type MessageAttribute } from "./gen/tagq/v1/message_pb.js";

/** The ErrorInfo domain of tagq's errors. */
export const ERROR_DOMAIN = "tagq";

/**
 * An error tagqd returned (or a transport failure, with an empty reason).
 *
 * ```ts
 * try { await c.createQueue("has space"); }
 * catch (e) { if (e instanceof TagqError && e.reason === "INVALID_NAME") console.log(e.field); }
 * ```
 */
export class TagqError extends Error {
  /** The gRPC status code, e.g. Code.NotFound. */
  readonly code: Code;
  /** The ErrorInfo reason, e.g. QUEUE_NOT_FOUND; "" when the error had none. */
  readonly reason: string;
  /** The request field at fault (ErrorInfo metadata "field"), e.g. queue.name; "" when none. */
  readonly field: string;
  /** The ErrorInfo domain: "tagq" for tagq's own errors. */
  readonly domain: string;
  /** Every ErrorInfo metadata entry. */
  readonly metadata: Readonly<Record<string, string>>;

  constructor(init: {
    code: Code;
    message: string;
    reason?: string;
    field?: string;
    domain?: string;
    metadata?: Record<string, string>;
    cause?: unknown;
  }) {
    super(init.message, { cause: init.cause });
    this.name = "TagqError";
    this.code = init.code;
    this.reason = init.reason ?? "";
    this.domain = init.domain ?? "";
    this.metadata = { ...init.metadata };
    this.field = init.field ?? this.metadata["field"] ?? "";
  }

  /** The code's name, e.g. "InvalidArgument". */
  get codeName(): string {
    return Code[this.code] ?? String(this.code);
  }

  /**
   * Converts anything a call threw into a TagqError, reading the
   * google.rpc.ErrorInfo detail of a gRPC status (tagq's domain first).
   */
  static from(err: unknown): TagqError {
    if (err instanceof TagqError) return err;
    const ce = ConnectError.from(err);
    const infos = ce.findDetails(ErrorInfoSchema);
    const info = infos.find((i) => i.domain === ERROR_DOMAIN) ?? infos[0];
    return new TagqError({
      code: ce.code,
      message: ce.rawMessage,
      reason: info?.reason,
      domain: info?.domain,
      metadata: info?.metadata,
      cause: err,
    });
  }
}

export async function call<T>(p: Promise<T>): Promise<T> {
  try {
    return await p;
  } catch (e) {
    throw TagqError.from(e);
  }
}

/** A message body: bytes, or a string sent as UTF-8. */
export type Body = Uint8Array | string;

/** Message attributes: a string value, or binary. */
export type Attributes = Record<string, string | Uint8Array>;

export function toBytes(b: Body): Uint8Array {
  return typeof b === "string" ? new TextEncoder().encode(b) : b;
}

export function toAttributes(a: Attributes | undefined): Record<string, MessageAttribute> {
  const out: Record<string, MessageAttribute> = {};
  for (const [k, v] of Object.entries(a ?? {})) {
    out[k] = create(MessageAttributeSchema, {
      value: typeof v === "string" ? { case: "stringValue", value: v } : { case: "binaryValue", value: v },
    });
  }
  return out;
}
