import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { gateCredentials } from "../../src/auth/gate";
import { originCredentials } from "../../src/auth/origin-credentials";
import { type Config, parseConfig } from "../../src/config";
import type { GateAuth } from "../../src/config/auth-modes";
import { callerOf } from "../../src/toolmap/callers";
import { originRequestHeaders } from "../../src/transport/headers";
import { cookiesForClient } from "../../src/transport/origin";

function config(vars: Record<string, unknown>): Config {
  const result = parseConfig({
    ORIGIN_URL: "https://o.example/mcp",
    TOOL_MAP: env.TOOL_MAP,
    ...vars,
  } as unknown as Env);
  if (result.kind !== "valid") throw new Error(JSON.stringify(result.problems));
  return result.config;
}

const relay = config({});
const broker = config({
  AUTH_MODE: "broker",
  OAUTH_KV: env.OAUTH_KV,
  SIGN_IN_RATE_LIMIT: env.SIGN_IN_RATE_LIMIT,
  SIGN_IN_BUDGET: env.SIGN_IN_BUDGET,
});
const client = new Headers({
  authorization: "Bearer client-token",
  cookie: "session=client",
  "mcp-session-id": "s-1",
});

describe("whose credentials reach the origin", () => {
  it("relay mode: the client's, as sent", () => {
    const credentials = originCredentials(relay, {});
    expect(Object.fromEntries(originRequestHeaders(client, credentials))).toEqual({
      authorization: "Bearer client-token",
      cookie: "session=client",
      "mcp-session-id": "s-1",
    });
  });

  it.each([
    ["made for this origin", "https://o.example/mcp"],
    ["made before grants named their origin", undefined],
  ])(
    "broker mode: the origin's token from a validated grant %s, never the client's",
    (_, origin) => {
      const ctx = { props: { upstream: { accessToken: "origin-token" }, origin } };
      expect(
        Object.fromEntries(originRequestHeaders(client, originCredentials(broker, ctx))),
      ).toEqual({ authorization: "Bearer origin-token", "mcp-session-id": "s-1" });
    },
  );

  it("broker mode: no token from a grant made for another origin", () => {
    for (const origin of [
      "https://other.example/mcp",
      "https://o.example/other",
      "http://o.example/mcp",
    ]) {
      const ctx = { props: { upstream: { accessToken: "origin-token" }, origin } };
      expect(originCredentials(broker, ctx)).toEqual({ kind: "proxy", passHeaders: new Set() });
    }
  });

  it("broker mode without a validated grant: no credential at all", () => {
    for (const ctx of [{}, { props: {} }, { props: { upstream: { accessToken: 7 } } }]) {
      const credentials = originCredentials(broker, ctx);
      expect(credentials).toEqual({ kind: "proxy", passHeaders: new Set() });
      expect(Object.fromEntries(originRequestHeaders(client, credentials))).toEqual({
        "mcp-session-id": "s-1",
      });
    }
  });
});

