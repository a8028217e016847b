/**
 * Broker mode's other half: the proxy as an OAuth client of the origin, with
 * oauth4webapi doing the protocol.
 *
 * - Discovery: the origin's protected-resource metadata (RFC 9728) names its
 *   authorization server; without one, the 2025-03-26 fallback takes the
 *   origin's own host as the issuer. Its RFC 8414 metadata names every
 *   endpoint. The proxy only ever fetches what those documents name. With
 *   `UPSTREAM_ISSUER` the operator names it instead, and metadata naming
 *   others is refused: the origin is untrusted, and would otherwise choose
 *   where `UPSTREAM_CLIENT_SECRET` and its users' sign-ins go.
 * - Identity, in order of preference: the operator's `UPSTREAM_CLIENT_ID` (and
 *   `UPSTREAM_CLIENT_SECRET`); a Client ID Metadata Document the proxy serves
 *   itself, where the authorization server accepts one and the proxy's URL is
 *   https; dynamic registration (RFC 7591), once per tenant, as a public
 *   client, its `client_id` kept in `OAUTH_KV`.
 * - The scopes the origin asks for, which its sign-in (upstream-tokens.ts)
 *   asks in turn.
 *
 * Platform limits: discovery is kept in isolate memory (`SignInMemory`) for
 * five minutes, but one made while the origin's metadata failed (a 5xx),
 * which the next sign-in makes again; a registration is written once and
 * read per cold isolate, then kept in its memory (KV is eventually consistent: two isolates
 * registering at the same moment each get a client, both valid, and the
 * later write wins).
 */
import * as oauth from "oauth4webapi";
import { type BrokerAuth, type Config, isLoopbackHost } from "../config";
import { logEvent } from "../log";
import { originResourceMetadata } from "./protected-resource";
import type { PublicUrls } from "./public-url";
import type { Discovery, SignInMemory } from "./sign-in-memory";
import {
  attempt,
  failureAt,
  type RequestOptions,
  requestOptions,
  UpstreamError,
} from "./upstream-requests";

const REGISTRATION_KEY = "edge-rewriter:upstream-client:";

/** Where the proxy's own client metadata document is served, for authorization servers that accept one. */
export const CLIENT_METADATA_PATH = "/oauth/client-metadata.json";
/** Where the origin's authorization server sends the browser back to. */
export const CALLBACK_PATH = "/oauth/callback";

export interface Upstream {
  as: oauth.AuthorizationServer;
  client: oauth.Client;
  clientAuth: oauth.ClientAuth;
  redirectUri: string;
  /** The origin's own resource URL, which its tokens are bound to. */
  resource: string;
  scope: string[];
  /** What every oauth4webapi request gets. */
  options: RequestOptions;
}

function stringArray(value: unknown): string[] {
  return Array.isArray(value)
    ? value.filter((item): item is string => typeof item === "string")
    : [];
}

/** `ORIGIN_URL` without its query (which may hold a key): the resource its tokens are for by default. */
export const originWithoutQuery = (originUrl: URL) => `${originUrl.origin}${originUrl.pathname}`;

/** A URL's path as a prefix of others: `/api` covers `/api/mcp`, never `/api123`. */
const asPrefix = (path: string) => (path.endsWith("/") ? path : `${path}/`);

/**
 * The resource the origin's tokens are asked for (RFC 8707): the one its
 * metadata names, when that names the origin, or a part of its host that
 * holds `ORIGIN_URL` (RFC 9728 §3.3; the official SDK's client allows the
 * same); `ORIGIN_URL` without its query when the metadata names none.
 * Anything else is refused: the token would be another server's, and the
 * proxy hands every token it gets to the origin.
 */
export function originResource(named: unknown, originUrl: URL): string {
  const own = originWithoutQuery(originUrl);
  if (named === undefined) return own;
  const url = typeof named === "string" && URL.canParse(named) ? new URL(named) : undefined;
  if (
    url?.origin === originUrl.origin &&
    asPrefix(originUrl.pathname).startsWith(asPrefix(url.pathname))
  )
    return named as string;
  throw new UpstreamError(
    "resource_mismatch",
    "The origin's protected-resource metadata names another server as its resource",
    new Error(`the resource the metadata names is ${resourceSaid(url, originUrl)}`),
  );
}

/**
 * Where a resource that does not hold `ORIGIN_URL` is, for the log: by its
 * origin, never a path, `ORIGIN_URL`'s or the one named (an origin may take
 * a key in its path, docs/transport.md).
 */
function resourceSaid(url: URL | undefined, originUrl: URL): string {
  if (url === undefined) return "no URL";
  return url.origin === originUrl.origin
    ? "on the same host, a path that does not hold ORIGIN_URL's"
    : `at ${url.origin}, another origin than ORIGIN_URL's (${originUrl.origin})`;
}

