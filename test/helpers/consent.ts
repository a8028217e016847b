/**
 * A user at the consent page of broker or gate mode, as a browser would be:
 * it keeps the cookies each host sets, submits the page's form with Allow or
 * Deny, and follows the redirects (to the origin's authorization server or
 * the identity provider, back to the proxy, back to the client), and gate
 * mode's `Continue` link, until the browser reaches the client's redirect
 * URI. The real browser is in test/node/consent-page.test.ts.
 */
import type { Fetch } from "./fetch";

/** The redirect URI of the tests' OAuth clients: nothing listens there, the browser stops before it. */
export const REDIRECT_URL = "http://127.0.0.1:9/callback";

/** The cookies of each host, as `name=value` pairs. */
export class CookieJar {
  private readonly byHost = new Map<string, Map<string, string>>();

  store(url: URL, response: Response) {
    const cookies = this.byHost.get(url.host) ?? new Map<string, string>();
    for (const header of response.headers.getSetCookie()) {
      const [pair = ""] = header.split(";");
      const at = pair.indexOf("=");
      cookies.set(pair.slice(0, at).trim(), pair.slice(at + 1).trim());
    }
    this.byHost.set(url.host, cookies);
  }

  header(url: URL): Record<string, string> {
    const cookies = [...(this.byHost.get(url.host) ?? [])];
    return cookies.length > 0
      ? { cookie: cookies.map(([name, value]) => `${name}=${value}`).join("; ") }
      : {};
  }
}

export interface ConsentVisit {
  /** The consent page as the proxy served it. */
  page: Response;
  html: string;
  /** Where the browser ended: the client's redirect URI with `code` (or `error`). */
  callback: URL;
  /** Every URL the browser was sent to, in order. */
  visited: URL[];
}

export interface BrowserWalk extends Omit<ConsentVisit, "callback"> {
  /** Where the browser ended, when it reached the client's redirect URI. */
  callback?: URL;
  /** The page it stopped at instead: neither a redirect nor a way on. */
  stopped?: { url: URL; status: number; html: string };
  /** The pages it was shown on the way (gate mode's signed-in page), by URL. */
  pages: Array<{ url: URL; html: string }>;
}

export interface BrowserOptions {
  /** What the browser does at another host than the proxy's before it goes there (signs in as someone). */
  visit?: (url: URL) => URL;
  /** The client's redirect URI, where the browser stops (before it goes there): `REDIRECT_URL` unless said. */
  home?: string;
  /** The browser's cookies, to go on with after the walk stops: a jar of its own unless given. */
  jar?: CookieJar;
}

/** A link's target as a page writes it: the proxy escapes every `&` of an href as `&#38;`. */
const unescapeHtml = (text: string) =>
  text.replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code)));

/**
 * Opens the consent page at `authorizationUrl`, answers it with `decision`,
 * and follows the browser: redirects, and the `Continue` link of a page that
 * has one, until the client's redirect URI or a page with neither.
 */
export async function walkSignIn(
  fetch: Fetch,
  authorizationUrl: URL,
  decision: "approve" | "deny" = "approve",
  { visit = (url) => url, home = REDIRECT_URL, jar = new CookieJar() }: BrowserOptions = {},
): Promise<BrowserWalk> {
  const visited: URL[] = [authorizationUrl];
  const pages: BrowserWalk["pages"] = [];
  const page = await fetch(authorizationUrl, {
    headers: jar.header(authorizationUrl),
    redirect: "manual",
  });
  jar.store(authorizationUrl, page);
  const html = await page.clone().text();
  const handle = /name="handle" value="([^"]*)"/.exec(html)?.[1];
  if (page.status !== 200 || handle === undefined) {
    throw new Error(`no consent page: ${page.status} ${html.slice(0, 200)}`);
  }
  // The form has no action: it posts back to the page's own URL.
  let response = await fetch(authorizationUrl, {
    method: "POST",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      ...jar.header(authorizationUrl),
    },
    body: new URLSearchParams({ handle, decision }),
    redirect: "manual",
  });
  jar.store(authorizationUrl, response);
  let from = authorizationUrl;
  for (let hop = 0; hop < 10; hop++) {
    const location = response.headers.get("location");
    let next: URL;
    if (location !== null) {
      await response.body?.cancel();
      next = new URL(location, from);
    } else {
      const text = await response.text();
      const onward = /id="continue" href="([^"]*)"/.exec(text)?.[1];
      if (onward === undefined) {
        return {
          page,
          html,
          visited,
          pages,
          stopped: { url: from, status: response.status, html: text },
        };
      }
      pages.push({ url: from, html: text });
      next = new URL(unescapeHtml(onward), from);
    }
    if (next.origin !== authorizationUrl.origin) next = visit(next);
    visited.push(next);
    if (next.href.startsWith(home)) return { page, html, visited, pages, callback: next };
    response = await fetch(next, { headers: jar.header(next), redirect: "manual" });
    jar.store(next, response);
    from = next;
  }
  throw new Error("too many redirects");
}

/** Opens the consent page at `authorizationUrl`, answers it with `decision`, and follows the browser home. */
export async function answerConsent(
  fetch: Fetch,
  authorizationUrl: URL,
  decision: "approve" | "deny" = "approve",
  options?: BrowserOptions,
): Promise<ConsentVisit> {
  const walk = await walkSignIn(fetch, authorizationUrl, decision, options);
  if (walk.callback === undefined) {
    throw new Error(`stopped at ${walk.stopped?.url.href}: ${walk.stopped?.status}`);
  }
  return { ...walk, callback: walk.callback };
}
