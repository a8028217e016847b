/**
 * Which protocol revision a request speaks, and everything that differs
 * between revisions in the messages the proxy writes itself (rather than
 * relays). This is the one place those differences live.
 *
 * | what the proxy writes            | up to 2025-06-18 | 2025-11-25 | 2026-07-28 on                          |
 * |----------------------------------|------------------|------------|----------------------------------------|
 * | an error whose request id is unknown | `"id": null` | no `id`    | no `id`                                |
 * | a result (the `enforce` answer)  | as is            | as is      | `"resultType": "complete"`             |
 * | its own request (the re-list)    | `params` only    | same       | the client's `_meta` envelope, `Mcp-Method` and `MCP-Protocol-Version` |
 *
 * The revision is the request's own `_meta` claim
 * (`io.modelcontextprotocol/protocolVersion`, 2026-07-28 on), else its
 * `MCP-Protocol-Version` header, else 2025-03-26, the revision before the
 * header existed (as the transport specification says a server may assume).
 */
import { asWritten, isPlainObject, own } from "../json";
import { retargetHeaders } from "./mcp-headers";

/** The first revision without sessions, with a `_meta` envelope on every request. */
export const STATELESS_REVISION = "2026-07-28";
const OPTIONAL_ERROR_ID_REVISION = "2025-11-25";
const DEFAULT_REVISION = "2025-03-26";

const PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion";
/** The client's capabilities, in a 2026-07-28 request's `_meta`. */
export const CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities";
const CLIENT_INFO = "io.modelcontextprotocol/clientInfo";

/**
 * The keys of a request's `_meta` envelope the proxy reads: the revision it
 * speaks, and the client's capabilities and identity (call analytics).
 */
export const READ_META_KEYS = [PROTOCOL_VERSION, CLIENT_CAPABILITIES, CLIENT_INFO] as const;

/**
 * The `_meta` keys a request of the proxy's own carries over from the request
 * that caused it, so the origin sees the same client: its revision, identity
 * and capabilities, and the trace it belongs to. Keys that belong to the
 * original request alone (`progressToken`, a log level) stay behind.
 */
const CLIENT_ENVELOPE_KEYS = [
  PROTOCOL_VERSION,
  CLIENT_CAPABILITIES,
  CLIENT_INFO,
  "traceparent",
  "tracestate",
  "baggage",
];

export interface Revision {
  /** A revision date, `YYYY-MM-DD`, compared as text. */
  version: string;
  /** 2026-07-28 or later: no sessions, an envelope on every request, `resultType` on every result. */
  stateless: boolean;
}

function revision(version: string): Revision {
  return { version, stateless: version >= STATELESS_REVISION };
}

/** The `_meta` of a message's params, when it has one. */
export function metaOf(message: unknown): Record<string, unknown> | undefined {
  if (!isPlainObject(message) || !isPlainObject(message.params)) return undefined;
  const meta = own(message.params, "_meta");
  return isPlainObject(meta) ? meta : undefined;
}

/** Revisions are dates; anything else is no claim (it would otherwise reach a header unchecked). */
const REVISION_DATE = /^\d{4}-\d{2}-\d{2}$/;

const dateForm = (value: unknown): string | undefined =>
  typeof value === "string" && REVISION_DATE.test(value.trim()) ? value.trim() : undefined;

/**
 * The revision a request speaks: `message`'s own claim, else the header, else
 * 2025-03-26. A claim not in the date form is ignored, and the message goes
 * on as it came for the origin to judge.
 */
export function revisionOf(headers: Headers, message?: unknown): Revision {
  return revision(
    dateForm(metaOf(message)?.[PROTOCOL_VERSION]) ??
      dateForm(headers.get("mcp-protocol-version")) ??
      DEFAULT_REVISION,
  );
}

/**
 * `"MCP-Protocol-Version"` when a request's header of that name says another
 * revision than its body claims (`_meta`, protocol 2026-07-28's envelope,
 * compared as written, as the SDK's server compares them); `undefined` when
 * it agrees, or either is missing. The origin refuses such a request
 * (`-32020`), and so does the proxy, before it answers anything itself:
 * it would answer as the revision the body claims, a gateway before it
 * routed by the one the header says, and the origin takes neither.
 * `batch`: a message of a batch, which is read as its header's revision, or
 * without one as 2025-03-26 (`revisionOf`), which its claim must then be.
 */
export function versionMismatch(
  headers: Headers,
  message: unknown,
  batch = false,
): "MCP-Protocol-Version" | undefined {
  const claim = metaOf(message)?.[PROTOCOL_VERSION];
  const header = headers.get("mcp-protocol-version") ?? (batch ? DEFAULT_REVISION : null);
  return typeof claim === "string" && header !== null && header !== claim
    ? "MCP-Protocol-Version"
    : undefined;
}

/** The `id` member of an error that answers a request whose id is unknown (a body that did not parse). */
export function unknownRequestId(revision: Revision): { id?: null } {
  return revision.version >= OPTIONAL_ERROR_ID_REVISION ? {} : { id: null };
}

/** A result the proxy gives itself, as the revision requires results to look. */
export function completeResult<T extends Record<string, unknown>>(
  result: T,
  revision: Revision,
): T {
  return revision.stateless ? { ...result, resultType: "complete" } : result;
}

/**
 * A request the proxy sends on behalf of `cause`, a client's request that
 * arrived with `headers` (already stripped of hop-by-hop headers): its params
 * and headers. Up to 2025-11-25 the session carries the client, so `params`
 * go as they are; from 2026-07-28 on they carry the client's envelope, and
 * the headers name the method and the revision as the body does.
 */
export function requestOnBehalfOf(
  cause: unknown,
  headers: Headers,
  revision: Revision,
  method: string,
  params: Record<string, unknown>,
): { params: Record<string, unknown>; headers: Headers } {
  retargetHeaders(headers, method);
  if (!revision.stateless) return { params, headers };
  headers.set("mcp-method", method);
  headers.set("mcp-protocol-version", revision.version);
  const meta = metaOf(cause) ?? {};
  // Each value as the client wrote it (`asWritten`; its members by their places): written by
  // JSON.stringify, a capability's 12345678901234567891 reached the origin as …000.
  const envelope = Object.fromEntries(
    CLIENT_ENVELOPE_KEYS.filter((key) => Object.hasOwn(meta, key)).map((key) => [
      key,
      asWritten(meta, key),
    ]),
  );
  return {
    params: {
      ...params,
      _meta: { [PROTOCOL_VERSION]: revision.version, [CLIENT_CAPABILITIES]: {}, ...envelope },
    },
    headers,
  };
}

/**
 * The cause `requestOnBehalfOf` reads for a request of the proxy's own that
 * no client's request caused (`/readyz`'s listing), where the origin serves
 * 2026-07-28 alone and so has no `initialize` to open a session with: it
 * speaks that revision, and names the proxy as its client.
 */
export function ownStatelessCause(clientInfo: { name: string; version: string }): unknown {
  return {
    params: { _meta: { [PROTOCOL_VERSION]: STATELESS_REVISION, [CLIENT_INFO]: clientInfo } },
  };
}
