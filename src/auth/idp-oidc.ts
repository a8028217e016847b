/**
 * Gate mode's sign-in at an OpenID Connect provider (`IDP_ISSUER`), with
 * oauth4webapi doing the protocol. What it checks, and where:
 *
 * - discovery: `IDP_ISSUER/.well-known/openid-configuration`, whose `issuer`
 *   must be `IDP_ISSUER` exactly (oauth4webapi `processDiscoveryResponse`);
 *   kept five minutes per isolate;
 * - the authorization request: code + PKCE (S256), `state` (the library's
 *   single-use, browser-bound transaction handle) and a fresh `nonce`;
 * - the answer: `state`, an `error`, and `iss` when the provider sends it or
 *   says it does (RFC 9207, `validateAuthResponse`);
 * - the ID token (`processAuthorizationCodeResponse`): required; its `iss`
 *   is the issuer, `aud` holds the proxy's client ID (and `azp` is it when
 *   there are several), `exp` not past, `sub` present, `nonce` the one sent,
 *   its `alg` one the provider lists (RS256 when it lists none);
 * - its signature, against the provider's JWKS (`jwks_uri`):
 *   `validateApplicationLevelSignature`, which oauth4webapi leaves to the
 *   caller for a token that came over TLS from the token endpoint, and which
 *   gate mode does anyway: the token is what lets a user in. Keys are kept
 *   five minutes, and fetched again for a `kid` the proxy has not seen.
 *
 * What the provider says of the user is read from the verified claims only:
 * `sub`, `email` when `email_verified` (or Entra ID's `xms_edov`) is true, and the groups claim
 * (`IDP_GROUPS_CLAIM`). The provider's tokens are not kept.
 */
import * as oauth from "oauth4webapi";
import { type Config, emailKey, type GateAuth } from "../config";
import { type Identity, memberships } from "./identity";
import type { SignInAtProvider } from "./idp";
import type { SignInMemory } from "./sign-in-memory";
import { clientAuthOf } from "./upstream";
import { attempt, requestOptions, UpstreamError } from "./upstream-requests";
import { checkedCallback } from "./upstream-tokens";

/** The scopes asked for where the provider lists them (or lists none): who the user is, and their groups. */
const IDENTITY_SCOPES = ["openid", "email", "profile"];

async function discover(
  config: Config,
  auth: GateAuth,
  memory: SignInMemory,
  fresh = false,
): Promise<oauth.AuthorizationServer> {
  const { issuer } = auth.idp;
  const known = fresh ? undefined : memory.identityProviders.get(issuer.href);
  if (known) return known;
  const as = await attempt(
    "no_identity_provider",
    `No usable OpenID Connect metadata at ${issuer.origin}`,
    async () =>
      oauth.processDiscoveryResponse(
        issuer,
        await oauth.discoveryRequest(issuer, {
          ...requestOptions(config, issuer),
          algorithm: "oidc",
        }),
      ),
  );
  if (!as.authorization_endpoint || !as.token_endpoint || !as.jwks_uri) {
    throw new UpstreamError(
      "no_identity_provider",
      `The identity provider at ${issuer.origin} names no authorization, token or key endpoint`,
    );
  }
  memory.identityProviders.set(issuer.href, as);
  return as;
}

/** The scopes to ask for: those of `IDENTITY_SCOPES` the provider offers, and `groups` when groups are checked. */
function scopesFor(as: oauth.AuthorizationServer, auth: GateAuth): string {
  const offered = Array.isArray(as.scopes_supported) ? as.scopes_supported : undefined;
  const wanted = [...IDENTITY_SCOPES, ...(auth.allowed.groups.size > 0 ? ["groups"] : [])];
  return wanted
    .filter((scope) => scope === "openid" || offered === undefined || offered.includes(scope))
    .filter((scope) => scope !== "groups" || offered?.includes(scope))
    .join(" ");
}

/** Cloudflare Access for SaaS's issuers: `https://<team>.cloudflareaccess.com/cdn-cgi/access/sso/oidc/<client-id>`. */
const ACCESS_HOSTS = ".cloudflareaccess.com";

/** A claim that says yes: `true`, or `"true"` as some providers write booleans. */
const isTrue = (claim: unknown) => claim === true || claim === "true";

/** Google's issuer, `https://accounts.google.com`. */
const GOOGLE_HOST = "accounts.google.com";

