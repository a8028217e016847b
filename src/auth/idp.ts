/**
 * Gate mode's identity provider, as the sign-in pages use it: where the
 * browser signs in, and who came back. OpenID Connect (idp-oidc.ts) or
 * GitHub (idp-github.ts), by `IDP_PROTOCOL`. The browser comes back to the
 * proxy's `/oauth/callback`, the redirect URI to register at the provider.
 */
import type { Config, GateAuth } from "../config";
import type { Identity } from "./identity";
import { gitHubProvider } from "./idp-github";
import { openIdProvider } from "./idp-oidc";
import type { PublicUrls } from "./public-url";
import type { SignInMemory } from "./sign-in-memory";
import { CALLBACK_PATH } from "./upstream";

export interface SignInAtProvider {
  /** The provider's host, as the consent page names it. */
  host: string;
  /** Where to send the browser: code + PKCE (`verifier`), with `state` and, where the protocol has one, `nonce`. */
  authorizationUrl(state: string, verifier: string, nonce: string): Promise<URL>;
  /** Who signed in, from the URL the browser came back to; `UpstreamError` when it proves nothing. */
  identify(callback: URL, state: string, verifier: string, nonce: string): Promise<Identity>;
}

/**
 * The identity provider `auth` names, for the proxy reached at `urls`;
 * `fresh`: its OpenID Connect metadata discovered anew (`/readyz`), not the
 * isolate's copy. GitHub's endpoints are known: nothing is asked.
 */
export async function identityProvider(
  config: Config,
  auth: GateAuth,
  urls: PublicUrls,
  memory: SignInMemory,
  { fresh = false } = {},
): Promise<SignInAtProvider> {
  const redirectUri = `${new URL(urls.mcp).origin}${CALLBACK_PATH}`;
  return auth.idp.protocol === "github"
    ? gitHubProvider(config, auth, redirectUri)
    : openIdProvider(config, auth, redirectUri, memory, fresh);
}

/** Whether a grant's issuer is the provider `auth` names now (issuers compare as URLs). */
export function sameIssuer(issuer: string, auth: GateAuth): boolean {
  return URL.canParse(issuer) && new URL(issuer).href === auth.idp.issuer.href;
}
