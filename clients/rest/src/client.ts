// A typed REST client of tagqd: openapi-fetch over the types that
// openapi-typescript generates (`npm run generate`) from
// gen/openapi/tagq.openapi.json, the document tagqd serves at /openapi.json.
import createClient, { type Client } from "openapi-fetch";
import type { components, operations, paths } from "./schema.js";

export type { components, operations, paths };

/** The JSON form of google.rpc.Status that every error answer carries. */
export type Status = components["schemas"]["rpcStatus"];
/** A typed client: `client.GET("/v1/queues/{name}", { params: { path: { name } } })`. */
export type TagqRestClient = Client<paths, "application/json">;

export interface TagqRestOptions {
  /** tagqd's REST address with scheme, e.g. "http://localhost:8080". */
  baseUrl: string;
  /** An API key, sent as `Authorization: Bearer <key>`. */
  apiKey?: string;
  /** A fetch of your own (default: the global fetch). */
  fetch?: typeof globalThis.fetch;
}

/** createTagqClient makes a typed client of one tagqd's REST API. */
export function createTagqClient(opts: TagqRestOptions): TagqRestClient {
  const headers: Record<string, string> = {};
  if (opts.apiKey) headers["Authorization"] = `Bearer ${opts.apiKey}`;
  return createClient<paths, "application/json">({ baseUrl: opts.baseUrl, headers, fetch: opts.fetch });
}

/** errorInfo returns the google.rpc.ErrorInfo detail of an error answer, if any. */
export function errorInfo(status: Status | undefined): components["schemas"]["rpcErrorInfo"] | undefined {
  for (const d of status?.details ?? []) {
    if (d["@type"] === "type.googleapis.com/google.rpc.ErrorInfo") return d as components["schemas"]["rpcErrorInfo"];
  }
  return undefined;
}

/** TagqRestError is an error answer, thrown by must(). */
export class TagqRestError extends Error {
  constructor(
    readonly httpStatus: number,
    readonly status: Status,
  ) {
    const info = errorInfo(status);
    super(`HTTP ${httpStatus}: ${status.message ?? ""}${info ? ` (${info.reason})` : ""}`);
    this.name = "TagqRestError";
  }
  /** The ErrorInfo reason, such as QUEUE_NOT_FOUND. */
  get reason(): string | undefined {
    return errorInfo(this.status)?.reason;
  }
  /** The request field at fault (ErrorInfo metadata "field"). */
  get field(): string | undefined {
    return errorInfo(this.status)?.metadata?.["field"];
  }
}

/**
 * must returns an answer's data, or throws TagqRestError for an error answer:
 * `const { queue } = must(await client.GET(...))`.
 */
export function must<T>(r: { data?: T; error?: Status; response: Response }): T {
  if (r.error !== undefined || r.data === undefined) {
    throw new TagqRestError(r.response.status, r.error ?? { message: "no body" });
  }
  return r.data;
}
