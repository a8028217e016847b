/**
 * What the consent page showed of where the user signs in next, kept with
 * the client's request in workers-oauth-provider's consent transaction (the
 * library keeps the request it is given, encrypted in `OAUTH_KV` under the
 * handle the page's form posts back, and gives it back on Allow), never read
 * from the form. Allow goes on only to the server the page showed: in broker
 * mode without `UPSTREAM_ISSUER` the origin names it, and may name another
 * between the page and the Allow, which may reach an isolate that discovers
 * it anew. Pure.
 */
import type { AuthRequest } from "@cloudflare/workers-oauth-provider";
import { isPlainObject } from "../json";
import type { ConsentAccess } from "./consent-page";

/**
 * Where the page said the user signs in next: the server, by its issuer,
 * and the host of its sign-in page, which the page names where it is
 * another than the issuer's (consent-page.ts). Allow follows only both.
 */
export interface ShownSignIn {
  issuer: string;
  host: string;
}

/** The member of the kept request that holds it: no member of the library's own. */
const SHOWN = "edgeRewriterShownSignIn";

/** The request to keep in the consent transaction: the client's, with where its page says the user signs in. */
export function keptForConsent(request: AuthRequest, access: ConsentAccess): AuthRequest {
  const shown: ShownSignIn = { issuer: access.signInIssuer, host: access.signInHost };
  return { ...request, [SHOWN]: shown } as AuthRequest;
}

/**
 * The approved request as the library's other helpers are given it, and what
 * its page showed; `shown` undefined where the transaction kept nothing (a
 * page from a version before this was kept), which no server matches.
 */
export function approvedOf(kept: AuthRequest): { request: AuthRequest; shown?: ShownSignIn } {
  const { [SHOWN]: shown, ...request } = kept as AuthRequest & Record<typeof SHOWN, unknown>;
  if (!isPlainObject(shown)) return { request };
  const { issuer, host } = shown;
  return typeof issuer === "string" && typeof host === "string"
    ? { request, shown: { issuer, host } }
    : { request };
}

/** Whether the user would sign in at `access`, the server the page showed. */
export const wasShown = (shown: ShownSignIn | undefined, access: ConsentAccess) =>
  shown?.issuer === access.signInIssuer && shown.host === access.signInHost;
