/**
 * What a request header is, by its name: the one table behind what reaches
 * the origin in each mode (transport/headers.ts `originRequestHeaders`) and
 * what an operator may let through in broker mode (`PASS_HEADERS`,
 * config/values.ts). Names are compared in lower case, as `Headers` keeps them.
 * SECURITY.md and docs/transport.md list the same names.
 *
 * Families a vendor keeps open (`X-Forwarded-*`, Cloudflare's `cf-*`,
 * `Mcp-Param-*`) are matched by prefix; the rest are lists.
 */

export type HeaderKind =
  /** RFC 9110 §7.6.1: the client's connection's, not the request's. */
  | "hop-by-hop"
  /** Written by the runtime's fetch for the request the proxy makes. */
  | "set-by-fetch"
  /**
   * What a proxy in front of a server says of the client: its address, and the
   * host, scheme, port or path it used. An origin behind a CDN or a load
   * balancer believes these from whatever comes from one, and the proxy's
   * requests come from Cloudflare's addresses.
   */
  | "forwarding"
  /** Another URL, method or host for the request than its own, which some frameworks obey. */
  | "override"
  /** Cloudflare's word about a request (`cf-*`): location, scheme, ray, zone, Access's user. */
  | "cloudflare"
  /** The client's own credentials at the origin. */
  | "credential"
  /** MCP's Streamable HTTP headers (the 2026-07-28 ones among them). */
  | "mcp"
  /** What the body is, what the client accepts back, and what software it is. */
  | "content"
  /**
   * Any name of the kinds above written with `_` for `-` (`X_Forwarded_For`):
   * CGI names both `HTTP_X_FORWARDED_FOR`, and servers that read headers so
   * (Rack's, WSGI's, PHP's: Puma before 6.4.3, CVE-2024-45614; gunicorn
   * before 22) take it for that header, or for the one the proxy set.
   */
  | "lookalike"
  /** Anything else: the application's, which only the origin can judge. */
  | "other";

/** The hop-by-hop headers every message has, besides those its `Connection` lists. */
export const HOP_BY_HOP: readonly string[] = [
  "connection",
  "keep-alive",
  "proxy-authenticate",
  "proxy-authorization",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
];

/**
 * Each documented where a server or framework reads it: RFC 7239; nginx's
 * realip (`X-Real-IP`); Akamai and Cloudflare Enterprise (`True-Client-IP`);
 * Fastly; ingress-nginx (`X-Original-Forwarded-For`); Azure Front Door;
 * CloudFront; Fly.io; Envoy; Google App Engine; Rails (`Client-IP`); and the
 * de facto names request-ip and its kind try in turn.
 */
const FORWARDING = [
  "forwarded",
  "forwarded-for",
  "x-forwarded",
  "x-real-ip",
  "x-client-ip",
  "client-ip",
  "x-cluster-client-ip",
  "true-client-ip",
  "fastly-client-ip",
  "x-original-forwarded-for",
  "x-appengine-user-ip",
  "x-azure-clientip",
  "x-azure-socketip",
  "cloudfront-viewer-address",
  "fly-client-ip",
  "x-envoy-external-address",
];

/** Symfony and IIS (`X-Original-URL`, `X-Rewrite-URL`), nginx's auth_request, method override middleware. */
const OVERRIDES = [
  "x-original-url",
  "x-rewrite-url",
  "x-original-uri",
  "x-http-method-override",
  "x-http-method",
  "x-method-override",
  "x-original-method",
  "x-host",
  "x-original-host",
  "x-http-host-override",
];

/**
 * `Authorization` and `Cookie`; the API key headers origins most often take
 * a key in (`X-API-Key`; `api-key`, Azure OpenAI's and others'); and
 * Cloudflare Access's: a service token (`CF-Access-Client-Id`,
 * `CF-Access-Client-Secret`) or a user's token for the application
 * (`cf-access-token`), which a client presents as it would `Authorization`
 * to an origin behind Access. Access's own assertions about the user it let
 * in (`Cf-Access-Jwt-Assertion`, `…-Authenticated-User-Email`) are no
 * credential of the client's, and stay `cf-*`. Callers are told apart by
 * these (toolmap/callers.ts).
 */
