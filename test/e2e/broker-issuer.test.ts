/**
 * Broker mode against an origin that names another authorization server
 * once a user started signing in, or signed in (an origin that moved, or
 * turned hostile, without `UPSTREAM_ISSUER`): Allow sends the browser only
 * to the authorization server the consent page named, and the code, and the
 * grant's refresh token, go back only to the one that issued them. The origin and the
 * other authorization server are this file's own
 * (test/fixtures/node/oauth-origin.ts), so their counts are this file's.
 */
import { afterEach, describe, expect, it } from "vitest";
import {
  BROKER_URL,
  brokerFor,
  brokerOfEachTest,
  controlOrigin,
  refreshAt,
  signInWithConsent,
} from "../helpers/broker";
import { walkSignIn } from "../helpers/consent";
import { handBuiltClient } from "../helpers/oauth-client";
import { type Fetch, OTHER_ISSUER_ORIGIN, SWITCHING_ORIGIN } from "../helpers/proxy";

const { control, broker, signIn, events } = brokerOfEachTest(SWITCHING_ORIGIN, {
  authorizationServers: [],
  iss: "own",
  authorizationEndpoint: "own",
});
afterEach(async () => {
  await controlOrigin(OTHER_ISSUER_ORIGIN.authorizationServer, { iss: "own" });
});

/** The codes `authorizationServer`'s token endpoint was shown, its own or not. */
async function codesAt(authorizationServer: string): Promise<number> {
  const response = await fetch(new URL("/__codes", authorizationServer));
  return ((await response.json()) as { asked: number }).asked;
}

/** The refresh requests `authorizationServer` took, whether or not it knew their token. */
async function refreshesAt(authorizationServer: string): Promise<number> {
  const response = await fetch(new URL("/__refreshes", authorizationServer));
  return ((await response.json()) as { asked: number }).asked;
}

