/**
 * Broker mode's (`AUTH_MODE=broker`) sign-in: the proxy's own OAuth endpoints
 * (discovery, registration, the consent page, its token endpoint) and its
 * sign-in at the origin's authorization server, driven as a client and a
 * browser would, including when a step fails. No MCP request is made here
 * past the 401 that starts a sign-in, so no wire matters; what signed-in
 * clients do over each wire is broker-calls.test.ts's.
 */
import { env } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createApp } from "../../src/app";
import { countingKv } from "../../support/counting-kv";
import { OVERSIZED_BYTES } from "../fixtures/metadata-documents";
import { BROKER_URL, brokerFor, controlOrigin } from "../helpers/broker";
import { EACH_WIRE } from "../helpers/clients";
import { answerConsent } from "../helpers/consent";
import { piecesQuoted } from "../helpers/logs";
import { postJson, wireRequest } from "../helpers/mcp";
import { handBuiltClient, REDIRECT_URL } from "../helpers/oauth-client";
import {
  BROKERED_ORIGIN,
  CLOSED_ORIGIN,
  clientNetwork,
  DEMO_ORIGIN,
  METADATA_ORIGINS,
  viaProxy,
} from "../helpers/proxy";

const origin = BROKERED_ORIGIN.strict;

let log: ReturnType<typeof vi.spyOn>;

beforeEach(() => {
  log = vi.spyOn(console, "log");
});

afterEach(async () => {
  vi.restoreAllMocks();
  await control({ iss: "own", drop: [], tokenAnswer: null });
});

const control = (body: Record<string, unknown>) =>
  controlOrigin(BROKERED_ORIGIN.authorizationServer, body);
const broker = (vars: Record<string, string> = {}, bindings: Partial<Env> = {}) =>
  brokerFor(origin, vars, bindings);

/**
 * `OAUTH_KV` as a tenant that has not registered at the origin yet sees it
 * (the proxy's registration absent), or where reading it fails.
 */
function withoutUpstreamClient(real: KVNamespace, how: "absent" | "failing" = "absent") {
  return new Proxy(real, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== "function") return value;
      if (property !== "get") return value.bind(target);
      return (key: string, ...rest: unknown[]) => {
        if (!key.startsWith("edge-rewriter:upstream-client:"))
          return value.apply(target, [key, ...rest]);
        return how === "absent"
          ? Promise.resolve(null)
          : Promise.reject(new Error("KV down (test)"));
      };
    },
  });
}

function events(name: string) {
  return log.mock.calls
    .map(([line]: unknown[]) => JSON.parse(String(line)))
    .filter((line: { event: string }) => line.event === name);
}

/** A client's authorization request to the broker, as the SDK would build it, after registering. */
const authorizationRequest = async (network: ReturnType<typeof broker>) =>
  (await handBuiltClient(network, BROKER_URL)).url;

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

