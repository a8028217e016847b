/**
 * Which headers cross the proxy. End-to-end headers (Mcp-Session-Id,
 * MCP-Protocol-Version, Last-Event-ID, Accept, WWW-Authenticate, …) pass both
 * ways; hop-by-hop headers (RFC 9110 §7.6.1), and any the peer lists in
 * `Connection`, describe one connection and stop here. On the way to the
 * origin, what each mode lets through is `originRequestHeaders`'s, by what
 * protocol/header-names.ts says each header is.
 *
 * The runtime hides the client's `Connection` header from the Worker, so
 * headers a client lists there cannot be told apart and pass on (SECURITY.md).
 */
import { brokered, HOP_BY_HOP, neverPassed } from "../protocol/header-names";

/**
 * A body's media type: its `Content-Type` without parameters, in lower case
 * (type and subtype are case-insensitive, RFC 9110 §8.3.1); `""` without one.
 * The one reading of it, for what clients send and what origins answer.
 */
export function mediaTypeOf(headers: Headers): string {
  return (headers.get("content-type") ?? "").split(";", 1)[0]?.trim().toLowerCase() ?? "";
}

/**
 * A `charset` its `Content-Type` names other than UTF-8 (the first such, as
 * written); `undefined` when it names none or only UTF-8. The proxy reads
 * JSON as UTF-8, as RFC 8259 §8.1 has it, while a reader that honors the
 * label would read other strings in the same bytes.
 */
export function otherCharsetOf(headers: Headers): string | undefined {
  for (const parameter of (headers.get("content-type") ?? "").split(";").slice(1)) {
    const equals = parameter.indexOf("=");
    // A parameter with no value (`charsets`, RFC 9110 §5.6.6 has none) names no charset.
    if (equals === -1 || parameter.slice(0, equals).trim().toLowerCase() !== "charset") continue;
    const value = parameter.slice(equals + 1).trim();
    const unquoted = /^"[^"]*"$/.test(value) ? value.slice(1, -1) : value;
    if (!UTF_8_LABELS.has(unquoted.toLowerCase())) return value.slice(0, 64);
  }
  return undefined;
}

/** What the Encoding Standard reads as UTF-8: its labels of UTF-8, all of them. */
const UTF_8_LABELS = new Set([
  "unicode-1-1-utf-8",
  "unicode11utf8",
  "unicode20utf8",
  "utf-8",
  "utf8",
  "x-unicode20utf8",
]);

/** The comma-separated tokens of a header value, lower-cased; none for an absent header. */
function tokensOf(value: string | null): string[] {
  return (value ?? "")
    .split(",")
    .map((token) => token.trim().toLowerCase())
    .filter(Boolean);
}

/** RFC 9110 §5.1: what a header's name may be made of (lower case, as `tokensOf` gives it). */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9a-z]+$/;

/**
 * The header names `Connection` lists; what is no name (`not a name`, from a
 * broken peer) names no header, and `Headers.has` would throw for it.
 */
const connectionListed = (headers: Headers) =>
  tokensOf(headers.get("connection")).filter((token) => HEADER_NAME.test(token));

/** The names among `headers` that stop at the proxy: hop-by-hop, those `Connection` lists, `alsoDrop`. */
function namesToDrop(headers: Headers, alsoDrop: readonly string[]): string[] {
  const candidates = [...HOP_BY_HOP, ...connectionListed(headers), ...alsoDrop];
  return candidates.filter((name) => headers.has(name));
}

/** `headers` without the names to drop; copied by the runtime, not header by header. */
function endToEnd(headers: Headers, drop: readonly string[]): Headers {
  const result = new Headers(headers);
  for (const name of drop) result.delete(name);
  return result;
}

/**
 * Whose credentials a request to the origin carries: the client's own
 * (relay mode), or never the client's, and those the proxy adds where it has
 * them (broker mode: the origin's token; gate mode: the origin's key, and the
 * user's email where the operator asks), beside the client's headers the
 * operator lets through (`PASS_HEADERS`, lower case).
 */
export type OriginCredentials =
  | { kind: "client" }
  | {
      kind: "proxy";
      /** What the proxy sets, by lower-case name; none before the client signed in. */
      headers?: ReadonlyArray<readonly [string, string]>;
      passHeaders: ReadonlySet<string>;
      /** Who the grant's user is to the proxy's per-caller state (auth/broker.ts `BrokerProps`). */
      caller?: string;
      /**
       * `headers` are the same on every caller's request (gate mode: the
       * shared `ORIGIN_SECRET`, no `ORIGIN_USER_HEADER`): the origin tells
       * no caller apart by them.
       */
      sameForEveryCaller?: true;
      /**
       * Gate mode: who signed in at the gate, whatever the origin is sent
       * (the shared key tells it no user from another): the source of their
       * requests (toolmap/callers.ts `Caller.source`).
       */
      user?: string;
    };

