/**
 * The sign-in pages of broker and gate mode (auth/provider.ts), with
 * workers-oauth-provider's helpers doing the protocol:
 *
 * - `GET /authorize`: the client's authorization request, validated, and the
 *   consent page (with the library's browser-bound handle, no framing).
 * - `POST /authorize`: Deny sends `access_denied` back to the client; Allow,
 *   and only Allow, starts the sign-in behind the proxy (a `state` bound to
 *   this browser, PKCE): at the origin's authorization server (broker, for the
 *   scopes its metadata names and the client's `origin:` ones), or
 *   at the operator's identity provider (gate, routes/gate-sign-in.ts); at
 *   the one the consent page named, or nowhere (auth/consent-shown.ts).
 * - `GET /oauth/callback`: the browser comes back; the library checks
 *   `state`, and each mode finishes: broker mode exchanges the code and
 *   finishes the client's authorization with the origin's tokens in the
 *   grant's props; gate mode learns who signed in and whether they may.
 * - `GET /oauth/client-metadata.json`: the proxy's own Client ID Metadata
 *   Document, for authorization servers that accept one (broker mode).
 *
 * A consent page or an Allow past the day's budget of sign-in writes
 * (auth/sign-in-budget.ts) is a page that says so, with a link that tells
 * the client.
 */
import {
  AuthorizationError,
  authorizationErrorRedirect,
  type OAuthHelpers,
  type ResumedUpstream,
} from "@cloudflare/workers-oauth-provider";
import type { Context } from "hono";
import * as oauth from "oauth4webapi";
import type { BrokerProps } from "../auth/broker";
import { authorizeClientIdRefused } from "../auth/client-ids";
import {
  CONSENT_POLICY,
  type ConsentAccess,
  consentPage,
  serverInWords,
} from "../auth/consent-page";
import { approvedOf, keptForConsent, type ShownSignIn, wasShown } from "../auth/consent-shown";
import { publicUrls } from "../auth/public-url";
import { MAX_ORIGIN_SCOPES, MAX_SCOPE_LENGTH } from "../auth/scope-tokens";
import { takeSignInWrite } from "../auth/sign-in-budget";
import { askedOriginScopes, withheldAtOrigin, withoutWithheld } from "../auth/step-up";
import {
  CLIENT_METADATA_PATH,
  clientMetadata,
  originWithoutQuery,
  type Upstream,
  upstreamFor,
} from "../auth/upstream";
import { UpstreamError } from "../auth/upstream-requests";
import { authorizationUrl, exchangeCode } from "../auth/upstream-tokens";
import type { BrokerAuth, SignInAuth } from "../config";
import { logEvent } from "../log";
import type { AppEnv } from "./app-env";
import { gateSignIn } from "./gate-sign-in";
import {
  type AuthRequest,
  answerUnvalidated,
  answerValidated,
  budgetPage,
  errorPage,
  helpersOf,
  htmlPage,
  logFailure,
  redirect,
} from "./sign-in-pages";

/** What the proxy keeps across the sign-in behind it, inside the library's encrypted transaction. */
export interface SignInData {
  verifier: string;
  /** Gate mode, OpenID Connect: the `nonce` the ID token must carry. */
  nonce?: string;
  /**
   * Broker mode: the issuer of the authorization server the browser is sent
   * to, the only one its code goes to (RFC 9207 §2.4: the one the request
   * was sent to, not the one the origin's metadata names when it is back).
   */
  issuer?: string;
  /**
   * Broker mode: the scopes the browser asks that server for: those the
   * origin's metadata names, and the client's `origin:` ones (auth/step-up.ts).
   * Absent in a sign-in started before they were kept: the metadata's.
   */
  scope?: string[];
}

