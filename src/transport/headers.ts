/**
 * Which headers cross the proxy. End-to-end headers (Mcp-Session-Id,
 * MCP-Protocol-Version, Last-Event-ID, Accept, WWW-Authenticate, …) pass both
 * ways; hop-by-hop headers (RFC 9110 §7.6.1), and any the peer lists in
 * `Connection`, describe one connection and stop here. On the way to the
 * origin, the client's forwarding headers stop too (a client could forge its
 * address with them), and its credentials pass only where the operator's
 * `AUTH_MODE` says (`OriginCredentials`).
 *
 * The runtime hides the client's `Connection` header from the Worker, so
 * headers a client lists there cannot be told apart and pass on (SECURITY.md).
 */
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-authenticate",
  "proxy-authorization",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
]);

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
    if (parameter.slice(0, equals).trim().toLowerCase() !== "charset") continue;
    const value = parameter.slice(equals + 1).trim();
    const unquoted = /^"[^"]*"$/.test(value) ? value.slice(1, -1) : value;
    if (!UTF_8_LABELS.has(unquoted.toLowerCase())) return value.slice(0, 64);
  }
  return undefined;
}

/** What the Encoding Standard reads as UTF-8. */
const UTF_8_LABELS = new Set(["utf-8", "utf8", "unicode-1-1-utf-8"]);

/** The comma-separated tokens of a header value, lower-cased; none for an absent header. */
function tokensOf(value: string | null): string[] {
  return (value ?? "")
    .split(",")
    .map((token) => token.trim().toLowerCase())
    .filter(Boolean);
}

/** The names among `headers` that stop at the proxy: hop-by-hop, those `Connection` lists, `alsoDrop`. */
function namesToDrop(headers: Headers, alsoDrop: readonly string[]): string[] {
  const candidates = [...HOP_BY_HOP, ...tokensOf(headers.get("connection")), ...alsoDrop];
  return candidates.filter((name) => headers.has(name));
}

/** `headers` without the names to drop; copied by the runtime, not header by header. */
function endToEnd(headers: Headers, drop: readonly string[]): Headers {
  const result = new Headers(headers);
  for (const name of drop) result.delete(name);
  return result;
}

/** What a client may send to say where it is; an origin behind Cloudflare may believe them. */
const FORWARDING = [
  "forwarded",
  "x-forwarded-for",
  "x-forwarded-host",
  "x-forwarded-proto",
  "x-forwarded-port",
  "x-real-ip",
  "x-client-ip",
  "true-client-ip",
  "cf-connecting-ip",
];
const CLIENT_CREDENTIALS = ["authorization", "cookie"];

/**
 * Whose credentials a request to the origin carries: the client's own
 * (relay mode), or never the client's, and the proxy's token for the origin
 * where it has one (broker mode).
 */
export type OriginCredentials = { kind: "client" } | { kind: "proxy"; authorization?: string };

/** Headers for the request to the origin. `Host` and `Content-Length` are set by fetch itself. */
export function originRequestHeaders(
  clientHeaders: Headers,
  credentials: OriginCredentials,
): Headers {
  const alsoDrop = ["host", "content-length", ...FORWARDING];
  if (credentials.kind === "proxy") alsoDrop.push(...CLIENT_CREDENTIALS);
  const headers = endToEnd(clientHeaders, namesToDrop(clientHeaders, alsoDrop));
  if (credentials.kind === "proxy" && credentials.authorization !== undefined) {
    headers.set("authorization", credentials.authorization);
  }
  return headers;
}

/** Encodings the Workers runtime's `fetch` decodes by itself; others arrive still encoded. */
const DECODED_BY_RUNTIME = new Set(["identity", "gzip", "x-gzip", "br"]);

/**
 * Whether the origin's body as the proxy reads it is plain: no
 * `Content-Encoding`, or only ones the runtime decoded (gzip, br). A body in
 * another encoding (deflate, zstd, …) can be relayed, but not read or rewritten.
 */
export function bodyIsDecoded(headers: Headers): boolean {
  return tokensOf(headers.get("content-encoding")).every((token) => DECODED_BY_RUNTIME.has(token));
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

/** What `clientResponseHeaders` leaves out of the origin's headers; none, most of the time. */
export function responseHeadersToDrop(originHeaders: Headers): string[] {
  const isEventStream = mediaTypeOf(originHeaders) === "text/event-stream";
  const decodedStream = isEventStream && bodyIsDecoded(originHeaders);
  return namesToDrop(
    originHeaders,
    decodedStream ? [...ORIGIN_HOST_ONLY, "content-encoding", "content-length"] : ORIGIN_HOST_ONLY,
  );
}
