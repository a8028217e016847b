/**
 * Signing in at the origin, once its authorization server is known
 * (upstream.ts): where the browser is sent (authorization code + PKCE, with
 * `resource` = the origin's own resource, RFC 8707), the check of what it
 * brings back (`state`, and `iss` per RFC 9207), the code's exchange, and the
 * refresh of what that gave. What comes of it is only ever kept inside a
 * grant's encrypted props.
 */
import * as oauth from "oauth4webapi";
import { isPlainObject } from "../json";
import { grantedAtOrigin } from "./step-up";
import type { Upstream } from "./upstream";
import { AnswerTooLarge, attempt, UpstreamError } from "./upstream-requests";

/** What the proxy holds of the origin's sign-in: only ever inside a grant's encrypted props. */
export interface UpstreamTokens {
  accessToken: string;
  refreshToken?: string;
  /** Milliseconds since the epoch; absent when the authorization server gave no lifetime. */
  expiresAt?: number;
  /**
   * Of the origin's scopes the proxy's grant names (`origin:<scope>`,
   * unprefixed: auth/step-up.ts), those the authorization server granted,
   * by the last of its token answers that said (RFC 6749 §5.1). Absent where
   * none said, and in grants made before it was kept: as asked.
   */
  scope?: string[];
}

/** Where to send the browser to sign in to the origin, asking for `scope`. */
export async function authorizationUrl(
  upstream: Upstream,
  state: string,
  codeVerifier: string,
  scope: readonly string[],
): Promise<URL> {
  const url = new URL(upstream.as.authorization_endpoint as string);
  url.searchParams.set("client_id", upstream.client.client_id);
  url.searchParams.set("redirect_uri", upstream.redirectUri);
  url.searchParams.set("response_type", "code");
  url.searchParams.set("code_challenge", await oauth.calculatePKCECodeChallenge(codeVerifier));
  url.searchParams.set("code_challenge_method", "S256");
  url.searchParams.set("state", state);
  url.searchParams.set("resource", upstream.resource);
  if (scope.length > 0) url.searchParams.set("scope", scope.join(" "));
  return url;
}

/**
 * A token the proxy can send as `Authorization: Bearer <token>`: visible
 * ASCII, no space (RFC 6750's b64token is narrower still). oauth4webapi
 * checks only that it is a string, and the origin's authorization server
 * is untrusted: one with a line break in it made every request of the
 * grant fail as it was written.
 */
const BEARER = /^[\x21-\x7e]+$/;

/**
 * The longest lifetime of the origin's access token the proxy takes as said:
 * the proxy's own token lives as long (broker-refresh.ts `lifetimeOf`), and
 * the answer is the origin's authorization server's, untrusted. Any
 * `expires_in` oauth4webapi lets through is a finite number: `1e306` made
 * `Infinity` of the expiry, which the library refused as a token lifetime
 * and a grant kept as `null` (JSON), read back as long expired.
 */
export const MAX_LIFETIME_S = 365 * 24 * 60 * 60;

/**
 * What the proxy keeps of a token response, of whose scope only what it
 * granted of `carried` (the origin's scopes the proxy's grant names: no more
 * than the bounds of step-up.ts, whatever the answer names); `UpstreamError`
 * for an access token it could not send.
 */
function tokensOf(
  response: oauth.TokenEndpointResponse,
  carried: readonly string[],
  previous?: UpstreamTokens,
): UpstreamTokens {
  if (!BEARER.test(response.access_token)) {
    throw new UpstreamError(
      "unusable_token",
      "The origin's authorization server issued an access token no request can carry",
    );
  }
  // An answer that names no scope granted what was asked (RFC 6749 §5.1): at a refresh, which
  // asks for none, what the grant had (§6).
  const scope = grantedAtOrigin(carried, response.scope) ?? previous?.scope;
  return {
    accessToken: response.access_token,
    refreshToken: response.refresh_token ?? previous?.refreshToken,
    ...(typeof response.expires_in === "number"
      ? { expiresAt: Date.now() + Math.min(response.expires_in, MAX_LIFETIME_S) * 1000 }
      : {}),
    ...(scope === undefined ? {} : { scope }),
  };
}

