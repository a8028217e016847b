/**
 * Signing in through the proxy in relay mode, with the official SDK client's
 * real OAuth flow (discovery, dynamic registration, authorization code + PKCE,
 * token) against an OAuth-protected origin built with the SDK's auth parts.
 * Each case runs straight to the origin too, so a failure through the proxy is
 * never the fixture's fault; and on each wire: SDK 1.x in a 2025-11-25
 * session, SDK 2.x on 2026-07-28 (the origin serves both).
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { createApp } from "../../src/app";
import { ORIGIN_COOKIE } from "../fixtures/node/oauth-origin";
import { EACH_WIRE, type Wire } from "../helpers/clients";
import { DEMO_NAMES } from "../helpers/demo-names";
import { postJson, wireRequest } from "../helpers/mcp";
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

async function signIn(
  revision: Wire,
  serverUrl: string,
  fetch: typeof globalThis.fetch = globalThis.fetch,
) {
  const signedIn = await signInAndConnect(serverUrl, fetch, { revision });
  connected.push(signedIn);
  return signedIn;
}

function logged(spy: ReturnType<typeof vi.spyOn>, event: string) {
  return spy.mock.calls
    .map(([line]: unknown[]) => JSON.parse(String(line)))
    .filter((line: { event: string }) => line.event === event);
}

describe.each(EACH_WIRE)(
  "relay mode on %s: clients sign in with the origin's authorization server",
  (revision) => {
    it("a lenient origin: direct and through the proxy, the client signs in, lists renamed tools and calls one", async () => {
      const direct = await signIn(revision, OAUTH_ORIGIN.lenient);
      expect(direct.client.negotiated()).toBe(revision);
      expect((await direct.client.listTools()).map((tool) => tool.name)).toEqual(["files.read"]);

      const proxied = await signIn(revision, PROXY_URL, proxyFor(OAUTH_ORIGIN.lenient));
      expect(proxied.client.negotiated()).toBe(revision);
      expect(proxied.provider.saved?.access_token).toBeTruthy();
      expect((await proxied.client.listTools()).map((tool) => tool.name)).toEqual([
        DEMO_NAMES["files.read"],
      ]);
      const result = await proxied.client.callTool(DEMO_NAMES["files.read"], { path: "a" });
      expect(result.structuredContent).toEqual({ tool: "files.read", arguments: { path: "a" } });

      // The origin's own cookies reach the client, as its own credentials do.
      const { body, headers } = wireRequest(revision, 1, "tools/list");
      const listed = await postJson(proxyFor(OAUTH_ORIGIN.lenient), PROXY_URL, body, {
        ...headers,
        authorization: `Bearer ${proxied.provider.saved?.access_token}`,
      });
      expect(listed.status).toBe(200);
      expect(listed.headers.get("set-cookie")).toBe(ORIGIN_COOKIE);
    });

    it("a strict origin: direct the client signs in; through the proxy it gets the origin's 401, and the log says why", async () => {
      const direct = await signIn(revision, OAUTH_ORIGIN.strict);
      expect(await direct.client.listTools()).toHaveLength(1);

      const log = vi.spyOn(console, "log");
      const failure = await signIn(revision, PROXY_URL, proxyFor(OAUTH_ORIGIN.strict)).catch(
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
  },
);
