/**
 * Reads and classifies a POST body before anything reaches the origin.
 *
 * The body is read up to `maxBytes` and no further: a declared `Content-Length`
 * over the limit is refused unread, one within it is read whole by the runtime,
 * and a streamed body (no length) is cancelled the moment it passes the limit,
 * so an oversized upload costs neither memory nor CPU time.
 * The bytes are kept as they came; they are what gets forwarded when nothing is
 * rewritten.
 */
import * as v from "valibot";
import type { Config } from "../config";
import {
  type ExactText,
  foldedKey,
  keyTwiceReason,
  parseExact,
  quotedName,
  utf8Text,
} from "../json";
import { keyReadTwice, MAX_NESTING, nestsTooDeep } from "../json-spans";
import {
  ErrorCode,
  isRequest,
  type JsonRpcMessage,
  JsonRpcMessageSchema,
  type RequestId,
  requestAnswered,
  requestWithoutId,
} from "../protocol/jsonrpc";
import { type Revision, revisionOf } from "../protocol/revision";
import { LISTING_MEMBERS, misspelledKey } from "../protocol/tools-list";
import { bodyIsEncoded, mediaTypeOf, otherCharsetOf } from "./headers";
import { type Hold, readBounded } from "./read-bounded";

export interface ParsedBody {
  kind: "parsed";
  /** The body as the client sent it. */
  bytes: Uint8Array;
  /** The messages as parsed: keys like `__proto__` or `constructor` are data in them. */
  messages: JsonRpcMessage[];
  /** How the client wrote values `JSON.stringify` writes differently, for a changed body. */
  exact?: ExactText;
  batch: boolean;
  /** The revision the body speaks: a single message's own claim, else the request's header. */
  revision: Revision;
}

export type PostBody =
  | ParsedBody
  | {
      kind: "refused";
      status: 400 | 413 | 415;
      code: number;
      message: string;
      /** What the answer says beside (`Accept-Encoding`). */
      headers?: HeadersInit;
    }
  /** The isolate's reads hold too much to take the body (read-bounded.ts `ReadBudget`). */
  | { kind: "busy" };

/** The body's bytes; `over` its bound, or `busy` when the isolate's reads hold too much to take them. */
async function readWithin(
  request: Request,
  maxBytes: number,
  hold: Hold,
): Promise<Uint8Array | "over" | "busy"> {
  const declared = Number(request.headers.get("content-length") ?? Number.NaN);
  if (declared > maxBytes) return "over";
  if (!request.body) return new Uint8Array();
  // A declared length is the body's length (HTTP framing): read by the runtime in one go. One
  // that is no length (negative) would give back what others took: the body is counted as read.
  if (Number.isSafeInteger(declared) && declared >= 0) {
    if (!hold.take(declared)) {
      await request.body.cancel();
      return "busy";
    }
    const bytes = new Uint8Array(await request.arrayBuffer());
    return bytes.byteLength > maxBytes ? "over" : bytes;
  }
  const read = await readBounded(request.body, maxBytes, hold);
  if (read.kind === "complete") return read.bytes;
  await read.rest.cancel();
  return read.kind;
}

const refused = (
  status: 400 | 413 | 415,
  code: number,
  message: string,
  headers?: HeadersInit,
): PostBody => ({ kind: "refused", status, code, message, ...(headers ? { headers } : {}) });

/** What a POST body may be: `MAX_BODY_BYTES` and `MAX_BATCH_MESSAGES`. */
export type PostBodyLimits = Pick<Config, "maxBodyBytes" | "maxBatchMessages">;

/**
 * The body of a POST, read within `limits` and what `hold` may take of the
 * isolate's budget (read-bounded.ts), or why it is refused.
 */
