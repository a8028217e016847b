/**
 * Broker mode's pages (see auth/broker.ts), with workers-oauth-provider's
 * helpers doing the protocol:
 *
 * - `GET /authorize`: the client's authorization request, validated, and the
 *   consent page (with the library's browser-bound handle, no framing).
 * - `POST /authorize`: Deny sends `access_denied` back to the client; Allow,
 *   and only Allow, starts the sign-in at the origin (a `state` bound to this
 *   browser, PKCE).
 * - `GET /oauth/callback`: the origin's authorization server sends the browser
 *   back; the proxy checks `state` and `iss`, exchanges the code, and finishes
 *   the client's authorization with the origin's tokens in the grant's props.
 * - `GET /oauth/client-metadata.json`: the proxy's own Client ID Metadata
 *   Document, for authorization servers that accept one.
 *
 * Errors the client may be told about (its request was validated) redirect to
 * it; every other error is rendered here. A consent page or an Allow past the
 * day's budget of sign-in writes (auth/sign-in-budget.ts) is a page that says
 * so, with a link that tells the client. Log lines never carry a token, a
 * code or a secret.
 */
import {
  AuthorizationError,
  authorizationErrorRedirect,
  CimdFetchError,
  type OAuthHelpers,
} from "@cloudflare/workers-oauth-provider";
import type { Context } from "hono";
import * as oauth from "oauth4webapi";
import type { BrokerProps } from "../auth/broker";
import { consentPage, escapeHtml } from "../auth/consent-page";
import { publicUrls } from "../auth/public-url";
import {
  type BudgetRefusal,
  refusalText,
  type SignInWrite,
  takeSignInWrite,
} from "../auth/sign-in-budget";
import {
  authorizationUrl,
  CLIENT_METADATA_PATH,
  clientMetadata,
  exchangeCode,
  originWithoutQuery,
  UpstreamError,
  upstreamFor,
} from "../auth/upstream";
import type { BrokerAuth } from "../config";
import { logEvent } from "../log";
import type { AppEnv } from "./app-env";

/** What the proxy keeps across the sign-in at the origin, inside the library's encrypted transaction. */
interface SignInData {
  verifier: string;
}

function helpersOf(c: Context<AppEnv>): OAuthHelpers | undefined {
  return (c.env as Env & { OAUTH_PROVIDER?: OAuthHelpers }).OAUTH_PROVIDER;
}

function errorPage(status: number, message: string, headers = new Headers(), back?: string) {
  headers.set("content-type", "text/html; charset=utf-8");
  const link = back === undefined ? "" : `<p><a href="${escapeHtml(back)}">Back to the app</a></p>`;
  return new Response(
    `<!doctype html><meta charset="utf-8"><title>Sign-in failed</title><p>${escapeHtml(message)}</p>${link}`,
    { status, headers },
  );
}

const redirect = (location: string, headers: Headers = new Headers()) => {
  headers.set("location", location);
  return new Response(null, { status: 302, headers });
};

type SignInStep = "consent" | "approval" | "callback";

/** The log line of a failed sign-in: what failed and why, never a token, code or secret. */
function logFailure(step: SignInStep, error: unknown, client?: string): void {
  const cause = error instanceof Error ? (error.cause ?? error) : error;
  logEvent("sign_in_failed", {
    step,
    reason: error instanceof UpstreamError ? error.reason : "internal",
    detail: cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause),
    ...(client === undefined ? {} : { client }),
  });
}

/**
 * A failure before the client's request is known good: the library's own
 * errors as it says to answer them, anything else as a page that says what
 * to do.
 */
function answerUnvalidated(step: SignInStep, error: unknown): Response {
  if (error instanceof AuthorizationError) {
    if (error.redirectTo) return Response.redirect(error.redirectTo, 302);
    return errorPage(400, error.description);
  }
  if (error instanceof CimdFetchError) return errorPage(400, "This app could not be verified.");
  logFailure(step, error);
  return errorPage(
    503,
    "The proxy could not start the sign-in. Try again in a minute; if it keeps failing, tell the operator of this server.",
  );
}

/**
 * A failure once the client's request is known good: the client is told by
 * redirect (RFC 6749 §4.1.2.1), `temporarily_unavailable` before the user
 * signed in at the origin, `server_error` after.
 */
function answerValidated(
  step: SignInStep,
  request: AuthRequest,
  error: unknown,
  headers?: Headers,
): Response {
  logFailure(step, error, request.clientId);
  const code = step === "callback" ? "server_error" : "temporarily_unavailable";
  const description =
    error instanceof UpstreamError ? error.message : "The proxy could not complete the sign-in";
  return redirect(authorizationErrorRedirect(request, code, description), headers);
}

type AuthRequest = Parameters<OAuthHelpers["beginConsent"]>[0];

/**
 * A write the day's budget refused, for a request known good: a page for the
 * user, `503` with `Retry-After`, and a link that sends the client
 * `temporarily_unavailable`, so that it stops waiting.
 */
function budgetPage(
  request: AuthRequest,
  write: SignInWrite,
  refusal: BudgetRefusal,
  headers = new Headers(),
): Response {
  const text = refusalText(refusal, write);
  headers.set("retry-after", String(refusal.retryAfter));
  headers.set("cache-control", "no-store");
  const back = authorizationErrorRedirect(request, "temporarily_unavailable", text);
  return errorPage(503, `${text}.`, headers, back);
}

