/**
 * Gate mode's sign-in at GitHub (`IDP_PROTOCOL=github`), which speaks OAuth
 * but not OpenID Connect: there is no ID token, so who signed in is what
 * GitHub's user API says to the token the sign-in got.
 *
 * - `IDP_ISSUER` is GitHub's web host: `https://github.com` (the default),
 *   or a GitHub Enterprise Server's; the API is `https://api.github.com`, or
 *   the server's `/api/v3`.
 * - Authorization code with PKCE (S256) and `state`, as for OpenID Connect;
 *   the scopes are `read:user` and `user:email`, and `read:org` when
 *   `ALLOWED_ORGS` is set (else an organization's private members are not
 *   seen as members).
 * - The user is GitHub's numeric user ID; the email is the primary address,
 *   and only when GitHub says it is verified; the organizations are the
 *   first 100 `/user/orgs` lists. The token is used for these three requests
 *   and then dropped.
 */
import * as oauth from "oauth4webapi";
import { type Config, emailKey, type GateAuth } from "../config";
import { parseJson } from "../json";
import { readBounded } from "../transport/read-bounded";
import { type Identity, memberships } from "./identity";
import type { SignInAtProvider } from "./idp";
import { clientAuthOf } from "./upstream";
import { attempt, type RequestOptions, requestOptions, UpstreamError } from "./upstream-requests";
import { checkedCallback } from "./upstream-tokens";

/** The most of a GitHub API answer the proxy reads. */
const MAX_API_BYTES = 1024 * 1024;
const ORGS_PER_PAGE = 100;

/** GitHub's endpoints for a web host: github.com's own API host, or an Enterprise Server's `/api/v3`. */
function endpointsOf(issuer: URL) {
  const base = issuer.href.replace(/\/$/, "");
  return {
    as: {
      issuer: base,
      authorization_endpoint: `${base}/login/oauth/authorize`,
      token_endpoint: `${base}/login/oauth/access_token`,
    } satisfies oauth.AuthorizationServer,
    api: issuer.host === "github.com" ? "https://api.github.com" : `${base}/api/v3`,
  };
}

/** One GET of GitHub's API with the user's token: its JSON, read within `MAX_API_BYTES`. */
async function apiGet(
  api: string,
  path: string,
  token: string,
  options: RequestOptions,
): Promise<unknown> {
  const response = await attempt("github_unreachable", "GitHub's API could not be reached", () =>
    fetch(`${api}${path}`, {
      headers: {
        accept: "application/vnd.github+json",
        authorization: `Bearer ${token}`,
        // GitHub's API refuses a request without one.
        "user-agent": "mcp-edge-rewriter",
        "x-github-api-version": "2022-11-28",
      },
      // The user's token goes to the API the issuer names, and nowhere a redirect would take it.
      redirect: "manual",
      signal: options.signal(),
    }),
  );
  if (!response.ok || response.body === null) {
    await response.body?.cancel();
    throw new UpstreamError(
      "github_refused",
      "GitHub's API did not say who signed in",
      new Error(`${path}: ${response.status}`),
      response.status,
    );
  }
  const read = await readBounded(response.body, MAX_API_BYTES);
  if (read.kind !== "complete") {
    await read.rest.cancel();
    throw new UpstreamError("github_refused", "GitHub's API answered too much");
  }
  return parseJson(new TextDecoder().decode(read.bytes));
}

/** The primary address, when GitHub says it is verified. */
function primaryEmail(emails: unknown): string | undefined {
  if (!Array.isArray(emails)) return undefined;
  for (const entry of emails) {
    const { email, primary, verified } = (entry ?? {}) as Record<string, unknown>;
    if (primary === true && verified === true && typeof email === "string" && email.length <= 320)
      return emailKey(email);
  }
  return undefined;
}

export function gitHubProvider(
  config: Config,
  auth: GateAuth,
  redirectUri: string,
): SignInAtProvider {
  const { as, api } = endpointsOf(auth.idp.issuer);
  const client: oauth.Client = { client_id: auth.idp.clientId };
  const options = requestOptions(config, auth.idp.issuer);
  const checksOrgs = auth.allowed.orgs.size > 0;
  return {
    host: auth.idp.issuer.host,
    async authorizationUrl(state, verifier) {
      const url = new URL(as.authorization_endpoint);
      url.searchParams.set("client_id", client.client_id);
      url.searchParams.set("redirect_uri", redirectUri);
      url.searchParams.set("scope", `read:user user:email${checksOrgs ? " read:org" : ""}`);
      url.searchParams.set("code_challenge", await oauth.calculatePKCECodeChallenge(verifier));
      url.searchParams.set("code_challenge_method", "S256");
      url.searchParams.set("state", state);
      // Only an account GitHub knows may sign in: no sign-up on the way.
      url.searchParams.set("allow_signup", "false");
      return url;
    },
    async identify(callback, state, verifier): Promise<Identity> {
      const parameters = checkedCallback(
        as,
        client,
        callback,
        state,
        "GitHub answered with an error",
      );
      const response = await attempt(
        "token_request_failed",
        "GitHub could not be reached to exchange the code",
        () =>
          oauth.authorizationCodeGrantRequest(
            as,
            client,
            clientAuthOf(as, auth.idp.clientSecret),
            parameters,
            redirectUri,
            verifier,
            options,
          ),
      );
      // GitHub answers a refused code with 200 and an `error` member, which is no access token.
      const { access_token: token } = await attempt("code_refused", "GitHub refused the code", () =>
        oauth.processAuthorizationCodeResponse(as, client, response),
      );
      const [user, emails, orgs] = await Promise.all([
        apiGet(api, "/user", token, options),
        apiGet(api, "/user/emails", token, options),
        checksOrgs ? apiGet(api, `/user/orgs?per_page=${ORGS_PER_PAGE}`, token, options) : [],
      ]);
      const id = (user as { id?: unknown } | undefined)?.id;
      if (typeof id !== "number" && typeof id !== "string") {
        throw new UpstreamError("github_refused", "GitHub's API did not say who signed in");
      }
      const email = primaryEmail(emails);
      const logins = Array.isArray(orgs)
        ? orgs.map((org) => (org as { login?: unknown })?.login)
        : [];
      return {
        issuer: as.issuer,
        subject: String(id),
        ...(email === undefined ? {} : { email }),
        groups: [],
        orgs: memberships(logins, true),
      };
    },
  };
}
