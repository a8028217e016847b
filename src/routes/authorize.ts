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
 * it; every other error is rendered here. Log lines never carry a token, a
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
  authorizationUrl,
  CLIENT_METADATA_PATH,
  clientMetadata,
  exchangeCode,
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

function errorPage(status: number, message: string): Response {
  return new Response(
    `<!doctype html><meta charset="utf-8"><title>Sign-in failed</title><p>${escapeHtml(message)}</p>`,
    { status, headers: { "content-type": "text/html; charset=utf-8" } },
  );
}

const redirect = (location: string, headers: Headers) => {
  headers.set("location", location);
  return new Response(null, { status: 302, headers });
};

/** Renders or redirects an error as the library's consent guidance says. */
function answerError(error: unknown): Response {
  if (error instanceof AuthorizationError) {
    if (error.redirectTo) return Response.redirect(error.redirectTo, 302);
    return errorPage(400, error.description);
  }
  if (error instanceof CimdFetchError) return errorPage(400, "This app could not be verified.");
  if (error instanceof UpstreamError) {
    return errorPage(502, `Signing in at the origin failed: ${error.message}.`);
  }
  throw error;
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
  try {
    const request = await helpers.parseAuthRequest(c.req.raw);
    const details = await helpers.describeConsent(request);
    const upstream = await upstreamFor(
      config,
      auth,
      publicUrls(config, new URL(c.req.url)),
      c.req.raw.headers,
    );
    const consent = await helpers.beginConsent(request);
    consent.headers.set("content-type", "text/html; charset=utf-8");
    logEvent("sign_in_started", { client: request.clientId, redirectHost: details.redirectHost });
    const page = consentPage(details, consent.handle, {
      originHost: config.originUrl.host,
      originScopes: upstream.scope,
    });
    return new Response(page, { headers: consent.headers });
  } catch (error) {
    return answerError(error);
  }
}

export async function decideConsent(c: Context<AppEnv>): Promise<Response> {
  const broker = brokerOnly(c);
  if (broker instanceof Response) return broker;
  const { helpers, auth } = broker;
  const config = c.get("config");
  try {
    const form = await c.req.raw.formData();
    const handle = String(form.get("handle") ?? "");
    if (form.get("decision") !== "approve") {
      const denied = await helpers.denyConsent(c.req.raw, handle);
      logEvent("sign_in_denied", { client: denied.request.clientId, by: "user" });
      return redirect(denied.redirectTo, denied.headers);
    }
    const approved = await helpers.approveConsent(c.req.raw, handle);
    const upstream = await upstreamFor(
      config,
      auth,
      publicUrls(config, new URL(c.req.url)),
      c.req.raw.headers,
    );
    const verifier = oauth.generateRandomCodeVerifier();
    const { state, headers } = await helpers.beginUpstream(approved.request, {
      data: { verifier } satisfies SignInData,
      headers: approved.headers,
    });
    return redirect((await authorizationUrl(upstream, state, verifier)).href, headers);
  } catch (error) {
    return answerError(error);
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
    logEvent("sign_in_failed", { reason: "state" });
    return answerError(error);
  }
  const { request, headers } = resumed;
  const { verifier } = resumed.data as SignInData;
  if (url.searchParams.has("error")) {
    logEvent("sign_in_denied", { client: request.clientId, by: "origin" });
    return redirect(authorizationErrorRedirect(request, "access_denied"), headers);
  }
  try {
    const upstream = await upstreamFor(config, auth, publicUrls(config, url), c.req.raw.headers);
    const tokens = await exchangeCode(upstream, url, url.searchParams.get("state") ?? "", verifier);
    const { redirectTo } = await helpers.completeAuthorization({
      request,
      // The proxy learns no identity from the origin: each sign-in is its own user.
      userId: crypto.randomUUID(),
      metadata: { origin: config.originUrl.host },
      scope: request.scope,
      props: { upstream: tokens } satisfies BrokerProps,
    });
    logEvent("sign_in_completed", { client: request.clientId, issuer: upstream.as.issuer });
    return redirect(redirectTo, headers);
  } catch (error) {
    if (!(error instanceof UpstreamError)) throw error;
    logEvent("sign_in_failed", { client: request.clientId, reason: error.reason });
    // The client's request was validated: it can be told, and stop waiting.
    const location = authorizationErrorRedirect(
      request,
      "server_error",
      "Signing in at the origin failed",
    );
    return redirect(location, headers);
  }
}

export function clientMetadataDocument(c: Context<AppEnv>): Response {
  const urls = publicUrls(c.get("config"), new URL(c.req.url));
  return Response.json(clientMetadata(urls, `${new URL(urls.mcp).origin}${CLIENT_METADATA_PATH}`));
}
