/**
 * Gate mode (`AUTH_MODE=gate`) with the official SDK client's full OAuth flow:
 * the client signs in with the proxy (discovery, dynamic registration,
 * authorization code + PKCE), the user approves on the consent page and signs
 * in at the test identity provider, and the proxy lets in those the ALLOWED_*
 * lists name, sending the origin (a recording gateway in front of the demo
 * server) its key itself. No key the proxy holds is ever in an answer or a
 * log line (`neverShowsItsKeys`).
 */
import { env } from "cloudflare:workers";
import { extractWWWAuthenticateParams } from "@modelcontextprotocol/sdk/client/auth.js";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createApp } from "../../src/app";
import { BROKER_URL, refreshAt, signInWithConsent } from "../helpers/broker";
import { EACH_WIRE, type Wire } from "../helpers/clients";
import { DEMO_NAMES } from "../helpers/demo-names";
import {
  connectAs,
  GATE_URL,
  gateNetwork,
  grantEnded,
  initializeWith,
  neverShowsItsKeys,
  refreshWith,
  SHARED_KEY,
  signedInByHand,
  USER_KEY,
  walkAs,
} from "../helpers/gate";
import { initialize, PROTOCOL_VERSION, postJson, rpc } from "../helpers/mcp";
import type { SignedIn } from "../helpers/oauth-client";
import {
  BROKERED_ORIGIN,
  clientNetwork,
  GATEWAY_ORIGIN,
  IDENTITY_PROVIDER,
  newTrace,
  receivedByOrigin,
  viaProxy,
} from "../helpers/proxy";
import { scriptedOrigin } from "../helpers/scripted-origin";

const events = neverShowsItsKeys();
/** What the gateway's `/auth/mcp` takes (test/fixtures/node/origin-gateway.ts `DEMO_TOKEN`). */
const DEMO_TOKEN = "demo-token";
const connected: SignedIn[] = [];

afterEach(async () => {
  await Promise.all(connected.splice(0).map(({ client }) => client.close()));
});

async function signedIn(user: string, network = gateNetwork(), revision?: Wire) {
  const signed = await connectAs(user, network, revision);
  connected.push(signed);
  return { ...signed, token: signed.provider.saved?.access_token ?? "" };
}

/** Signs `user` in through `network`: refused at sign-in for `reason`, with the refusal page; its HTML. */
async function refusedAtSignIn(
  network: ReturnType<typeof gateNetwork>,
  user: string,
  reason: string,
): Promise<string> {
  const walk = (await walkAs(network, user)).walk;
  expect(walk.callback).toBeUndefined();
  expect(walk.stopped?.status).toBe(403);
  expect(events("sign_in_refused")).toContainEqual(expect.objectContaining({ reason }));
  return walk.stopped?.html ?? "";
}

describe.each(EACH_WIRE)(
  "gate mode, protocol %s: the SDK client signs in and reaches the origin",
  (revision) => {
    it("signs the SDK client in, lists renamed tools, calls one; the origin sees exactly the configured key", async () => {
      const trace = newTrace();
      const network = gateNetwork({ ORIGIN_URL: `${GATEWAY_ORIGIN}/mcp?trace=${trace}` });
      const { client, token } = await signedIn("alice", network, revision);
      const tools = await client.listTools();
      expect(tools.map((tool) => tool.name)).toContain(DEMO_NAMES["files.read"]);
      const result = await client.callTool(DEMO_NAMES["files.read"], { path: "a" });
      expect(result.structuredContent).toMatchObject({ tool: "files.read" });

      const received = await receivedByOrigin(trace);
      expect(received.length).toBeGreaterThanOrEqual(3);
      for (const { headers } of received) {
        expect(headers.authorization).toBe(`Bearer ${SHARED_KEY}`);
        expect(headers.cookie).toBeUndefined();
        expect(JSON.stringify(headers)).not.toContain(token);
      }
      expect(events("sign_in_completed")).toContainEqual(expect.objectContaining({ by: "domain" }));
    });

    it("is what an origin that takes only its key answers: the key goes in, the client's token never", async () => {
      const { client } = await signedIn(
        "alice",
        gateNetwork({
          ORIGIN_URL: `${GATEWAY_ORIGIN}/auth/mcp`,
          ORIGIN_SECRET: DEMO_TOKEN,
        }),
        revision,
      );
      expect((await client.listTools()).length).toBeGreaterThan(0);
    });
  },
);

