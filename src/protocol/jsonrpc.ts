/**
 * JSON-RPC 2.0 messages as MCP uses them, and the error responses the proxy
 * itself sends (docs/errors.md). Schemas are loose:
 * unknown fields are carried, never stripped, since the proxy forwards what it
 * does not rewrite.
 */
import * as v from "valibot";
import { asWritten } from "../json";
import { completeResult, type Revision, revisionOf, unknownRequestId } from "./revision";

export const ErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  InvalidParams: -32602,
  InternalError: -32603,
  OriginUnreachable: -32000,
  OriginTimeout: -32001,
  /** Protocol 2026-07-28's: `Mcp-*` headers that disagree with the body (SEP-2243). */
  HeaderMismatch: -32020,
} as const;

export type RequestId = string | number;

/**
 * The request of `asked` that a client takes a response with `id` for, if
 * any. The TypeScript SDKs (1.x and 2.x) and the AI SDK look a response up by
 * `Number(id)`, so `"1"`, `"0x1"` and `" 1.0 "` answer request 1 there, while
 * other clients match ids exactly: what the proxy does to the answer to a
 * request, it does to every message a client may take for it.
 */
export function requestAnswered(id: unknown, asked: ReadonlySet<RequestId>): RequestId | undefined {
  if (asked.has(id as RequestId)) return id as RequestId;
  if (typeof id !== "string" && typeof id !== "number") return undefined;
  const number = Number(id);
  for (const request of asked) if (Number(request) === number) return request;
  return undefined;
}

/**
 * A request's id as the proxy's own answer to it writes it: as the client
 * wrote it. Python's and Go's clients read an integer id exactly, and
 * 12345678901234567891, written as the double it parses to, is
 * 12345678901234567000: no request's id, and the client waits on. A string
 * id written with escapes (`"\u0036"`) is written back with them, for a
 * client that matches answers by the text it sent.
 */
export const idAsWritten = (request: JsonRpcRequest): RequestId =>
  asWritten(request, "id") as RequestId;

/** Methods the proxy reads only as requests: it renames, refuses and repairs them by id. */
const REQUEST_ONLY_METHODS: ReadonlySet<string> = new Set(["tools/call", "tools/list"]);

/**
 * The method of a notification that names one the proxy reads only as a
 * request, if `message` is one: without an id it would pass unread, while an
 * origin might still act on it.
 */
export function requestWithoutId(message: JsonRpcMessage): string | undefined {
  const { method } = message as { method?: unknown };
  return !("id" in message) && typeof method === "string" && REQUEST_ONLY_METHODS.has(method)
    ? method
    : undefined;
}

const JSONRPC = v.literal("2.0");
const Id = v.union([v.string(), v.number()]);
const Params = v.optional(v.union([v.record(v.string(), v.unknown()), v.array(v.unknown())]));

const JsonRpcRequestSchema = v.looseObject({
  jsonrpc: JSONRPC,
  id: Id,
  method: v.string(),
  params: Params,
});

const JsonRpcNotificationSchema = v.pipe(
  v.looseObject({ jsonrpc: JSONRPC, method: v.string(), params: Params }),
  v.check((message) => !("id" in message)),
);

/** JSON-RPC 2.0: a response has `result` or `error`, never both. */
const JsonRpcResultSchema = v.pipe(
  v.looseObject({ jsonrpc: JSONRPC, id: Id, result: v.unknown() }),
  v.check((message) => !("error" in message)),
);

const JsonRpcErrorSchema = v.pipe(
  v.looseObject({
    jsonrpc: JSONRPC,
    id: v.nullable(Id),
    error: v.looseObject({ code: v.pipe(v.number(), v.integer()), message: v.string() }),
  }),
  v.check((message) => !("result" in message)),
);

export const JsonRpcMessageSchema = v.union([
  JsonRpcRequestSchema,
  JsonRpcNotificationSchema,
  JsonRpcResultSchema,
  JsonRpcErrorSchema,
]);

export type JsonRpcRequest = v.InferOutput<typeof JsonRpcRequestSchema>;
export type JsonRpcMessage = v.InferOutput<typeof JsonRpcMessageSchema>;

/**
 * A request has a string `method` and an id; a response the client sends
 * with a `method` of another type beside its `result` (which the schemas
 * carry) is a response, not a request of that id.
 */
export function isRequest(message: JsonRpcMessage): message is JsonRpcRequest {
  return "id" in message && typeof (message as { method?: unknown }).method === "string";
}

export interface JsonRpcErrorBody {
  jsonrpc: "2.0";
  /** Absent, or `null` up to 2025-06-18, when the request's id is unknown (see revision.ts). */
  id?: RequestId | null;
  error: { code: number; message: string };
}

export function jsonRpcError(id: RequestId, code: number, message: string): JsonRpcErrorBody {
  return { jsonrpc: "2.0", id, error: { code, message } };
}

/**
 * A tool result of the proxy's own that reports `text` as the tool's error
 * (`isError`), which a model reads, as the request's revision writes results.
 */
export function toolError(id: RequestId, text: string, revision: Revision) {
  return {
    jsonrpc: "2.0",
    id,
    result: completeResult({ content: [{ type: "text", text }], isError: true }, revision),
  };
}

/**
 * Who an error answers: the ids of the requests in a body, whether it was a
 * batch, and the revision they speak (which says how to write an unknown id).
 */
export interface ErrorAddressee {
  batch: boolean;
  ids: readonly RequestId[];
  revision: Revision;
}

/** The requests of a body, for addressing an error that stands in for the origin's answer. */
export function addresseeOf(body: {
  messages: JsonRpcMessage[];
  batch: boolean;
  revision: Revision;
}): ErrorAddressee {
  const ids = body.messages.filter(isRequest).map(idAsWritten);
  return { batch: body.batch, ids, revision: body.revision };
}

/** The addressee of an error for a request whose body was not read: its revision from its headers. */
export function unreadAddressee(headers: Headers): ErrorAddressee {
  return { batch: false, ids: [], revision: revisionOf(headers) };
}

/**
 * An HTTP response carrying the proxy's own JSON-RPC error: one per request of
 * a batch, the request's id for a single request, and for an unknown id what
 * the request's revision prescribes.
 */
export function errorResponse(
  status: number,
  code: number,
  message: string,
  addressee: ErrorAddressee,
  headers?: HeadersInit,
): Response {
  const { batch, ids, revision } = addressee;
  const error = { code, message };
  const [id] = ids;
  const body =
    batch && ids.length > 0
      ? ids.map((requestId) => jsonRpcError(requestId, code, message))
      : id === undefined
        ? { jsonrpc: "2.0", ...unknownRequestId(revision), error }
        : jsonRpcError(id, code, message);
  return Response.json(body, { status, headers });
}
