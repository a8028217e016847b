/**
 * Broker mode's (`AUTH_MODE=broker`) sign-in at the origin's authorization
 * server, driven as a client and a browser would, when a step there fails
 * or the server is not the one it should be: its token endpoint unreachable
 * or answering no JSON, registration failing, metadata that names another
 * resource, answers past a bound, a client secret bound for another server,
 * metadata that fails for a while, an issuer that is not the one asked. The
 * proxy's own endpoints are broker.test.ts's. The authorization server these
 * tests take down is this file's alone (`BREAKING_ORIGIN`): other files sign
 * in at the same time, at theirs.
 */
import { env } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createApp } from "../../src/app";
import { OVERSIZED_BYTES } from "../fixtures/metadata-documents";
import {
  authorizationRequest,
  BROKER_URL,
  brokerFor,
  controlOrigin,
  signInWithConsent,
} from "../helpers/broker";
import { answerConsent } from "../helpers/consent";
import { piecesQuoted } from "../helpers/logs";
import { REDIRECT_URL } from "../helpers/oauth-client";
import {
  BREAKING_ORIGIN,
  CLOSED_ORIGIN,
  clientNetwork,
  DEMO_ORIGIN,
  METADATA_ORIGINS,
  viaProxy,
} from "../helpers/proxy";

const origin = BREAKING_ORIGIN.strict;

let log: ReturnType<typeof vi.spyOn>;

beforeEach(() => {
  log = vi.spyOn(console, "log");
});

afterEach(async () => {
  vi.restoreAllMocks();
  await control({ iss: "own", drop: [], tokenAnswer: null, lifetime: 3600 });
});

const control = (body: Record<string, unknown>) =>
  controlOrigin(BREAKING_ORIGIN.authorizationServer, body);
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

describe("broker mode: the proxy signs in to the origin's authorization server, and says what failed there", () => {
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
      viaProxy({ ORIGIN_URL: BREAKING_ORIGIN.claimant, AUTH_MODE: "broker" }, { app: createApp() }),
      BROKER_URL,
    );
    const page = await network(await authorizationRequest(network), { redirect: "manual" });
    expect(page.status).toBe(302);
    const location = new URL(page.headers.get("location") ?? "");
    expect(location.href.startsWith(REDIRECT_URL)).toBe(true);
    expect(location.searchParams.get("error")).toBe("temporarily_unavailable");
    expect(location.searchParams.get("error_description")).toContain("another server");
    expect(events("sign_in_failed")).toMatchObject([
      // Where it is by its origin alone: a path may hold a key (docs/transport.md).
      { reason: "resource_mismatch", detail: expect.stringContaining(new URL(origin).origin) },
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
      new URL(BREAKING_ORIGIN.authorizationServer).origin,
    );
    expect(JSON.stringify(log.mock.calls)).not.toContain("acme-secret");
  });

  it("logs where the client secret goes while UPSTREAM_ISSUER is unset, and not once it is set", async () => {
    const issuer = new URL(BREAKING_ORIGIN.authorizationServer);
    const secret = { UPSTREAM_CLIENT_ID: "acme-proxy", UPSTREAM_CLIENT_SECRET: "acme-secret" };
    const unpinned = broker(secret);
    expect((await unpinned(await authorizationRequest(unpinned))).status).toBe(200);
    expect(events("upstream_issuer_unpinned")).toMatchObject([{ issuer: issuer.href }]);
    const pinned = broker({ ...secret, UPSTREAM_ISSUER: issuer.origin });
    expect((await pinned(await authorizationRequest(pinned))).status).toBe(200);
    expect(events("upstream_issuer_unpinned")).toHaveLength(1);
  });

  it("asks the origin's metadata again after it failed (5xx): a sign-in after the origin recovers asks for the scopes it names", async () => {
    const issuer = new URL(BREAKING_ORIGIN.authorizationServer);
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

  it("signs in where the origin's authorization server says its token lives 1e306 seconds: a year at most", async () => {
    // Any finite `expires_in` passes oauth4webapi; this one made the token's expiry Infinity, which
    // the library refused as the proxy's token lifetime (a 400 to the client), never a sign-in.
    await control({ lifetime: 1e306 });
    const signedIn = await signInWithConsent(broker(), "2025-11-25");
    try {
      const lifetime = Number((signedIn.provider.saved as { expires_in?: unknown }).expires_in);
      expect(lifetime).toBeGreaterThan(364 * 24 * 3600);
      expect(lifetime).toBeLessThanOrEqual(365 * 24 * 3600);
      expect((await signedIn.client.listTools()).length).toBeGreaterThan(0);
    } finally {
      await signedIn.client.close();
    }
  });

  it("refuses an authorization response that names another issuer (RFC 9207)", async () => {
    await control({ iss: "https://evil.example/" });
    const network = broker();
    const visit = await answerConsent(network, await authorizationRequest(network));
    expect(visit.callback.searchParams.get("error")).toBe("server_error");
    expect(visit.callback.searchParams.get("code")).toBeNull();
    expect(events("sign_in_failed")).toHaveLength(1);
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
