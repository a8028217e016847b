/**
 * The pages of broker and gate mode's sign-in. The consent page: which
 * client is asking, where its access goes, and what it gets, with Allow and
 * Deny, before the browser goes anywhere else. Gate mode's signed-in page:
 * who the identity provider signed in, for which server, with the way on
 * to the client. Server-rendered HTML; the consent page's one script turns
 * Allow on for a gesture on the page (auth/consent-gesture.ts), the signed-in
 * page has none. Everything that came
 * from the client (its name, domain, redirect host), from the origin (its
 * scopes, its authorization server) or from the provider (the user's email)
 * is escaped: a dynamically
 * registered client chooses its own name, shown cut to a name's length.
 * Pure.
 *
 * What the page must show follows the MCP authorization specification and
 * workers-oauth-provider's consent-page guidance: the client's name, its
 * verified domain for a Client ID Metadata Document client, the redirect
 * URI's host with a warning when it is local, and what access means.
 */
import type { ConsentDescription } from "@cloudflare/workers-oauth-provider";
import { withoutDirectionControls } from "../direction-controls";
import { ALLOW_ID, ALLOW_SCRIPT, ALLOW_SCRIPT_SOURCE } from "./consent-gesture";

/**
 * The pages' Content-Security-Policy: their own inline style and nothing else
 * loads or runs, and no other site frames them (clickjacking Allow). Every
 * client's text is escaped; this holds were one ever to slip out as markup.
 * No `form-action`: Chrome applies it to the redirect after Allow. The
 * signed-in page's whole policy; the consent page's runs its one script too.
 */
export const PAGE_POLICY = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'";

/** An error page's (routes/sign-in-pages.ts), which has no style: nothing loads or runs at all. */
export const BARE_POLICY = "default-src 'none'; frame-ancestors 'none'";

/** The consent page's: `PAGE_POLICY`, and its one script by its hash. */
export const CONSENT_POLICY = `${PAGE_POLICY}; script-src ${ALLOW_SCRIPT_SOURCE}`;

export const escapeHtml = (value: string) =>
  value.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);

/**
 * The most of a client's name the pages show, in characters. Clients' names
 * are short ("Claude Code", "Visual Studio Code"); one the length of a page
 * would be the page, its own lines above the true ones (where access goes).
 */
const MAX_SHOWN_NAME = 64;

/**
 * A client's name as the pages show it: without direction controls, at most
 * `MAX_SHOWN_NAME` characters, cut with "…".
 */
export function shownName(name: string): string {
  // In a client's name they would turn the page's words after it around.
  const shown = withoutDirectionControls(name).trim();
  const characters = Array.from(shown);
  return characters.length <= MAX_SHOWN_NAME
    ? shown
    : `${characters.slice(0, MAX_SHOWN_NAME - 1).join("")}…`;
}

export interface ConsentAccess {
  /** The host of the MCP server behind the proxy. */
  originHost: string;
  /** The scopes the proxy will ask the origin's authorization server for, as its metadata names them. */
  originScopes: readonly string[];
  /**
   * Broker mode: the scopes it will ask for besides, because the app asks
   * for them as the origin's (`origin:<scope>`, step-up.ts), as the origin's
   * `403` named them to it; none when absent.
   */
  askedScopes?: readonly string[];
  /**
   * Who the user signs in with next, by its issuer identifier: the origin's
   * authorization server (broker), the identity provider (gate). What the
   * sign-in brings back is handed to it, so this is what the user trusts.
   */
  signInIssuer: string;
  /** The host of its sign-in page, where Allow sends the browser. */
  signInHost: string;
}

/**
 * Whether `host`, a server's sign-in page's, is another than its issuer's
 * own. RFC 8414 lets a server's metadata name its endpoints on any host, so
 * this is no error (Amazon Cognito's sign-in page is on another host than
 * its issuer); but without `UPSTREAM_ISSUER` the origin names the server,
 * and one of its own may put its sign-in page on a host users trust
 * (accounts.google.com, with a client there that is its own) while the
 * code comes back to it: the page then says so, not that host alone.
 */
function signInElsewhere(issuer: string, host: string): boolean {
  return !URL.canParse(issuer) || new URL(issuer).host !== host;
}

/** A server as the pages name it in words: its issuer, and its sign-in page's host where that is another. */
export const serverInWords = (issuer: string, host: string) =>
  signInElsewhere(issuer, host) ? `${issuer} (its sign-in page on ${host})` : issuer;

