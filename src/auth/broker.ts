/**
 * Broker mode (`AUTH_MODE=broker`): the proxy is the authorization server for
 * its own URL, built with `@cloudflare/workers-oauth-provider`, and an OAuth
 * client of the origin (upstream.ts). Clients sign in with the proxy (dynamic
 * registration or a Client ID Metadata Document, authorization code + PKCE)
 * and get the proxy's tokens, bound to the proxy's MCP URL; the origin only
 * ever sees its own tokens, bound to its own URL.
 *
 * - The library (set up in provider.ts, as in gate mode) serves the proxy's
 *   metadata, token and registration endpoints, validates the proxy's tokens
 *   on `MCP_PATH`, and keeps grants in `OAUTH_KV`. routes/authorize.ts is the
 *   consent page and the origin's callback.
 * - The origin's tokens live only in the grant's encrypted `props`. The library
 *   lets a grant's props change only while the client refreshes the proxy's
 *   token, so that is where the origin's token is refreshed
 *   (`tokenExchangeCallback`, broker-refresh.ts), and the proxy's access token is issued for
 *   the origin's token's remaining lifetime (at least the library's minute).
 *   When the origin's token is expired or refused, the client gets the
 *   proxy's own `401 invalid_token`: it refreshes the proxy's token (and with
 *   it the origin's) and sends the request again. When the origin asks for
 *   more scopes, the proxy's own `403 insufficient_scope` (step-up.ts): the
 *   client signs in again asking for them. A grant's refreshes are
 *   answered one at a time, and share one refresh at the origin
 *   (grant-refresh.ts). An `invalid_grant` from the origin revokes the
 *   proxy's grant, and the client signs in again, unless another refresh of
 *   the grant just spent the token; an authorization server that is down is
 *   a `503` with `Retry-After`, the grant kept.
 */
import { OAuthError } from "@cloudflare/workers-oauth-provider";
import { type BrokerAuth, type Config, configOf } from "../config";
import { isPlainObject } from "../json";
import { logEvent } from "../log";
import type { OriginCredentials } from "../transport/headers";
import { readBounded, rejoin } from "../transport/read-bounded";
import { bearerToken } from "./bearer";
import { answerRefresh, lifetimeOf, RETRY_AFTER_RACE_S, refreshAtOrigin } from "./broker-refresh";
import { bearerRefusal } from "./challenges";
import {
  type Routes,
  refreshChallenge,
  type SignInServer,
  signInProvider,
  TOKEN_PATH,
  withoutOriginChallenge,
} from "./provider";
import type { PublicUrls } from "./public-url";
import type { SignInMemory } from "./sign-in-memory";
import { originScopesIn, stepUpChallenge, stepUpScopes } from "./step-up";
import { originWithoutQuery } from "./upstream";
import { isUpstreamTokens, type UpstreamTokens } from "./upstream-tokens";

/** The largest refresh request the proxy reads to line it up with the grant's others (a form of a few hundred bytes). */
const MAX_REFRESH_REQUEST_BYTES = 16 * 1024;

/** What a grant carries, encrypted by the library: the origin's tokens, and which origin's. */
export interface BrokerProps {
  upstream: UpstreamTokens;
  /**
   * `ORIGIN_URL` without its query when the grant was made (`originWithoutQuery`):
   * a tenant moved to another origin sends it no token of the last one's.
   * Absent in grants made before it was kept; those are taken as this origin's.
   */
  origin?: string;
  /**
   * The issuer of the authorization server that issued `upstream`: its
   * refresh token goes back there and nowhere else, whatever the origin's
   * metadata names later. Absent in grants made before it was kept; those
   * are taken as the one the origin names now, and say so from their next
   * refresh.
   */
  issuer?: string;
  /**
   * Who the grant's user is to the proxy's per-caller state (their own
   * listing, their definition pins: toolmap/callers.ts): a random id made at
   * sign-in and kept across refreshes, which replace the origin's token but
   * not the user. Absent in grants made before it was kept; those are told
   * apart by the origin's token.
   */
  caller?: string;
}

/** A grant's props, when they carry the origin's tokens. */
function brokerPropsOf(props: unknown): BrokerProps | undefined {
  if (!isPlainObject(props) || !isUpstreamTokens(props.upstream)) return undefined;
  const { origin, issuer, caller } = props;
  return {
    upstream: props.upstream,
    ...(typeof origin === "string" ? { origin } : {}),
    ...(typeof issuer === "string" ? { issuer } : {}),
    ...(typeof caller === "string" ? { caller } : {}),
  };
}