/** What differs between the modes' sign-ins behind the proxy. */
export interface SignInBehind {
  /** What the consent page says of where access goes and where the user signs in next, for the client's `request`. */
  consentAccess(request: AuthRequest): Promise<ConsentAccess>;
  /** What the sign-in behind keeps until the browser is back, for the client's `request`: made fresh for each. */
  signInData(request: AuthRequest): Promise<SignInData>;
  /** Where the browser signs in, for the `state` the library issued. */
  start(state: string, data: SignInData): Promise<URL>;
  /** The browser is back, with `state` checked: the answer for it. */
  finish(resumed: ResumedUpstream<SignInData>): Promise<Response>;
}

/** Broker mode: the origin's authorization server, for the proxy's URL this request came to. */
function brokerSignIn(c: Context<AppEnv>, auth: BrokerAuth, helpers: OAuthHelpers): SignInBehind {
  const config = c.get("config");
  // One discovery a request: the server Allow checks is the one it sends the browser to.
  let found: Promise<Upstream> | undefined;
  const upstream = () => {
    found ??= upstreamFor(
      config,
      auth,
      publicUrls(config, new URL(c.req.url)),
      c.req.raw.headers,
      c.get("isolate").signIn,
    );
    return found;
  };
  /** Of the origin's scopes the client asks for (`origin:<scope>`), those its metadata does not name. */
  const askedBeyond = (request: AuthRequest, named: readonly string[]) =>
    (askedOriginScopes(request.scope) ?? []).filter((scope) => !named.includes(scope));
  return {
    async consentAccess(request) {
      const { scope, as } = await upstream();
      const signInHost = new URL(as.authorization_endpoint as string).host;
      return {
        originHost: config.originUrl.host,
        originScopes: scope,
        askedScopes: askedBeyond(request, scope),
        signInHost,
        signInIssuer: as.issuer,
      };
    },
    async signInData(request) {
      const { as, scope } = await upstream();
      return {
        verifier: oauth.generateRandomCodeVerifier(),
        issuer: as.issuer,
        scope: [...scope, ...askedBeyond(request, scope)],
      };
    },
    async start(state, { verifier, scope }) {
      const origin = await upstream();
      return authorizationUrl(origin, state, verifier, scope ?? origin.scope);
    },
    async finish({ request, data, headers }) {
      const url = new URL(c.req.url);
      try {
        const origin = await upstream();
        if (data.issuer !== undefined && data.issuer !== origin.as.issuer) {
          // The origin names another authorization server now: the code is the first one's.
          throw new UpstreamError(
            "issuer_changed",
            "The origin named another authorization server during the sign-in; sign in again",
            new Error(`signed in at ${data.issuer}, the origin now names ${origin.as.issuer}`),
          );
        }
        const asked = askedOriginScopes(request.scope) ?? [];
        const tokens = await exchangeCode(
          origin,
          url,
          url.searchParams.get("state") ?? "",
          data.verifier,
          asked,
        );
        const { redirectTo } = await helpers.completeAuthorization({
          request,
          // The proxy learns no identity from the origin: each sign-in is its own user.
          userId: crypto.randomUUID(),
          metadata: { origin: config.originUrl.host },
          // The origin's scopes its authorization server did not grant are not the grant's either.
          scope: withoutWithheld(request.scope, tokens.scope),
          props: {
            upstream: tokens,
            origin: originWithoutQuery(config.originUrl),
            issuer: origin.as.issuer,
            caller: crypto.randomUUID(),
          } satisfies BrokerProps,
        });
        const withheld = withheldAtOrigin(asked, tokens.scope);
        logEvent("sign_in_completed", {
          client: request.clientId,
          issuer: origin.as.issuer,
          ...(withheld.length === 0 ? {} : { withheld: withheld.join(" ") }),
        });
        return redirect(redirectTo, headers);
      } catch (error) {
        // The client's request was validated: it can be told, and stop waiting.
        return answerValidated("callback", request, error, headers);
      }
    },
  };
}

/** The routes exist where the proxy signs clients in: the library puts its helpers on `env`. */
function signInOnly(
  c: Context<AppEnv>,
): { helpers: OAuthHelpers; auth: SignInAuth; behind: SignInBehind } | Response {
  const helpers = helpersOf(c);
  const { auth } = c.get("config");
  if (auth.mode === "relay" || !helpers) {
    return Response.json(
      { error: "Sign-in pages exist in broker and gate mode only" },
      { status: 404 },
    );
  }
  const behind =
    auth.mode === "gate" ? gateSignIn(c, auth, helpers) : brokerSignIn(c, auth, helpers);
  return { helpers, auth, behind };
}