/**
 * The issuer to sign in at: `pinned` (`UPSTREAM_ISSUER`) when the operator
 * set one, which the origin's metadata must then name among its own when it
 * names any; else the first it names, or the origin's host (2025-03-26).
 * Issuers compare as URLs, so `https://auth.example` is `https://auth.example/`.
 */
export function issuerOf(named: string[], pinned: URL | undefined, originUrl: URL): URL {
  if (pinned === undefined) {
    const [first = originUrl.origin] = named;
    if (URL.canParse(first)) return new URL(first);
    throw new UpstreamError(
      "no_authorization_server",
      "The origin's metadata names no usable authorization server",
      new Error(`authorization server ${JSON.stringify(first)} is not a URL`),
    );
  }
  if (
    named.length > 0 &&
    !named.some((issuer) => URL.canParse(issuer) && new URL(issuer).href === pinned.href)
  ) {
    throw new UpstreamError(
      "issuer_mismatch",
      "The origin's metadata names another authorization server than the one this proxy signs in at",
      // The operator's issuer first: a log line keeps only the start of a long text.
      new Error(`UPSTREAM_ISSUER ${pinned.href} is not among ${JSON.stringify(named)}`),
    );
  }
  return pinned;
}

/**
 * Why the browser may not be sent to `endpoint`, an authorization server's
 * `authorization_endpoint`; `undefined` where it may: `https:`, or plain
 * `http:` on a loopback host, as `requestOptions` allows the proxy's own
 * requests. An `http:` one elsewhere puts the user's sign-in and its code in
 * clear text; a `javascript:` or `data:` one is no sign-in page at all.
 * oauth4webapi checks the scheme of the endpoints it calls (token,
 * registration), never this one: the proxy builds the URL the browser
 * follows (upstream-tokens.ts).
 */
function unusableSignInPage(endpoint: unknown): string | undefined {
  const url =
    typeof endpoint === "string" && URL.canParse(endpoint) ? new URL(endpoint) : undefined;
  const secure = url?.protocol === "https:";
  if (secure || (url?.protocol === "http:" && isLoopbackHost(url.hostname))) return undefined;
  return `authorization_endpoint ${JSON.stringify(endpoint)} is not https (http only on a loopback host)`;
}

/**
 * The origin's authorization server and resource, from isolate memory, or
 * found (`fresh`: found anew, as `/readyz` checks it can be).
 */
export async function discoverUpstream(
  config: Config,
  auth: BrokerAuth,
  headers: Headers,
  memory: SignInMemory,
  { fresh = false }: { fresh?: boolean } = {},
): Promise<Discovery> {
  const key = config.originUrl.href;
  const known = fresh ? undefined : memory.discoveries.get(key);
  if (known) return known;

  const metadata = await originResourceMetadata(config, headers, memory);
  if (metadata.kind === "failed") {
    throw new UpstreamError("origin_unreachable", "The origin could not be reached");
  }
  // None published, or none the origin could answer for (a 5xx, logged; a 429): it names no server.
  const document = metadata.kind === "found" ? metadata.document : {};
  const issuer = issuerOf(
    stringArray(document.authorization_servers),
    auth.upstreamIssuer,
    config.originUrl,
  );
  let as: oauth.AuthorizationServer | undefined;
  const failures: string[] = [];
  let unreachable = true;
  // RFC 8414's location first, then OpenID Connect's: the first usable document wins.
  for (const algorithm of ["oauth2", "oidc"] as const) {
    const where = new URL(
      algorithm === "oauth2"
        ? `/.well-known/oauth-authorization-server${issuer.pathname === "/" ? "" : issuer.pathname}`
        : `${issuer.pathname === "/" ? "" : issuer.pathname}/.well-known/openid-configuration`,
      issuer,
    );
    try {
      const options = { ...requestOptions(config, issuer), algorithm };
      as = await oauth.processDiscoveryResponse(
        issuer,
        await oauth.discoveryRequest(issuer, options),
      );
      break;
    } catch (error) {
      const { reached, detail } = failureAt(where, error, config.originTimeoutMs);
      unreachable &&= !reached;
      failures.push(detail);
    }
  }
  if (!as?.authorization_endpoint || !as.token_endpoint) {
    const cause = new Error(
      failures.length > 0
        ? failures.join("; ")
        : `${issuer.href} names no authorization and token endpoints`,
    );
    throw unreachable && failures.length > 0
      ? new UpstreamError(
          "authorization_server_unreachable",
          `The origin's authorization server (${issuer.host}) could not be reached`,
          cause,
        )
      : new UpstreamError(
          "no_authorization_server",
          `No usable authorization server metadata at ${issuer.origin}`,
          cause,
        );
  }
  const unusable = unusableSignInPage(as.authorization_endpoint);
  if (unusable !== undefined) {
    throw new UpstreamError(
      "no_authorization_server",
      `No usable authorization server metadata at ${issuer.origin}`,
      new Error(`${issuer.href}: ${unusable}`),
    );
  }
  const resource = originResource(document.resource, config.originUrl);
  const discovery = { as, resource, scope: stringArray(document.scopes_supported) };
  // A guess made while the origin's metadata failed is not kept: kept, it would outlive the
  // origin's recovery, signing users in at the wrong server, resource and scopes for five minutes.
  if (metadata.kind !== "error") memory.discoveries.set(key, discovery);
  // Once per discovery (five minutes an isolate, each sign-in's while the origin's metadata
  // fails): the operator's secret goes where the origin said.
  if (auth.upstreamClient?.secret !== undefined && auth.upstreamIssuer === undefined) {
    logEvent("upstream_issuer_unpinned", { issuer: as.issuer });
  }
  return discovery;
}