/** Whether a grant's tokens are for `config`'s origin. */
const grantedFor = (props: BrokerProps, config: Config) =>
  props.origin === undefined || props.origin === originWithoutQuery(config.originUrl);

/** The grant the library put on `ctx` after it validated the proxy's token; none otherwise. */
const propsOf = (ctx: object) => brokerPropsOf((ctx as { props?: unknown }).props);

/**
 * Whose credentials go to the origin on a request of broker mode: never the
 * client's; the origin's token only where the library validated a token of
 * the proxy's (it then put the grant's props on `ctx`), whatever path led to
 * the route, and of the client's headers only those `PASS_HEADERS` adds to
 * MCP's and the content's.
 */
export function brokerCredentials(
  config: Config,
  auth: BrokerAuth,
  ctx: object,
): OriginCredentials {
  const { passHeaders } = auth;
  const props = propsOf(ctx);
  if (!props || !grantedFor(props, config)) return { kind: "proxy", passHeaders };
  const headers: [string, string][] = [["authorization", `Bearer ${props.upstream.accessToken}`]];
  const { caller } = props;
  return { kind: "proxy", headers, passHeaders, ...(caller === undefined ? {} : { caller }) };
}

function noop() {}

/** A grant as `GrantRefreshes` knows it: `userId:grantId`, the part of the library's tokens that is no secret. */
const grantKey = (userId: string, grantId: string) => `${userId}:${grantId}`;

/** The grant of one of the library's tokens (`userId:grantId:secret`, access or refresh). */
function grantOfToken(token: string | undefined): string | undefined {
  const parts = token?.split(":") ?? [];
  const [userId, grantId] = parts;
  return parts.length === 3 && userId && grantId ? grantKey(userId, grantId) : undefined;
}

/**
 * The grant of the proxy's token `request` carries (`Bearer userId:grantId:secret`),
 * read where the library already found that token valid, for that grant.
 */
const grantOfBearer = (request: Request) =>
  grantOfToken(bearerToken(request.headers.get("authorization")));

/**
 * A form posted to the token endpoint, read here (up to
 * `MAX_REFRESH_REQUEST_BYTES`) and handed on in `request`, with the grant it
 * refreshes if it is a refresh. None for any other request; a larger form
 * goes on as it came, unlined.
 */
async function tokenRequest(
  request: Request,
): Promise<{ request: Request; grant?: string } | undefined> {
  if (request.method !== "POST" || new URL(request.url).pathname !== TOKEN_PATH) return undefined;
  const type = request.headers.get("content-type")?.split(";")[0]?.trim().toLowerCase();
  if (type !== "application/x-www-form-urlencoded" || request.body === null) return undefined;
  const read = await readBounded(request.body, MAX_REFRESH_REQUEST_BYTES);
  if (read.kind !== "complete") {
    return { request: new Request(request, { body: rejoin(read.head, read.rest) }) };
  }
  const form = new URLSearchParams(new TextDecoder().decode(read.bytes));
  const grant =
    form.get("grant_type") === "refresh_token"
      ? grantOfToken(form.get("refresh_token") ?? undefined)
      : undefined;
  return {
    request: new Request(request, { body: read.bytes }),
    ...(grant === undefined ? {} : { grant }),
  };
}

/** The token endpoint's answer to a refresh that waits behind too many others of its grant. */
function busyRefresh(): Response {
  return Response.json(
    {
      error: "temporarily_unavailable",
      error_description: "Too many refreshes of this sign-in at once; try again",
    },
    {
      status: 503,
      headers: { "retry-after": String(RETRY_AFTER_RACE_S), "cache-control": "no-store" },
    },
  );
}

/** The proxy's scopes of the token the library validated (`ctx.auth`, beside the grant's props). */
function grantedScopes(ctx: object): string[] {
  const scope = (ctx as { auth?: { scope?: unknown } }).auth?.scope;
  return Array.isArray(scope) ? scope.filter((item) => typeof item === "string") : [];
}

/**
 * The origin's `403` to the token the proxy signed in for, logged. Its
 * `insufficient_scope` naming scopes the proxy carries is the proxy's own
 * `403` naming them (step-up.ts): the client signs in again asking for them,
 * and a refresh could not widen the grant (RFC 6749 §6). Any other `403`
 * reaches the client as it came.
 */