describe("gate mode: allowed users reach the origin, with the proxy's key", () => {
  it("sends the key in a header and value of the operator's choosing, and the verified email where asked", async () => {
    const trace = newTrace();
    const network = gateNetwork({
      ORIGIN_URL: `${GATEWAY_ORIGIN}/mcp?trace=${trace}`,
      ORIGIN_AUTH_HEADER: "X-API-Key",
      ORIGIN_AUTH_VALUE: "key={secret}",
      ORIGIN_USER_HEADER: "X-User-Email",
    });
    const { token } = await signedIn("alice", network);
    const response = await postJson(network, GATE_URL, initialize(), {
      authorization: `Bearer ${token}`,
      "x-api-key": "the-clients-own",
      "x-user-email": "mallory@acme.test",
      cookie: "session=client",
    });
    expect(response.status).toBe(200);
    await response.body?.cancel();
    const received = await receivedByOrigin(trace);
    expect(received.length).toBeGreaterThan(0);
    for (const { headers } of received) {
      expect(headers["x-api-key"]).toBe(`key=${SHARED_KEY}`);
      // As the provider wrote it, in lower case: verified, never what the client said.
      expect(headers["x-user-email"]).toBe("alice@acme.test");
      expect(headers.authorization).toBeUndefined();
      expect(headers.cookie).toBeUndefined();
    }
  });

  it("refuses at sign-in a user with no verified email when the origin is told who users are", async () => {
    const trace = newTrace();
    const network = gateNetwork({
      ORIGIN_URL: `${GATEWAY_ORIGIN}/mcp?trace=${trace}`,
      ORIGIN_USER_HEADER: "X-User-Email",
    });
    // Dave is in an allowed group, but the provider vouches for no address of his.
    expect(await refusedAtSignIn(network, "dave", "unverified_email")).toContain(
      "gave no verified email address for this account",
    );
    expect(await receivedByOrigin(trace)).toEqual([]);
  });

  it("lets a user in by a group, and trusts no email the provider sends no email_verified for", async () => {
    const { client } = await signedIn("dave");
    expect((await client.listTools()).length).toBeGreaterThan(0);
    expect(events("sign_in_completed")).toContainEqual(expect.objectContaining({ by: "group" }));

    // Another account that names alice's address, unverified (nOAuth): not alice, and not in acme.test.
    expect(await refusedAtSignIn(gateNetwork(), "mallory", "unverified_email")).toContain(
      "gave no verified email address for this account",
    );
  });

  it("tells apart an address that only Unicode case folding makes a listed one", async () => {
    const trace = newTrace();
    const network = gateNetwork({
      ORIGIN_URL: `${GATEWAY_ORIGIN}/mcp?trace=${trace}`,
      ALLOWED_DOMAINS: undefined,
      ALLOWED_GROUPS: undefined,
      ALLOWED_USERS: "kate@acme.test, KATE@Acme.test",
      ORIGIN_USER_SECRETS: JSON.stringify({ "kate@acme.test": USER_KEY }),
    });
    // The Kelvin sign (U+212A) lower-cases to "k": that address is not kate's.
    await refusedAtSignIn(network, "kelvin", "not_listed");
    expect(await receivedByOrigin(trace)).toEqual([]);
  });

  it("trusts an email Microsoft Entra ID vouches for with its optional claim xms_edov", async () => {
    const { client } = await signedIn("erin");
    expect((await client.listTools()).length).toBeGreaterThan(0);
    expect(events("sign_in_completed")).toContainEqual(expect.objectContaining({ by: "domain" }));
  });

  it("gives a user their own key, and the shared key to a user without one", async () => {
    const trace = newTrace();
    const network = gateNetwork({
      ORIGIN_URL: `${GATEWAY_ORIGIN}/mcp?trace=${trace}`,
      ORIGIN_USER_SECRETS: JSON.stringify({ "alice@acme.test": USER_KEY }),
    });
    const alice = await signedIn("alice", network);
    await (await initializeWith(network, alice.token)).body?.cancel();
    const dave = await signedIn("dave", network);
    await (await initializeWith(network, dave.token)).body?.cancel();
    const keys = new Set(
      (await receivedByOrigin(trace)).map(({ headers }) => headers.authorization),
    );
    expect(keys).toEqual(new Set([`Bearer ${USER_KEY}`, `Bearer ${SHARED_KEY}`]));
  });

  it("reads per-user keys from a KV namespace, and refuses at sign-in a user with none and no shared key", async () => {
    const kv = env.OAUTH_KV as KVNamespace;
    await kv.put("alice@acme.test", USER_KEY);
    const network = gateNetwork({ ORIGIN_SECRET: undefined }, createApp(), {
      ORIGIN_USER_SECRETS: kv,
    } as unknown as Partial<Env>);
    const { client } = await signedIn("alice", network);
    expect((await client.listTools()).length).toBeGreaterThan(0);

    const walk = (await walkAs(network, "dave")).walk;
    expect(walk.callback).toBeUndefined();
    expect(walk.stopped?.status).toBe(403);
    expect(walk.stopped?.html).toContain("has no key for your account at");
    await kv.delete("alice@acme.test");
  });

  it("reads the key from a Secrets Store binding, and answers 503 naming it while it cannot be read", async () => {
    const store = (get: () => Promise<string>) =>
      ({ ORIGIN_SECRET: { get } }) as unknown as Partial<Env>;
    const reading = gateNetwork(
      { ORIGIN_URL: `${GATEWAY_ORIGIN}/auth/mcp` },
      createApp(),
      store(async () => DEMO_TOKEN),
    );
    const { token } = await signedInByHand(reading);
    expect((await initializeWith(reading, token)).status).toBe(200);

    // Another isolate, while the store is down: the grant is good, the key cannot be had.
    const down = gateNetwork(
      { ORIGIN_URL: `${GATEWAY_ORIGIN}/auth/mcp` },
      createApp(),
      store(() => Promise.reject(new Error("store unavailable"))),
    );
    const response = await initializeWith(down, token);
    expect(response.status).toBe(503);
    expect(response.headers.get("retry-after")).toBe("60");
    expect(await response.text()).toContain("could not read the origin's key (ORIGIN_SECRET)");
    expect(events("origin_key_unavailable")).toContainEqual(
      expect.objectContaining({ setting: "ORIGIN_SECRET" }),
    );
  });

  it("answers the origin's refusal of the key with its own 502, never the origin's challenge", async () => {
    const network = gateNetwork({ ORIGIN_URL: `${GATEWAY_ORIGIN}/auth/mcp` });
    const { token } = await signedInByHand(network);
    const response = await initializeWith(network, token);
    expect(response.status).toBe(502);
    expect(response.headers.has("www-authenticate")).toBe(false);
    expect(await response.text()).toContain("the origin refused the proxy's credential");
    expect(events("origin_key_refused")).not.toHaveLength(0);
  });
});