/** The metadata of the proxy as a client: what it registers, and what its metadata document says. */
export function clientMetadata(urls: PublicUrls, clientId?: string): Record<string, unknown> {
  const host = new URL(urls.mcp).host;
  return {
    ...(clientId === undefined ? {} : { client_id: clientId }),
    client_name: `MCP Edge Rewriter (${host})`,
    client_uri: new URL(urls.mcp).origin,
    redirect_uris: [`${new URL(urls.mcp).origin}${CALLBACK_PATH}`],
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    token_endpoint_auth_method: "none",
  };
}

/**
 * How a client of the operator's authenticates at `as`'s token endpoint:
 * HTTP Basic with its secret, unless the server names only other methods
 * (then the form); none without a secret.
 */
export function clientAuthOf(as: oauth.AuthorizationServer, secret: string | undefined) {
  if (secret === undefined) return oauth.None();
  const methods = stringArray(as.token_endpoint_auth_methods_supported);
  const post = methods.length > 0 && !methods.includes("client_secret_basic");
  return post ? oauth.ClientSecretPost(secret) : oauth.ClientSecretBasic(secret);
}

async function identify(
  auth: BrokerAuth,
  as: oauth.AuthorizationServer,
  urls: PublicUrls,
  options: RequestOptions,
  registrations: SignInMemory["registrations"],
): Promise<{ client: oauth.Client; clientAuth: oauth.ClientAuth }> {
  const operator = auth.upstreamClient;
  if (operator)
    return { client: { client_id: operator.id }, clientAuth: clientAuthOf(as, operator.secret) };
  const origin = new URL(urls.mcp).origin;
  if (as.client_id_metadata_document_supported === true && origin.startsWith("https://")) {
    return { client: { client_id: `${origin}${CLIENT_METADATA_PATH}` }, clientAuth: oauth.None() };
  }
  if (!as.registration_endpoint) {
    throw new UpstreamError(
      "no_client_identity",
      "The origin's authorization server offers no registration: set UPSTREAM_CLIENT_ID",
    );
  }
  const key = `${REGISTRATION_KEY}${as.issuer}\n${origin}`;
  // Isolate memory first: one sign-in asks three times, and must get one client each time.
  // KV is an optimization: a registration that cannot be read is made again, one that
  // cannot be written lives in this isolate's memory only.
  const stored =
    registrations.get(key) ??
    (
      await auth.oauthKv.get<{ client_id: string }>(key, "json").catch((error) => {
        logEvent("kv_error", { op: "get", what: "upstream_client", error: String(error) });
        return null;
      })
    )?.client_id;
  if (stored) {
    registrations.set(key, stored);
    return { client: { client_id: stored }, clientAuth: oauth.None() };
  }

  const registered = await attempt(
    "registration_failed",
    "The proxy could not register at the origin's authorization server",
    async () =>
      oauth.processDynamicClientRegistrationResponse(
        await oauth.dynamicClientRegistrationRequest(
          as,
          clientMetadata(urls) as Partial<oauth.Client>,
          options,
        ),
      ),
  );
  registrations.set(key, registered.client_id);
  await auth.oauthKv
    .put(key, JSON.stringify({ client_id: registered.client_id }))
    .catch((error) =>
      logEvent("kv_error", { op: "put", what: "upstream_client", error: String(error) }),
    );
  logEvent("upstream_client_registered", { issuer: as.issuer });
  return { client: { client_id: registered.client_id }, clientAuth: oauth.None() };
}

/** Everything the proxy needs to sign in to the origin, discovered (and registered) on first use. */
export async function upstreamFor(
  config: Config,
  auth: BrokerAuth,
  urls: PublicUrls,
  headers: Headers,
  memory: SignInMemory,
): Promise<Upstream> {
  const { as, resource, scope } = await discoverUpstream(config, auth, headers, memory);
  const options = requestOptions(config, new URL(as.issuer));
  const { client, clientAuth } = await identify(auth, as, urls, options, memory.registrations);
  return {
    as,
    client,
    clientAuth,
    redirectUri: `${new URL(urls.mcp).origin}${CALLBACK_PATH}`,
    resource,
    scope,
    options,
  };
}
