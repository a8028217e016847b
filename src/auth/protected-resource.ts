/**
 * Sign-in in relay mode: clients sign in with the origin's own authorization
 * server, and the proxy rewrites the two things that name the protected
 * resource, so a client that checks them (RFC 9728 §3.3, §7.3) sees the URL it
 * connected to, the proxy's:
 *
 * - the `resource_metadata` parameter of every challenge in a 401 or 403
 *   from the origin points at the proxy's metadata, and nothing else in the
 *   header reads as one to a lenient client (`rewriteChallenges`);
 * - the proxy's metadata is the origin's document with `resource` naming the
 *   proxy's MCP URL (`protectedResourceMetadata`).
 *
 * The proxy fetches metadata only from `ORIGIN_URL`'s host, at its scheme: a
 * challenge that names another host is passed on as it came
 * (`auth_metadata_foreign_host`).
 *
 * Isolate memory (`SignInMemory`), per origin, for `METADATA_TTL_MS`: the
 * metadata URL the origin's challenge to the proxy's own request with no
 * credentials names (`askLocation`), and its document, else that it
 * publishes none. Every client is served that document, so nothing of it is
 * taken from a client's request: a challenge to a caller's credentials,
 * query or session may name that caller's own (a tenant's, whose
 * authorization server the tenant chose), and relay mode passes on headers
 * the proxy cannot tell for credentials (`X-Auth-Token`, a tenant's name),
 * so no client's request is one with nothing of a caller's. Where the
 * challenge names none, it looks where RFC 9728 says: path insertion, then
 * the root.
 */
import type { Config } from "../config";
import { asWritten, isPlainObject, PLACES_ONLY, parseJson, setOwn, stringifyExact } from "../json";
import { logEvent } from "../log";
import { unreadAddressee } from "../protocol/jsonrpc";
import { answerUnread, fetchOrigin, logOriginError, statusLineOf } from "../transport/origin";
import { readBounded } from "../transport/read-bounded";
import { bearerRefusal, withResourceMetadata } from "./challenges";
import { originMetadataUrls, type PublicUrls } from "./public-url";
import type { SignInMemory } from "./sign-in-memory";

const MAX_METADATA_BYTES = 64 * 1024;

/** What the client's request carried that a refusal of its token is read against. */
export interface SentCredentials {
  /** `Authorization`. */
  token: boolean;
  /** `Mcp-Session-Id`: a session the origin began with a token of the client's (2025 revisions). */
  session: boolean;
}

/**
 * Relay mode: the origin's refusal of the token a client sent, logged, as
 * the client alone reads the answer. A `401 invalid_token` outside a session
 * may be the origin's refusal of every token issued for the proxy's URL
 * (`auth_audience_mismatch`); within one, whose start the origin accepted a
 * token of the client's for, it is the token's own end (expired, revoked),
 * and a `403` a scope the token lacks (`auth_token_refused`): the client
 * refreshes or signs in again, and the proxy has nothing to change.
 */
function logRefusedToken(status: number, header: string, config: Config, sent: SentCredentials) {
  const { error, scope } = bearerRefusal(header);
  const refusedToken = error === "invalid_token";
  const origin = config.originUrl.host;
  if (status === 401 && refusedToken && !sent.session) {
    logEvent("auth_audience_mismatch", {
      origin,
      hint: "The origin refused the client's token (invalid_token): expired or revoked, which the client refreshes; or, if it follows every sign-in, the origin takes only tokens issued for its own URL (RFC 8707), not this proxy's: use AUTH_MODE=broker.",
    });
  } else if ((status === 401 && refusedToken) || status === 403) {
    logEvent("auth_token_refused", {
      origin,
      status,
      ...(error === undefined ? {} : { error }),
      ...(scope === undefined ? {} : { scope }),
    });
  }
}

/**
 * Where a challenge's `resource_metadata` value says the origin's metadata
 * is, on the origin's host; else the host it names (or "not a URL").
 */
function onOriginHost(value: string, config: Config): URL | string {
  const named = URL.canParse(value) ? new URL(value) : undefined;
  if (named?.host !== config.originUrl.host) return named?.host ?? "not a URL";
  // At ORIGIN_URL's scheme, whatever the challenge's (an origin behind a TLS terminator may
  // write `http`): fetched in clear text, the document could name another authorization server.
  // Its path set as a path: as a URL reference, `//evil.example/…` would be evil.example's.
  const at = new URL(config.originUrl.origin);
  at.pathname = named.pathname;
  at.search = named.search;
  return at;
}

