/**
 * Broker mode's refresh of the origin's token behind an authorization server
 * that rotates refresh tokens (each works once, as Auth0's and Okta's do):
 * parallel calls once the origin's token expired, two isolates refreshing one
 * grant at once, the authorization server down, the proxy's token lifetime,
 * and a confidential client of the operator's. The fixture's switches expire
 * tokens and take its server down (test/fixtures/node/oauth-origin.ts); it is
 * this file's own, so its counts are this file's. What SDK clients call runs
 * on each wire; the token endpoint's own tests (refreshes sent at once, their
 * queue, two isolates) ask no MCP request of a wire, and run once.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { askWithToken, brokerOfEachTest, refreshAt, watchingStream } from "../helpers/broker";
import { EACH_WIRE, type Wire } from "../helpers/clients";
import { DEMO_NAMES } from "../helpers/demo-names";
import { piecesQuoted } from "../helpers/logs";
import { type Fetch, REFRESHING_ORIGIN } from "../helpers/proxy";

const TOOL = DEMO_NAMES["files.read"];

const { control, broker, signIn, events, logged } = brokerOfEachTest(REFRESHING_ORIGIN, {
  drop: [],
  unavailable: [],
  tokenAnswer: null,
  lifetime: 3600,
});

/** A token the authorization server answers bare, where a JSON answer belongs. */
const BARE_TOKEN = `gho_${crypto.randomUUID().replaceAll("-", "")}`;

