/**
 * Broker mode (`AUTH_MODE=broker`): the proxy is the authorization server for
 * its own URL, built with `@cloudflare/workers-oauth-provider`, and an OAuth
 * client of the origin (upstream.ts). Clients sign in with the proxy (dynamic
 * registration or a Client ID Metadata Document, authorization code + PKCE)
 * and get the proxy's tokens, bound to the proxy's MCP URL; the origin only
 * ever sees its own tokens, bound to its own URL.
 *
 * - The library serves the proxy's metadata (RFC 9728, RFC 8414), `/oauth/token`
 *   and `/oauth/register`, validates the proxy's tokens on `MCP_PATH`, and
 *   keeps grants in `OAUTH_KV`. routes/authorize.ts is the consent page and the
 *   origin's callback.
 * - The origin's tokens live only in the grant's encrypted `props`. The library
 *   lets a grant's props change only while the client refreshes the proxy's
 *   token, so that is where the origin's token is refreshed
 *   (`tokenExchangeCallback`), and the proxy's access token lives no longer
 *   than the origin's. When the origin's token is expired or refused anyway,
 *   the client gets the proxy's own `401 invalid_token`: it refreshes the
 *   proxy's token (and with it the origin's) and sends the request again. An
 *   `invalid_grant` from the origin revokes the proxy's grant, and the client
 *   signs in again.
 */
import { OAuthError, OAuthProvider } from "@cloudflare/workers-oauth-provider";
import { BoundedMap } from "../bounded-map";
import { type Config, configOf } from "../config";
import { isPlainObject } from "../json";
import { logEvent } from "../log";
import type { OriginCredentials } from "../transport/headers";
import { quote } from "./challenges";
import type { PublicUrls } from "./public-url";
import { registrationRefusal, registrationRefused, takeSignInWrite } from "./sign-in-budget";
import type { SignInMemory } from "./sign-in-memory";
import {
  isUpstreamTokens,
  originWithoutQuery,
  refreshTokens,
  UpstreamError,
  type UpstreamTokens,
  upstreamFor,
} from "./upstream";

export const AUTHORIZE_PATH = "/authorize";
export const TOKEN_PATH = "/oauth/token";
export const REGISTER_PATH = "/oauth/register";
const MAX_BROKERS = 16;
/** The library's floor for an access token's lifetime (KV's minimum expiration). */
const MIN_TOKEN_TTL_S = 60;

/** What a grant carries, encrypted by the library: the origin's tokens, and which origin's. */
export interface BrokerProps {
  upstream: UpstreamTokens;
  /**
   * `ORIGIN_URL` without its query when the grant was made (`originWithoutQuery`):
   * a tenant moved to another origin sends it no token of the last one's.
   * Absent in grants made before it was kept; those are taken as this origin's.
   */
  origin?: string;
}

/** A grant's props, when they carry the origin's tokens. */
function brokerPropsOf(props: unknown): BrokerProps | undefined {
  if (!isPlainObject(props) || !isUpstreamTokens(props.upstream)) return undefined;
  const origin = typeof props.origin === "string" ? props.origin : undefined;
  return { upstream: props.upstream, ...(origin === undefined ? {} : { origin }) };
}

/** Whether a grant's tokens are for `config`'s origin. */
const grantedFor = (props: BrokerProps, config: Config) =>
  props.origin === undefined || props.origin === originWithoutQuery(config.originUrl);

type Routes = ExportedHandler<Env> & Pick<Required<ExportedHandler<Env>>, "fetch">;

/** Seconds until the origin's token expires, as the proxy's token lifetime; `undefined`: the default. */
function lifetimeOf(tokens: UpstreamTokens): number | undefined {
  if (tokens.expiresAt === undefined) return undefined;
  return Math.max(MIN_TOKEN_TTL_S, Math.floor((tokens.expiresAt - Date.now()) / 1000));
}

/** The proxy's own `401 invalid_token`: the client refreshes the proxy's token, and with it the origin's. */
function refreshChallenge(urls: PublicUrls, description: string): Response {
  const challenge = `Bearer realm="OAuth", error="invalid_token", error_description=${quote(description)}, resource_metadata=${quote(urls.metadata)}`;
  return Response.json(
    { error: "invalid_token", error_description: description },
    { status: 401, headers: { "www-authenticate": challenge } },
  );
}

/** The grant the library put on `ctx` after it validated the proxy's token; none otherwise. */
const propsOf = (ctx: object) => brokerPropsOf((ctx as { props?: unknown }).props);

/**
 * Whose credentials go to the origin on this request. Relay mode: the
 * client's. Broker mode: never the client's; the origin's token only where
 * the library validated a token of the proxy's (it then put the grant's
 * props on `ctx`), whatever path led to the route, and of the client's
 * headers only those `PASS_HEADERS` adds to MCP's and the content's.
 */
