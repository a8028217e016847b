/**
 * What broker and gate mode's sign-in pages show a user, and where they send
 * the browser, when the client is hostile. Anyone can register a client
 * (RFC 7591) with any name, any https redirect URI and any scope, and send a
 * user a link to the proxy's `/authorize`: the link is on the operator's host,
 * which the user trusts.
 */
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { BROKER_URL, brokerFor } from "../helpers/broker";
import { GATE_URL, gateNetwork, walkAs } from "../helpers/gate";
import { HAND_BUILT_VERIFIER, pkceChallenge, REDIRECT_URL } from "../helpers/oauth-client";
import {
  BROKERED_ORIGIN,
  CLOSED_ORIGIN,
  clientNetwork,
  DEMO_ORIGIN,
  type Fetch,
  viaProxy,
} from "../helpers/proxy";

const PHISHING = "https://evil.example/cb";

/** A client registered at the proxy at `mcpUrl` as anyone may register one. */
async function registered(network: Fetch, mcpUrl: string, metadata: Record<string, unknown>) {
  const response = await network(new URL("/oauth/register", mcpUrl), {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ token_endpoint_auth_method: "none", ...metadata }),
  });
  expect(response.status).toBe(201);
  return (await response.json<{ client_id: string }>()).client_id;
}

/** An authorization request of `clientId` to `redirectUri`, with PKCE unless `pkce` is false. */
async function authorizationUrl(
  mcpUrl: string,
  clientId: string,
  redirectUri: string,
  { pkce = true, scope }: { pkce?: boolean; scope?: string } = {},
) {
  const challenge = await pkceChallenge(HAND_BUILT_VERIFIER);
  const url = new URL("/authorize", mcpUrl);
  url.search = new URLSearchParams({
    response_type: "code",
    client_id: clientId,
    redirect_uri: redirectUri,
    state: "client-state",
    resource: mcpUrl,
    ...(pkce ? { code_challenge: challenge, code_challenge_method: "S256" } : {}),
    ...(scope === undefined ? {} : { scope }),
  }).toString();
  return url;
}