/**
 * Why a validated request may not sign in: without PKCE. The library asks it
 * of clients without a secret only; OAuth 2.1 (§4.1.1) has the server
 * enforce it for every client that is not an OpenID Connect one, which none
 * of the proxy's is. Anyone may register a client with a secret, and without
 * PKCE nothing binds its code to the session that asked for it: a code
 * stolen on its way back can be injected into another's session at that
 * client (RFC 9700 §4.5). MCP clients use PKCE (S256) whatever they are.
 */
function withoutPkce(request: AuthRequest): AuthorizationError | undefined {
  if (request.codeChallenge !== undefined) return undefined;
  return refusal(
    request,
    "invalid_request",
    "PKCE is required: send code_challenge with code_challenge_method S256",
  );
}

/**
 * Why broker mode may not ask the origin for the scopes `request` asks for
 * as the origin's (`origin:<scope>`, auth/step-up.ts): one is no scope
 * token, or they pass the bounds, which those a `403` of the proxy's names
 * never do.
 */
function unaskableScopes(request: AuthRequest, auth: SignInAuth): AuthorizationError | undefined {
  if (auth.mode !== "broker" || askedOriginScopes(request.scope) !== undefined) return undefined;
  return refusal(
    request,
    "invalid_scope",
    `The origin's scopes (origin:<scope>) must be scope tokens of at most ${MAX_SCOPE_LENGTH} characters, at most ${MAX_ORIGIN_SCOPES} of them`,
  );
}

/** A validated request's refusal, sent back to its client. */
const refusal = (
  request: AuthRequest,
  code: "invalid_request" | "invalid_scope",
  description: string,
) =>
  new AuthorizationError(code, {
    description,
    redirectUri: request.redirectUri,
    ...(request.state ? { state: request.state } : {}),
    ...(request.issuer === undefined ? {} : { issuer: request.issuer }),
  });

export async function showConsent(c: Context<AppEnv>): Promise<Response> {
  const signIn = signInOnly(c);
  if (signIn instanceof Response) return signIn;
  const { helpers, auth, behind } = signIn;
  // Before the library reads it: one it cannot resolve, it writes to the log whole (auth/client-ids.ts).
  const unreadable = authorizeClientIdRefused(new URL(c.req.url));
  if (unreadable) return errorPage(400, `${unreadable}.`);
  let request: AuthRequest;
  let details: Awaited<ReturnType<OAuthHelpers["describeConsent"]>>;
  try {
    request = await helpers.parseAuthRequest(c.req.raw);
    const invalid = withoutPkce(request) ?? unaskableScopes(request, auth);
    if (invalid) throw invalid;
    details = await helpers.describeConsent(request);
  } catch (error) {
    return answerUnvalidated("consent", error);
  }
  try {
    const access = await behind.consentAccess(request);
    const refused = await takeSignInWrite(auth, c.get("isolate").signIn.budget, "consent");
    if (refused) return budgetPage(request, "consent", refused);
    const consent = await helpers.beginConsent(keptForConsent(request, access));
    logEvent("sign_in_started", { client: request.clientId, redirectHost: details.redirectHost });
    return htmlPage(consentPage(details, consent.handle, access), {
      headers: consent.headers,
      policy: CONSENT_POLICY,
      postsBack: true,
    });
  } catch (error) {
    return answerValidated("consent", request, error);
  }
}

