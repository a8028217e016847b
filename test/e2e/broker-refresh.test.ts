/**
 * Broker mode's refresh of the origin's token behind an authorization server
 * that rotates refresh tokens (each works once, as Auth0's and Okta's do):
 * parallel calls once the origin's token expired, two isolates refreshing one
 * grant at once, the authorization server down, the proxy's token lifetime,
 * and a confidential client of the operator's. The fixture's switches expire
 * tokens and take its server down (test/fixtures/node/oauth-origin.ts); it is
 * this file's own, so its counts are this file's.
 */
import { env } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { answerConsent } from "../helpers/consent";
import { DEMO_NAMES } from "../helpers/demo-names";
import { captureLogs } from "../helpers/logs";
import { PROTOCOL_VERSION, postJson, rpc } from "../helpers/mcp";
import { type MemoryOAuthClient, type SignedIn, signInAndConnect } from "../helpers/oauth-client";
import { clientNetwork, type Fetch, REFRESHING_ORIGIN, viaProxy } from "../helpers/proxy";

const BROKER_URL = "http://localhost/mcp";
const TOKEN_URL = "http://localhost/oauth/token";
const origin = REFRESHING_ORIGIN.strict;
const TOOL = DEMO_NAMES["files.read"];

const connected: SignedIn[] = [];
let logs: ReturnType<typeof captureLogs>;
beforeEach(() => {
  logs = captureLogs();
});
afterEach(async () => {
  logs.restore();
  await Promise.all(connected.splice(0).map(({ client }) => client.close()));
  await control({ drop: [], unavailable: [], lifetime: 3600 });
});