describe("the sign-in pages, for a client anyone could have registered", () => {
  it("send the browser to no host of the client's choosing before the user has seen the consent page", async () => {
    const network = brokerFor(BROKERED_ORIGIN.strict);
    const clientId = await registered(network, BROKER_URL, {
      client_name: "Claude",
      redirect_uris: [PHISHING],
    });
    // An invalid request of a registered client (here without PKCE) is an error for the
    // client: sent there by itself, the proxy's host would redirect anyone anywhere.
    const link = await authorizationUrl(BROKER_URL, clientId, PHISHING, { pkce: false });
    const answer = await network(link, { redirect: "manual" });
    expect(answer.headers.get("location")).toBeNull();
    expect(answer.status).toBe(400);
    const html = await answer.text();
    expect(html).toContain("PKCE");
    // The user may still take the error to the app, knowing where it goes.
    expect(html).toContain("Back to the app at evil.example");
    const back = new URL(/href="([^"]*)"/.exec(html)?.[1]?.replaceAll("&#38;", "&") ?? "");
    expect(back.origin + back.pathname).toBe(PHISHING);
    expect(back.searchParams.get("error")).toBe("invalid_request");
    expect(back.searchParams.get("state")).toBe("client-state");

    // So is a sign-in that cannot start (the origin's authorization server is down).
    const down = clientNetwork(
      viaProxy(
        { ORIGIN_URL: `${DEMO_ORIGIN}/mcp`, AUTH_MODE: "broker", UPSTREAM_ISSUER: CLOSED_ORIGIN },
        { app: createApp() },
      ),
      BROKER_URL,
    );
    const downClient = await registered(down, BROKER_URL, { redirect_uris: [PHISHING] });
    const unavailable = await down(await authorizationUrl(BROKER_URL, downClient, PHISHING), {
      redirect: "manual",
    });
    expect(unavailable.headers.get("location")).toBeNull();
    expect(unavailable.status).toBe(503);
    const downHtml = await unavailable.text();
    expect(downHtml).toContain("could not be reached.");
    expect(downHtml).toContain("Back to the app at evil.example");
    expect(downHtml).toContain("error=temporarily_unavailable");

    // An app on the user's computer is told at once, as before: no web page can be there.
    const local = await registered(network, BROKER_URL, { redirect_uris: [REDIRECT_URL] });
    const told = await network(
      await authorizationUrl(BROKER_URL, local, REDIRECT_URL, { pkce: false }),
      {
        redirect: "manual",
      },
    );
    expect(told.status).toBe(302);
    expect(new URL(told.headers.get("location") ?? "").searchParams.get("error")).toBe(
      "invalid_request",
    );
  });

  it.each([
    ["broker", () => brokerFor(BROKERED_ORIGIN.strict), BROKER_URL],
    ["gate", () => gateNetwork(), GATE_URL],
  ] as Array<[string, () => Fetch, string]>)(
    "%s mode: refuse a request without PKCE from a client with a secret too, as from one without (OAuth 2.1 §4.1.1)",
    async (_, proxy, mcpUrl) => {
      const network = proxy();
      // Anyone may register a client with a secret, and a client's own code can be injected
      // into another's session where nothing binds it to the browser that asked for it.
      const clientId = await registered(network, mcpUrl, {
        redirect_uris: [REDIRECT_URL],
        token_endpoint_auth_method: "client_secret_basic",
      });
      const answer = await network(
        await authorizationUrl(mcpUrl, clientId, REDIRECT_URL, { pkce: false }),
        { redirect: "manual" },
      );
      expect(answer.status).toBe(302);
      const back = new URL(answer.headers.get("location") ?? "");
      expect(back.origin + back.pathname).toBe(REDIRECT_URL);
      expect(back.searchParams.get("error")).toBe("invalid_request");
      expect(back.searchParams.get("state")).toBe("client-state");
      // With PKCE, the same client gets its consent page.
      const page = await network(await authorizationUrl(mcpUrl, clientId, REDIRECT_URL));
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('id="client-name"');
    },
  );

  it("show a client's name as a name: a short one, not a page of its own text", async () => {
    const network = brokerFor(BROKERED_ORIGIN.strict);
    // A name that writes the page's own lines, and pushes the true ones out of sight.
    const name = `Claude. Access will be sent to claude.ai, verified.${" Claude".repeat(1000)}`;
    const clientId = await registered(network, BROKER_URL, {
      client_name: name,
      redirect_uris: [PHISHING],
    });
    const page = await network(await authorizationUrl(BROKER_URL, clientId, PHISHING));
    expect(page.status).toBe(200);
    const html = await page.text();
    const shown = /<span id="client-name">([^<]*)<\/span>/.exec(html)?.[1] ?? "";
    expect(shown.startsWith("Claude. Access will be sent")).toBe(true);
    expect(shown.length).toBeLessThanOrEqual(64);
    expect(shown.endsWith("…")).toBe(true);
    expect(html.length).toBeLessThan(4000);
    expect(html).toContain('<strong id="redirect-host">evil.example</strong>');
    // Nothing but its own inline style and its one script (by its hash) loads or runs, were a
    // client's text ever to slip out as markup.
    const scripts = [...html.matchAll(/<script>([^<]*)<\/script>/g)].map((match) => match[1] ?? "");
    expect(scripts).toHaveLength(1);
    const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(scripts[0]));
    const hash = btoa(String.fromCharCode(...new Uint8Array(digest)));
    expect(page.headers.get("content-security-policy")).toBe(
      `default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; script-src 'sha256-${hash}'`,
    );
  });

  it("list as permissions only what the proxy asks for, never what the client wrote", async () => {
    // Gate mode asks the identity provider for nothing the origin's key depends on: the key
    // is the origin's whole access, whatever scope the client asked for.
    const gate = gateNetwork();
    const gateClient = await registered(gate, GATE_URL, { redirect_uris: [REDIRECT_URL] });
    const gatePage = await gate(
      await authorizationUrl(GATE_URL, gateClient, REDIRECT_URL, { scope: "read-only no-writes" }),
    );
    expect(gatePage.status).toBe(200);
    const gateHtml = await gatePage.text();
    expect(gateHtml).not.toContain("read-only");
    expect(gateHtml).not.toContain("permissions");

    // Broker mode names the scopes it asks the origin's authorization server for.
    const broker = brokerFor(BROKERED_ORIGIN.strict);
    const brokerClient = await registered(broker, BROKER_URL, { redirect_uris: [REDIRECT_URL] });
    const brokerPage = await broker(
      await authorizationUrl(BROKER_URL, brokerClient, REDIRECT_URL, {
        scope: "read-only no-writes",
      }),
    );
    const brokerHtml = await brokerPage.text();
    expect(brokerHtml).toContain("With these permissions: <code>mcp:tools</code>.");
    expect(brokerHtml).not.toContain("read-only");
  });
});

