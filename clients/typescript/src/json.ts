// JSON.stringify of what the client returns. The generated messages hold
// int64 counters (Tag.state.available, ...) and Timestamp seconds as
// bigint, which JSON.stringify refuses ("Do not know how to serialize a
// BigInt"). Every message a unary call answers, and every message nested
// in it, gets a (non-enumerable) toJSON: its protobuf JSON (toJson), as the
// REST API writes it but with the JSON (lowerCamelCase) field names:
// int64 as decimal strings (exact), Timestamps as RFC 3339 strings, bytes
// as base64, enums by name, zeros included. The objects are otherwise
// unchanged: counters stay bigint in code.
import { toJson, type DescMessage, type Message } from "@bufbuild/protobuf";
import type { Interceptor } from "@connectrpc/connect";

/** Gives message (of schema) and the messages in it a toJSON; returns message. */
export function jsonFriendly<T extends Message>(schema: DescMessage, message: T): T {
  Object.defineProperty(message, "toJSON", {
    value: () => toJson(schema, message, { alwaysEmitImplicit: true }),
    enumerable: false,
    configurable: true,
  });
  const m = message as unknown as Record<string, unknown>;
  for (const f of schema.fields) {
    let v: unknown;
    if (f.oneof) {
      const o = m[f.oneof.localName] as { case?: string; value?: unknown } | undefined;
      v = o?.case === f.localName ? o.value : undefined;
    } else {
      v = m[f.localName];
    }
    if (v === undefined) continue;
    if (f.fieldKind === "message") {
      jsonFriendly(f.message, v as Message);
    } else if (f.fieldKind === "list" && f.listKind === "message") {
      for (const e of v as Message[]) jsonFriendly(f.message, e);
    } else if (f.fieldKind === "map" && f.mapKind === "message") {
      for (const e of Object.values(v as Record<string, Message>)) jsonFriendly(f.message, e);
    }
  }
  return message;
}

/** A transport interceptor that makes every unary answer jsonFriendly. */
export const jsonFriendlyAnswers: Interceptor = (next) => async (req) => {
  const res = await next(req);
  if (!res.stream) jsonFriendly(res.method.output, res.message);
  return res;
};