/** The refresh requests the origin's authorization server took, and those it answered with tokens. */
async function refreshesAtOrigin(): Promise<{ asked: number; refreshed: number }> {
  return (await fetch(new URL("/__refreshes", REFRESHING_ORIGIN.authorizationServer))).json();
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

/**
 * `network` whose refreshes at the proxy's token endpoint, once `holdUntil(n)`
 * is asked, wait until `n` MCP requests were refused (401). The 1.x SDK's
 * transport fails a call refused after another call's refresh finished and
 * before that call's retry was answered ("Server returned 401 after successful
 * authentication": its guard is the transport's, not the call's). The proxy
 * spares a call that reaches it after the refresh (a test below), not one
 * the origin was already refusing: so calls sent at once are all refused
 * before the client refreshes, or the test depends on how loaded the machine
 * is (docs/sign-in.md, Refreshes).
 */
function refreshesAfterRefusals(network: Fetch) {
  let refusedAll: Promise<void> | undefined;
  let refused = () => {};
  const gated: Fetch = async (input, init) => {
    const { pathname } = new URL(input instanceof Request ? input.url : input);
    if (pathname === "/oauth/token") await refusedAll;
    const answer = await network(input, init);
    // Calls' refusals, not the GET stream's, which the client reopens when it will.
    if (pathname === "/mcp" && init?.method === "POST" && answer.status === 401) refused();
    return answer;
  };
  return {
    network: gated,
    holdUntil(refusals: number) {
      let left = refusals;
      refusedAll = new Promise((resolve) => {
        refused = () => {
          if (--left === 0) resolve();
        };
      });
    },
  };
}

interface TokenAnswer {
  access_token: string;
  refresh_token: string;
  expires_in: number;
}

/** A tool call of `revision` (2025-11-25 unless said) with the proxy's `accessToken`, as a client without the SDK sends it: its HTTP status. */
async function callWith(
  network: Fetch,
  accessToken: string,
  path: string,
  revision: Wire = "2025-11-25",
) {
  const response = await askWithToken(network, accessToken, revision, "tools/call", {
    name: TOOL,
    arguments: { path },
  });
  await response.body?.cancel();
  return { status: response.status };
}

const called = (path: string) => ({ tool: "files.read", arguments: { path } });

/**
 * `network` for SDK clients that sign in and then go quiet: once `cut`, none
 * of their requests reaches the proxy (the 1.x client's stream, or its retry,
 * would refresh its grant on its own, whenever it is refused).
 */
function untilCut(network: Fetch) {
  let open = true;
  const cutting: Fetch = (input, init) =>
    open ? network(input, init) : Promise.reject(new TypeError("cut"));
  return {
    network: cutting,
    cut() {
      open = false;
    },
  };
}

describe("broker mode refreshes the origin's token once per grant, whoever asks at once", () => {
  it.each(EACH_WIRE)(
    "answers 4 parallel calls on %s made after the origin's token expired, with one refresh at the origin, and keeps the sign-in",
    async (revision) => {
      const { network, holdUntil } = refreshesAfterRefusals(broker());
      const { client, provider } = await signIn(network, revision);
      const before = await refreshesAtOrigin();
      await control({ expire: true });

      const paths = ["a", "b", "c", "d"];
      holdUntil(paths.length);
      const results = await Promise.all(paths.map((path) => client.callTool(TOOL, { path })));
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
      const later = await client.callTool(TOOL, { path: "e" });
      expect(later.structuredContent).toEqual(called("e"));
      expect((await refreshesAtOrigin()).refreshed).toBe(before.refreshed + 2);
      expect(provider.authorizationUrl).toBeUndefined();
      expect(events("sign_in_started")).toHaveLength(1);
    },
  );

  it("answers a call made with the proxy's token from before its client's refresh with the token that refresh got, not a 401", async () => {
    // A call sent before its client's refresh was answered, and read after: the 1.x SDK's
    // transport takes a 401 then for a refresh that did not work, and fails the call.
    const network = broker();
    // Its GET stream answered first: sent after the expiry, it would be refused too.
    const watched = watchingStream(network, "2025-11-25");
    const { client, provider } = await signIn(watched.network);
    await watched.streamOpened;
    const before = provider.saved?.access_token ?? "";
    const refreshes = await refreshesAtOrigin();
    await control({ expire: true });
    expect((await client.callTool(TOOL, { path: "a" })).structuredContent).toEqual(called("a"));
    expect(provider.saved?.access_token).not.toBe(before);

    expect((await callWith(network, before, "late")).status).toBe(200);
    expect((await refreshesAtOrigin()).refreshed).toBe(refreshes.refreshed + 1);
    // The origin refused the expired token once, for the first call: the late one went with the new.
    expect(events("upstream_token_refused")).toHaveLength(1);
  });

  it("gives no one else's refreshed token: another user's call from before their own refresh is refused", async () => {
    const network = broker();
    const clients = untilCut(network);
    const [alice, mallory] = [await signIn(clients.network), await signIn(clients.network)];
    clients.cut();
    const tokensOf = ({ provider }: typeof alice) => provider.saved as TokenAnswer;
    await control({ expire: true });
    const refreshed = await refreshAt(network, alice.provider, tokensOf(alice).refresh_token);
    expect(refreshed.status).toBe(200);

    expect((await callWith(network, tokensOf(mallory).access_token, "m")).status).toBe(401);
    expect((await callWith(network, tokensOf(alice).access_token, "a")).status).toBe(200);
  });

  it("gives no other grant's refreshed token where the authorization server issued one access token to two grants", async () => {
    // An authorization server that answers a code with an access token it gave before (a cache of
    // answers, a bug, a hostile one): mallory's grant holds alice's token, until it expires.
    const real = globalThis.fetch;
    const tokenEndpoint = new URL("/token", REFRESHING_ORIGIN.authorizationServer).href;
    let issued: string | undefined;
    let reissue = false;
    const outbound = vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
      const answer = await real(input, init);
      if ((input instanceof Request ? input.url : String(input)) !== tokenEndpoint) return answer;
      const tokens = (await answer.json()) as TokenAnswer;
      if (reissue && issued !== undefined) tokens.access_token = issued;
      else issued ??= tokens.access_token;
      return Response.json(tokens, { status: answer.status });
    });
    const network = broker();
    const clients = untilCut(network);
    const alice = await signIn(clients.network);
    reissue = true;
    const mallory = await signIn(clients.network);
    clients.cut();
    outbound.mockRestore();
    const tokensOf = ({ provider }: typeof alice) => provider.saved as TokenAnswer;
    const [aliceBefore, malloryBefore] = [tokensOf(alice), tokensOf(mallory)];
    await control({ expire: true });
    expect((await refreshAt(network, alice.provider, aliceBefore.refresh_token)).status).toBe(200);

    // Mallory's grant held the origin's token alice's held, not alice's refresh: refused, as it expired.
    expect((await callWith(network, malloryBefore.access_token, "m")).status).toBe(401);
    expect((await callWith(network, aliceBefore.access_token, "a")).status).toBe(200);
  });

  it("gives 4 refreshes sent at once with one refresh token working tokens, from one refresh at the origin", async () => {
    // The SDK client goes quiet once signed in: the 1.x client opens its GET stream after connect()
    // resolved, and one sent after the expiry below (a loaded machine) is refused, and refreshes
    // with the same refresh token. Answered after the four, it would leave the grant holding the
    // refresh token that SDK client got, not the one kept below: the client of the four
    // refreshes and the SDK client would be two clients spending one refresh token.
    const network = broker();
    const clients = untilCut(network);
    const { provider } = await signIn(clients.network);
    clients.cut();
    const before = await refreshesAtOrigin();
    const refreshToken = provider.saved?.refresh_token ?? "";
    await control({ expire: true });

    // In the order the client gets the answers, which is the order it keeps their tokens in.
    const order: number[] = [];
    const answers = await Promise.all(
      [0, 1, 2, 3].map(async (i) => {
        const answer = await refreshAt(network, provider, refreshToken);
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
    const again = await refreshAt(network, provider, kept.refresh_token);
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
      [0, 1, 2, 3].map(() => refreshAt(network, provider, refreshToken)),
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
    // From 33 networks: one address's /64 gets 30 sign-in requests a minute (SIGN_IN_RATE_LIMIT).
    const pending = Array.from({ length: 33 }, (_, i) =>
      refreshAt(network, provider, refreshToken, { "cf-connecting-ip": `2001:db8:33:${i}::1` }),
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
    const answerB = refreshAt(isolateB, provider, refreshToken);
    await gate.reached;
    const answerA = await refreshAt(isolateA, provider, refreshToken);
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
    const retried = await refreshAt(isolateB, provider, refreshToken);
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

describe.each(EACH_WIRE)(
  "broker mode on %s while the origin's authorization server is down",
  (revision) => {
    it.each([
      ["refuses connections", { drop: ["/token"] }, { reason: "unreachable" }],
      ["answers 503", { unavailable: ["/token"] }, { reason: "unexpected_response", status: 503 }],
      [
        "answers a bare token, no JSON",
        { tokenAnswer: { type: "application/json", body: BARE_TOKEN } },
        { reason: "unexpected_response", status: 200 },
      ],
    ])(
      "answers a refresh 503 with Retry-After when it %s, keeps the grant, and refreshes once it is back",
      async (_how, down, cause) => {
        const network = broker();
        const { client, provider } = await signIn(network, revision);
        const refreshToken = provider.saved?.refresh_token ?? "";
        await control({ expire: true, ...down });

        const failure = await client.callTool(TOOL, { path: "a" }).catch((error: unknown) => error);
        expect(String(failure)).toMatch(/unavailable/i);
        const answer = await refreshAt(network, provider, refreshToken);
        expect(answer.status).toBe(503);
        expect(answer.headers.get("retry-after")).toMatch(/^\d+$/);
        expect(await answer.json()).toMatchObject({ error: "temporarily_unavailable" });
        const failed = events("upstream_refresh");
        expect(failed.length).toBeGreaterThan(0);
        for (const line of failed) expect(line).toMatchObject({ result: "failed", ...cause });
        const lines = logged();
        expect(lines).not.toContain(refreshToken);
        expect(lines).not.toContain(provider.saved?.access_token);
        // V8's SyntaxError quotes an answer's first characters: none of them are logged.
        expect(piecesQuoted(lines, BARE_TOKEN)).toEqual([]);

        // Back up: the same client, with the same grant, just works.
        await control({ drop: [], unavailable: [], tokenAnswer: null });
        const result = await client.callTool(TOOL, { path: "b" });
        expect(result.structuredContent).toEqual(called("b"));
        expect(provider.authorizationUrl).toBeUndefined();
        expect(events("upstream_refresh").at(-1)).toMatchObject({ result: "refreshed" });
      },
    );
  },
);

describe("the proxy's token lives no longer than the origin's", () => {
  it("is issued for the origin's token's lifetime at sign-in and at each refresh", async () => {
    await control({ lifetime: 600 });
    const network = broker();
    const { provider } = await signIn(network);
    const signedIn = provider.saved?.expires_in ?? Number.POSITIVE_INFINITY;
    expect(signedIn).toBeLessThanOrEqual(600);
    expect(signedIn).toBeGreaterThan(60);

    await control({ lifetime: 300 });
    const answer = await refreshAt(network, provider, provider.saved?.refresh_token ?? "");
    const refreshed = await answer.json<TokenAnswer>();
    expect(refreshed.expires_in).toBeLessThanOrEqual(300);
    expect(refreshed.expires_in).toBeGreaterThan(60);
  });

  it.each(EACH_WIRE)(
    "is refused on %s once the origin's token expired, though the library's floor made it live a minute",
    async (revision) => {
      const network = broker();
      const { provider } = await signIn(network);
      // The origin's next token is expired as it is issued; the proxy's cannot live under 60 seconds.
      await control({ lifetime: 0 });
      const answer = await refreshAt(network, provider, provider.saved?.refresh_token ?? "");
      const refreshed = await answer.json<TokenAnswer>();
      expect(refreshed.expires_in).toBe(60);
      const refused = await callWith(network, refreshed.access_token, "a", revision);
      expect(refused.status).toBe(401);
      expect(events("upstream_token_expired")).toHaveLength(1);
    },
  );
});

describe("broker mode with the operator's own client at the origin", () => {
  it.each(EACH_WIRE)(
    "signs in on %s and refreshes with UPSTREAM_CLIENT_ID and UPSTREAM_CLIENT_SECRET (a confidential client)",
    async (revision) => {
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

      const { client } = await signIn(broker(vars), revision);
      const result = await client.callTool(TOOL, { path: "a" });
      expect(result.structuredContent).toEqual(called("a"));
      await control({ expire: true });
      const refreshed = await client.callTool(TOOL, { path: "b" });
      expect(refreshed.structuredContent).toEqual(called("b"));
      expect(events("upstream_client_registered")).toEqual([]);
      expect(events("upstream_refresh")).toMatchObject([{ result: "refreshed" }]);
      expect(logged()).not.toContain(registered.client_secret);

      // The authorization server checks the secret: a wrong one signs nobody in.
      const wrong = broker({ ...vars, UPSTREAM_CLIENT_SECRET: "not-the-secret" });
      await expect(signIn(wrong, revision)).rejects.toThrow();
      expect(events("sign_in_failed")).toMatchObject([{ reason: "invalid_client" }]);
    },
  );
});