describe("gate mode: the origin's challenges", () => {
  it("passes on no challenge of the origin's 403: it points the client at no authorization server but the proxy", async () => {
    // Where the client would fetch protected-resource metadata, then register and send the user to
    // sign in (the SDK clients follow a 403 insufficient_scope's resource_metadata, any host).
    const elsewhere = "https://as.elsewhere.example/.well-known/oauth-protected-resource";
    const challenges = [
      `Bearer error="insufficient_scope", scope="admin", resource_metadata="${elsewhere}"`,
      // The SDK reads `resource_metadata=` anywhere in the header, inside another parameter's name too.
      `Bearer error="insufficient_scope", xresource_metadata="${elsewhere}"`,
    ];
    for (const challenge of challenges) {
      const origin = await scriptedOrigin({
        "*": {
          status: 403,
          headers: [
            ["content-type", "application/json"],
            ["www-authenticate", challenge],
          ],
          body: '{"error":"insufficient_scope"}',
        },
      });
      const network = gateNetwork({ ORIGIN_URL: origin.originUrl });
      const { token } = await signedInByHand(network);
      const response = await initializeWith(network, token);
      expect(response.status).toBe(403);
      expect(extractWWWAuthenticateParams(response).resourceMetadataUrl).toBeUndefined();
      expect(response.headers.get("www-authenticate")).toBeNull();
      expect(await response.text()).toBe('{"error":"insufficient_scope"}');
    }
  });
});