/**
 * Headers for the request to the origin. Relay mode: every header of the
 * client's but those that stop at the proxy in every mode (hop-by-hop,
 * forwarding, overrides, `cf-*`; `Host` and `Content-Length` are fetch's).
 * Broker and gate mode: only MCP's and the content's headers, those the
 * operator lists, and the proxy's own, which no header of the client's
 * stands beside.
 */
export function originRequestHeaders(
  clientHeaders: Headers,
  credentials: OriginCredentials,
): Headers {
  if (credentials.kind === "client") {
    const stopped = [...clientHeaders.keys()].filter((name) => neverPassed(name));
    return endToEnd(clientHeaders, namesToDrop(clientHeaders, stopped));
  }
  const listed = connectionListed(clientHeaders);
  const headers = new Headers();
  for (const [name, value] of clientHeaders) {
    if ((brokered(name) || credentials.passHeaders.has(name)) && !listed.includes(name)) {
      headers.set(name, value);
    }
  }
  for (const [name, value] of credentials.headers ?? []) headers.set(name, value);
  return headers;
}

/**
 * Whether a request's body is labeled with a coding (`Content-Encoding`) other
 * than `identity`. The proxy reads a body as the bytes that came; an origin
 * that decodes the label first (Express's JSON parser does) would act on other
 * bytes than the ones checked, so such a body is never read or passed on.
 */
export function bodyIsEncoded(headers: Headers): boolean {
  return tokensOf(headers.get("content-encoding")).some((token) => token !== "identity");
}

/**
 * The `Content-Encoding` values the Workers runtime's `fetch` decodes by
 * itself: `gzip` and `br` alone and in lower case, as written. It leaves
 * `x-gzip`, `GZIP` and `gzip, br` encoded, and their label on.
 */
const DECODED_BY_RUNTIME = new Set(["gzip", "br"]);

/**
 * Whether the origin's body as the proxy reads it is plain: no
 * `Content-Encoding` but `identity`, or one the runtime decoded. A body in
 * another encoding (deflate, zstd, `x-gzip`, …) can be relayed, but not read
 * or rewritten; read, it was compressed bytes, and an event stream so read
 * went out without its label (`responseHeadersToDrop`), which no client decodes.
 */
export function bodyIsDecoded(headers: Headers): boolean {
  const encoding = headers.get("content-encoding");
  if (encoding !== null && DECODED_BY_RUNTIME.has(encoding)) return true;
  return tokensOf(encoding).every((token) => token === "identity");
}

/**
 * Headers for the response to the client. An event stream whose body the
 * runtime decoded goes out without `Content-Encoding` (and so uncompressed):
 * re-compressing it would hold events back in the encoder. Any other body keeps
 * the origin's label, which the runtime honours when it sends the body.
 */
export function clientResponseHeaders(
  originHeaders: Headers,
  drop = responseHeadersToDrop(originHeaders),
): Headers {
  return endToEnd(originHeaders, drop);
}

/**
 * What an origin says of its whole host or domain, which through the proxy
 * would be said of the proxy's: other servers to reach it at (`Alt-Svc`), and
 * browsing data to clear (`Clear-Site-Data`, whose `"cookies"` clears those of
 * every host of the registrable domain, the operator's other sites included).
 * The cookies an origin sets are origin.ts `cookiesForClient`'s to judge.
 */
const ORIGIN_HOST_ONLY = ["alt-svc", "clear-site-data"];

/**
 * What describes a body's very bytes, which a body the proxy rewrote no
 * longer has: its length, its entity tag, and its digests (RFC 9530's and
 * the obsolete ones). A client checking one would refuse the body, or take
 * it for the origin's; so would an origin checking a client's digest of a
 * call the proxy repaired, or of a listing it asks for itself with the
 * client's headers. What describes the resource (`Last-Modified`,
 * `Cache-Control`) still holds.
 */
export const BYTES_DESCRIBED = [
  "content-length",
  "etag",
  "content-md5",
  "digest",
  "content-digest",
  "repr-digest",
];

/** What `clientResponseHeaders` leaves out of the origin's headers; none, most of the time. */
export function responseHeadersToDrop(originHeaders: Headers): string[] {
  const isEventStream = mediaTypeOf(originHeaders) === "text/event-stream";
  const decodedStream = isEventStream && bodyIsDecoded(originHeaders);
  return namesToDrop(
    originHeaders,
    decodedStream ? [...ORIGIN_HOST_ONLY, "content-encoding", "content-length"] : ORIGIN_HOST_ONLY,
  );
}