const CREDENTIALS = [
  "authorization",
  "cookie",
  "x-api-key",
  "api-key",
  "cf-access-client-id",
  "cf-access-client-secret",
  "cf-access-token",
];

const MCP = ["mcp-session-id", "mcp-protocol-version", "mcp-method", "mcp-name", "last-event-id"];

const CONTENT = ["accept", "accept-language", "content-type", "user-agent"];

/**
 * Written by the runtime's fetch: `Host`, `Content-Length`, and
 * `Accept-Encoding`, which without one of the request's asks for what the
 * runtime decodes (gzip, br), and so what the proxy can read. A client's
 * (`zstd`, `deflate`) had the origin answer in a coding the proxy cannot
 * read, and a listing in it went out as the origin named it.
 */
const SET_BY_FETCH = ["host", "content-length", "accept-encoding"];

const KINDS = new Map<string, HeaderKind>([
  ...HOP_BY_HOP.map((name) => [name, "hop-by-hop"] as const),
  ...SET_BY_FETCH.map((name) => [name, "set-by-fetch"] as const),
  ...FORWARDING.map((name) => [name, "forwarding"] as const),
  ...OVERRIDES.map((name) => [name, "override"] as const),
  ...CREDENTIALS.map((name) => [name, "credential"] as const),
  ...MCP.map((name) => [name, "mcp"] as const),
  ...CONTENT.map((name) => [name, "content"] as const),
]);

const PREFIXES: ReadonlyArray<readonly [string, HeaderKind]> = [
  ["x-forwarded-", "forwarding"],
  ["cf-", "cloudflare"],
  ["mcp-param-", "mcp"],
];

/** `name` as servers that read `_` as `-` read it. */
export const dashed = (name: string) => name.replaceAll("_", "-");

/** What the header named `name` (lower case) is, as written. */
function kindAsWritten(name: string): HeaderKind {
  const listed = KINDS.get(name);
  if (listed !== undefined) return listed;
  return PREFIXES.find(([prefix]) => name.startsWith(prefix))?.[1] ?? "other";
}

/** What the header named `name` (lower case) is. */
export function headerKind(name: string): HeaderKind {
  const kind = kindAsWritten(name);
  if (kind !== "other" || !name.includes("_")) return kind;
  return kindAsWritten(dashed(name)) === "other" ? "other" : "lookalike";
}

/** Kinds no client's request carries on to the origin, in either mode. */
const NEVER_PASSED = new Set<HeaderKind>([
  "hop-by-hop",
  "set-by-fetch",
  "forwarding",
  "override",
  "cloudflare",
  "lookalike",
]);

/** Whether the header named `name` (lower case) stops at the proxy in every mode. */
export function neverPassed(name: string): boolean {
  return NEVER_PASSED.has(headerKind(name));
}

/** Whether broker mode passes the header named `name` (lower case) without the operator listing it. */
export function brokered(name: string): boolean {
  const kind = headerKind(name);
  return kind === "mcp" || kind === "content";
}

/**
 * Why `PASS_HEADERS` may not list the header named `name` (lower case), in
 * words that name no header; `undefined` when it may.
 */
export function unpassable(name: string): string | undefined {
  switch (headerKind(name)) {
    case "hop-by-hop":
      return "is hop-by-hop: it describes the client's connection, not its request";
    case "set-by-fetch":
      return "is set by the runtime on the proxy's own request";
    case "forwarding":
      return "says where the client is, which any client could forge";
    case "override":
      return "overrides the request's URL, method or host";
    case "cloudflare":
      return "is Cloudflare's (cf-*), which any client could forge";
    case "lookalike":
      return "is, with - for _, a header of HTTP's, MCP's, Cloudflare's or a credential, which servers that read _ as - take it for";
  }
  if (name === "authorization") return "carries the origin's token, which the proxy sets itself";
  if (name === "cookie") return "carries cookies of the proxy's host, which never reach the origin";
  return undefined;
}