/**
 * `header` with each `resource_metadata` on the origin's host as `replace`
 * gives it (`withResourceMetadata`), and those naming another host as they
 * came, logged once a header (`auth_metadata_foreign_host`, the first host
 * named): a line each, an origin's header of a few tens of KB wrote a
 * thousand lines a request.
 */
function withOriginMetadata(
  header: string,
  config: Config,
  replace: (at: URL) => string | undefined,
): string {
  let foreign: string | undefined;
  const rewritten = withResourceMetadata(header, (param) => {
    const at = onOriginHost(param.value, config);
    if (at instanceof URL) return replace(at);
    foreign ??= at;
    return undefined;
  });
  if (foreign !== undefined)
    logEvent("auth_metadata_foreign_host", { origin: config.originUrl.host, named: foreign });
  return rewritten;
}

/**
 * The origin's 401 or 403 with every challenge's `resource_metadata`
 * pointing at the proxy's metadata, and nothing else in the header a client
 * could read as one (challenges.ts); any other response as it came.
 * `sent`: what the client's request carried.
 */
export function rewriteChallenges(
  origin: Response,
  config: Config,
  urls: PublicUrls,
  sent: SentCredentials,
): Response {
  const header = origin.headers.get("www-authenticate");
  if ((origin.status !== 401 && origin.status !== 403) || header === null) return origin;

  // What it names is not remembered: where every client reads its metadata is the proxy's own
  // ask's (`askLocation`), never what a client's request drew.
  const rewritten = withOriginMetadata(header, config, () => urls.metadata);

  if (config.auth.mode === "relay" && sent.token) {
    logRefusedToken(origin.status, header, config, sent);
  }
  if (rewritten === header) return origin;
  const headers = new Headers(origin.headers);
  if (rewritten === "") headers.delete("www-authenticate");
  else headers.set("www-authenticate", rewritten);
  return new Response(origin.body, { ...statusLineOf(origin), headers });
}

async function readDocument(response: Response): Promise<Record<string, unknown> | undefined> {
  if (!response.ok || !response.body) {
    await response.body?.cancel();
    return undefined;
  }
  const read = await readBounded(response.body, MAX_METADATA_BYTES);
  if (read.kind !== "complete") {
    await read.rest.cancel();
    return undefined;
  }
  const document = parseJson(new TextDecoder().decode(read.bytes));
  return isPlainObject(document) ? document : undefined;
}

export type OriginMetadata =
  | { kind: "found"; document: Record<string, unknown> }
  | { kind: "absent" }
  /**
   * No location gave a document, and one answered `status`, a 5xx (the origin failed, logged)
   * or a 429 (it asked the proxy to wait): not "none published", and not remembered.
   */
  | { kind: "error"; status: number }
  /** `response` is the proxy's own 502 or 504. */
  | { kind: "failed"; response: Response };

/**
 * Where the origin's challenge to a request that carries nothing of a
 * client's says its metadata is (RFC 9728 §5.1): a `GET` of `ORIGIN_URL`
 * with no credentials, whose body is never read; `undefined` where none
 * names one, `"unanswered"` where the origin did not answer (not
 * remembered). Without it the proxy looked only where RFC 9728 §3.1 puts
 * the document, and served another one than the origin's challenges name
 * where it publishes both, and none where it publishes only the one they
 * name. The one source of that location: a client's request, whatever it
 * carries, may draw a challenge naming that caller's own.
 */
async function askLocation(
  config: Config,
  headers: Headers,
): Promise<URL | undefined | "unanswered"> {
  const sent = {
    method: "GET",
    headers: new Headers({ accept: "text/event-stream" }),
    body: null,
  };
  const reply = await fetchOrigin(
    config.originUrl,
    sent,
    config.originTimeoutMs,
    unreadAddressee(headers),
  );
  // No answer (logged): a hint not had, as where no challenge names a location. An origin whose
  // endpoint holds a GET without a word, or drops it, publishes its document where RFC 9728 says.
  if (reply.kind === "failed") return "unanswered";
  await reply.response.body?.cancel();
  const header = reply.response.headers.get("www-authenticate");
  if (reply.response.status !== 401 || header === null) return undefined;
  let at: URL | undefined;
  withOriginMetadata(header, config, (named) => {
    at ??= named;
    return undefined;
  });
  return at;
}