/** The origin's sign-in, for the proxy's URL this request came to. */
function upstreamOf(c: Context<AppEnv>, auth: BrokerAuth) {
  const config = c.get("config");
  const urls = publicUrls(config, new URL(c.req.url));
  return upstreamFor(config, auth, urls, c.req.raw.headers, c.get("isolate").signIn);
}

/** The routes exist in broker mode only: the library puts its helpers on `env`. */
function brokerOnly(c: Context<AppEnv>): { helpers: OAuthHelpers; auth: BrokerAuth } | Response {
  const helpers = helpersOf(c);
  const { auth } = c.get("config");
  if (auth.mode !== "broker" || !helpers) {
    return Response.json({ error: "Sign-in pages exist in broker mode only" }, { status: 404 });
  }
  return { helpers, auth };
}

export async function showConsent(c: Context<AppEnv>): Promise<Response> {
  const broker = brokerOnly(c);
  if (broker instanceof Response) return broker;
  const { helpers, auth } = broker;
  const config = c.get("config");
  let request: AuthRequest;
  let details: Awaited<ReturnType<OAuthHelpers["describeConsent"]>>;
  try {
    request = await helpers.parseAuthRequest(c.req.raw);
    details = await helpers.describeConsent(request);
  } catch (error) {
    return answerUnvalidated("consent", error);
  }
  try {
    const upstream = await upstreamOf(c, auth);
    const refused = await takeSignInWrite(auth, c.get("isolate").signIn.budget, "consent");
    if (refused) return budgetPage(request, "consent", refused);
    const consent = await helpers.beginConsent(request);
    consent.headers.set("content-type", "text/html; charset=utf-8");
    logEvent("sign_in_started", { client: request.clientId, redirectHost: details.redirectHost });
    const page = consentPage(details, consent.handle, {
      originHost: config.originUrl.host,
      originScopes: upstream.scope,
    });
    return new Response(page, { headers: consent.headers });
  } catch (error) {
    return answerValidated("consent", request, error);
  }
}

export async function decideConsent(c: Context<AppEnv>): Promise<Response> {
  const broker = brokerOnly(c);
  if (broker instanceof Response) return broker;
  const { helpers, auth } = broker;
  let approved: Awaited<ReturnType<OAuthHelpers["approveConsent"]>>;
  try {
    const form = await c.req.raw.formData();
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
  try {
    const upstream = await upstreamOf(c, auth);
    const refused = await takeSignInWrite(auth, c.get("isolate").signIn.budget, "approval");
    if (refused) return budgetPage(approved.request, "approval", refused, approved.headers);
    const verifier = oauth.generateRandomCodeVerifier();
    const { state, headers } = await helpers.beginUpstream(approved.request, {
      data: { verifier } satisfies SignInData,
      headers: approved.headers,
    });
    return redirect((await authorizationUrl(upstream, state, verifier)).href, headers);
  } catch (error) {
    return answerValidated("approval", approved.request, error, approved.headers);
  }
}

export async function finishSignIn(c: Context<AppEnv>): Promise<Response> {
  const broker = brokerOnly(c);
  if (broker instanceof Response) return broker;
  const { helpers, auth } = broker;
  const config = c.get("config");
  const url = new URL(c.req.url);
  let resumed: Awaited<ReturnType<OAuthHelpers["finishUpstream"]>>;
  try {
    // Refuses a state this browser did not start, or one already used.
    resumed = await helpers.finishUpstream<SignInData>(c.req.raw);
  } catch (error) {
    if (error instanceof AuthorizationError) logEvent("sign_in_failed", { reason: "state" });
    return answerUnvalidated("callback", error);
  }
  const { request, headers } = resumed;
  const { verifier } = resumed.data as SignInData;
  if (url.searchParams.has("error")) {
    logEvent("sign_in_denied", { client: request.clientId, by: "origin" });
    return redirect(authorizationErrorRedirect(request, "access_denied"), headers);
  }
  try {
    const upstream = await upstreamOf(c, auth);
    const tokens = await exchangeCode(upstream, url, url.searchParams.get("state") ?? "", verifier);
    const { redirectTo } = await helpers.completeAuthorization({
      request,
      // The proxy learns no identity from the origin: each sign-in is its own user.
      userId: crypto.randomUUID(),
      metadata: { origin: config.originUrl.host },
      scope: request.scope,
      props: {
        upstream: tokens,
        origin: originWithoutQuery(config.originUrl),
        caller: crypto.randomUUID(),
      } satisfies BrokerProps,
    });
    logEvent("sign_in_completed", { client: request.clientId, issuer: upstream.as.issuer });
    return redirect(redirectTo, headers);
  } catch (error) {
    // The client's request was validated: it can be told, and stop waiting.
    return answerValidated("callback", request, error, headers);
  }
}

export function clientMetadataDocument(c: Context<AppEnv>): Response {
  const urls = publicUrls(c.get("config"), new URL(c.req.url));
  return Response.json(clientMetadata(urls, `${new URL(urls.mcp).origin}${CLIENT_METADATA_PATH}`));
}
