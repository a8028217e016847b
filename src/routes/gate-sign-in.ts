/**
 * Gate mode's sign-in behind the proxy (auth/gate.ts), as routes/authorize.ts
 * runs it: the consent page names the identity provider the user signs in at
 * next; Allow sends the browser there (code + PKCE, `state`, `nonce`); back
 * at `/oauth/callback`, the proxy learns who signed in (auth/idp.ts) and:
 *
 * - a user no `ALLOWED_*` list names, or whose only way in is an email the
 *   provider did not verify, or, when the origin is told each user's email
 *   (`ORIGIN_USER_HEADER`), with no verified email or one that is not a
 *   plain address, gets a page that says so (`403`), with a link that tells
 *   the client `access_denied`; nothing is stored, and the log names the
 *   address's domain at most;
 * - so does a user the origin has no key for (no key of their own in
 *   `ORIGIN_USER_SECRETS` and no `ORIGIN_SECRET`);
 * - an allowed user's grant is made (the identity in its props), and the
 *   page names them and the server, with the way on to the client (its
 *   redirect with the code) and a way out (`access_denied`).
 */
import type { OAuthHelpers } from "@cloudflare/workers-oauth-provider";
import { authorizationErrorRedirect } from "@cloudflare/workers-oauth-provider";
import type { Context } from "hono";
import * as oauth from "oauth4webapi";
import { PAGE_POLICY, signedInPage } from "../auth/consent-page";
import type { GateProps } from "../auth/gate";
import { type Admission, admission, domainOf, type Identity, userIdOf } from "../auth/identity";
import { identityProvider } from "../auth/idp";
import { originKeyFor } from "../auth/origin-key";
import { publicUrls } from "../auth/public-url";
import { UpstreamError } from "../auth/upstream-requests";
import type { GateAuth } from "../config";
import { logEvent } from "../log";
import type { AppEnv } from "./app-env";
import type { SignInBehind } from "./authorize";
import { type AuthRequest, answerValidated, errorPage, htmlPage } from "./sign-in-pages";

/**
 * The page for a user the proxy will not let in, with the client told
 * `access_denied`. The page (in the user's browser) names the account; what
 * the client is told does not: its redirect URL reaches the app, its logs,
 * and whoever the app sends it to.
 */
function refusal(request: AuthRequest, headers: Headers, message: string): Response {
  const back = authorizationErrorRedirect(
    request,
    "access_denied",
    "The account signed in with may not use this server",
  );
  return errorPage(403, message, headers, back);
}

type Refusal = Extract<Admission, { kind: "refused" }>["reason"];

/** How the pages name a user: their verified email, or their account at the provider. */
const nameOf = (identity: Identity, providerHost: string) =>
  identity.email ?? `your account at ${providerHost}`;

/**
 * What the refusal page says of `reason`. An address that is not a plain
 * one is not shown: the page would show it as the origin could not read it.
 */
function refusalText(reason: Refusal, providerHost: string, user: string, server: string) {
  if (reason === "unverified_email")
    return `${providerHost} gave no verified email address for this account, and ${server} needs one. Verify your address there, or ask the operator of this server.`;
  if (reason === "unpassable_email")
    return `The verified email address ${providerHost} gave for this account is not a plain address (printable ASCII, like name@example.com, with no spaces, commas or quotes), and ${server} must be told it as one. Sign in with another account, or ask the operator of this server.`;
  return `${user} may not use ${server}. Sign in with another account, or ask the operator of this server to let you in.`;
}

export function gateSignIn(
  c: Context<AppEnv>,
  auth: GateAuth,
  helpers: OAuthHelpers,
): SignInBehind {
  const config = c.get("config");
  const urls = publicUrls(config, new URL(c.req.url));
  const memory = c.get("isolate").signIn;
  const provider = () => identityProvider(config, auth, urls, memory);
  const server = `the MCP server at ${config.originUrl.host}`;
  return {
    async consentAccess() {
      const { host } = await provider();
      return {
        originHost: config.originUrl.host,
        originScopes: [],
        signInHost: host,
        signInIssuer: auth.idp.issuer.href,
      };
    },
    async signInData() {
      return { verifier: oauth.generateRandomCodeVerifier(), nonce: oauth.generateRandomNonce() };
    },
    async start(state, { verifier, nonce = "" }) {
      return (await provider()).authorizationUrl(state, verifier, nonce);
    },
    async finish({ request, data, headers }) {
      const url = new URL(c.req.url);
      try {
        const idp = await provider();
        const identity = await idp.identify(
          url,
          url.searchParams.get("state") ?? "",
          data.verifier,
          data.nonce ?? "",
        );
        const user = nameOf(identity, idp.host);
        const admitted = admission(auth.allowed, identity, auth.userHeader !== undefined);
        const domain = domainOf(identity.email);
        if (admitted.kind === "refused") {
          logEvent("sign_in_refused", {
            client: request.clientId,
            reason: admitted.reason,
            ...(domain === undefined ? {} : { domain }),
          });
          return refusal(request, headers, refusalText(admitted.reason, idp.host, user, server));
        }
        const key = await originKeyFor(auth, identity, memory);
        if (key.kind === "none") {
          logEvent("sign_in_refused", { client: request.clientId, reason: "no_origin_key" });
          return refusal(
            request,
            headers,
            `${server} has no key for ${user}. Ask the operator of this server to add one.`,
          );
        }
        if (key.kind === "failed") {
          throw new UpstreamError(
            "origin_key_unavailable",
            "The proxy could not read the origin's key; try again in a minute",
          );
        }
        const details = await helpers.describeConsent(request);
        const { redirectTo } = await helpers.completeAuthorization({
          request,
          userId: await userIdOf(identity),
          metadata: { issuer: identity.issuer },
          scope: request.scope,
          props: { gate: identity, signedInAt: Date.now() } satisfies GateProps,
        });
        logEvent("sign_in_completed", {
          client: request.clientId,
          issuer: identity.issuer,
          by: admitted.by,
        });
        const page = signedInPage({
          clientName: details.clientName,
          user,
          originHost: config.originUrl.host,
          proxyHost: new URL(urls.mcp).host,
          continueTo: redirectTo,
          cancelTo: authorizationErrorRedirect(request, "access_denied"),
        });
        return htmlPage(page, { headers, policy: PAGE_POLICY });
      } catch (error) {
        // The client's request was validated: it can be told, and stop waiting.
        return answerValidated("callback", request, error, headers);
      }
    },
  };
}