/** Flips the origin's authorization server. */
async function control(body: Record<string, unknown>) {
  const response = await fetch(new URL("/__control", REFRESHING_ORIGIN.authorizationServer), {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  expect(response.status).toBe(204);
}

/** The refresh requests the origin's authorization server took, and those it answered with tokens. */
async function refreshesAtOrigin(): Promise<{ asked: number; refreshed: number }> {
  return (await fetch(new URL("/__refreshes", REFRESHING_ORIGIN.authorizationServer))).json();
}

/** The proxy in broker mode as one isolate (`createApp()`), as its clients reach it. */
function broker(vars: Record<string, string> = {}, bindings: Partial<Env> = {}): Fetch {
  return clientNetwork(
    viaProxy({ ORIGIN_URL: origin, AUTH_MODE: "broker", ...vars }, { app: createApp(), bindings }),
    BROKER_URL,
  );
}

async function signIn(network: Fetch): Promise<SignedIn> {
  const signedIn = await signInAndConnect(BROKER_URL, network, async (url) => {
    return (await answerConsent(network, url)).callback;
  });
  connected.push(signedIn);
  // Set again only if the client is sent to sign in once more.
  signedIn.provider.authorizationUrl = undefined;
  return signedIn;
}

const events = (name: string) => logs.events(name);
/** Every log line as written, to look for what must never be in one. */
const logged = () => JSON.stringify(logs.lines());

/** The proxy's token endpoint asked for a refresh, as a client asks. */
function refresh(
  network: Fetch,
  provider: MemoryOAuthClient,
  refreshToken: string,
  headers: Record<string, string> = {},
) {
  return network(TOKEN_URL, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
    body: new URLSearchParams({
      grant_type: "refresh_token",
      refresh_token: refreshToken,
      client_id: String(provider.information?.client_id),
    }),
  });
}

/**
 * `OAUTH_KV` whose reads of a grant, once `close`d, wait (after reading) until
 * `open`: the library has read the grant and not yet refreshed it.
 * `reached` settles when one has read it.
 */
function held(real: KVNamespace) {
  let opened = Promise.resolve();
  let open = () => {};
  let reach = () => {};
  const reached = new Promise<void>((resolve) => {
    reach = resolve;
  });
  const kv = new Proxy(real, {
    get(target, property) {
      const value = Reflect.get(target, property);
      if (typeof value !== "function") return value;
      if (property !== "get") return value.bind(target);
      return async (key: string, ...rest: unknown[]) => {
        const got = await value.apply(target, [key, ...rest]);
        if (key.startsWith("grant:")) {
          reach();
          await opened;
        }
        return got;
      };
    },
  });
  return {
    kv,
    reached,
    close() {
      opened = new Promise((resolve) => {
        open = resolve;
      });
    },
    open: () => open(),
  };
}

interface TokenAnswer {
  access_token: string;
  refresh_token: string;
  expires_in: number;
}

/** A tool call with the proxy's `accessToken`, as a client without the SDK sends it: its HTTP status. */
async function callWith(network: Fetch, accessToken: string, path: string) {
  const response = await postJson(
    network,
    BROKER_URL,
    rpc(1, "tools/call", { name: TOOL, arguments: { path } }),
    { authorization: `Bearer ${accessToken}`, "mcp-protocol-version": PROTOCOL_VERSION },
  );
  const body = response.status === 200 ? await response.json() : await response.text();
  return { status: response.status, body };
}

const called = (path: string) => ({ tool: "files.read", arguments: { path } });

describe("broker mode refreshes the origin's token once per grant, whoever asks at once", () => {
  it("answers 4 parallel calls made after the origin's token expired, with one refresh at the origin, and keeps the sign-in", async () => {
    const network = broker();
    const { client, provider } = await signIn(network);
    const before = await refreshesAtOrigin();
    await control({ expire: true });

    const paths = ["a", "b", "c", "d"];
    const results = await Promise.all(
      paths.map((path) => client.callTool({ name: TOOL, arguments: { path } })),
    );
    expect(results.map((result) => result.structuredContent)).toEqual(paths.map(called));
    expect(await refreshesAtOrigin()).toEqual({
      asked: before.asked + 1,
      refreshed: before.refreshed + 1,
    });
    // One refresh at the origin; every other refresh request was answered with what it got.
    const refreshes = events("upstream_refresh");
    expect(refreshes.filter((line) => !line.shared)).toEqual([
      expect.objectContaining({ result: "refreshed" }),
    ]);
    for (const line of refreshes) expect(line.result).toBe("refreshed");

    // The sign-in is kept, and the refresh token the client kept works: the next expiry is one more refresh.
    await control({ expire: true });
    const later = await client.callTool({ name: TOOL, arguments: { path: "e" } });
    expect(later.structuredContent).toEqual(called("e"));
    expect((await refreshesAtOrigin()).refreshed).toBe(before.refreshed + 2);
    expect(provider.authorizationUrl).toBeUndefined();
    expect(events("sign_in_started")).toHaveLength(1);
  });

  it("gives 4 refreshes sent at once with one refresh token working tokens, from one refresh at the origin", async () => {
    const network = broker();
    const { provider } = await signIn(network);
    const before = await refreshesAtOrigin();
    const refreshToken = provider.saved?.refresh_token ?? "";
    await control({ expire: true });

    // In the order the client gets the answers, which is the order it keeps their tokens in.
    const order: number[] = [];
    const answers = await Promise.all(
      [0, 1, 2, 3].map(async (i) => {
        const answer = await refresh(network, provider, refreshToken);
        order.push(i);
        return answer;
      }),
    );
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200]);
    const tokens = await Promise.all(answers.map((answer) => answer.json<TokenAnswer>()));
    const calls = await Promise.all(
      tokens.map((token, i) => callWith(network, token.access_token, `p${i}`)),
    );
    expect(calls.map((call) => call.status)).toEqual([200, 200, 200, 200]);
    expect(await refreshesAtOrigin()).toEqual({
      asked: before.asked + 1,
      refreshed: before.refreshed + 1,
    });
    // The grant lives on: once the origin refuses its token again, the tokens answered last refresh it.
    const kept = tokens[order.at(-1) ?? 0] as TokenAnswer;
    await control({ expire: true });
    expect((await callWith(network, kept.access_token, "q")).status).toBe(401);
    const again = await refresh(network, provider, kept.refresh_token);
    expect(again.status).toBe(200);
    const { access_token } = await again.json<TokenAnswer>();
    expect((await callWith(network, access_token, "r")).status).toBe(200);
    expect((await refreshesAtOrigin()).refreshed).toBe(before.refreshed + 2);
  });

  it("answers one grant's refreshes one after another, so the tokens the client gets last are those the grant keeps", async () => {
    // The library reads the grant (`grant:`), then writes it and the new access token (`token:`):
    // count the refreshes between the two at any one time.
    let inside = 0;
    let most = 0;
    const real = env.OAUTH_KV as KVNamespace;
    const watched = new Proxy(real, {
      get(target, property) {
        const value = Reflect.get(target, property);
        if (typeof value !== "function") return value;
        if (property !== "get" && property !== "put") return value.bind(target);
        return async (key: string, ...rest: unknown[]) => {
          if (property === "get" && key.startsWith("grant:")) most = Math.max(most, ++inside);
          const result = await value.apply(target, [key, ...rest]);
          if (property === "put" && key.startsWith("token:")) inside--;
          return result;
        };
      },
    });
    const network = broker({}, { OAUTH_KV: watched });
    const { provider } = await signIn(network);
    const refreshToken = provider.saved?.refresh_token ?? "";
    await control({ expire: true });
    inside = 0;
    most = 0;
    const answers = await Promise.all(
      [0, 1, 2, 3].map(() => refresh(network, provider, refreshToken)),
    );
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200]);
    expect(most).toBe(1);
  });

  it("tells a refresh that would wait behind 32 others of its grant to try again", async () => {
    // The first refresh is held where the library reads the grant, so the others wait behind it.
    const gate = held(env.OAUTH_KV as KVNamespace);
    const network = broker({}, { OAUTH_KV: gate.kv });
    const { provider } = await signIn(network);
    const refreshToken = provider.saved?.refresh_token ?? "";
    gate.close();
    // From 33 addresses: one address gets 30 sign-in requests a minute (SIGN_IN_RATE_LIMIT).
    const pending = Array.from({ length: 33 }, (_, i) =>
      refresh(network, provider, refreshToken, { "cf-connecting-ip": `2001:db8::33:${i}` }),
    );
    const busy = await Promise.race(pending);
    expect(busy.status).toBe(503);
    expect(busy.headers.get("retry-after")).toBe("1");
    expect(await busy.json()).toMatchObject({ error: "temporarily_unavailable" });
    gate.open();
    const statuses = (await Promise.all(pending)).map((answer) => answer.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(32);
  });

  it("keeps a grant another isolate just refreshed when its own refresh finds the origin's refresh token spent", async () => {
    const { provider } = await signIn(broker());
    const refreshToken = provider.saved?.refresh_token ?? "";
    // Isolate B reads the grant, then waits while isolate A refreshes it: B holds the spent token.
    const gate = held(env.OAUTH_KV as KVNamespace);
    const isolateA = broker();
    const isolateB = broker({}, { OAUTH_KV: gate.kv });
    const before = await refreshesAtOrigin();

    gate.close();
    const answerB = refresh(isolateB, provider, refreshToken);
    await gate.reached;
    const answerA = await refresh(isolateA, provider, refreshToken);
    expect(answerA.status).toBe(200);
    gate.open();
    const refusedB = await answerB;

    // B's client is asked to try again; nobody is signed out.
    expect(refusedB.status).toBe(503);
    expect(refusedB.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(await refusedB.json()).toMatchObject({ error: "temporarily_unavailable" });
    expect(await refreshesAtOrigin()).toEqual({
      asked: before.asked + 2,
      refreshed: before.refreshed + 1,
    });
    const tokensA = await answerA.json<TokenAnswer>();
    expect((await callWith(isolateA, tokensA.access_token, "a")).status).toBe(200);
    // B's client retries with the refresh token it holds, which the grant still takes.
    const retried = await refresh(isolateB, provider, refreshToken);
    expect(retried.status).toBe(200);
    const tokensB = await retried.json<TokenAnswer>();
    expect((await callWith(isolateB, tokensB.access_token, "b")).status).toBe(200);
    expect(events("upstream_refresh").map((line) => line.result)).toEqual([
      "refreshed",
      "spent",
      "refreshed",
    ]);
  });
});