export async function decideConsent(c: Context<AppEnv>): Promise<Response> {
  const signIn = signInOnly(c);
  if (signIn instanceof Response) return signIn;
  const { helpers, auth, behind } = signIn;
  // A body that is no form (JSON, none) is the sender's mistake, not an outage to retry.
  const form = await c.req.raw.formData().catch(() => undefined);
  if (form === undefined) {
    return errorPage(
      400,
      "This request was not a form: the consent page sends its answer as one. Go back to the app and sign in again.",
    );
  }
  let approved: Awaited<ReturnType<OAuthHelpers["approveConsent"]>>;
  try {
    const handle = String(form.get("handle") ?? "");
    if (form.get("decision") !== "approve") {
      const denied = await helpers.denyConsent(c.req.raw, handle);
      logEvent("sign_in_denied", { client: denied.request.clientId, by: "user" });
      return redirect(denied.redirectTo, denied.headers);
    }
    approved = await helpers.approveConsent(c.req.raw, handle);
  } catch (error) {
    return answerUnvalidated("approval", error);
  }
  const { request, shown } = approvedOf(approved.request);
  try {
    // Before the write: a sign-in that cannot start costs none.
    const access = await behind.consentAccess(request);
    if (!wasShown(shown, access)) return notShown(request, shown, access, approved.headers);
    const refused = await takeSignInWrite(auth, c.get("isolate").signIn.budget, "approval");
    if (refused) return budgetPage(request, "approval", refused, approved.headers);
    const data = await behind.signInData(request);
    const { state, headers } = await helpers.beginUpstream(request, {
      data,
      headers: approved.headers,
    });
    return redirect((await behind.start(state, data)).href, headers);
  } catch (error) {
    return answerValidated("approval", request, error, approved.headers);
  }
}

/**
 * An Allow whose sign-in is now at another server than its consent page
 * showed: a page that says so, with a link that tells the client, and no
 * redirect, since the user agreed to be sent to the server shown, not to this one.
 */
function notShown(
  request: AuthRequest,
  shown: ShownSignIn | undefined,
  access: ConsentAccess,
  headers: Headers,
): Response {
  const now = `${access.signInIssuer} (${access.signInHost})`;
  logFailure(
    "approval",
    new UpstreamError(
      "server_not_shown",
      "The origin named another authorization server than the consent page showed",
      new Error(
        shown === undefined
          ? `the consent page kept no server, the origin now names ${now}`
          : `the consent page showed ${shown.issuer} (${shown.host}), the origin now names ${now}`,
      ),
    ),
    request.clientId,
  );
  const back = authorizationErrorRedirect(
    request,
    "temporarily_unavailable",
    "The origin named another authorization server than the consent page showed; sign in again",
  );
  const page =
    shown === undefined
      ? "This consent page is from before an update of this server."
      : `You allowed signing in with ${serverInWords(shown.issuer, shown.host)}, but the MCP server behind this proxy now names ${serverInWords(access.signInIssuer, access.signInHost)}.`;
  return errorPage(
    409,
    `${page} You were not sent there. Go back to the app and sign in again to see where you would sign in.`,
    headers,
    back,
  );
}

export async function finishSignIn(c: Context<AppEnv>): Promise<Response> {
  const signIn = signInOnly(c);
  if (signIn instanceof Response) return signIn;
  const { helpers, auth, behind } = signIn;
  let resumed: ResumedUpstream<SignInData>;
  try {
    // Refuses a state this browser did not start, or one already used.
    resumed = await helpers.finishUpstream<SignInData>(c.req.raw);
  } catch (error) {
    if (error instanceof AuthorizationError) logEvent("sign_in_failed", { reason: "state" });
    return answerUnvalidated("callback", error);
  }
  const { request, headers } = resumed;
  if (new URL(c.req.url).searchParams.has("error")) {
    const by = auth.mode === "gate" ? "identity_provider" : "origin";
    logEvent("sign_in_denied", { client: request.clientId, by });
    return redirect(authorizationErrorRedirect(request, "access_denied"), headers);
  }
  return behind.finish(resumed);
}

export function clientMetadataDocument(c: Context<AppEnv>): Response {
  const urls = publicUrls(c.get("config"), new URL(c.req.url));
  return Response.json(clientMetadata(urls, `${new URL(urls.mcp).origin}${CLIENT_METADATA_PATH}`));
}