export async function readPostBody(
  request: Request,
  { maxBodyBytes: maxBytes, maxBatchMessages }: PostBodyLimits,
  hold: Hold,
): Promise<PostBody> {
  // Labeled JSON, as MCP clients label it; anything else is refused unread: a web page can
  // send `text/plain` or a form to a local proxy without a CORS preflight, but not JSON.
  if (mediaTypeOf(request.headers) !== "application/json") {
    await request.body?.cancel();
    return refused(
      415,
      ErrorCode.InvalidRequest,
      "Unsupported Media Type: a POST to the MCP endpoint has Content-Type: application/json",
    );
  }
  if (otherCharsetOf(request.headers) !== undefined) {
    await request.body?.cancel();
    return refused(
      415,
      ErrorCode.InvalidRequest,
      "Unsupported Media Type: a POST to the MCP endpoint is JSON in UTF-8; its Content-Type names no other charset",
    );
  }
  if (bodyIsEncoded(request.headers)) {
    await request.body?.cancel();
    return refused(
      415,
      ErrorCode.InvalidRequest,
      "Unsupported Media Type: a POST to the MCP endpoint is sent uncompressed, with no Content-Encoding but identity",
      // RFC 9110 §15.5.16: the codings the server would accept.
      { "accept-encoding": "identity" },
    );
  }
  const bytes = await readWithin(request, maxBytes, hold);
  if (bytes === "over") {
    return refused(
      413,
      ErrorCode.InvalidRequest,
      `Request body exceeds the limit of ${maxBytes} bytes`,
    );
  }
  if (bytes === "busy") return { kind: "busy" };
  const text = utf8Text(bytes);
  const parsed = text === undefined ? undefined : parseExact(text);
  const nestsDeeper = () =>
    refused(
      400,
      ErrorCode.InvalidRequest,
      `Invalid Request: the body nests deeper than ${MAX_NESTING} levels`,
    );
  if (text === undefined || parsed === undefined) {
    if (text !== undefined && nestsTooDeep(text)) return nestsDeeper();
    return refused(400, ErrorCode.ParseError, "Parse error: the body is not valid JSON");
  }
  // One reading: JSON.parse keeps a key's last value, other readers its first, and Go's
  // encoding/json takes any case of a field's name (`Method` for `method`).
  const twice = keyReadTwice(text, 0, foldedKey);
  if (twice === null) return nestsDeeper();
  if (twice !== undefined) {
    return refused(
      400,
      ErrorCode.InvalidRequest,
      `Invalid Request: an object in the body writes ${keyTwiceReason(twice)}`,
    );
  }
  const json = parsed.value;

  const batch = Array.isArray(json);
  const candidates: unknown[] = batch ? json : [json];
  if (candidates.length === 0) {
    return refused(400, ErrorCode.InvalidRequest, "Invalid Request: empty batch");
  }
  // Before any message is looked at: each may cost the proxy a search, a check or a listing.
  if (candidates.length > maxBatchMessages) {
    return refused(
      400,
      ErrorCode.InvalidRequest,
      `Invalid Request: a batch holds at most ${maxBatchMessages} messages (MAX_BATCH_MESSAGES); this one holds ${candidates.length}`,
    );
  }
  const messages: JsonRpcMessage[] = [];
  for (const [index, candidate] of candidates.entries()) {
    // Checked, not copied: a schema's output would leave out keys such as `__proto__`.
    if (!v.is(JsonRpcMessageSchema, candidate)) {
      const where = batch ? `batch element ${index} is` : "the body is";
      return refused(
        400,
        ErrorCode.InvalidRequest,
        `Invalid Request: ${where} not a JSON-RPC 2.0 message`,
      );
    }
    // Go's encoding/json takes `Method` for `method`: read as no member here, a message with it
    // and an `error` was an answer passed unread, and a call to the Go SDK before its fix.
    const member = misspelledKey(Object.keys(candidate), LISTING_MEMBERS.message);
    if (member !== undefined) {
      const where = batch ? `batch element ${index}` : "the body";
      return refused(
        400,
        ErrorCode.InvalidRequest,
        `Invalid Request: ${where} writes the key ${quotedName(member)}, which lenient readers take for JSON-RPC's ${quotedName(foldedKey(member))}; write it as JSON-RPC does, or leave it out`,
      );
    }
    const method = requestWithoutId(candidate);
    if (method !== undefined) {
      const where = batch ? `batch element ${index}: ` : "";
      return refused(
        400,
        ErrorCode.InvalidRequest,
        `Invalid Request: ${where}${method} is a request and needs an id`,
      );
    }
    messages.push(candidate);
  }
  const sharing = sharedRequestIds(messages);
  if (sharing !== undefined) {
    return refused(
      400,
      ErrorCode.InvalidRequest,
      `Invalid Request: batch elements ${sharing[0]} and ${sharing[1]} are requests of one id; each request needs its own`,
    );
  }
  const revision = revisionOf(request.headers, batch ? undefined : messages[0]);
  return { kind: "parsed", bytes, messages, batch, revision, exact: parsed.exact };
}

/**
 * The places of two requests a client would take for one (`requestAnswered`:
 * `"7"` is `7`), where a batch holds them: the proxy keeps what it does for
 * a request by its id (a listing's first page, an answer of its own), and
 * the client matches answers by it. Answers the client sends (to the
 * server's requests) are not requests. At most `MAX_BATCH_MESSAGES` each way.
 */
function sharedRequestIds(messages: readonly JsonRpcMessage[]): [number, number] | undefined {
  const asked = new Set<RequestId>();
  const places = new Map<RequestId, number>();
  for (const [index, message] of messages.entries()) {
    if (!isRequest(message)) continue;
    const before = requestAnswered(message.id, asked);
    if (before !== undefined) return [places.get(before) as number, index];
    asked.add(message.id);
    places.set(message.id, index);
  }
  return undefined;
}