describe("broker mode while the origin's authorization server is down", () => {
  it.each([
    ["refuses connections", { drop: ["/token"] }, { reason: "unreachable" }],
    ["answers 503", { unavailable: ["/token"] }, { reason: "unexpected_response", status: 503 }],
  ])(
    "answers a refresh 503 with Retry-After when it %s, keeps the grant, and refreshes once it is back",
    async (_how, down, cause) => {
      const network = broker();
      const { client, provider } = await signIn(network);
      const refreshToken = provider.saved?.refresh_token ?? "";
      await control({ expire: true, ...down });

      const failure = await client
        .callTool({ name: TOOL, arguments: { path: "a" } })
        .catch((error: unknown) => error);
      expect(String(failure)).toMatch(/unavailable/i);
      const answer = await refresh(network, provider, refreshToken);
      expect(answer.status).toBe(503);
      expect(answer.headers.get("retry-after")).toMatch(/^\d+$/);
      expect(await answer.json()).toMatchObject({ error: "temporarily_unavailable" });
      const failed = events("upstream_refresh");
      expect(failed.length).toBeGreaterThan(0);
      for (const line of failed) expect(line).toMatchObject({ result: "failed", ...cause });
      const lines = logged();
      expect(lines).not.toContain(refreshToken);
      expect(lines).not.toContain(provider.saved?.access_token);

      // Back up: the same client, with the same grant, just works.
      await control({ drop: [], unavailable: [] });
      const result = await client.callTool({ name: TOOL, arguments: { path: "b" } });
      expect(result.structuredContent).toEqual(called("b"));
      expect(provider.authorizationUrl).toBeUndefined();
      expect(events("upstream_refresh").at(-1)).toMatchObject({ result: "refreshed" });
    },
  );
});

