/**
 * Gate mode (`AUTH_MODE=gate`): the proxy is the authorization server for its
 * own URL (provider.ts, as in broker mode), signs users in at the operator's
 * identity provider (idp.ts), lets in those the `ALLOWED_*` lists name
 * (identity.ts), and sends the origin its key itself (origin-key.ts). Made
 * for origins that take a static key: the key stays in the Worker, and only
 * signed-in, allowed users' requests carry it.
 *
 * - A grant's props are the identity the provider vouched for at sign-in,
 *   and when (`GateProps`); no token of the provider's is kept.
 * - On every MCP request with a valid token of the proxy's, and at every
 *   refresh, the identity is checked against the lists as they are now: a
 *   user removed from them gets `401 invalid_token` on their next request,
 *   and their refresh is refused with `invalid_grant`, which revokes the
 *   grant (they then meet the refusal page if they sign in again). A grant
 *   made at another provider (`IDP_ISSUER` changed) is refused the same way.
 * - A grant lasts `SIGN_IN_MAX_AGE_HOURS` (as it is now, on every request
 *   and refresh): what the provider knows (a disabled account, a group it
 *   left) is learnt only at sign-in.
 * - A session id is the user's: the client holds the origin's bound to
 *   them, and the routes see the origin's own, or the request is refused
 *   (session-binding.ts).
 * - The request reaches the routes with the headers the origin gets
 *   (`ctx.props` becomes `GateRequest`); the client's `Authorization`,
 *   cookies and credential headers never do (transport/headers.ts). An
 *   origin that refuses the key (`401`) is the proxy's `502`, never the
 *   origin's challenge, which would send the client to sign in again.
 */
import { OAuthError } from "@cloudflare/workers-oauth-provider";
import { type Config, configOf, type GateAuth } from "../config";
import { isPlainObject } from "../json";
import { logEvent } from "../log";
import { ErrorCode, errorResponse, unreadAddressee } from "../protocol/jsonrpc";
import type { OriginCredentials } from "../transport/headers";
import { admission, type Identity, identityOf } from "./identity";
import { sameIssuer } from "./idp";
import { originKeyFor } from "./origin-key";
import {
  type Routes,
  refreshChallenge,
  type SignInServer,
  signInProvider,
  withoutOriginChallenge,
} from "./provider";
import type { PublicUrls } from "./public-url";
import { sessionBinding } from "./session-binding";
import type { SignInMemory } from "./sign-in-memory";

/** What a gate grant carries, encrypted by the library. */
export interface GateProps {
  gate: Identity;
  /** When the user signed in at the provider, in milliseconds since the epoch. */
  signedInAt: number;
}

/** What the routes get on `ctx.props` for a request that may reach the origin. */
interface GateRequest {
  originHeaders: ReadonlyArray<readonly [string, string]>;
  /** `originHeaders` are every user's: the shared key, and no `ORIGIN_USER_HEADER`. */
  sameForEveryCaller?: boolean;
  /** Who signed in (issuer and subject): toolmap/callers.ts `Caller.source`. */
  user?: string;
}

export function gatePropsOf(props: unknown): GateProps | undefined {
  if (!isPlainObject(props) || typeof props.signedInAt !== "number") return undefined;
  const identity = identityOf(props.gate);
  return identity && { gate: identity, signedInAt: props.signedInAt };
}

/**
 * Whose credentials go to the origin on a request of gate mode: the
 * proxy's, set by the gate on a request it let through, and only there;
 * never the client's.
 */
export function gateCredentials(auth: GateAuth, ctx: object): OriginCredentials {
  const props = (ctx as { props?: Partial<GateRequest> }).props;
  const headers = props?.originHeaders;
  if (!Array.isArray(headers)) return { kind: "proxy", passHeaders: auth.passHeaders };
  const alike = props?.sameForEveryCaller === true ? ({ sameForEveryCaller: true } as const) : {};
  const user = typeof props?.user === "string" ? { user: props.user } : {};
  return { kind: "proxy", headers, passHeaders: auth.passHeaders, ...alike, ...user };
}

/**
 * Why `props` may not act now, for the log; `undefined` when they may. The
 * sign-in's age is read against `SIGN_IN_MAX_AGE_HOURS` as it is now: the
 * refresh token's lifetime was set at sign-in, and lowering the setting (after
 * an incident, say) must end the grants it no longer allows.
 */
export function refusalOf(auth: GateAuth, props: GateProps, now = Date.now()): string | undefined {
  if (!sameIssuer(props.gate.issuer, auth)) return "other_issuer";
  if (now - props.signedInAt > auth.signInMaxAgeS * 1000) return "sign_in_expired";
  const admitted = admission(auth.allowed, props.gate, auth.userHeader !== undefined);
  return admitted.kind === "refused" ? admitted.reason : undefined;
}

/** Gate mode's settings in `env` as they are now; `undefined` when they are no gate's. */
function gateAuthIn(env: Env): GateAuth | undefined {
  const current = configOf(env);
  return current.kind === "valid" && current.config.auth.mode === "gate"
    ? current.config.auth
    : undefined;
}