describe("broker mode, an origin that names another authorization server", () => {
  it("sends a grant's refresh token to no other authorization server: the client signs in again", async () => {
    const { provider } = await signIn(broker());
    // The origin's metadata now names another authorization server, which an isolate
    // that has not discovered the origin's yet (a new one, or five minutes on) reads.
    await control({ authorizationServers: [OTHER_ISSUER_ORIGIN.authorizationServer] });
    const before = {
      own: await refreshesAt(SWITCHING_ORIGIN.authorizationServer),
      other: await refreshesAt(OTHER_ISSUER_ORIGIN.authorizationServer),
    };
    const refreshed = await refreshAt(
      brokerFor(SWITCHING_ORIGIN.strict),
      provider,
      provider.saved?.refresh_token ?? "",
    );
    expect(refreshed.status).toBe(400);
    expect(await refreshed.json()).toMatchObject({ error: "invalid_grant" });
    expect(await refreshesAt(OTHER_ISSUER_ORIGIN.authorizationServer)).toBe(before.other);
    expect(await refreshesAt(SWITCHING_ORIGIN.authorizationServer)).toBe(before.own);
    expect(events("upstream_grant_other_issuer")).toMatchObject([
      { issuer: OTHER_ISSUER_ORIGIN.authorizationServer },
    ]);
  });

  it("sends the code to no other authorization server than the one the browser signed in at (RFC 9207 §2.4)", async () => {
    // Neither names itself in its authorization responses, as one without RFC 9207.
    await control({ iss: "none" });
    await controlOrigin(OTHER_ISSUER_ORIGIN.authorizationServer, { iss: "none" });
    const before = await codesAt(OTHER_ISSUER_ORIGIN.authorizationServer);
    const started = broker();
    // The browser comes back to another isolate, which reads the origin's metadata only
    // now, once it names another authorization server than the one the user signed in at.
    const finished = brokerFor(SWITCHING_ORIGIN.strict);
    const browser: Fetch = async (input, init) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      if (url.pathname !== "/oauth/callback") return started(input, init);
      await control({ authorizationServers: [OTHER_ISSUER_ORIGIN.authorizationServer] });
      return finished(input, init);
    };
    const failure = await signInWithConsent(browser, "2025-11-25").catch((error: unknown) => error);
    expect(String(failure)).toContain("server_error");
    expect(await codesAt(OTHER_ISSUER_ORIGIN.authorizationServer)).toBe(before);
    expect(events("sign_in_failed")).toMatchObject([
      { step: "callback", reason: "issuer_changed" },
    ]);
  });

  it("sends the browser on Allow only to the authorization server the consent page showed", async () => {
    const shown = broker();
    // The Allow reaches another isolate, which reads the origin's metadata only now, once it
    // names another authorization server than the one the page named.
    const allowed = brokerFor(SWITCHING_ORIGIN.strict);
    const browser: Fetch = async (input, init) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      if (url.pathname !== "/authorize" || init?.method !== "POST") return shown(input, init);
      await control({ authorizationServers: [OTHER_ISSUER_ORIGIN.authorizationServer] });
      return allowed(input, init);
    };
    const walk = await walkSignIn(browser, (await handBuiltClient(browser, BROKER_URL)).url);
    const shownIssuer = new URL(SWITCHING_ORIGIN.authorizationServer).href;
    expect(walk.html).toContain(`<strong id="sign-in-issuer">${shownIssuer}</strong>`);
    // A page that says so, and no redirect: the browser went nowhere past the proxy.
    expect(walk.stopped?.status).toBe(409);
    expect(walk.stopped?.html).toContain(`You allowed signing in with ${shownIssuer}, but`);
    // Its link back tells the client, which stops waiting.
    expect(walk.stopped?.html).toContain("error=temporarily_unavailable");
    expect(walk.visited.map((url) => url.origin)).toEqual([new URL(BROKER_URL).origin]);
    expect(events("sign_in_failed")).toMatchObject([
      {
        step: "approval",
        reason: "server_not_shown",
        detail: expect.stringContaining(new URL(OTHER_ISSUER_ORIGIN.authorizationServer).host),
      },
    ]);
  });

  it("sends the browser to no authorization endpoint but an https one (plain http on a loopback host only)", async () => {
    for (const endpoint of [
      "http://sign-in.example/authorize",
      "javascript:alert(document.domain)",
      "data:text/html,<h1>Sign in</h1>",
    ]) {
      await control({ authorizationEndpoint: endpoint });
      // A new isolate: it discovers the authorization server anew.
      const network = brokerFor(SWITCHING_ORIGIN.strict);
      const page = await network((await handBuiltClient(network, BROKER_URL)).url, {
        redirect: "manual",
      });
      // No consent page: the client, an app on this computer, is told at once.
      expect(page.status).toBe(302);
      const location = new URL(page.headers.get("location") ?? "");
      expect(location.searchParams.get("error")).toBe("temporarily_unavailable");
      expect(events("sign_in_failed").at(-1)).toMatchObject({
        step: "consent",
        reason: "no_authorization_server",
        detail: expect.stringContaining(endpoint),
      });
    }
    // An https one is where the consent page says the user signs in.
    await control({ authorizationEndpoint: "https://sign-in.example/authorize" });
    const network = brokerFor(SWITCHING_ORIGIN.strict);
    const page = await network((await handBuiltClient(network, BROKER_URL)).url);
    expect(await page.text()).toContain('<strong id="sign-in-host">sign-in.example</strong>');
  });

  it("names the server the code goes to by its issuer, not only the trusted-looking host of its sign-in page", async () => {
    // The origin names its own authorization server, whose metadata puts the sign-in page at
    // a host users trust; the code that page gives goes to the server's own token endpoint.
    const signInPage = "https://accounts.google.com/o/oauth2/v2/auth";
    await control({ authorizationEndpoint: signInPage });
    const network = brokerFor(SWITCHING_ORIGIN.strict);
    // The browser at that host: a sign-in page, which this test goes no further than.
    const browser: Fetch = async (input, init) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      if (url.host !== "accounts.google.com") return network(input, init);
      return new Response("<p>Sign in</p>", { headers: { "content-type": "text/html" } });
    };
    const walk = await walkSignIn(browser, (await handBuiltClient(browser, BROKER_URL)).url);
    const issuer = new URL(SWITCHING_ORIGIN.authorizationServer).href;
    expect(walk.html).toContain(
      `If you allow it, you sign in next with <strong id="sign-in-issuer">${issuer}</strong>.`,
    );
    expect(walk.html).toContain(
      `Its sign-in page is on another host, <strong id="sign-in-host">accounts.google.com</strong>: what you allow there is handed to ${issuer}, not to accounts.google.com. Allow only if you trust ${issuer}.`,
    );
    // Allow sends the browser to the page the consent page named, and to no other.
    expect(walk.visited.map((url) => `${url.origin}${url.pathname}`)).toEqual([
      `${new URL(BROKER_URL).origin}/authorize`,
      signInPage,
    ]);
  });
});
