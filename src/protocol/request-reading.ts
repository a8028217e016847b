/**
 * One reading of a POST's messages and its protocol 2026-07-28 headers
 * (SECURITY.md, One reading of every request): what every reader of the
 * request, a gateway before the proxy, the proxy, and the origin after it,
 * takes it to say, or why it has no such reading, which the proxy refuses
 * before anything else reads it: headers that disagree with the body or
 * mirror it without `Mcp-Method` (`-32020`), and params that write a member
 * the proxy reads in a spelling lenient readers take for it (`-32602`, as
 * the SDK 2.x server answers a malformed envelope: HTTP 400). JSON-RPC's own
 * members, and keys written twice, are read one way before
 * (transport/post-body.ts).
 */
import {
  isPlainObject,
  type Misspelling,
  misspelledAs,
  own,
  quotedName,
  type Spellings,
  spellingsOf,
} from "../json";
import { ErrorCode, type JsonRpcMessage } from "./jsonrpc";
import { batchHeader, headerMismatch, NAMED_BY } from "./mcp-headers";
import { READ_META_KEYS, versionMismatch } from "./revision";

/** Why a request has no one reading: the error the proxy answers it with (HTTP 400, each request's id). */
export interface ReadingRefusal {
  code: number;
  message: string;
}

/**
 * `Mcp-Name` or an `Mcp-Param-*` header beside a message with a method but
 * no `Mcp-Method`; `undefined` when there is none, or `Mcp-Method` is sent.
 * No revision has the one without the other: up to 2025-11-25 none of them
 * exists, and from 2026-07-28 every request names its method in
 * `Mcp-Method`, whose absence the SDK 2.x server refuses (`-32020`). The
 * proxy checks a call's `Mcp-Param-*` and writes it again from the call it
 * forwards only for a client that speaks these headers: the rest were
 * forwarded as sent beside a body the proxy changed (a name restored,
 * arguments repaired), so a gateway before the proxy routed by one value
 * and the origin, or one after it, read the body's. Dropped or written
 * again, they would still have that gateway judge a call the origin does
 * not run.
 */
function mirroredWithoutMethod(headers: Headers, message: JsonRpcMessage | undefined) {
  // A `method` that is no string beside a response's `result` makes no request of it (isRequest).
  const method = message && "method" in message ? message.method : undefined;
  if (typeof method !== "string" || headers.has("mcp-method")) return undefined;
  for (const name of headers.keys()) {
    if (name === "mcp-name") return "Mcp-Name";
    if (name.startsWith("mcp-param-")) return "Mcp-Param-*";
  }
  return undefined;
}

/**
 * Why a request's 2026-07-28 headers do not say what its body does, as the
 * origin would refuse them (`-32020`, HeaderMismatch), before the proxy
 * answers anything itself or brings a header in line with the body it
 * forwards; `undefined` when they do. A batch (2025-03-26) carries none of
 * them: each names one request.
 */
function headerRefusal(headers: Headers, batch: boolean, messages: JsonRpcMessage[]) {
  const disagrees = (header: string) =>
    `Header mismatch: the ${header} header does not match the request body`;
  // Each message's claim, a batch's too: a batch is read as its header's revision, and a message
  // that claims another was listed for as the claim's (relist.ts) and answered as the header's.
  for (const message of messages) {
    const version = versionMismatch(headers, message, batch);
    if (version !== undefined) return disagrees(version);
  }
  if (batch) {
    const header = batchHeader(headers);
    return (
      header && `Header mismatch: a batch carries no ${header} header, which names one request`
    );
  }
  const [message] = messages;
  const unnamed = mirroredWithoutMethod(headers, message);
  if (unnamed !== undefined) {
    return `Header mismatch: the ${unnamed} header comes without Mcp-Method, which every request that mirrors its body in headers carries (protocol 2026-07-28)`;
  }
  const mismatch = headerMismatch(headers, message);
  return mismatch && disagrees(mismatch);
}

/**
 * The members of a message's params the proxy reads, by method: `_meta`, of
 * every message (the revision it speaks, the client's identity), and
 * `cursor` of `tools/list` (whether it asks for a first page, which the
 * proxy may read to its end), the member `Mcp-Name` is compared with, and
 * `initialize`'s `clientInfo` (call analytics). A `tools/call`'s are those
 * of the call's reading (`CallMembers`): beside arguments written inline, a
 * member is one of them, whatever its spelling.
 */
const READ_BY_METHOD: ReadonlyMap<string, Spellings> = new Map([
  ["tools/list", spellingsOf(["_meta", "cursor"])],
  ["initialize", spellingsOf(["_meta", "clientInfo"])],
  ...Object.entries(NAMED_BY)
    .filter(([method]) => method !== "tools/call")
    .map(([method, member]) => [method, spellingsOf(["_meta", member])] as const),
]);
const READ_ALWAYS = spellingsOf(["_meta"]);
const READ_IN_META = spellingsOf(READ_META_KEYS);

/**
 * Where a message's params write a member the proxy reads (or a key of
 * their `_meta` it reads) in a spelling it reads as none and a lenient
 * reader as that member: `_Meta` for `_meta`, `Cursor` for `cursor`,
 * `IO.modelcontextprotocol/protocolVersion`. Go's `encoding/json` (mcp-go,
 * the Go SDK; a struct's fields are matched in any case) reads a revision
 * claim the proxy never held the `MCP-Protocol-Version` header to, and
 * answers as one revision a listing the proxy renames as another; or a
 * later page the proxy read as a first. Other members, whatever their
 * case, are no member the proxy reads, and go on as written (lossless).
 */
function misspelledParam(
  message: JsonRpcMessage,
  callMembers: CallMembers,
): [where: string, ...Misspelling] | undefined {
  const method = "method" in message ? message.method : undefined;
  const params = "params" in message ? message.params : undefined;
  if (typeof method !== "string" || !isPlainObject(params)) return undefined;
  const member =
    method === "tools/call"
      ? callMembers(params)
      : misspelledAs(Object.keys(params), READ_BY_METHOD.get(method) ?? READ_ALWAYS);
  if (member !== undefined) return ["params write", ...member];
  const meta = own(params, "_meta");
  const key = isPlainObject(meta) ? misspelledAs(Object.keys(meta), READ_IN_META) : undefined;
  return key && ["params._meta writes", ...key];
}

/**
 * Which member of a `tools/call`'s params, if any, is written so a lenient
 * reader takes it for one the proxy reads as absent, and that member: the
 * call's reading, which depends on where its arguments are
 * (args/recover.ts `callMemberMisspelled`).
 */
export type CallMembers = (params: Record<string, unknown>) => Misspelling | undefined;

/** Why the proxy refuses a POST of `messages` with `headers` unread by the origin; `undefined`: it reads one way. */
export function readingRefusal(
  headers: Headers,
  { batch, messages }: { batch: boolean; messages: JsonRpcMessage[] },
  callMembers: CallMembers,
): ReadingRefusal | undefined {
  const header = headerRefusal(headers, batch, messages);
  if (header !== undefined) return { code: ErrorCode.HeaderMismatch, message: header };
  for (const [index, message] of messages.entries()) {
    const found = misspelledParam(message, callMembers);
    if (found === undefined) continue;
    const [where, written, member] = found;
    const element = batch ? `batch element ${index}: ` : "";
    return {
      code: ErrorCode.InvalidParams,
      message: `Invalid params: ${element}${where} the key ${quotedName(written)}, which lenient readers take for ${quotedName(member)}; write it as MCP does, or leave it out`,
    };
  }
  return undefined;
}
