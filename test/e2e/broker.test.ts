/**
 * Broker mode's (`AUTH_MODE=broker`) own OAuth endpoints, driven as a client
 * and a browser would: its challenge and discovery, registration under the
 * sign-in rate limit, the consent page and its Deny, its callback's state,
 * its token endpoint's errors. Its sign-in at the origin's authorization
 * server, and what it does when a step there fails, is
 * broker-upstream.test.ts's. No MCP request is made here past the 401 that
 * starts a sign-in, so no wire matters; what signed-in clients do over each
 * wire is broker-calls.test.ts's.
 */
import { env } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createApp } from "../../src/app";
import { countingKv } from "../../support/counting-kv";
import { authorizationRequest, BROKER_URL, brokerFor } from "../helpers/broker";
import { EACH_WIRE } from "../helpers/clients";
import { answerConsent } from "../helpers/consent";
import { postJson, wireRequest } from "../helpers/mcp";
import { REDIRECT_URL } from "../helpers/oauth-client";
import { BROKERED_ORIGIN, clientNetwork, viaProxy } from "../helpers/proxy";

const origin = BROKERED_ORIGIN.strict;

let log: ReturnType<typeof vi.spyOn>;

beforeEach(() => {
  log = vi.spyOn(console, "log");
});

afterEach(() => {
  vi.restoreAllMocks();
});

const broker = (vars: Record<string, string> = {}, bindings: Partial<Env> = {}) =>
  brokerFor(origin, vars, bindings);

function events(name: string) {
  return log.mock.calls
    .map(([line]: unknown[]) => JSON.parse(String(line)))
    .filter((line: { event: string }) => line.event === name);
}

/**
 * SIGN_IN_RATE_LIMIT counting as Workers Rate Limiting does (wrangler.toml: 30
 * per key a period), in periods the test ends (`nextPeriod`): the local
 * binding's are the wall clock's minutes, one of which may end mid-flood.
 */
function rateLimitPeriods(limit = 30) {
  let period = 0;
  const counts = new Map<string, number>();
  const binding: RateLimit = {
    async limit({ key }) {
      const counted = `${period}\n${key}`;
      const count = (counts.get(counted) ?? 0) + 1;
      counts.set(counted, count);
      return { success: count <= limit };
    },
  };
  return { binding, nextPeriod: () => void period++ };
}