/**
 * What the browser brought back to `callback` from `as`, checked (`state`,
 * `iss` where it is sent or promised, no `error`): `UpstreamError` with
 * `message` otherwise, its reason the server's error code.
 */
export function checkedCallback(
  as: oauth.AuthorizationServer,
  client: oauth.Client,
  callback: URL,
  state: string,
  message: string,
): URLSearchParams {
  try {
    return oauth.validateAuthResponse(as, client, callback, state);
  } catch (error) {
    const reason =
      error instanceof oauth.AuthorizationResponseError ? error.error : "invalid_response";
    throw new UpstreamError(reason, message, error);
  }
}

/**
 * The origin's tokens for the code its authorization server sent back:
 * `callback` is the URL it sent the browser to, `state` the one the proxy
 * issued, `carried` the origin's scopes the client asked the proxy for. A
 * foreign `iss`, an error, or a refused code throw `UpstreamError`.
 */
export async function exchangeCode(
  upstream: Upstream,
  callback: URL,
  state: string,
  codeVerifier: string,
  carried: readonly string[],
): Promise<UpstreamTokens> {
  const parameters = checkedCallback(
    upstream.as,
    upstream.client,
    callback,
    state,
    "The origin's authorization server answered with an error, or not as itself",
  );
  const response = await attempt(
    "token_request_failed",
    "The origin's authorization server could not be reached to exchange the code",
    () =>
      oauth.authorizationCodeGrantRequest(
        upstream.as,
        upstream.client,
        upstream.clientAuth,
        parameters,
        upstream.redirectUri,
        codeVerifier,
        { ...upstream.options, additionalParameters: { resource: upstream.resource } },
      ),
  );
  const tokens = await oauth
    .processAuthorizationCodeResponse(upstream.as, upstream.client, response)
    .catch((error: unknown) => {
      const reason =
        error instanceof oauth.ResponseBodyError ? error.error : "token_request_failed";
      throw new UpstreamError(reason, "The origin's authorization server refused the code", error);
    });
  return tokensOf(tokens, carried);
}

/**
 * Fresh tokens for `tokens`' refresh token (`carried`: the origin's scopes
 * the proxy's grant names): `"revoked"` when the authorization server says
 * the grant is gone for good (`invalid_grant`), `UpstreamError` when it
 * failed otherwise (and may work later).
 */
export async function refreshTokens(
  upstream: Upstream,
  tokens: UpstreamTokens,
  carried: readonly string[],
): Promise<UpstreamTokens | "revoked"> {
  if (tokens.refreshToken === undefined) return "revoked";
  const refreshToken = tokens.refreshToken;
  let response: Response;
  try {
    response = await oauth.refreshTokenGrantRequest(
      upstream.as,
      upstream.client,
      upstream.clientAuth,
      refreshToken,
      { ...upstream.options, additionalParameters: { resource: upstream.resource } },
    );
  } catch (error) {
    const timedOut = error instanceof Error && error.name === "TimeoutError";
    throw new UpstreamError(
      error instanceof AnswerTooLarge ? "answer_too_large" : timedOut ? "timeout" : "unreachable",
      "The origin's authorization server could not be reached",
      error,
    );
  }
  let refreshed: oauth.TokenEndpointResponse;
  try {
    refreshed = await oauth.processRefreshTokenResponse(upstream.as, upstream.client, response);
  } catch (error) {
    if (error instanceof oauth.ResponseBodyError && error.error === "invalid_grant")
      return "revoked";
    // The authorization server's own error code, or a status and body that are no OAuth answer (a 503 page).
    const reason = error instanceof oauth.ResponseBodyError ? error.error : "unexpected_response";
    throw new UpstreamError(
      reason,
      "The origin's authorization server did not refresh the token",
      error,
      response.status,
    );
  }
  return tokensOf(refreshed, carried, tokens);
}

/** Whether `value` is what the broker keeps in a grant's props. */
export function isUpstreamTokens(value: unknown): value is UpstreamTokens {
  return (
    isPlainObject(value) &&
    typeof value.accessToken === "string" &&
    (value.scope === undefined ||
      (Array.isArray(value.scope) && value.scope.every((item) => typeof item === "string")))
  );
}