/** Every HTML page `network` answered, as the browser got it: where, its status, its headers and text. */
function watched(network: Fetch) {
  const pages: Array<{ at: string; status: number; headers: Headers; html: string }> = [];
  const fetch: Fetch = async (input, init) => {
    const response = await network(input, init);
    const url = new URL(input instanceof Request ? input.url : input);
    const html = response.headers.get("content-type")?.startsWith("text/html");
    // The proxy's own pages: not the identity provider's, on its own host.
    if (!html || url.hostname !== "localhost") return response;
    const text = await response.text();
    const at = `${init?.method ?? "GET"} ${url.pathname}`;
    pages.push({ at, status: response.status, headers: response.headers, html: text });
    return new Response(text, response);
  };
  return { fetch, pages };
}

describe("every page the proxy serves itself", () => {
  it("loads and runs nothing it does not need, is framed by no site, sniffed as nothing else, and names itself in no Referer", async () => {
    const broker = watched(brokerFor(BROKERED_ORIGIN.strict));
    const remote = await registered(broker.fetch, BROKER_URL, { redirect_uris: [PHISHING] });
    const local = await registered(broker.fetch, BROKER_URL, { redirect_uris: [REDIRECT_URL] });
    // The consent page.
    await broker.fetch(await authorizationUrl(BROKER_URL, local, REDIRECT_URL));
    // The library's refusal of a client no one registered, and of a request without PKCE from a
    // client on another host, with a way back to it.
    await broker.fetch(await authorizationUrl(BROKER_URL, "nobody", REDIRECT_URL));
    await broker.fetch(await authorizationUrl(BROKER_URL, remote, PHISHING, { pkce: false }));
    // A consent answer that is no form, and a callback with a state no browser was given.
    await broker.fetch(new URL("/authorize", BROKER_URL), { method: "POST", body: "{}" });
    await broker.fetch(new URL("/oauth/callback?state=forged&code=c", BROKER_URL));
    // A sign-in that cannot start: the origin's authorization server is down.
    const down = watched(
      clientNetwork(
        viaProxy(
          { ORIGIN_URL: `${DEMO_ORIGIN}/mcp`, AUTH_MODE: "broker", UPSTREAM_ISSUER: CLOSED_ORIGIN },
          { app: createApp() },
        ),
        BROKER_URL,
      ),
    );
    const downClient = await registered(down.fetch, BROKER_URL, { redirect_uris: [PHISHING] });
    await down.fetch(await authorizationUrl(BROKER_URL, downClient, PHISHING));
    // Gate mode: its consent page, the page that names who signed in, and a refused user's.
    const gate = watched(gateNetwork());
    expect((await walkAs(gate.fetch, "alice")).walk.callback).toBeDefined();
    expect((await walkAs(gate.fetch, "bob")).walk.stopped?.status).toBe(403);

    const pages = [...broker.pages, ...down.pages, ...gate.pages];
    expect(pages.map(({ at, status }) => `${status} ${at}`)).toEqual([
      "200 GET /authorize",
      "400 GET /authorize",
      "400 GET /authorize",
      "400 POST /authorize",
      "400 GET /oauth/callback",
      "503 GET /authorize",
      "200 GET /authorize",
      "200 GET /oauth/callback",
      "200 GET /authorize",
      "403 GET /oauth/callback",
    ]);
    for (const { at, status, headers, html } of pages) {
      const page = `${status} ${at}`;
      expect(headers.get("x-frame-options"), page).toBe("DENY");
      expect(headers.get("x-content-type-options"), page).toBe("nosniff");
      // Its URL (the client's state, its PKCE challenge) in no other site's Referer. The consent
      // page's form posts back: from a `no-referrer` page a browser sends that POST with
      // `Origin: null`, which ALLOWED_HOSTS refuses (Chromium's Allow went nowhere,
      // test/node/consent-page.test.ts), so its Referer goes to the proxy alone.
      expect(headers.get("referrer-policy"), page).toBe(
        html.includes("<form") ? "same-origin" : "no-referrer",
      );
      expect(headers.get("cache-control"), page).toBe("no-store");
      // Nothing by default, no framing, and beside them only what this page holds: its inline
      // style, its one script by its hash.
      const policy = (headers.get("content-security-policy") ?? "").split("; ").sort();
      const scripts = [...html.matchAll(/<script>([^<]*)<\/script>/g)].map((match) => match[1]);
      const hashes = await Promise.all(
        scripts.map(async (script) => {
          const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(script));
          return `'sha256-${btoa(String.fromCharCode(...new Uint8Array(digest)))}'`;
        }),
      );
      expect(policy, page).toEqual(
        [
          "default-src 'none'",
          "frame-ancestors 'none'",
          ...(html.includes("<style>") ? ["style-src 'unsafe-inline'"] : []),
          ...(hashes.length > 0 ? [`script-src ${hashes.join(" ")}`] : []),
        ].sort(),
      );
    }
  });
});