describe("gate mode: who may connect", () => {
  it("names the tenant and the identity provider before sign-in, and the user after it", async () => {
    const network = gateNetwork();
    const { walk } = await signedInByHand(network);
    expect(walk.html).toContain("to use the MCP server at");
    expect(walk.html).toContain(
      `you sign in next with <strong id="sign-in-issuer">${new URL(IDENTITY_PROVIDER).href}</strong>.`,
    );
    const [signedInPage] = walk.pages;
    expect(signedInPage?.html).toContain('Signed in as <span id="user">alice@acme.test</span>');
    expect(signedInPage?.html).toContain('through <strong id="tenant">localhost</strong>');
  });

  it("refuses at sign-in a user outside every list, with a page that says so, and tells the client", async () => {
    const network = gateNetwork();
    const walk = (await walkAs(network, "bob")).walk;
    expect(walk.callback).toBeUndefined();
    expect(walk.stopped?.status).toBe(403);
    expect(walk.stopped?.html).toContain("bob@other.test may not use the MCP server at");
    const back = /href="([^"]*)"/.exec(walk.stopped?.html ?? "")?.[1]?.replaceAll("&#38;", "&");
    expect(new URL(back ?? "").searchParams.get("error")).toBe("access_denied");
    expect(new URL(back ?? "").searchParams.get("code")).toBeNull();
    // The client is told no, not whose account: the page, in the user's browser, names it.
    expect(back).not.toMatch(/bob|other\.test/);
    expect(events("sign_in_refused")).toContainEqual(
      expect.objectContaining({ reason: "not_listed", domain: "other.test" }),
    );
  });

  it("refuses an address in an allowed domain the provider says is not verified", async () => {
    const network = gateNetwork();
    const walk = (await walkAs(network, "carol")).walk;
    expect(walk.stopped?.status).toBe(403);
    expect(walk.stopped?.html).toContain("gave no verified email address for this account");
    expect(events("sign_in_refused")).toContainEqual(
      expect.objectContaining({ reason: "unverified_email" }),
    );
  });

  it("refuses a user removed from the lists: on their next request, and at their refresh, which revokes the grant", async () => {
    const app = createApp();
    const before = gateNetwork({}, app);
    const grant = await signedInByHand(before);
    const { refresh, clientId } = grant;
    expect((await initializeWith(before, grant.token)).status).toBe(200);

    // The operator deploys lists without alice's domain.
    await grantEnded(
      gateNetwork({ ALLOWED_DOMAINS: "other.test" }, app),
      grant,
      "not_listed",
      events,
    );
    // The grant is gone: back under the old lists, the refresh token is no more good.
    const again = await refreshWith(before, refresh, clientId);
    expect(again.status).toBe(400);
  });

  it("refuses a grant made at another identity provider than IDP_ISSUER names now", async () => {
    const app = createApp();
    const { token } = await signedInByHand(gateNetwork({}, app));
    const moved = gateNetwork({ IDP_ISSUER: "https://idp.example" }, app);
    expect((await initializeWith(moved, token)).status).toBe(401);
    expect(events("gate_refused")).toContainEqual(
      expect.objectContaining({ reason: "other_issuer" }),
    );
  });

  it("ends a grant older than SIGN_IN_MAX_AGE_HOURS as it is now, lowered after the sign-in", async () => {
    const app = createApp();
    const before = gateNetwork({ SIGN_IN_MAX_AGE_HOURS: "720" }, app);
    const { token, refresh, clientId } = await signedInByHand(before);
    const signedInAt = Date.now();
    try {
      // 30 minutes on, the operator lowers the maximum to an hour: the access token still works.
      vi.useFakeTimers({ toFake: ["Date"], now: signedInAt + 30 * 60_000 });
      const after = gateNetwork({ SIGN_IN_MAX_AGE_HOURS: "1" }, app);
      expect((await initializeWith(after, token)).status).toBe(200);

      // Two hours on, the refresh is refused, which revokes the grant.
      vi.setSystemTime(signedInAt + 2 * 3600_000);
      const refreshed = await refreshWith(after, refresh, clientId);
      expect(refreshed.status).toBe(400);
      expect(await refreshed.json()).toMatchObject({ error: "invalid_grant" });
      expect(events("gate_refused")).toContainEqual(
        expect.objectContaining({ at: "refresh", reason: "sign_in_expired" }),
      );
      const again = await refreshWith(before, refresh, clientId);
      expect(again.status).toBe(400);
    } finally {
      vi.useRealTimers();
    }
  });

  it("refuses at refresh, as on every request, a grant made before the tenant moved from broker mode", async () => {
    const app = createApp();
    const broker = clientNetwork(
      viaProxy({ ORIGIN_URL: BROKERED_ORIGIN.strict, AUTH_MODE: "broker" }, { app }),
      BROKER_URL,
    );
    const { client, provider } = await signInWithConsent(broker, "2025-11-25");
    await client.close();
    const { access_token: token = "", refresh_token: refresh = "" } = provider.saved ?? {};

    // The operator moves the tenant to gate mode: the broker's grant holds no identity.
    const gate = gateNetwork({}, app);
    expect((await initializeWith(gate, token)).status).toBe(401);
    // Refreshed, it would get another token every request refuses: its client signs in again instead.
    const refreshed = await refreshAt(gate, provider, refresh);
    expect(refreshed.status).toBe(400);
    expect(await refreshed.json()).toMatchObject({ error: "invalid_grant" });
  });

  it("refuses at refresh, in broker mode, a grant made while the tenant was in gate mode", async () => {
    const app = createApp();
    const { token, refresh, clientId } = await signedInByHand(gateNetwork({}, app));
    const broker = clientNetwork(
      viaProxy({ ORIGIN_URL: BROKERED_ORIGIN.strict, AUTH_MODE: "broker" }, { app }),
      BROKER_URL,
    );
    expect((await initializeWith(broker, token)).status).toBe(401);
    const refreshed = await refreshWith(broker, refresh, clientId);
    expect(refreshed.status).toBe(400);
    expect(await refreshed.json()).toMatchObject({ error: "invalid_grant" });
  });

  it("lets nothing through without a token of the proxy's, and sends the origin nothing", async () => {
    const trace = newTrace();
    const network = gateNetwork({ ORIGIN_URL: `${GATEWAY_ORIGIN}/mcp?trace=${trace}` });
    for (const authorization of [undefined, `Bearer ${SHARED_KEY.slice(0, 8)}`, "Bearer a:b:c"]) {
      const response = await postJson(network, GATE_URL, rpc(1, "tools/list"), {
        ...(authorization === undefined ? {} : { authorization }),
        "mcp-protocol-version": PROTOCOL_VERSION,
      });
      expect(response.status).toBe(401);
      await response.body?.cancel();
    }
    expect(await receivedByOrigin(trace)).toEqual([]);
  });
});