describe("the proxy's token lives no longer than the origin's", () => {
  it("is issued for the origin's token's lifetime at sign-in and at each refresh", async () => {
    await control({ lifetime: 600 });
    const network = broker();
    const { provider } = await signIn(network);
    const signedIn = provider.saved?.expires_in ?? Number.POSITIVE_INFINITY;
    expect(signedIn).toBeLessThanOrEqual(600);
    expect(signedIn).toBeGreaterThan(60);

    await control({ lifetime: 300 });
    const answer = await refresh(network, provider, provider.saved?.refresh_token ?? "");
    const refreshed = await answer.json<TokenAnswer>();
    expect(refreshed.expires_in).toBeLessThanOrEqual(300);
    expect(refreshed.expires_in).toBeGreaterThan(60);
  });

  it("is refused once the origin's token expired, though the library's floor made it live a minute", async () => {
    const network = broker();
    const { provider } = await signIn(network);
    // The origin's next token is expired as it is issued; the proxy's cannot live under 60 seconds.
    await control({ lifetime: 0 });
    const answer = await refresh(network, provider, provider.saved?.refresh_token ?? "");
    const refreshed = await answer.json<TokenAnswer>();
    expect(refreshed.expires_in).toBe(60);
    const refused = await callWith(network, refreshed.access_token, "a");
    expect(refused.status).toBe(401);
    expect(events("upstream_token_expired")).toHaveLength(1);
  });
});

describe("broker mode with the operator's own client at the origin", () => {
  it("signs in and refreshes with UPSTREAM_CLIENT_ID and UPSTREAM_CLIENT_SECRET (a confidential client)", async () => {
    const issuer = new URL(REFRESHING_ORIGIN.authorizationServer);
    const registered = await fetch(new URL("/register", issuer), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        client_name: "The operator's proxy",
        redirect_uris: ["http://localhost/oauth/callback"],
        grant_types: ["authorization_code", "refresh_token"],
        token_endpoint_auth_method: "client_secret_post",
      }),
    }).then((response) => response.json<{ client_id: string; client_secret: string }>());
    expect(registered.client_secret).toBeTruthy();
    const vars = {
      UPSTREAM_ISSUER: issuer.origin,
      UPSTREAM_CLIENT_ID: registered.client_id,
      UPSTREAM_CLIENT_SECRET: registered.client_secret,
    };

    const { client } = await signIn(broker(vars));
    const result = await client.callTool({ name: TOOL, arguments: { path: "a" } });
    expect(result.structuredContent).toEqual(called("a"));
    await control({ expire: true });
    const refreshed = await client.callTool({ name: TOOL, arguments: { path: "b" } });
    expect(refreshed.structuredContent).toEqual(called("b"));
    expect(events("upstream_client_registered")).toEqual([]);
    expect(events("upstream_refresh")).toMatchObject([{ result: "refreshed" }]);
    expect(logged()).not.toContain(registered.client_secret);

    // The authorization server checks the secret: a wrong one signs nobody in.
    const wrong = broker({ ...vars, UPSTREAM_CLIENT_SECRET: "not-the-secret" });
    await expect(signIn(wrong)).rejects.toThrow();
    expect(events("sign_in_failed")).toMatchObject([{ reason: "invalid_client" }]);
  });
});
