/**
 * What a client that identifies with a Client ID Metadata Document makes the
 * proxy ask of the host it names (the sign-in row of docs/limits.md):
 * the document, once a lookup, never a redirect (auth/library-fetch.ts).
 * Counted where the document is served: a redirect the runtime followed
 * never shows in a `fetch` spy.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { createApp } from "../../src/app";
import { pkceChallenge, REDIRECT_URL } from "../helpers/oauth-client";
import { BROKERED_ORIGIN, clientNetwork, type Fetch, viaProxy } from "../helpers/proxy";
import { scriptedOrigin } from "../helpers/scripted-origin";

afterEach(() => vi.restoreAllMocks());

const BROKER_URL = "http://localhost/mcp";
/** The client's ID, an https URL the test serves from `served` (the scripted origin, on loopback). */
const CLIENT_URL = "https://redirecting.example/oauth/client.json";

/** `CLIENT_URL` fetched from `served`, as the request asked for it (its redirect mode too). */
function serveClientFrom(served: string) {
  const network = globalThis.fetch;
  vi.spyOn(globalThis, "fetch").mockImplementation((input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    return url === CLIENT_URL ? network(served, init) : network(input, init);
  });
}

/** A consent page's request for `CLIENT_URL`, with PKCE, as an MCP client sends it. */
async function authorizeUrl(): Promise<URL> {
  const url = new URL("http://localhost/authorize");
  url.search = new URLSearchParams({
    response_type: "code",
    client_id: CLIENT_URL,
    redirect_uri: REDIRECT_URL,
    code_challenge: await pkceChallenge("v".repeat(50)),
    code_challenge_method: "S256",
    state: "client-state",
    resource: BROKER_URL,
  }).toString();
  return url;
}

const broker = (): Fetch =>
  clientNetwork(
    viaProxy({ ORIGIN_URL: BROKERED_ORIGIN.strict, AUTH_MODE: "broker" }, { app: createApp() }),
    BROKER_URL,
  );

describe("a client whose metadata document's URL redirects", () => {
  it("costs its host one request a consent page, not one a redirect: the client is unknown", async () => {
    // Each request redirected to the same URL again: the runtime follows 20 such, then fails.
    const loop = await scriptedOrigin({ "*": { status: 302, headers: [], body: "" } });
    await loop.change({ "*": { status: 302, headers: [["location", loop.originUrl]], body: "" } });
    serveClientFrom(loop.originUrl);
    const page = await broker()(await authorizeUrl(), { redirect: "manual" });
    expect(page.status).toBe(400);
    await page.body?.cancel();
    // It was 21, each a request to a host the client chose.
    expect(await loop.received()).toHaveLength(1);
  });

  it("costs its host one request a token request, not one a redirect: the client is unknown", async () => {
    const loop = await scriptedOrigin({ "*": { status: 302, headers: [], body: "" } });
    await loop.change({ "*": { status: 302, headers: [["location", loop.originUrl]], body: "" } });
    serveClientFrom(loop.originUrl);
    const answer = await broker()("http://localhost/oauth/token", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "authorization_code",
        client_id: CLIENT_URL,
        code: "a code no one was given",
        redirect_uri: REDIRECT_URL,
        code_verifier: "v".repeat(50),
      }).toString(),
    });
    expect(answer.status).toBe(401);
    expect(await answer.json()).toMatchObject({ error: "invalid_client" });
    expect(await loop.received()).toHaveLength(1);
  });
});