describe("gate mode: one Worker reached at two hosts", () => {
  it("signs clients in at each host in one isolate, whichever it served first", async () => {
    const second = "http://127.0.0.1/mcp";
    const network = gateNetwork({}, createApp(), {}, [GATE_URL, second]);
    for (const url of [GATE_URL, second, GATE_URL]) {
      const { token } = await signedInByHand(network, "alice", url);
      expect((await initializeWith(network, token, url)).status).toBe(200);
      // A token is its host's: the resource it was issued for.
      const elsewhere = url === GATE_URL ? second : GATE_URL;
      expect((await initializeWith(network, token, elsewhere)).status).toBe(401);
    }
  });
});

describe("gate mode: one reading of Authorization", () => {
  it("refuses a valid token beside a second Authorization header, and sends the origin nothing", async () => {
    const trace = newTrace();
    const network = gateNetwork({ ORIGIN_URL: `${GATEWAY_ORIGIN}/mcp?trace=${trace}` });
    const { token } = await signedInByHand(network, "alice");
    for (const second of [`Bearer ${token}`, "Bearer other", "Basic YTpi"]) {
      const headers = new Headers({
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": PROTOCOL_VERSION,
      });
      headers.append("authorization", `Bearer ${token}`);
      headers.append("authorization", second);
      const body = JSON.stringify(rpc(1, "tools/list"));
      const response = await network(GATE_URL, { method: "POST", headers, body });
      expect(response.status).toBe(401);
      await response.body?.cancel();
    }
    expect(await receivedByOrigin(trace)).toEqual([]);
    // The token alone still works: what was refused was the header, not the grant.
    expect((await initializeWith(network, token)).status).toBe(200);
  });
});

describe("gate mode: readiness", () => {
  it("is ready when the identity provider can be discovered, and names it, never the origin's key", async () => {
    const trace = newTrace();
    const ready = await gateNetwork({ ORIGIN_URL: `${GATEWAY_ORIGIN}/mcp?trace=${trace}` })(
      "http://localhost/readyz",
    );
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({
      status: "ready",
      identityProvider: new URL(IDENTITY_PROVIDER).host,
    });

    const lost = await gateNetwork({ IDP_ISSUER: `${IDENTITY_PROVIDER}/nowhere` })(
      "http://localhost/readyz",
    );
    expect(lost.status).toBe(503);
    const body = await lost.json<{ status: string; reason: string }>();
    expect(body).toMatchObject({ status: "unready" });
    expect(body.reason).toContain("No usable OpenID Connect metadata");
    // The origin gets its key with signed-in users' requests only: the check never calls it.
    expect(await receivedByOrigin(trace)).toEqual([]);
  });
});