/** The proxy's own JSON-RPC error for an MCP request, for what the gate itself answers. */
const gateError = (request: Request, status: number, message: string, headers?: HeadersInit) => {
  const response = errorResponse(
    status,
    ErrorCode.InternalError,
    message,
    unreadAddressee(request.headers),
  );
  for (const [name, value] of new Headers(headers)) response.headers.set(name, value);
  return response;
};

/**
 * What a request with a session id or `Last-Event-ID` the proxy did not bind
 * to its user is told (docs/errors.md): a `404`, as for a session or stream
 * the origin does not have, so that the client starts another, and learns
 * nothing of whose it is.
 */
const NOT_BOUND = {
  session:
    "Session not found: no session of this Mcp-Session-Id was begun for you; start a new session (initialize without one)",
  event:
    "Stream not found: no event of this Last-Event-ID was sent to you; open the stream anew (without one)",
} as const;

/** Gate mode's authorization server for the proxy's URL `urls`. */
export function createGate(
  config: Config,
  built: GateAuth,
  urls: PublicUrls,
  routes: Routes,
  memory: SignInMemory,
): SignInServer {
  const originHost = config.originUrl.host;

  /** An MCP request with a valid token of the proxy's: still allowed, and with the origin's key. */
  const withOriginKey: Routes = {
    async fetch(request, env, ctx) {
      const auth = gateAuthIn(env);
      const props = gatePropsOf((ctx as { props?: unknown }).props);
      if (!auth || !props)
        return refreshChallenge(urls, "The grant holds no sign-in; sign in again");
      const refused = refusalOf(auth, props);
      if (refused !== undefined) {
        logEvent("gate_refused", { at: "request", reason: refused });
        return refreshChallenge(urls, "You may no longer use this server; sign in again");
      }
      const key = await originKeyFor(auth, props.gate, memory);
      if (key.kind === "none") {
        logEvent("gate_refused", { at: "request", reason: "no_origin_key" });
        return gateError(request, 403, "Forbidden: this server has no key for you at the origin");
      }
      if (key.kind === "failed") {
        return gateError(
          request,
          503,
          `The proxy could not read the origin's key (${key.setting}); try again in a minute`,
          { "retry-after": "60" },
        );
      }
      const headers: Array<[string, string]> = [[key.header, key.value]];
      // `refusalOf` let only a plain address through when there is a user header (identity.ts `admission`).
      if (auth.userHeader !== undefined && props.gate.email !== undefined) {
        headers.push([auth.userHeader, props.gate.email]);
      }
      // With the shared key alone, the origin cannot tell one user's request from another's.
      const sameForEveryCaller = key.shared && headers.length === 1;
      const user = `${props.gate.issuer}\n${props.gate.subject}`;
      // Before anything reads the request: past here its session and event ids are the origin's.
      const sessions = sessionBinding(key.value, user);
      const bound = await sessions.toOrigin(request);
      if ("refused" in bound) {
        const reason = NOT_BOUND[bound.refused];
        const refusal = errorResponse(
          404,
          ErrorCode.InvalidRequest,
          reason,
          unreadAddressee(request.headers),
        );
        logEvent("request_refused", {
          status: refusal.status,
          code: ErrorCode.InvalidRequest,
          reason,
        });
        return refusal;
      }
      (ctx as { props?: unknown }).props = {
        originHeaders: headers,
        sameForEveryCaller,
        user,
      } satisfies GateRequest;
      const response = await routes.fetch(bound.request, env, ctx);
      if (response.status !== 401) return sessions.toClient(withoutOriginChallenge(response));
      // The origin refused the key: the client's token is good, and signing in again would not help.
      await response.body?.cancel();
      logEvent("origin_key_refused", { origin: originHost });
      return gateError(request, 502, "Bad gateway: the origin refused the proxy's credential");
    },
  };

  return signInProvider(config, built, urls, routes, memory, {
    apiHandler: withOriginKey,
    tokenExchangeCallback({ grantType, props, env }) {
      const auth = gateAuthIn(env);
      const grant = gatePropsOf(props);
      if (!auth) return;
      if (grantType === "authorization_code") {
        // A sign-in lasts this long from the provider's say, refreshed or not.
        return grant && { refreshTokenTTL: auth.signInMaxAgeS };
      }
      if (grantType !== "refresh_token") return;
      if (!grant) {
        // A grant of broker mode (the tenant moved): every request of it is refused, so is this.
        throw new OAuthError("invalid_grant", {
          description: "The grant holds no sign-in; sign in again",
        });
      }
      const refused = refusalOf(auth, grant);
      if (refused === undefined) return;
      logEvent("gate_refused", { at: "refresh", reason: refused });
      // Revokes the grant: the client signs in again, and meets the refusal page.
      throw new OAuthError("invalid_grant", {
        description: "You may no longer use this server; sign in again",
      });
    },
  });
}