describe("who a caller is to the proxy's per-caller state", () => {
  const url = new URL("https://o.example/mcp");
  const tokens = (token: string) => new Headers({ authorization: `Bearer ${token}` });

  it("broker mode: the grant's user, whom a refresh of the origin's token does not change", async () => {
    const ctx = (accessToken: string) => ({
      props: { upstream: { accessToken }, origin: "https://o.example/mcp", caller: "user-1" },
    });
    const [before, after] = ["origin-token", "refreshed-token"].map((token) => {
      const credentials = originCredentials(broker, ctx(token));
      return callerOf(originRequestHeaders(client, credentials), url, credentials);
    });
    expect(await before?.pins()).toBe(await after?.pins());
    expect(await before?.listing()).toBe(await after?.listing());
    // Another user of the same origin is another caller.
    const other = originCredentials(broker, {
      props: { ...ctx("origin-token").props, caller: "user-2" },
    });
    const otherCaller = callerOf(originRequestHeaders(client, other), url, other);
    expect(await otherCaller.pins()).not.toBe(await before?.pins());
  });

  it("broker mode: a credential PASS_HEADERS lets through tells callers of one grant apart, as the origin does", async () => {
    const passing = config({
      AUTH_MODE: "broker",
      OAUTH_KV: env.OAUTH_KV,
      SIGN_IN_RATE_LIMIT: env.SIGN_IN_RATE_LIMIT,
      SIGN_IN_BUDGET: env.SIGN_IN_BUDGET,
      PASS_HEADERS: "X-API-Key",
    });
    const caller = (accessToken: string, key?: string) => {
      const credentials = originCredentials(passing, {
        props: { upstream: { accessToken }, origin: "https://o.example/mcp", caller: "user-1" },
      });
      const sent = new Headers(key === undefined ? {} : { "x-api-key": key });
      return callerOf(originRequestHeaders(sent, credentials), url, credentials);
    };
    // The origin sees two keys: two callers, though one grant sent both.
    const [a, b] = [caller("origin-token", "key-a"), caller("origin-token", "key-b")];
    expect(await a.pins()).not.toBe(await b.pins());
    expect(await a.listing()).not.toBe(await b.listing());
    // A refresh of the origin's token is still no other caller, with a key or without.
    expect(await caller("refreshed-token", "key-a").pins()).toBe(await a.pins());
    expect(await caller("refreshed-token").pins()).toBe(await caller("origin-token").pins());
    // One grant's user is one source, whatever key the client passes beside it: a header the
    // client writes is one it varies for free, each value a source with a share of its own.
    expect(await a.source()).toBe(await b.source());
    expect(await caller("origin-token").source()).toBe(await a.source());
  });

  it("relay mode, and grants made before they named their user: the credentials the origin sees", async () => {
    const [a, b] = ["token-a", "token-b"].map((token) => callerOf(tokens(token), url));
    expect(await a?.pins()).not.toBe(await b?.pins());
    expect(await callerOf(tokens("token-a"), url).pins()).toBe(await a?.pins());
    // The session tells a caller's listings apart, not their pins.
    const session = new Headers({ authorization: "Bearer token-a", "mcp-session-id": "s-2" });
    expect(await callerOf(session, url).pins()).toBe(await a?.pins());
    expect(await callerOf(session, url).listing()).not.toBe(await a?.listing());
  });

  it("anonymous only where nothing the origin tells callers apart by reaches it", () => {
    const origin = new URL("https://o.example/mcp?tenant=acme");
    const plain = new Headers({ "mcp-session-id": "s-1", "x-tenant": "acme" });
    // The ORIGIN_URL's own query is every request's; a session is no caller.
    expect(callerOf(plain, origin, { kind: "client" }, origin).anonymous).toBe(true);
    const asked = new URL("https://o.example/mcp?tenant=acme&key=k-1");
    expect(callerOf(plain, asked, { kind: "client" }, origin).anonymous).toBe(false);
    expect(callerOf(plain, origin).anonymous).toBe(false);
    for (const credential of ["authorization", "cookie", "x-api-key"]) {
      const sent = new Headers({ [credential]: "k-1" });
      expect(callerOf(sent, url, { kind: "client" }, url).anonymous, credential).toBe(false);
    }
    const granted = originCredentials(broker, {
      props: { upstream: { accessToken: "t" }, origin: "https://o.example/mcp", caller: "user-1" },
    });
    const headers = originRequestHeaders(client, granted);
    expect(callerOf(headers, url, granted, url).anonymous).toBe(false);
  });

  it("gate mode: the shared key alone is every user's, though it keys the caller's own state", async () => {
    const gate = (key: string, sameForEveryCaller?: true) => ({
      kind: "proxy" as const,
      headers: [["authorization", `Bearer ${key}`]] as const,
      passHeaders: new Set(["x-api-key"]),
      ...(sameForEveryCaller ? { sameForEveryCaller } : {}),
    });
    const caller = (credentials: ReturnType<typeof gate>, sent = client, at = url) =>
      callerOf(originRequestHeaders(sent, credentials), at, credentials, url);
    const shared = caller(gate("shared", true));
    expect(shared.anonymous).toBe(true);
    // The flag changes what rules are judged by, not whose listing state or pins a request reads.
    expect(await shared.pins()).toBe(await caller(gate("shared")).pins());
    expect(await shared.listing()).toBe(await caller(gate("shared")).listing());
    // A key of the user's own, a credential the client passed, a query of the client's: told apart.
    expect(caller(gate("alice's")).anonymous).toBe(false);
    const keyed = new Headers({ "x-api-key": "k-1" });
    expect(caller(gate("shared", true), keyed).anonymous).toBe(false);
    const asked = new URL("https://o.example/mcp?key=k-1");
    expect(caller(gate("shared", true), client, asked).anonymous).toBe(false);
  });

  it("source: the credentials alone, whatever sessions and queries come with them; none without a credential", async () => {
    const sent = (token: string, session: string, query = "") =>
      callerOf(
        new Headers({ authorization: `Bearer ${token}`, "mcp-session-id": session }),
        new URL(`https://o.example/mcp${query}`),
        { kind: "client" },
        url,
      );
    const mallory = await sent("mallory", "s-1").source();
    expect(mallory).toMatch(/^[\w-]{43}$/);
    // Made-up callers of one token: each a caller of its own, and one source.
    for (const other of [sent("mallory", "s-2"), sent("mallory", "s-1", "?junk=1")]) {
      expect(await other.listing()).not.toBe(await sent("mallory", "s-1").listing());
      expect(await other.source()).toBe(mallory);
    }
    expect(await sent("alice", "s-1").source()).not.toBe(mallory);
    // A source is no caller's listing state nor pins.
    expect(mallory).not.toBe(await sent("mallory", "").pins());
    // Without a credential, told apart by query alone: no source, the isolate's bounds alone.
    const keyed = callerOf(new Headers(), new URL("https://o.example/mcp?key=k-1"), undefined, url);
    expect(await keyed.source()).toBeUndefined();
    // Gate mode's shared key is every user's: no source; a user's own key, one.
    const gate = (key: string, sameForEveryCaller?: true) => ({
      kind: "proxy" as const,
      headers: [["authorization", `Bearer ${key}`]] as const,
      passHeaders: new Set<string>(),
      ...(sameForEveryCaller ? { sameForEveryCaller } : {}),
    });
    const gated = (credentials: ReturnType<typeof gate>) =>
      callerOf(originRequestHeaders(new Headers(), credentials), url, credentials, url);
    expect(await gated(gate("shared", true)).source()).toBeUndefined();
    expect(await gated(gate("alice's")).source()).toMatch(/^[\w-]{43}$/);
    // Broker mode: the grant's user, whatever the origin's token.
    const granted = (accessToken: string, caller: string) => {
      const credentials = originCredentials(broker, {
        props: { upstream: { accessToken }, origin: "https://o.example/mcp", caller },
      });
      return callerOf(originRequestHeaders(client, credentials), url, credentials).source();
    };
    expect(await granted("t-1", "user-1")).toBe(await granted("t-2", "user-1"));
    expect(await granted("t-1", "user-1")).not.toBe(await granted("t-1", "user-2"));
  });

  it("source, gate mode: the user who signed in at the gate, with the shared key every user's too", async () => {
    // The shared key alone tells the origin no user from another, but the gate knows who signed
    // in: mallory's sessions, each a caller, spent every user's share of the isolate (one source,
    // none) and pushed alice's listing out, as one token's sessions did in relay mode.
    const auth = { passHeaders: new Set(["x-api-key"]) } as unknown as GateAuth;
    const signedIn = (user: string, sent: Headers, sameForEveryCaller = true) => {
      const credentials = gateCredentials(auth, {
        props: { originHeaders: [["authorization", "Bearer shared"]], sameForEveryCaller, user },
      });
      return callerOf(originRequestHeaders(sent, credentials), url, credentials, url);
    };
    const session = (id: string, more: Record<string, string> = {}) =>
      new Headers({ "mcp-session-id": id, ...more });
    const mallory = await signedIn("mallory", session("s-1")).source();
    expect(mallory).toMatch(/^[\w-]{43}$/);
    // Her sessions, and a credential header she passes and varies (PASS_HEADERS): one source.
    for (const sent of [session("s-2"), session("s-3", { "x-api-key": "made-up" })]) {
      expect(await signedIn("mallory", sent).source()).toBe(mallory);
    }
    expect(await signedIn("alice", session("s-1")).source()).not.toBe(mallory);
    // What the origin is told apart by is as before: with the shared key alone, the session.
    const shared = signedIn("mallory", session("s-1"));
    expect(shared.anonymous).toBe(true);
    expect(await shared.listing()).toBe(await signedIn("alice", session("s-1")).listing());
  });

  it("a session is told apart from no session whatever its id: `null` too", async () => {
    // The origin chooses session ids; one spelled `null` shared its listing state with the
    // requests that carry none (a 2026-07-28 client's, or a client's before it initialized).
    const without = callerOf(tokens("token-a"), url);
    const named = (id: string) =>
      callerOf(new Headers({ authorization: "Bearer token-a", "mcp-session-id": id }), url);
    for (const id of ["null", "undefined", "s-1"]) {
      expect(await named(id).listing(), id).not.toBe(await without.listing());
      expect(await named(id).pins(), id).toBe(await without.pins());
    }
  });
});

