/**
 * The proxy as the OAuth authorization server for its own URL, in the modes
 * that sign clients in themselves: broker (broker.ts: the origin's own
 * sign-in behind it) and gate (gate.ts: the operator's identity provider
 * behind it, the origin's key added by the proxy). Both are
 * `@cloudflare/workers-oauth-provider`, set up here the same way:
 *
 * - it serves the proxy's metadata (RFC 9728, RFC 8414), `/oauth/token`
 *   (with RFC 7009 revocation, advertised as `revocation_endpoint`) and
 *   `/oauth/register`, validates the proxy's tokens on `MCP_PATH`, and keeps
 *   grants in `OAUTH_KV`; routes/authorize.ts is the consent page and the
 *   callback of the sign-in behind;
 * - clients with a Client ID Metadata Document register without a write,
 *   and a registration past the day's budget of sign-in writes is refused
 *   (sign-in-budget.ts);
 * - each mode brings what differs: the handler of MCP requests with a valid
 *   token of the proxy's, and what a refresh does.
 *
 * The library fixes its resource at construction, so there is one server per
 * public URL the proxy is reached at, built once per isolate (`perPublicUrl`).
 */
import { OAuthProvider, type OAuthProviderOptions } from "@cloudflare/workers-oauth-provider";
import { BoundedMap } from "../bounded-map";
import type { Config, SignInAuth } from "../config";
import { logEvent } from "../log";
import { statusLineOf } from "../transport/origin";
import { quote } from "./challenges";
import type { PublicUrls } from "./public-url";
import { registrationRefusal, registrationRefused, takeSignInWrite } from "./sign-in-budget";
import type { SignInMemory } from "./sign-in-memory";

export const AUTHORIZE_PATH = "/authorize";
export const TOKEN_PATH = "/oauth/token";
export const REGISTER_PATH = "/oauth/register";
/** Gate mode: signs a user out of every app (routes/sign-out.ts). */
export const SIGN_OUT_PATH = "/oauth/sign-out";
const MAX_SERVERS = 16;

export type Routes = ExportedHandler<Env> & Pick<Required<ExportedHandler<Env>>, "fetch">;

/** The authorization server as app.ts calls it: with the request as it arrived, or as addressed to `PUBLIC_URL`. */
export interface SignInServer {
  fetch(request: Request, env: Env, ctx: ExecutionContext): Promise<Response>;
}

/** What a mode brings to the authorization server. */
export interface ModeParts {
  /** MCP requests that carry a valid token of the proxy's; the grant's props are on `ctx.props`. */
  apiHandler: Routes;
  tokenExchangeCallback: NonNullable<OAuthProviderOptions<Env>["tokenExchangeCallback"]>;
  /** How long a grant lasts; the library's default (30 days) when absent. */
  refreshTokenTTL?: number;
}

/** The library as the authorization server for `urls`, with `parts` of the mode `auth` is. */
export function signInProvider(
  config: Config,
  auth: SignInAuth,
  urls: PublicUrls,
  routes: Routes,
  memory: SignInMemory,
  parts: ModeParts,
): OAuthProvider<Env> {
  return new OAuthProvider<Env>({
    apiRoute: config.mcpPath,
    apiHandler: parts.apiHandler,
    defaultHandler: routes,
    authorizeEndpoint: AUTHORIZE_PATH,
    tokenEndpoint: TOKEN_PATH,
    clientRegistrationEndpoint: REGISTER_PATH,
    ...(parts.refreshTokenTTL === undefined ? {} : { refreshTokenTTL: parts.refreshTokenTTL }),
    // Called once the registration is valid, just before the library stores it.
    async clientRegistrationCallback() {
      const refused = await takeSignInWrite(auth, memory.budget, "registration");
      return refused && registrationRefusal(refused);
    },
    // A client with a metadata document registers without a write (docs/sign-in.md).
    clientIdMetadataDocumentEnabled: true,
    resourceMetadata: {
      resource: urls.mcp,
      authorization_servers: [new URL(urls.mcp).origin],
      bearer_methods_supported: ["header"],
      resource_name: `MCP server at ${config.originUrl.host}`,
    },
    tokenExchangeCallback: parts.tokenExchangeCallback,
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

/** The proxy's own `401 invalid_token`: the client refreshes the proxy's token (and what it stands for). */
export function refreshChallenge(urls: PublicUrls, description: string): Response {
  const challenge = `Bearer realm="OAuth", error="invalid_token", error_description=${quote(description)}, resource_metadata=${quote(urls.metadata)}`;
  return Response.json(
    { error: "invalid_token", error_description: description },
    { status: 401, headers: { "www-authenticate": challenge } },
  );
}

/**
 * The origin's refusal as broker and gate mode hand it on: without the
 * origin's `WWW-Authenticate`. There the client signs in at the proxy alone,
 * and the origin's challenge speaks of the origin's own sign-in: its
 * `resource_metadata`, on any host, which the SDK clients follow on a `403
 * insufficient_scope` (they read it anywhere in the header, as
 * `xresource_metadata` too) to register at the authorization server that
 * metadata names and send the user to sign in there; a client that keeps no
 * issuer with its tokens sends that server the proxy's refresh token.
 */
export function withoutOriginChallenge(response: Response): Response {
  if (!response.headers.has("www-authenticate")) return response;
  const headers = new Headers(response.headers);
  headers.delete("www-authenticate");
  return new Response(response.body, { ...statusLineOf(response), headers });
}

/** The proxy's own 401 for an MCP request that did not pass its token check. */
export function signInChallenge(urls: PublicUrls): Response {
  const challenge = `Bearer realm="OAuth", resource_metadata=${quote(urls.metadata)}`;
  return new Response(null, { status: 401, headers: { "www-authenticate": challenge } });
}

/** `build`'s server for each public URL the proxy is reached at (and mode), built once per isolate. */
export function perPublicUrl(
  build: (config: Config, urls: PublicUrls) => SignInServer,
): (config: Config, urls: PublicUrls) => SignInServer {
  const built = new BoundedMap<string, SignInServer>(MAX_SERVERS);
  return (config, urls) => {
    const key = `${config.auth.mode} ${urls.mcp}`;
    let server = built.get(key);
    if (!server) {
      server = build(config, urls);
      built.set(key, server);
    }
    return server;
  };
}