describe("broker mode: the proxy's own sign-in endpoints, as clients and browsers drive them", () => {
  it("answers an unauthenticated MCP request, of either wire, with its own challenge and metadata", async () => {
    const network = broker();
    // A body that is no request at all, and a listing as each wire's client asks for it.
    const requests = [
      { body: "{}", headers: {} },
      ...EACH_WIRE.map((revision) => wireRequest(revision, 1, "tools/list")),
    ];
    for (const { body, headers } of requests) {
      const response = await postJson(network, BROKER_URL, body, headers);
      expect(response.status).toBe(401);
      expect(response.headers.get("www-authenticate")).toContain(
        'resource_metadata="http://localhost/.well-known/oauth-protected-resource/mcp"',
      );
    }
    const metadata = await network("http://localhost/.well-known/oauth-protected-resource/mcp");
    expect(await metadata.json()).toMatchObject({
      resource: BROKER_URL,
      authorization_servers: ["http://localhost"],
    });
    const server = await network("http://localhost/.well-known/oauth-authorization-server");
    expect(await server.json()).toMatchObject({
      issuer: "http://localhost",
      registration_endpoint: "http://localhost/oauth/register",
      authorization_response_iss_parameter_supported: true,
    });
    // The origin's own discovery documents are never relayed in broker mode.
    expect((await network("http://localhost/.well-known/openid-configuration")).status).toBe(404);
    // The proxy's metadata is where its challenge says, alone (docs/transport.md): not at the
    // root, which relay mode answers, nor at a profile's URL, whose resource is MCP_PATH's.
    for (const path of ["", "/mcp/gemini"]) {
      const elsewhere = await network(
        `http://localhost/.well-known/oauth-protected-resource${path}`,
      );
      expect(elsewhere.status).toBe(404);
    }
  });

  it("limits sign-in requests per client address, so no one exhausts OAUTH_KV's writes", async () => {
    const oauthKv = countingKv(env.OAUTH_KV as KVNamespace);
    const limiter = rateLimitPeriods();
    const network = clientNetwork(
      viaProxy(
        { ORIGIN_URL: origin, AUTH_MODE: "broker" },
        {
          app: createApp(),
          bindings: { OAUTH_KV: oauthKv.kv, SIGN_IN_RATE_LIMIT: limiter.binding },
        },
      ),
      BROKER_URL,
    );
    const register = (address = "2001:db8:77:1::1") =>
      network("http://localhost/oauth/register", {
        method: "POST",
        headers: { "content-type": "application/json", "cf-connecting-ip": address },
        body: JSON.stringify({
          client_name: "Flood",
          redirect_uris: [REDIRECT_URL],
          token_endpoint_auth_method: "none",
        }),
      });
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++) statuses.push((await register()).status);
    expect(statuses.every((status) => status === 201)).toBe(true);
    const refused = await register();
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("60");
    expect(await refused.json()).toMatchObject({ error: "temporarily_unavailable" });
    const writes = oauthKv.counts.put;
    expect((await register()).status).toBe(429);
    expect(oauthKv.counts.put).toBe(writes);
    // Nor another address of its /64, which one subscriber's network has 2^64 of, written any way.
    expect((await register("2001:db8:77:1:ffff:ffff:ffff:ffff")).status).toBe(429);
    expect((await register("2001:0DB8:0077:0001:0::9")).status).toBe(429);
    // An address of another /64 is not held back, nor is the MCP endpoint.
    expect((await register("2001:db8:77:2::1")).status).toBe(201);
    expect((await register("192.0.2.1")).status).toBe(201);
    expect((await network(BROKER_URL, { method: "POST", body: "{}" })).status).toBe(401);
    expect(events("sign_in_rate_limited")).toHaveLength(4);
    // A new period: the address is let in again.
    limiter.nextPeriod();
    expect((await register()).status).toBe(201);
  }, 30_000);

  it("sends access_denied back to the client when the user clicks Deny", async () => {
    const network = broker();
    const visit = await answerConsent(network, await authorizationRequest(network), "deny");
    expect(visit.callback.searchParams.get("error")).toBe("access_denied");
    expect(visit.callback.searchParams.get("state")).toBe("client-state");
    expect(visit.visited.some((url) => url.origin === new URL(origin).origin)).toBe(false);
    expect(events("sign_in_denied")).toMatchObject([{ by: "user" }]);
  });

  it("logs the proxy's own OAuth errors, never the code or token sent", async () => {
    const network = broker();
    const response = await network("http://localhost/oauth/token", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "authorization_code",
        code: "forged-code-value",
        client_id: "nobody",
        redirect_uri: REDIRECT_URL,
        code_verifier: "v".repeat(43),
      }),
    });
    expect(response.status).toBeGreaterThanOrEqual(400);
    expect(events("oauth_error")).toMatchObject([{ status: response.status }]);
    expect(JSON.stringify(log.mock.calls)).not.toContain("forged-code-value");
  });

  it("names the authorization server by its issuer on the consent page: Allow leads there, not to the MCP server", async () => {
    const network = broker();
    const page = await network(await authorizationRequest(network));
    expect(page.status).toBe(200);
    const issuer = new URL(BROKERED_ORIGIN.authorizationServer).href;
    const html = await page.text();
    expect(html).toContain(
      `If you allow it, you sign in next with <strong id="sign-in-issuer">${issuer}</strong>.`,
    );
    // Its sign-in page is on its own host: no word of another.
    expect(html).not.toContain("another host");
  });

  it("refuses a forged state, and a callback replayed", async () => {
    const network = broker();
    const forged = await network("http://localhost/oauth/callback?code=stolen&state=forged");
    expect(forged.status).toBe(400);

    const visit = await answerConsent(network, await authorizationRequest(network));
    expect(visit.callback.searchParams.get("code")).toBeTruthy();
    const callback = visit.visited.find((url) => url.pathname === "/oauth/callback");
    const replayed = await network(callback as URL);
    expect(replayed.status).toBe(400);
    expect(events("sign_in_failed")).toMatchObject([{ reason: "state" }, { reason: "state" }]);
  });
});
