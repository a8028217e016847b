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
import { escapeHtml } from "../auth/consent-page";
import { type BudgetRefusal, refusalText, type SignInWrite } from "../auth/sign-in-budget";
import { UpstreamError } from "../auth/upstream";
import { logEvent } from "../log";
import type { AppEnv } from "./app-env";

export function helpersOf(c: Context<AppEnv>): OAuthHelpers | undefined {
  return (c.env as Env & { OAUTH_PROVIDER?: OAuthHelpers }).OAUTH_PROVIDER;
}

export function errorPage(status: number, message: string, headers = new Headers(), back?: string) {
  headers.set("content-type", "text/html; charset=utf-8");
  const link = back === undefined ? "" : `<p><a href="${escapeHtml(back)}">Back to the app</a></p>`;
  return new Response(
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
 * A failure before the client's request is known good: the library's own
 * errors as it says to answer them, anything else as a page that says what
 * to do.
 */
export function answerUnvalidated(step: SignInStep, error: unknown): Response {
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
  return redirect(authorizationErrorRedirect(request, code, description), headers);
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
  headers.set("cache-control", "no-store");
  const back = authorizationErrorRedirect(request, "temporarily_unavailable", text);
  return errorPage(503, `${text}.`, headers, back);
}