/** Who the user signs in with next, and, where its sign-in page is on another host, that plainly. */
function signInParagraphs({ signInIssuer, signInHost }: ConsentAccess): string {
  const issuer = escapeHtml(signInIssuer);
  const named = `<p>If you allow it, you sign in next with <strong id="sign-in-issuer">${issuer}</strong>.</p>`;
  if (!signInElsewhere(signInIssuer, signInHost)) return named;
  const host = escapeHtml(signInHost);
  return `${named}
<p class="note">Its sign-in page is on another host, <strong id="sign-in-host">${host}</strong>: what you allow there is handed to ${issuer}, not to ${host}. Allow only if you trust ${issuer}.</p>`;
}

// `strong` and `code` wrap anywhere: a long issuer, or a long scope the app asks of the origin
// (128 characters), run off the page's side would hide its end.
const STYLE = `body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem;color:#1b1b1b}
h1{font-size:1.4rem}.note{background:#fff4d6;padding:.6rem .8rem;border-radius:6px}
strong,code{overflow-wrap:anywhere}code{background:#f2f2f2;padding:0 .25rem;border-radius:3px}button{font-size:1rem;padding:.5rem 1.2rem;margin-right:.6rem}
.hint{color:#555;font-size:.9rem}`;

export function consentPage(
  details: ConsentDescription,
  handle: string,
  access: ConsentAccess,
): string {
  const name = escapeHtml(shownName(details.clientName));
  const origin = escapeHtml(access.originHost);
  const identity = details.clientDomain
    ? `<p>Published by <strong>${escapeHtml(details.clientDomain)}</strong>.</p>`
    : "<p>This app registered itself: its name is not verified.</p>";
  const loopback = details.redirectIsLoopback
    ? '<p class="note"><strong>This sends access to an app on your computer.</strong> Continue only if you just started signing in from it.</p>'
    : "";
  // Only what the proxy asks for: the scopes a client asks the proxy for grant nothing (no
  // route reads them), and listed as given they would be the client's own words on what it
  // gets. The origin's scopes it asks for are asked of the origin's authorization server, which
  // says what they allow: listed apart, as the app's.
  const listed = (scopes: readonly string[]) =>
    [...new Set(scopes)].map((scope) => `<code>${escapeHtml(scope)}</code>`).join(" ");
  const permissions =
    access.originScopes.length > 0
      ? `<p>With these permissions: ${listed(access.originScopes)}.</p>`
      : "";
  const asked = access.askedScopes ?? [];
  const more =
    asked.length > 0
      ? `<p>The app asks for these permissions at ${origin} too: ${listed(asked)}. The server you sign in with next says what they allow.</p>`
      : "";
  return `<!doctype html>
<html lang="en">
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Authorize ${name}</title>
<style>${STYLE}</style>
<h1>Allow <span id="client-name">${name}</span> to use the MCP server at ${origin} as you?</h1>
${identity}
<p>Access will be sent to <strong id="redirect-host">${escapeHtml(details.redirectHost)}</strong>.</p>
${loopback}
${permissions}
${more}
${signInParagraphs(access)}
<form method="post">
  <input type="hidden" name="handle" value="${escapeHtml(handle)}">
  <button id="${ALLOW_ID}" name="decision" value="approve" disabled>Allow</button>
  <button name="decision" value="deny">Deny</button>
</form>
<p class="hint">Allow turns on once this page has been in front for a moment and you move the pointer over it, press a key or touch it, so that a click meant for another window cannot land on it.</p>
<noscript><p class="note">Allow needs JavaScript, which is off in this browser. Turn it on for this site and open this page again, or Deny.</p></noscript>
<script>${ALLOW_SCRIPT}</script>
</html>`;
}

/** What gate mode's page after the identity provider names. */
export interface SignedIn {
  /** The client, as the consent page named it. */
  clientName: string;
  /** The user: their verified email, or the provider's name for the account. */
  user: string;
  /** The host of the MCP server behind the proxy, and the proxy's own. */
  originHost: string;
  proxyHost: string;
  /** The client's redirect with the code, and with `access_denied`. */
  continueTo: string;
  cancelTo: string;
}

/** Gate mode, after the identity provider: who signed in, and the way on to the client. */
export function signedInPage(page: SignedIn): string {
  const client = escapeHtml(shownName(page.clientName));
  return `<!doctype html>
<html lang="en">
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Signed in</title>
<style>${STYLE}</style>
<h1>Signed in as <span id="user">${escapeHtml(page.user)}</span></h1>
<p><strong>${client}</strong> may now use the MCP server at ${escapeHtml(page.originHost)} through <strong id="tenant">${escapeHtml(page.proxyHost)}</strong> as you.</p>
<p><a id="continue" href="${escapeHtml(page.continueTo)}">Continue to ${client}</a></p>
<p>Not you? <a id="cancel" href="${escapeHtml(page.cancelTo)}">Cancel</a>, sign out at your identity provider, and connect again.</p>
</html>`;
}
