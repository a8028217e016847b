/**
 * What the sign-in pages of broker and gate mode share (routes/authorize.ts,
 * routes/gate-sign-in.ts): the library's helpers, the error pages, and how a
 * failure is told. Errors the client may be told about (its request was
 * validated) redirect to it; every other error is rendered here. Log lines
 * never carry a token, a code or a secret.
 */
import {
  AuthorizationError,
  authorizationErrorRedirect,
  CimdFetchError,
  type OAuthHelpers,
} from "@cloudflare/workers-oauth-provider";
import type { Context } from "hono";
import { BARE_POLICY, escapeHtml } from "../auth/consent-page";
import { type BudgetRefusal, refusalText, type SignInWrite } from "../auth/sign-in-budget";
import { UpstreamError } from "../auth/upstream-requests";
import { isLoopbackHost } from "../config";
import { logEvent } from "../log";
import type { AppEnv } from "./app-env";

export function helpersOf(c: Context<AppEnv>): OAuthHelpers | undefined {
  return (c.env as Env & { OAUTH_PROVIDER?: OAuthHelpers }).OAUTH_PROVIDER;
}

export interface PageOptions {
  status?: number;
  /** Headers of its own (the library's cookies, `Retry-After`), to which the page's are added. */
  headers?: Headers;
  /** Its Content-Security-Policy (auth/consent-page.ts): what it loads and runs; none by default. */
  policy?: string;
  /**
   * Whether it posts a form back to the proxy (the consent page): a browser
   * sends such a POST from a `no-referrer` page with `Origin: null`, which
   * `ALLOWED_HOSTS` refuses, so its Referer goes to the proxy alone instead.
   */
  postsBack?: boolean;
}

/**
 * Every page the proxy serves itself (the consent page, gate mode's
 * signed-in page, the error pages), with the headers each has: it loads and
 * runs only what `policy` allows and no other site frames it
 * (`X-Frame-Options` for browsers that ignore `frame-ancestors`), no browser
 * reads it as anything but HTML, its URL (which holds the client's request:
 * its state, its PKCE challenge) goes in no Referer to another site, and no
 * cache keeps it: each answers one sign-in.
 */
export function htmlPage(
  html: string,
  {
    status = 200,
    headers = new Headers(),
    policy = BARE_POLICY,
    postsBack = false,
  }: PageOptions = {},
): Response {
  headers.set("content-type", "text/html; charset=utf-8");
  headers.set("content-security-policy", policy);
  headers.set("x-frame-options", "DENY");
  headers.set("x-content-type-options", "nosniff");
  headers.set("referrer-policy", postsBack ? "same-origin" : "no-referrer");
  headers.set("cache-control", "no-store");
  return new Response(html, { status, headers });
}

/** A page that says what failed; with `back`, the way to the app, naming the host it is at. */
export function errorPage(status: number, message: string, headers = new Headers(), back?: string) {
  const link =
    back === undefined
      ? ""
      : `<p><a href="${escapeHtml(back)}">Back to the app at ${escapeHtml(new URL(back).hostname)}</a></p>`;
  return htmlPage(
    `<!doctype html><meta charset="utf-8"><title>Sign-in failed</title><p>${escapeHtml(message)}</p>${link}`,
    { status, headers },
  );
}

export const redirect = (location: string, headers: Headers = new Headers()) => {
  headers.set("location", location);
  return new Response(null, { status: 302, headers });
};

export type SignInStep = "consent" | "approval" | "callback";

/** The log line of a failed sign-in: what failed and why, never a token, code or secret. */
export function logFailure(step: SignInStep, error: unknown, client?: string): void {
  const cause = error instanceof Error ? (error.cause ?? error) : error;
  logEvent("sign_in_failed", {
    step,
    reason: error instanceof UpstreamError ? error.reason : "internal",
    detail: cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause),
    ...(client === undefined ? {} : { client }),
  });
}

/**
 * The client told of a failure before the user has seen the consent page,
 * which names where the client's access goes: a redirect when that is an app
 * on the user's computer, which no web page can be; else a page that says
 * what failed, with the way back to the app. Anyone can register a client
 * with any https redirect URI, so a redirect there without the user would
 * make the proxy's host send anyone anywhere (RFC 9700 §4.11.2).
 */
function toClientUnseen(
  status: number,
  redirectTo: string,
  message: string,
  headers = new Headers(),
): Response {
  if (isLoopbackHost(new URL(redirectTo).hostname)) return redirect(redirectTo, headers);
  return errorPage(status, message, headers, redirectTo);
}

/**
 * A failure before the client's request is known good: the library's own
 * errors as it says to answer them, but one it would redirect to the client
 * as `toClientUnseen` does; anything else as a page that says what to do.
 */
export function answerUnvalidated(step: SignInStep, error: unknown): Response {
  if (error instanceof AuthorizationError) {
    if (error.redirectTo) return toClientUnseen(400, error.redirectTo, error.description);
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
 * signed in at the origin, `server_error` after; before the consent page, as
 * `toClientUnseen` tells it.
 */
export function answerValidated(
  step: SignInStep,
  request: AuthRequest,
  error: unknown,
  headers?: Headers,
): Response {
  logFailure(step, error, request.clientId);
  const code = step === "callback" ? "server_error" : "temporarily_unavailable";
  const description =
    error instanceof UpstreamError ? error.message : "The proxy could not complete the sign-in";
  const redirectTo = authorizationErrorRedirect(request, code, description);
  if (step === "consent") return toClientUnseen(503, redirectTo, `${description}.`, headers);
  return redirect(redirectTo, headers);
}

export type AuthRequest = Parameters<OAuthHelpers["beginConsent"]>[0];

/**
 * A write the day's budget refused, for a request known good: a page for the
 * user, `503` with `Retry-After`, and a link that sends the client
 * `temporarily_unavailable`, so that it stops waiting.
 */
export function budgetPage(
  request: AuthRequest,
  write: SignInWrite,
  refusal: BudgetRefusal,
  headers = new Headers(),
): Response {
  const text = refusalText(refusal, write);
  headers.set("retry-after", String(refusal.retryAfter));
  const back = authorizationErrorRedirect(request, "temporarily_unavailable", text);
  return errorPage(503, `${text}.`, headers, back);
}