describe("the client's other headers", () => {
  const sent = new Headers({
    "x-tenant": "acme",
    traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
    "x-api-key": "client-key",
    "mcp-name": "files.read",
    "mcp-param-region": "eu",
    accept: "application/json",
  });

  it("broker mode: MCP's and the content's, and what PASS_HEADERS lists, in any case", () => {
    const listing = config({
      AUTH_MODE: "broker",
      OAUTH_KV: env.OAUTH_KV,
      SIGN_IN_RATE_LIMIT: env.SIGN_IN_RATE_LIMIT,
      SIGN_IN_BUDGET: env.SIGN_IN_BUDGET,
      PASS_HEADERS: "X-Tenant, TraceParent",
    });
    const ctx = { props: { upstream: { accessToken: "origin-token" } } };
    expect(Object.fromEntries(originRequestHeaders(sent, originCredentials(listing, ctx)))).toEqual(
      {
        accept: "application/json",
        authorization: "Bearer origin-token",
        "mcp-name": "files.read",
        "mcp-param-region": "eu",
        traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        "x-tenant": "acme",
      },
    );
  });

  it("broker mode: none a client names in Connection, which belongs to its connection", () => {
    const listed = new Headers(sent);
    listed.set("connection", "Mcp-Param-Region");
    const credentials = originCredentials(broker, {});
    expect([...originRequestHeaders(listed, credentials).keys()]).toEqual(["accept", "mcp-name"]);
  });

  it("relay mode: all of them", () => {
    expect(Object.fromEntries(originRequestHeaders(sent, originCredentials(relay, {})))).toEqual(
      Object.fromEntries(sent),
    );
  });
});

describe("the cookies the origin sets, as the client gets them", () => {
  const answer = () => {
    const headers = new Headers();
    headers.append("set-cookie", "session=a; Path=/; HttpOnly");
    headers.append("set-cookie", "tossed=b; Domain=acme.example; Path=/");
    headers.append("set-cookie", "other=c;domain=.acme.example ;Secure");
    return new Response("{}", { headers });
  };

  it("relay mode: each for the proxy's host alone, as the origin's were for the origin's", () => {
    // With its Domain, a cookie from the proxy's host would reach every host of the operator's domain.
    const relayed = cookiesForClient(answer(), originCredentials(relay, {}));
    expect(relayed.headers.getSetCookie()).toEqual([
      "session=a; Path=/; HttpOnly",
      "tossed=b; Path=/",
      "other=c;Secure",
    ]);
  });

  it("broker mode: none", () => {
    const brokered = cookiesForClient(answer(), originCredentials(broker, {}));
    expect(brokered.headers.has("set-cookie")).toBe(false);
  });
});
