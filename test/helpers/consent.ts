/**
 * A user at the broker's consent page, as a browser would be: it keeps the
 * cookies each host sets, submits the page's form with Allow or Deny, and
 * follows the redirects (to the origin's authorization server, back to the
 * proxy, back to the client) until the browser reaches the client's redirect
 * URI. The real browser is in test/node/consent-page.test.ts.
 */
import { REDIRECT_URL } from "./oauth-client";
import type { Fetch } from "./proxy";

/** The cookies of each host, as `name=value` pairs. */
class CookieJar {
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

/** Opens the consent page at `authorizationUrl`, answers it with `decision`, and follows the browser home. */
export async function answerConsent(
  fetch: Fetch,
  authorizationUrl: URL,
  decision: "approve" | "deny" = "approve",
): Promise<ConsentVisit> {
  const jar = new CookieJar();
  const visited: URL[] = [authorizationUrl];
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
    await response.body?.cancel();
    if (location === null) throw new Error(`stopped at ${from.href}: ${response.status}`);
    const next = new URL(location, from);
    visited.push(next);
    if (next.href.startsWith(REDIRECT_URL)) return { page, html, callback: next, visited };
    response = await fetch(next, { headers: jar.header(next), redirect: "manual" });
    jar.store(next, response);
    from = next;
  }
  throw new Error("too many redirects");
}
