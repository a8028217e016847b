/**
 * Signing in through the proxy in relay mode, with the official SDK client's
 * real OAuth flow (discovery, dynamic registration, authorization code + PKCE,
 * token) against an OAuth-protected origin built with the SDK's auth parts.
 * Each case runs straight to the origin too, so a failure through the proxy is
 * never the fixture's fault.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { createApp } from "../../src/app";
import { ORIGIN_COOKIE } from "../fixtures/node/oauth-origin";
import { DEMO_NAMES } from "../helpers/demo-names";
import { PROTOCOL_VERSION, postJson, rpc } from "../helpers/mcp";
import { type SignedIn, signInAndConnect } from "../helpers/oauth-client";
import { clientNetwork, OAUTH_ORIGIN, PROXY_URL, viaProxy } from "../helpers/proxy";

const connected: SignedIn[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(connected.splice(0).map(({ client }) => client.close()));
});

function proxyFor(originUrl: string) {
  return clientNetwork(viaProxy({ ORIGIN_URL: originUrl }, { app: createApp() }));
}

async function signIn(serverUrl: string, fetch: typeof globalThis.fetch = globalThis.fetch) {
  const signedIn = await signInAndConnect(serverUrl, fetch);
  connected.push(signedIn);
  return signedIn;
}

function logged(spy: ReturnType<typeof vi.spyOn>, event: string) {
  return spy.mock.calls
    .map(([line]: unknown[]) => JSON.parse(String(line)))
    .filter((line: { event: string }) => line.event === event);
}

describe("relay mode: clients sign in with the origin's authorization server", () => {
  it("a lenient origin: direct and through the proxy, the client signs in, lists renamed tools and calls one", async () => {
    const direct = await signIn(OAUTH_ORIGIN.lenient);
    expect((await direct.client.listTools()).tools.map((tool) => tool.name)).toEqual([
      "files.read",
    ]);

    const proxied = await signIn(PROXY_URL, proxyFor(OAUTH_ORIGIN.lenient));
    expect(proxied.provider.saved?.access_token).toBeTruthy();
    expect((await proxied.client.listTools()).tools.map((tool) => tool.name)).toEqual([
      DEMO_NAMES["files.read"],
    ]);
    const result = await proxied.client.callTool({
      name: DEMO_NAMES["files.read"],
      arguments: { path: "a" },
    });
    expect(result.structuredContent).toEqual({ tool: "files.read", arguments: { path: "a" } });

    // The origin's own cookies reach the client, as its own credentials do.
    const listed = await postJson(proxyFor(OAUTH_ORIGIN.lenient), PROXY_URL, rpc(1, "tools/list"), {
      authorization: `Bearer ${proxied.provider.saved?.access_token}`,
      "mcp-protocol-version": PROTOCOL_VERSION,
    });
    expect(listed.headers.get("set-cookie")).toBe(ORIGIN_COOKIE);
  });

  it("a strict origin: direct the client signs in; through the proxy it gets the origin's 401, and the log says why", async () => {
    const direct = await signIn(OAUTH_ORIGIN.strict);
    expect((await direct.client.listTools()).tools).toHaveLength(1);

    const log = vi.spyOn(console, "log");
    const failure = await signIn(PROXY_URL, proxyFor(OAUTH_ORIGIN.strict)).catch(
      (error: unknown) => error,
    );
    expect(String(failure)).toMatch(/401|Unauthorized/);
    const hints = logged(log, "auth_audience_mismatch");
    expect(hints.length).toBeGreaterThan(0);
    expect(hints[0]).toMatchObject({ origin: new URL(OAUTH_ORIGIN.strict).host });
    expect(JSON.stringify(hints)).toContain("AUTH_MODE=broker");
    // No token, code or header value is ever logged.
    expect(JSON.stringify(log.mock.calls)).not.toMatch(/Bearer|access_token|code=/);
  });
});