/**
 * Whether Google answers for `email` now, not only when the account was made:
 * a Workspace account's (`hd`, its organization's domain) or a Gmail address,
 * as Google's OpenID Connect guide has it. A Google account can be made with
 * any address, verified by a code sent there once: `email_verified` stays
 * true for whoever made it after the mailbox is gone (an employee who left,
 * a domain that lapsed and was bought).
 */
function googleAnswersFor(claims: oauth.IDToken, email: string): boolean {
  return (
    (typeof claims.hd === "string" && claims.hd !== "") || emailKey(email).endsWith("@gmail.com")
  );
}

/**
 * The address, when the provider vouches for it (docs/sign-in.md, "Who may
 * connect"): `email_verified` true, or, when the token has no
 * `email_verified`, Microsoft Entra ID's optional claim `xms_edov` true (the
 * domain's owner verified it), or Cloudflare Access for SaaS, whose `email`
 * is the one its own sign-in verified and which sends no such claim. An
 * address with none of these is no one's: at providers that let a user name
 * any address (Entra's `email`, nOAuth), it would let anyone in as anyone.
 * At Google, only an address it answers for now (`googleAnswersFor`).
 */
export function verifiedEmail(claims: oauth.IDToken, issuer: URL): string | undefined {
  const { email, email_verified: verified, xms_edov: domainVerified } = claims;
  if (typeof email !== "string" || email.length === 0 || email.length > 320) return undefined;
  if (issuer.hostname === GOOGLE_HOST && !googleAnswersFor(claims, email)) return undefined;
  const vouched =
    verified === undefined
      ? isTrue(domainVerified) || issuer.hostname.endsWith(ACCESS_HOSTS)
      : isTrue(verified);
  return vouched ? emailKey(email) : undefined;
}

export async function openIdProvider(
  config: Config,
  auth: GateAuth,
  redirectUri: string,
  memory: SignInMemory,
  fresh = false,
): Promise<SignInAtProvider> {
  const as = await discover(config, auth, memory, fresh);
  const client: oauth.Client = { client_id: auth.idp.clientId };
  const clientAuth = clientAuthOf(as, auth.idp.clientSecret);
  const options = requestOptions(config, auth.idp.issuer);
  return {
    host: auth.idp.issuer.host,
    async authorizationUrl(state, verifier, nonce) {
      const url = new URL(as.authorization_endpoint as string);
      url.searchParams.set("client_id", client.client_id);
      url.searchParams.set("redirect_uri", redirectUri);
      url.searchParams.set("response_type", "code");
      url.searchParams.set("scope", scopesFor(as, auth));
      url.searchParams.set("code_challenge", await oauth.calculatePKCECodeChallenge(verifier));
      url.searchParams.set("code_challenge_method", "S256");
      url.searchParams.set("state", state);
      url.searchParams.set("nonce", nonce);
      return url;
    },
    async identify(callback, state, verifier, nonce): Promise<Identity> {
      const parameters = checkedCallback(
        as,
        client,
        callback,
        state,
        "The identity provider answered with an error, or not as itself",
      );
      const response = await attempt(
        "token_request_failed",
        "The identity provider could not be reached to exchange the code",
        () =>
          oauth.authorizationCodeGrantRequest(
            as,
            client,
            clientAuth,
            parameters,
            redirectUri,
            verifier,
            options,
          ),
      );
      const tokens = await oauth
        .processAuthorizationCodeResponse(as, client, response, {
          expectedNonce: nonce,
          requireIdToken: true,
        })
        .catch((error: unknown) => {
          // The provider's own error code (`invalid_grant`, …), or a token that proves nothing.
          const reason =
            error instanceof oauth.ResponseBodyError ? error.error : "id_token_refused";
          throw new UpstreamError(
            reason,
            "The identity provider's answer did not prove who signed in",
            error,
          );
        });
      await attempt(
        "id_token_signature",
        "The identity provider's ID token is not signed by its keys",
        () => oauth.validateApplicationLevelSignature(as, response, options),
      );
      const claims = oauth.getValidatedIdTokenClaims(tokens);
      if (!claims) {
        throw new UpstreamError("id_token_refused", "The identity provider sent no ID token");
      }
      const email = verifiedEmail(claims, auth.idp.issuer);
      return {
        issuer: as.issuer,
        subject: claims.sub,
        ...(email === undefined ? {} : { email }),
        groups: memberships(claims[auth.idp.groupsClaim]),
        orgs: [],
      };
    },
  };
}