describe("broker mode: the proxy signs clients in, and signs in to the origin itself", () => {
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

  it("sends the client an OAuth error when the origin's token endpoint cannot be reached, never a 500", async () => {
    const network = broker();
    await control({ drop: ["/token"] });
    const visit = await answerConsent(network, await authorizationRequest(network));
    expect(visit.callback.searchParams.get("error")).toBe("server_error");
    expect(visit.callback.searchParams.get("state")).toBe("client-state");
    expect(events("sign_in_failed")).toMatchObject([{ reason: "token_request_failed" }]);
  });

  it("logs no part of a token the origin's token endpoint answers in a body that is no JSON", async () => {
    // A bare token where a JSON answer belongs: V8's SyntaxError quotes the body's first characters.
    const secret = `gho_${crypto.randomUUID().replaceAll("-", "")}`;
    await control({ tokenAnswer: { type: "application/json", body: secret } });
    const network = broker();
    const visit = await answerConsent(network, await authorizationRequest(network));
    expect(visit.callback.searchParams.get("error")).toBe("server_error");
    expect(events("sign_in_failed")).toMatchObject([
      { step: "callback", reason: "token_request_failed" },
    ]);
    expect(piecesQuoted(JSON.stringify(log.mock.calls), secret)).toEqual([]);
  });

  it("sends the client an OAuth error when the proxy cannot register at the origin, never a 500", async () => {
    // A tenant that has not registered yet: its stored registration is absent.
    const network = broker({}, { OAUTH_KV: withoutUpstreamClient(env.OAUTH_KV as KVNamespace) });
    await control({ drop: ["/register"] });
    const request = await authorizationRequest(network);
    const page = await network(request, { redirect: "manual" });
    expect(page.status).toBe(302);
    const location = new URL(page.headers.get("location") ?? "");
    expect(location.href.startsWith(REDIRECT_URL)).toBe(true);
    expect(location.searchParams.get("error")).toBe("temporarily_unavailable");
    expect(location.searchParams.get("error_description")).toContain("register");
    expect(events("sign_in_failed")).toMatchObject([{ reason: "registration_failed" }]);
  });

  it("asks for no token another server could use: an origin whose metadata names another resource is refused (RFC 9728 §3.3)", async () => {
    // The claimant's metadata names the strict origin, which the same authorization server serves.
    const network = clientNetwork(
      viaProxy({ ORIGIN_URL: BROKERED_ORIGIN.claimant, AUTH_MODE: "broker" }, { app: createApp() }),
      BROKER_URL,
    );
    const page = await network(await authorizationRequest(network), { redirect: "manual" });
    expect(page.status).toBe(302);
    const location = new URL(page.headers.get("location") ?? "");
    expect(location.href.startsWith(REDIRECT_URL)).toBe(true);
    expect(location.searchParams.get("error")).toBe("temporarily_unavailable");
    expect(location.searchParams.get("error_description")).toContain("another server");
    expect(events("sign_in_failed")).toMatchObject([
      { reason: "resource_mismatch", detail: expect.stringContaining(origin) },
    ]);
  });

  it("reads no more of an authorization server's answer than a bound: an origin that names one writing 8 MiB gets no sign-in", async () => {
    // Without UPSTREAM_ISSUER the origin names where the proxy signs in: here, itself.
    const hostile = METADATA_ORIGINS.oversized;
    const network = globalThis.fetch;
    let read = 0;
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
      const answer = await network(input, init);
      const url = new URL(input instanceof Request ? input.url : input);
      if (url.origin !== hostile || answer.body === null) return answer;
      const counted = new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          read += chunk.byteLength;
          controller.enqueue(chunk);
        },
      });
      return new Response(answer.body.pipeThrough(counted), answer);
    });
    const proxy = clientNetwork(
      viaProxy({ ORIGIN_URL: `${hostile}/v1/mcp`, AUTH_MODE: "broker" }, { app: createApp() }),
      BROKER_URL,
    );
    const page = await proxy(await authorizationRequest(proxy), { redirect: "manual" });
    expect(page.status).toBe(302);
    const location = new URL(page.headers.get("location") ?? "");
    expect(location.searchParams.get("error")).toBe("temporarily_unavailable");
    expect(events("sign_in_failed")).toMatchObject([
      {
        step: "consent",
        reason: "no_authorization_server",
        detail: expect.stringContaining("more than"),
      },
    ]);
    // Both of its metadata locations answered 8 MiB; what was read of them is a bound's worth.
    expect(read).toBeGreaterThan(0);
    expect(read).toBeLessThan(OVERSIZED_BYTES / 8);
  });

  it("sends the operator's client secret to no authorization server but UPSTREAM_ISSUER, whatever the origin's metadata names", async () => {
    const outbound = vi.spyOn(globalThis, "fetch");
    const network = broker({
      UPSTREAM_ISSUER: "https://auth.acme.example",
      UPSTREAM_CLIENT_ID: "acme-proxy",
      UPSTREAM_CLIENT_SECRET: "acme-secret",
    });
    const page = await network(await authorizationRequest(network), { redirect: "manual" });
    expect(page.status).toBe(302);
    const location = new URL(page.headers.get("location") ?? "");
    expect(location.searchParams.get("error")).toBe("temporarily_unavailable");
    expect(events("sign_in_failed")).toMatchObject([
      {
        reason: "issuer_mismatch",
        detail: expect.stringContaining("https://auth.acme.example/"),
      },
    ]);
    // The origin's own authorization server, which its metadata names, was never asked anything.
    const asked = outbound.mock.calls.map(
      ([input]) => new URL(input instanceof Request ? input.url : input),
    );
    expect(asked.map((url) => url.origin)).not.toContain(
      new URL(BROKERED_ORIGIN.authorizationServer).origin,
    );
    expect(JSON.stringify(log.mock.calls)).not.toContain("acme-secret");
  });

  it("logs where the client secret goes while UPSTREAM_ISSUER is unset, and not once it is set", async () => {
    const issuer = new URL(BROKERED_ORIGIN.authorizationServer);
    const secret = { UPSTREAM_CLIENT_ID: "acme-proxy", UPSTREAM_CLIENT_SECRET: "acme-secret" };
    const unpinned = broker(secret);
    expect((await unpinned(await authorizationRequest(unpinned))).status).toBe(200);
    expect(events("upstream_issuer_unpinned")).toMatchObject([{ issuer: issuer.href }]);
    const pinned = broker({ ...secret, UPSTREAM_ISSUER: issuer.origin });
    expect((await pinned(await authorizationRequest(pinned))).status).toBe(200);
    expect(events("upstream_issuer_unpinned")).toHaveLength(1);
  });

  it("asks the origin's metadata again after it failed (5xx): a sign-in after the origin recovers asks for the scopes it names", async () => {
    const issuer = new URL(BROKERED_ORIGIN.authorizationServer);
    const network = globalThis.fetch;
    let down = true;
    // The origin's metadata locations answer 503 while it is down, as what stands in front of it would.
    const outbound = vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
      const url = new URL(input instanceof Request ? input.url : input);
      const metadata = url.pathname.startsWith("/.well-known/oauth-protected-resource");
      if (down && url.origin === new URL(origin).origin && metadata) {
        return new Response("<h1>503 Service Unavailable</h1>", {
          status: 503,
          headers: { "content-type": "text/html" },
        });
      }
      return network(input, init);
    });
    // One isolate: its sign-ins share its memory of the origin.
    const proxy = broker({ UPSTREAM_ISSUER: issuer.origin });
    const askedAtOrigin = async () => {
      const visit = await answerConsent(proxy, await authorizationRequest(proxy));
      expect(visit.callback.searchParams.get("code")).toBeTruthy();
      return visit.visited
        .find((url) => url.origin === issuer.origin && url.pathname === "/authorize")
        ?.searchParams.get("scope");
    };
    // While its metadata fails, the sign-in goes on as for an origin that publishes none.
    expect(await askedAtOrigin()).toBeNull();
    expect(events("origin_error")).toContainEqual(
      expect.objectContaining({ status: 503, document: "oauth-protected-resource" }),
    );
    down = false;
    expect(await askedAtOrigin()).toBe("mcp:tools");
    // What it found is kept: a third sign-in asks neither document again.
    const discoveries = () =>
      outbound.mock.calls.filter(([input]) =>
        new URL(input instanceof Request ? input.url : input).pathname.startsWith("/.well-known/"),
      ).length;
    const before = discoveries();
    expect(await askedAtOrigin()).toBe("mcp:tools");
    expect(discoveries()).toBe(before);
  });

  it("signs in when OAUTH_KV cannot read the proxy's registration at the origin: it registers again", async () => {
    const failing = withoutUpstreamClient(env.OAUTH_KV as KVNamespace, "failing");
    const network = broker({}, { OAUTH_KV: failing });
    const visit = await answerConsent(network, await authorizationRequest(network));
    expect(visit.callback.searchParams.get("code")).toBeTruthy();
    expect(events("kv_error")).toMatchObject([{ op: "get" }]);
    expect(events("upstream_client_registered")).toHaveLength(1);
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

  it("refuses an authorization response that names another issuer (RFC 9207)", async () => {
    await control({ iss: "https://evil.example/" });
    const network = broker();
    const visit = await answerConsent(network, await authorizationRequest(network));
    expect(visit.callback.searchParams.get("error")).toBe("server_error");
    expect(visit.callback.searchParams.get("code")).toBeNull();
    expect(events("sign_in_failed")).toHaveLength(1);
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

  it("logs a sign-in whose authorization server cannot be reached with that cause, and where", async () => {
    const network = clientNetwork(
      viaProxy(
        { ORIGIN_URL: `${DEMO_ORIGIN}/mcp`, AUTH_MODE: "broker", UPSTREAM_ISSUER: CLOSED_ORIGIN },
        { app: createApp() },
      ),
      BROKER_URL,
    );
    const page = await network(await authorizationRequest(network), { redirect: "manual" });
    expect(page.status).toBe(302);
    const location = new URL(page.headers.get("location") ?? "");
    expect(location.searchParams.get("error")).toBe("temporarily_unavailable");
    expect(location.searchParams.get("error_description")).toBe(
      `The origin's authorization server (${new URL(CLOSED_ORIGIN).host}) could not be reached`,
    );
    expect(events("sign_in_failed")).toMatchObject([
      {
        step: "consent",
        reason: "authorization_server_unreachable",
        detail: expect.stringContaining(
          `${CLOSED_ORIGIN}/.well-known/oauth-authorization-server could not be reached (`,
        ),
      },
    ]);
  });
});