/**
 * The origin's own protected-resource metadata, from isolate memory or from
 * the origin: at the URL its challenge to the proxy's ask names, else by path insertion
 * for `ORIGIN_URL`, else at the root. A location the origin answers with a
 * 5xx is logged (`origin_error`) and the next one asked; where none gives a
 * document, that failure (or a 429) is the answer, not "none published", which only
 * other 4xx and answers that are no document say.
 */
export async function originResourceMetadata(
  config: Config,
  headers: Headers,
  memory: SignInMemory,
): Promise<OriginMetadata> {
  const origin = config.originUrl.href;
  const known = memory.metadata.get(origin);
  if (known) return { kind: "found", document: known };
  if (known === null) return { kind: "absent" };
  let advertised = memory.advertised.get(origin);
  if (advertised === undefined) {
    const asked = await askLocation(config, headers);
    if (asked !== "unanswered") {
      advertised = asked?.href ?? null;
      memory.advertised.set(origin, advertised);
    }
  }
  const candidates = new Set([
    ...(advertised ? [advertised] : []),
    ...originMetadataUrls(config.originUrl),
  ]);
  let failedStatus: number | undefined;
  for (const url of candidates) {
    const target = new URL(url);
    const sent = {
      method: "GET",
      headers: new Headers({ accept: "application/json" }),
      body: null,
      // The document read whole within ORIGIN_TIMEOUT_MS, not its headers alone.
      clientLeft: AbortSignal.timeout(config.originTimeoutMs),
    };
    const addressee = unreadAddressee(headers);
    const reply = await fetchOrigin(target, sent, config.originTimeoutMs, addressee);
    if (reply.kind === "failed") return { kind: "failed", response: reply.response };
    logOriginError(reply.response, target, sent, "oauth-protected-resource");
    // A 429 is no word that none is published: remembered so, the origin's limit on the proxy's
    // requests (which another caller's traffic through it may reach) was a minute's 404 for all.
    if (reply.response.status >= 500 || reply.response.status === 429)
      failedStatus ??= reply.response.status;
    let document: Record<string, unknown> | undefined;
    try {
      document = await readDocument(reply.response);
    } catch (error) {
      const timedOut = sent.clientLeft.aborted;
      const unread = answerUnread(target, sent, config.originTimeoutMs, addressee, {
        timedOut,
        error,
      });
      return { kind: "failed", response: unread.response };
    }
    if (document) {
      memory.metadata.set(origin, document);
      return { kind: "found", document };
    }
  }
  if (failedStatus !== undefined) return { kind: "error", status: failedStatus };
  memory.metadata.set(origin, null);
  return { kind: "absent" };
}

/**
 * The proxy's protected-resource metadata in relay mode: the origin's
 * document with `resource` naming the proxy's MCP URL and every other member
 * as the origin wrote it. 404 when the origin publishes none, so clients fall
 * back to the 2025-03-26 discovery at the root; 502 when it failed to answer
 * (a 5xx), which a 404 would pass off as an origin without sign-in metadata.
 */
export async function protectedResourceMetadata(
  config: Config,
  urls: PublicUrls,
  headers: Headers,
  memory: SignInMemory,
): Promise<Response> {
  const metadata = await originResourceMetadata(config, headers, memory);
  if (metadata.kind === "failed") return metadata.response;
  if (metadata.kind === "error") {
    return Response.json(
      {
        error: "origin_error",
        error_description: `The origin failed to answer for its OAuth protected-resource metadata (HTTP ${metadata.status})`,
      },
      { status: 502 },
    );
  }
  if (metadata.kind === "absent") {
    return Response.json(
      {
        error: "not_found",
        error_description: "The origin publishes no OAuth protected-resource metadata",
      },
      { status: 404 },
    );
  }
  // Each member as the origin wrote it (`asWritten`, and below it by their places): written by
  // JSON.stringify, its 12345678901234567891 was served as …000, and its escapes read.
  const served: Record<string, unknown> = {};
  for (const key of Object.keys(metadata.document)) {
    setOwn(served, key, asWritten(metadata.document, key));
  }
  setOwn(served, "resource", urls.mcp);
  return new Response(stringifyExact(served, PLACES_ONLY), {
    headers: { "content-type": "application/json" },
  });
}