async function answerForbidden(
  response: Response,
  origin: string,
  urls: PublicUrls,
  ctx: object,
): Promise<Response> {
  const { error, scope } = bearerRefusal(response.headers.get("www-authenticate") ?? "");
  const named =
    error === "insufficient_scope" ? stepUpScopes(grantedScopes(ctx), scope) : undefined;
  logEvent("upstream_token_forbidden", {
    origin,
    ...(error === undefined ? {} : { error }),
    ...(scope === undefined ? {} : { scope }),
    ...(named === undefined ? {} : { named: named.join(" ") }),
  });
  // Nothing the proxy carries to sign in for: the origin's 403, its challenge left out.
  if (named === undefined) return withoutOriginChallenge(response);
  await response.body?.cancel();
  return stepUpChallenge(urls, named);
}

/** Broker mode's authorization server for the proxy's URL `urls`. */
export function createBroker(
  config: Config,
  auth: BrokerAuth,
  urls: PublicUrls,
  routes: Routes,
  memory: SignInMemory,
): SignInServer {
  const originHost = config.originUrl.host;

  /**
   * An MCP request with a valid token of the proxy's: the routes send it on
   * with the origin's token from the grant (`originCredentials`), never the client's.
   */
  const withOriginToken: Routes = {
    async fetch(request, env, ctx) {
      const props = propsOf(ctx);
      if (!props) return refreshChallenge(urls, "The grant holds no sign-in at the origin");
      if (!grantedFor(props, config)) {
        // Its refresh revokes the grant (`tokenExchangeCallback`): the client signs in again.
        logEvent("upstream_grant_other_origin", { origin: originHost });
        return refreshChallenge(urls, "The sign-in was made for another origin; sign in again");
      }
      // Sent before its client's refresh was answered: on with the tokens that refresh got, which
      // the routes then send (`brokerCredentials` reads the props, once, after this).
      const grant = grantOfBearer(request);
      const successor =
        grant === undefined
          ? undefined
          : await memory.refreshes.successorOf(grant, props.upstream.accessToken);
      if (successor) {
        const held = ctx as { props: object };
        held.props = { ...held.props, upstream: successor };
      }
      const upstream = successor ?? props.upstream;
      if (upstream.expiresAt !== undefined && upstream.expiresAt <= Date.now()) {
        logEvent("upstream_token_expired", { origin: originHost });
        return refreshChallenge(urls, "The sign-in at the origin expired; refresh the token");
      }
      const response = await routes.fetch(request, env, ctx);
      if (response.status === 403) return answerForbidden(response, originHost, urls, ctx);
      if (response.status !== 401) return response;
      await response.body?.cancel();
      await memory.refreshes.refused(upstream.accessToken);
      logEvent("upstream_token_refused", { origin: originHost });
      return refreshChallenge(urls, "The origin refused its token; refresh the token");
    },
  };

  const provider = signInProvider(config, auth, urls, routes, memory, {
    apiHandler: withOriginToken,
    async tokenExchangeCallback({ grantType, props, env, userId, grantId, scope, requestedScope }) {
      const grant = brokerPropsOf(props);
      if (grantType === "authorization_code") {
        return grant && { accessTokenTTL: lifetimeOf(grant.upstream) };
      }
      if (grantType !== "refresh_token") return;
      if (!grant) {
        // A grant of gate mode (the tenant moved): every request of it is refused, so is this.
        throw new OAuthError("invalid_grant", {
          description: "The grant holds no sign-in at the origin; sign in again",
        });
      }
      const tokens = grant.upstream;
      const current = configOf(env);
      if (current.kind === "invalid") return;
      const { config } = current;
      const { auth } = config;
      if (auth.mode !== "broker") return;
      if (!grantedFor(grant, config)) {
        // The last origin's refresh token goes to no other origin's authorization server.
        throw new OAuthError("invalid_grant", {
          description: "The sign-in was made for another origin; sign in again",
        });
      }
      const key = grantKey(userId, grantId);
      const { outcome, shared } = await memory.refreshes.refresh(key, tokens, (held) =>
        refreshAtOrigin(config, auth, urls, memory, key, held, grant.issuer, originScopesIn(scope)),
      );
      return answerRefresh(outcome, shared, props, config, requestedScope);
    },
  });

  return {
    async fetch(request, env, ctx) {
      const token = await tokenRequest(request);
      if (token?.grant === undefined) return provider.fetch(token?.request ?? request, env, ctx);
      const answering = memory.refreshes.inLine(token.grant, () =>
        provider.fetch(token.request, env, ctx),
      );
      // The grant's next request waits for this one: it must run to its end if its client leaves.
      ctx.waitUntil(answering.then(noop, noop));
      const answered = await answering;
      return answered === "full" ? busyRefresh() : answered;
    },
  };
}