describe("gate mode: revocation and sign-out", () => {
  it("revokes one app's grant at the token endpoint (RFC 7009), as its metadata advertises", async () => {
    const network = gateNetwork();
    const metadata = await network("http://localhost/.well-known/oauth-authorization-server");
    expect(await metadata.json()).toMatchObject({
      revocation_endpoint: "http://localhost/oauth/token",
    });
    const { token, refresh, clientId } = await signedInByHand(network);
    const revoked = await network("http://localhost/oauth/token", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        token: refresh,
        token_type_hint: "refresh_token",
        client_id: clientId,
      }),
    });
    expect(revoked.status).toBe(200);
    expect((await initializeWith(network, token)).status).toBe(401);
  });

  it("answers a sign-out whose grants cannot be revoked now with 503 and Retry-After, never a 500", async () => {
    const { token } = await signedInByHand(gateNetwork());
    const kv = env.OAUTH_KV as KVNamespace;
    // The real namespace, whose deletes fail as during a KV outage.
    const failing = new Proxy(kv, {
      get(target, name) {
        if (name === "delete") return () => Promise.reject(new Error("KV unavailable"));
        const value = Reflect.get(target, name);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const network = gateNetwork({}, createApp(), { OAUTH_KV: failing } as unknown as Partial<Env>);
    const out = await network("http://localhost/oauth/sign-out", {
      method: "POST",
      headers: { authorization: `Bearer ${token}` },
    });
    expect(out.status).toBe(503);
    expect(out.headers.get("retry-after")).toBe("5");
    expect(await out.json()).toMatchObject({ error: "temporarily_unavailable" });
    // The user's one grant could not be revoked: the line says how many were before the failure.
    expect(events("sign_out_failed")).toContainEqual(expect.objectContaining({ grants: 0 }));
  });

  it("signs a user out of every app at once", async () => {
    const network = gateNetwork();
    const first = await signedInByHand(network);
    const second = await signedInByHand(network);
    const out = await network("http://localhost/oauth/sign-out", {
      method: "POST",
      headers: { authorization: `Bearer ${first.token}` },
    });
    expect(out.status).toBe(200);
    expect(((await out.json()) as { revoked: number }).revoked).toBeGreaterThanOrEqual(2);
    expect(events("signed_out")).not.toHaveLength(0);
    expect((await initializeWith(network, first.token)).status).toBe(401);
    expect((await initializeWith(network, second.token)).status).toBe(401);
    const refused = await network("http://localhost/oauth/sign-out", {
      method: "POST",
      headers: { authorization: `Bearer ${first.token}` },
    });
    expect(refused.status).toBe(401);
  });

  it("signs out only the user whose token it is sent, never another's", async () => {
    const network = gateNetwork();
    const alice = await signedInByHand(network, "alice");
    const dave = await signedInByHand(network, "dave");
    const out = await signOutWith(network, `Bearer ${dave.token}`);
    expect(out.status).toBe(200);
    expect((await initializeWith(network, dave.token)).status).toBe(401);
    expect((await initializeWith(network, alice.token)).status).toBe(200);
  });

  it("reads the token of a sign-out as the MCP endpoint does: one Bearer token, or none", async () => {
    const network = gateNetwork();
    const { token, refresh } = await signedInByHand(network, "dave");
    // Two tokens, a token with more after it, a refresh token: no access token, nothing revoked.
    for (const authorization of [
      [`Bearer ${token}`, "Bearer other"],
      [`Bearer ${token} more`],
      [`Bearer ${refresh}`],
    ]) {
      const headers = new Headers();
      for (const value of authorization) headers.append("authorization", value);
      expect((await initializeWith(network, token)).status).toBe(200);
      const out = await network("http://localhost/oauth/sign-out", { method: "POST", headers });
      expect(out.status).toBe(401);
      expect(await out.text()).not.toContain(token);
    }
    expect((await initializeWith(network, token)).status).toBe(200);
    // A tab after the scheme, which the MCP endpoint takes (RFC 9110's whitespace): the user is signed out.
    const tab = await signOutWith(network, `bearer\t${token}`);
    expect(tab.status).toBe(200);
    expect((await initializeWith(network, token)).status).toBe(401);
  });
});

function signOutWith(network: ReturnType<typeof gateNetwork>, authorization: string) {
  return network("http://localhost/oauth/sign-out", {
    method: "POST",
    headers: { authorization },
  });
}
