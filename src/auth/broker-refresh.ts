/**
 * What broker mode (broker.ts) does when a client refreshes the proxy's
 * token: the origin's token refreshed at its authorization server, once per
 * grant however many refreshes of it wait (grant-refresh.ts), and what the
 * library is told of the outcome: new props and the proxy's token lifetime,
 * or the client's error (a `503` that keeps the grant, or `invalid_grant`
 * that revokes it).
 */
import { OAuthError } from "@cloudflare/workers-oauth-provider";
import type { BrokerAuth, Config } from "../config";
import { logEvent } from "../log";
import { announceRefresh, type RefreshOutcome, spentElsewhere } from "./grant-refresh";
import type { PublicUrls } from "./public-url";
import type { SignInMemory } from "./sign-in-memory";
import { originScopesIn, withheldAtOrigin, withoutWithheld } from "./step-up";
import { originWithoutQuery, upstreamFor } from "./upstream";
import { UpstreamError } from "./upstream-requests";
import { refreshTokens, type UpstreamTokens } from "./upstream-tokens";

/** The library's floor for an access token's lifetime (KV's minimum expiration). */
const MIN_TOKEN_TTL_S = 60;
/** When a client may try a refresh again: after the authorization server failed, after another refresh won. */
const RETRY_AFTER_DOWN_S = 5;
export const RETRY_AFTER_RACE_S = 1;
/** Seconds until the origin's token expires, as the proxy's token lifetime; `undefined`: the default. */
export function lifetimeOf(tokens: UpstreamTokens): number | undefined {
  if (tokens.expiresAt === undefined) return undefined;
  return Math.max(MIN_TOKEN_TTL_S, Math.floor((tokens.expiresAt - Date.now()) / 1000));
}

/**
 * One refresh of the origin's token at its authorization server, announced
 * to other isolates before the refresh token is spent, for a grant of the
 * proxy's that names `carried` of the origin's scopes; never throws. A grant
 * `issued` by another authorization server than the one the origin names
 * now is revoked, its refresh token sent nowhere: the origin chooses where
 * the proxy signs in (without `UPSTREAM_ISSUER`), and would otherwise get
 * the refresh tokens its last authorization server issued, good there for
 * other resources than the origin (RFC 9700 §4.4, mix-up).
 */
export async function refreshAtOrigin(
  config: Config,
  auth: BrokerAuth,
  urls: PublicUrls,
  memory: SignInMemory,
  grant: string,
  tokens: UpstreamTokens,
  issued: string | undefined,
  carried: readonly string[],
): Promise<RefreshOutcome> {
  const flight = crypto.randomUUID();
  try {
    const upstream = await upstreamFor(config, auth, urls, new Headers(), memory);
    const { issuer } = upstream.as;
    if (issued !== undefined && issued !== issuer) {
      logEvent("upstream_grant_other_issuer", { origin: config.originUrl.host, issuer });
      return { kind: "revoked" };
    }
    const { refreshToken } = tokens;
    if (refreshToken !== undefined)
      await announceRefresh(auth.oauthKv, grant, refreshToken, flight);
    const refreshed = await refreshTokens(upstream, tokens, carried);
    if (refreshed !== "revoked") return { kind: "refreshed", tokens: refreshed, issuer };
    if (
      refreshToken !== undefined &&
      (await spentElsewhere(auth.oauthKv, grant, refreshToken, flight))
    )
      return { kind: "spent" };
    return { kind: "revoked" };
  } catch (error) {
    const cause = error instanceof Error ? (error.cause ?? error) : error;
    return {
      kind: "failed",
      reason: error instanceof UpstreamError ? error.reason : "error",
      ...(error instanceof UpstreamError && error.status !== undefined
        ? { status: error.status }
        : {}),
      detail: cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause),
    };
  }
}

/** A refresh's `503`, the grant kept: `reason` is what `onError` logs (`oauth_error`). */
const tryAgain = (description: string, retryAfterS: number, reason: string) =>
  new OAuthError("temporarily_unavailable", {
    description,
    statusCode: 503,
    headers: { "Retry-After": String(retryAfterS) },
    internal: { category: "token-exchange-callback", reason },
  });

/**
 * What the library is told of a refresh's outcome, logged: new props, the
 * proxy's token lifetime and its scopes (of `requested`, the grant's or
 * fewer, those the origin's authorization server still grants), or the
 * client's error.
 */
export function answerRefresh(
  outcome: RefreshOutcome,
  shared: boolean,
  props: unknown,
  config: Config,
  requested: readonly string[],
): { newProps: unknown; accessTokenTTL: number | undefined; accessTokenScope?: string[] } {
  const origin = config.originUrl.host;
  const { kind, ...cause } = outcome;
  const granted = kind === "refreshed" ? outcome.tokens.scope : undefined;
  const withheld = withheldAtOrigin(originScopesIn(requested), granted);
  logEvent("upstream_refresh", {
    origin,
    result: kind,
    ...(kind === "failed" ? cause : {}),
    ...(shared ? { shared } : {}),
    ...(withheld.length === 0 ? {} : { withheld: withheld.join(" ") }),
  });
  switch (outcome.kind) {
    case "refreshed":
      return {
        // The library lets a refresh narrow the proxy's token, never its grant: each refresh does.
        ...(granted === undefined ? {} : { accessTokenScope: withoutWithheld(requested, granted) }),
        // A grant made before grants said whose tokens they hold says so from now on.
        newProps: {
          ...(props as object),
          upstream: outcome.tokens,
          origin: originWithoutQuery(config.originUrl),
          issuer: outcome.issuer,
        },
        accessTokenTTL: lifetimeOf(outcome.tokens),
      };
    case "failed":
      // The grant is kept: the client tries again once the authorization server is back.
      throw tryAgain(
        "The origin's authorization server is unavailable",
        RETRY_AFTER_DOWN_S,
        "upstream_refresh_failed",
      );
    case "spent":
      // The grant holds what the other refresh got: the client's retry reads it.
      throw tryAgain(
        "Another request just refreshed this sign-in; try again",
        RETRY_AFTER_RACE_S,
        "upstream_refresh_spent",
      );
    case "revoked":
      // Revokes this grant: the client signs in again.
      throw new OAuthError("invalid_grant", {
        description: "The sign-in at the origin was revoked; sign in again",
      });
  }
}