export function originCredentials(config: Config, ctx: object): OriginCredentials {
  if (config.auth.mode === "relay") return { kind: "client" };
  const { passHeaders } = config.auth;
  const props = propsOf(ctx);
  return props && grantedFor(props, config)
    ? { kind: "proxy", authorization: `Bearer ${props.upstream.accessToken}`, passHeaders }
    : { kind: "proxy", passHeaders };
}

/** The proxy's own 401 for an MCP request that did not pass its token check. */
export function signInChallenge(urls: PublicUrls): Response {
  const challenge = `Bearer realm="OAuth", resource_metadata=${quote(urls.metadata)}`;
  return new Response(null, { status: 401, headers: { "www-authenticate": challenge } });
}

function createBroker(
  config: Config,
  urls: PublicUrls,
  routes: Routes,
  memory: SignInMemory,
): OAuthProvider<Env> {
  const origin = new URL(urls.mcp).origin;
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
      const { upstream } = props;
      if (upstream.expiresAt !== undefined && upstream.expiresAt <= Date.now()) {
        logEvent("upstream_token_expired", { origin: originHost });
        return refreshChallenge(urls, "The sign-in at the origin expired; refresh the token");
      }
      const response = await routes.fetch(request, env, ctx);
      if (response.status !== 401) return response;
      await response.body?.cancel();
      logEvent("upstream_token_refused", { origin: originHost });
      return refreshChallenge(urls, "The origin refused its token; refresh the token");
    },
  };

  return new OAuthProvider<Env>({
    apiRoute: config.mcpPath,
    apiHandler: withOriginToken,
    defaultHandler: routes,
    authorizeEndpoint: AUTHORIZE_PATH,
    tokenEndpoint: TOKEN_PATH,
    clientRegistrationEndpoint: REGISTER_PATH,
    // Called once the registration is valid, just before the library stores it.
    async clientRegistrationCallback() {
      if (config.auth.mode !== "broker") return;
      const refused = await takeSignInWrite(config.auth, memory.budget, "registration");
      return refused && registrationRefusal(refused);
    },
    // A client with a metadata document registers without a write (docs/sign-in.md).
    clientIdMetadataDocumentEnabled: true,
    resourceMetadata: {
      resource: urls.mcp,
      authorization_servers: [origin],
      bearer_methods_supported: ["header"],
      resource_name: `MCP server at ${originHost}`,
    },
    async tokenExchangeCallback({ grantType, props, env }) {
      const grant = brokerPropsOf(props);
      if (!grant) return;
      const tokens = grant.upstream;
      if (grantType === "authorization_code") return { accessTokenTTL: lifetimeOf(tokens) };
      if (grantType !== "refresh_token") return;
      const current = configOf(env);
      if (current.kind === "invalid" || current.config.auth.mode !== "broker") return;
      if (!grantedFor(grant, current.config)) {
        // The last origin's refresh token goes to no other origin's authorization server.
        throw new OAuthError("invalid_grant", {
          description: "The sign-in was made for another origin; sign in again",
        });
      }
      let refreshed: UpstreamTokens | "revoked";
      try {
        const upstream = await upstreamFor(
          current.config,
          current.config.auth,
          urls,
          new Headers(),
          memory,
        );
        refreshed = await refreshTokens(upstream, tokens);
      } catch (error) {
        const reason = error instanceof UpstreamError ? error.reason : "error";
        logEvent("upstream_refresh", { origin: originHost, result: "failed", reason });
        throw new OAuthError("temporarily_unavailable", {
          description: "The origin's authorization server is unavailable",
          statusCode: 503,
        });
      }
      if (refreshed === "revoked") {
        logEvent("upstream_refresh", { origin: originHost, result: "revoked" });
        // Revokes this grant: the client signs in again.
        throw new OAuthError("invalid_grant", {
          description: "The sign-in at the origin was revoked; sign in again",
        });
      }
      logEvent("upstream_refresh", { origin: originHost, result: "refreshed" });
      // A grant made before grants said whose tokens they hold says so from now on.
      const newProps = {
        ...props,
        upstream: refreshed,
        origin: originWithoutQuery(current.config.originUrl),
      };
      return { newProps, accessTokenTTL: lifetimeOf(refreshed) };
    },
    onError({ code, status, headers, internal }) {
      logEvent("oauth_error", {
        code,
        status,
        category: internal.category,
        reason: internal.reason,
      });
      return registrationRefused(internal, headers);
    },
  });
}

/**
 * The broker for each public URL the proxy is reached at, built once per
 * isolate: the library fixes its resource at construction.
 */
export function brokers(
  routes: Routes,
  memory: SignInMemory,
): (config: Config, urls: PublicUrls) => OAuthProvider<Env> {
  const built = new BoundedMap<string, OAuthProvider<Env>>(MAX_BROKERS);
  return (config, urls) => {
    let broker = built.get(urls.mcp);
    if (!broker) {
      broker = createBroker(config, urls, routes, memory);
      built.set(urls.mcp, broker);
    }
    return broker;
  };
}
