/**
 * Broker mode (`AUTH_MODE=broker`) on each wire: the official SDK client (1.x
 * in a 2025-11-25 session, 2.x on 2026-07-28) signs in with the proxy
 * (discovery, dynamic registration, authorization code + PKCE), approves on
 * the consent page, and lists and calls tools; the proxy calls the origin,
 * which accepts only tokens issued for its own URL and serves both revisions,
 * with its own token, and refreshes it when it expires or the origin refuses
 * it. The origin is this file's own (its switches expire and revoke tokens);
 * the proxy's OAuth endpoints, which no wire changes, are broker.test.ts's.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  askWithToken,
  BROKER_URL,
  brokerOfEachTest,
  refreshAt,
  watchingStream,
} from "../helpers/broker";
import { EACH_WIRE } from "../helpers/clients";
import { DEMO_NAMES } from "../helpers/demo-names";
import { messagesOf } from "../helpers/mcp";
import { CALLING_ORIGIN, type Fetch } from "../helpers/proxy";

const origin = CALLING_ORIGIN.strict;
const TOOL = DEMO_NAMES["files.read"];
const called = (path: string) => ({ tool: "files.read", arguments: { path } });

const { control, broker, events, logged, ...each } = brokerOfEachTest(CALLING_ORIGIN, {
  lifetime: 3600,
  tokenEnd: "",
});
afterEach(() => {
  vi.useRealTimers();
});

async function seenByOrigin(at = origin): Promise<Array<{ issued: boolean; resource?: string }>> {
  return (await fetch(new URL("/__seen", at))).json();
}

describe.each(EACH_WIRE)("broker mode on %s", (revision) => {
  const signIn = (network: Fetch = broker(), url = BROKER_URL) =>
    each.signIn(network, revision, url);

  it("signs the SDK client in, lists renamed tools, calls one; the origin sees only its own tokens", async () => {
    const before = (await seenByOrigin()).length;
    const { client, provider } = await signIn();
    expect((await client.listTools()).map((tool) => tool.name)).toEqual([TOOL]);
    const result = await client.callTool(TOOL, { path: "a" });
    expect(result.structuredContent).toEqual(called("a"));

    const seen = (await seenByOrigin()).slice(before);
    expect(seen.length).toBeGreaterThan(0);
    for (const token of seen) expect(token).toEqual({ issued: true, resource: origin });
    // The client's token is the proxy's, bound to the proxy's URL, and never reached the origin.
    expect(provider.saved?.access_token).toMatch(/:/);
    expect(events("sign_in_started")).toHaveLength(1);
    expect(events("sign_in_completed")).toHaveLength(1);
    expect(logged()).not.toContain(provider.saved?.access_token);
  });

  it("fails the sign-in, not every request after it, when the origin issues a token no request can carry", async () => {
    await control({ tokenEnd: "\nx" });
    const statuses: number[] = [];
    const network = broker();
    const watched: Fetch = async (input, init) => {
      const response = await network(input, init);
      statuses.push(response.status);
      return response;
    };
    await expect(signIn(watched)).rejects.toThrow();
    expect(statuses).not.toContain(500);
    expect(events("internal_error")).toEqual([]);
    expect(events("sign_in_failed")).toMatchObject([{ reason: "unusable_token" }]);
  });

  it("never hands the client a cookie the origin set: it holds no credential of the origin's", async () => {
    const { provider } = await signIn();
    const token = provider.saved?.access_token ?? "";
    const response = await askWithToken(broker(), token, revision, "tools/list");
    expect(response.status).toBe(200);
    expect(response.headers.has("set-cookie")).toBe(false);
    expect(await messagesOf(response)).toMatchObject([{ result: { tools: [{ name: TOOL }] } }]);
  });

  it("signs a client in at a profile's URL with the same resource, and lists that profile's view", async () => {
    const before = (await seenByOrigin()).length;
    const { client } = await signIn(broker(), `${BROKER_URL}/gemini`);
    // Gemini accepts the origin's own name.
    expect((await client.listTools()).map((tool) => tool.name)).toEqual(["files.read"]);
    const seen = (await seenByOrigin()).slice(before);
    expect(seen.length).toBeGreaterThan(0);
    for (const token of seen) expect(token).toEqual({ issued: true, resource: origin });
  });

  it("signs in at UPSTREAM_ISSUER when the origin's metadata names it too, and calls the origin", async () => {
    const issuer = new URL(CALLING_ORIGIN.authorizationServer).origin;
    const { client } = await signIn(broker({ UPSTREAM_ISSUER: issuer }));
    const result = await client.callTool(TOOL, { path: "a" });
    expect(result.structuredContent).toEqual(called("a"));
    expect(events("sign_in_completed")).toHaveLength(1);
  });

  it("refreshes the origin's expired token transparently: the client's call just works", async () => {
    const { client } = await signIn();
    await client.listTools();
    await control({ expire: true });
    const result = await client.callTool(TOOL, { path: "b" });
    expect(result.structuredContent).toEqual(called("b"));
    expect(events("upstream_token_refused")).toHaveLength(1);
    expect(events("upstream_refresh")).toMatchObject([{ result: "refreshed" }]);
  });

  it("refreshes the origin's token once it expired by its own lifetime, before calling the origin", async () => {
    // The origin's tokens live 30 s, the proxy's the library's least, a minute: the proxy's clock
    // (Date, in this isolate; the authorization server keeps its own) is set past the first and
    // short of the second, where it stays.
    await control({ lifetime: 30 });
    // The clock moves once the proxy answered the SDK 1.x client's GET stream, so that the call
    // alone finds the token expired.
    const { network, streamOpened } = watchingStream(broker(), revision);
    const { client } = await signIn(network);
    await streamOpened;
    vi.setSystemTime(Date.now() + 31_000);
    const result = await client.callTool(TOOL, { path: "c" });
    vi.useRealTimers();
    expect(result.structuredContent).toEqual(called("c"));
    expect(events("upstream_token_expired")).toMatchObject([{ origin: new URL(origin).host }]);
    expect(events("upstream_refresh")).toMatchObject([{ result: "refreshed" }]);
  });

  it("sends a grant's token to no other origin: after ORIGIN_URL changes, the client signs in again", async () => {
    const { provider } = await signIn();
    // The same tenant (its OAUTH_KV), redeployed in front of another origin.
    const moved = broker({}, {}, CALLING_ORIGIN.lenient);
    const before = (await seenByOrigin(CALLING_ORIGIN.lenient)).length;
    const token = provider.saved?.access_token ?? "";
    const response = await askWithToken(moved, token, revision, "tools/list");
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toContain('error="invalid_token"');
    expect(await seenByOrigin(CALLING_ORIGIN.lenient)).toHaveLength(before);
    expect(events("upstream_grant_other_origin")).toHaveLength(1);
    // Its refresh revokes the grant: the old origin's refresh token goes nowhere either.
    const refreshed = await refreshAt(moved, provider, provider.saved?.refresh_token ?? "");
    expect(refreshed.status).toBe(400);
    expect(await refreshed.json()).toMatchObject({ error: "invalid_grant" });
    expect(events("upstream_refresh")).toEqual([]);
  });

  it("asks the client to sign in again when the origin revoked the sign-in (invalid_grant)", async () => {
    const network = broker();
    const { client, provider } = await signIn(network);
    const refreshToken = provider.saved?.refresh_token ?? "";
    await control({ expire: true, revoke: true });
    const failure = await client.listTools().catch((error: unknown) => error);
    expect(String(failure)).toMatch(/Unauthorized/);
    // The SDK sent the user to sign in again (TypeScript cannot see the call set it).
    expect((provider.authorizationUrl as URL | undefined)?.href).toMatch(
      /^http:\/\/localhost\/authorize\?/,
    );
    const refreshes = events("upstream_refresh");
    expect(refreshes.length).toBeGreaterThan(0);
    for (const refresh of refreshes) expect(refresh).toMatchObject({ result: "revoked" });
    // The proxy's grant is gone with it: its refresh token no longer works.
    const retried = await refreshAt(network, provider, refreshToken);
    expect(retried.status).toBe(400);
    expect(await retried.json()).toMatchObject({ error: "invalid_grant" });
  });
});
