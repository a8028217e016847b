/**
 * Broker mode's step-up authorization (MCP 2025-11-25, "Scope Challenge
 * Handling"; RFC 6750 §3.1): the origin answers the token the proxy signed
 * in for `403 insufficient_scope`, naming a scope that sign-in lacks. The
 * client talks OAuth to the proxy, not to the origin, so the proxy answers
 * with its own `403`, naming the scopes as its own (`origin:<scope>`), with
 * those the grant was signed in for; a sign-in at the proxy that asks for
 * them asks the origin's authorization server for them, beside the scopes
 * its metadata names, and the call goes through. The origin
 * (test/fixtures/node/oauth-origin.ts) is this file's own: its switch
 * requires a scope of its tokens.
 */
import { StreamableHTTPClientTransport as ModernTransport } from "@modelcontextprotocol/client";
import { auth, extractWWWAuthenticateParams } from "@modelcontextprotocol/sdk/client/auth.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { describe, expect, it } from "vitest";
import { askWithToken, BROKER_URL, brokerOfEachTest } from "../helpers/broker";
import { EACH_WIRE } from "../helpers/clients";
import { answerConsent } from "../helpers/consent";
import { DEMO_NAMES } from "../helpers/demo-names";
import { HAND_BUILT_VERIFIER, handBuiltClient, REDIRECT_URL } from "../helpers/oauth-client";
import { type Fetch, STEP_UP_ORIGIN } from "../helpers/proxy";

const TOOL = DEMO_NAMES["files.read"];
const ORIGIN_HOST = new URL(STEP_UP_ORIGIN.strict).host;
const METADATA = "http://localhost/.well-known/oauth-protected-resource/mcp";
/** What the proxy's own challenge says of the scopes it names. */
const DESCRIPTION =
  "The origin needs permissions this sign-in lacks; sign in again for the scopes named";

const { control, broker, signIn, events, logged } = brokerOfEachTest(STEP_UP_ORIGIN, {
  requiredScope: null,
  withhold: [],
});

/** The origin's requirement: calls of `files.read` need `files:write`, which no sign-in asked for so far. */
const WRITE_FOR_CALLS = { requiredScope: { scope: "files:write", tool: "files.read" } };

const called = (path: string) => ({ tool: "files.read", arguments: { path } });

/** The refresh requests the origin's authorization server took. */
async function refreshesAtOrigin(): Promise<{ asked: number; refreshed: number }> {
  return (await fetch(new URL("/__refreshes", STEP_UP_ORIGIN.authorizationServer))).json();
}

/** The scopes the browser was sent to ask the origin's authorization server for. */
function askedAtOrigin(visited: URL[]): string | null | undefined {
  const origin = new URL(STEP_UP_ORIGIN.authorizationServer).origin;
  return visited
    .find((url) => url.origin === origin && url.pathname === "/authorize")
    ?.searchParams.get("scope");
}

/**
 * A client signed in at the proxy by hand, asking for `scope` (as a client
 * does after a challenge naming it), the user allowing it: its token answer,
 * and where the browser went.
 */
async function signInFor(network: Fetch, scope: string) {
  const { clientId, url } = await handBuiltClient(network, BROKER_URL);
  url.searchParams.set("scope", scope);
  const visit = await answerConsent(network, url);
  const code = visit.callback.searchParams.get("code");
  if (code === null) throw new Error(`no code: ${visit.callback.search}`);
  const answer = await network("http://localhost/oauth/token", {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "authorization_code",
      code,
      redirect_uri: REDIRECT_URL,
      client_id: clientId,
      code_verifier: HAND_BUILT_VERIFIER,
      resource: BROKER_URL,
    }),
  });
  expect(answer.status).toBe(200);
  const tokens = await answer.json<TokenAnswer>();
  return { clientId, tokens, visit };
}

interface TokenAnswer {
  access_token: string;
  refresh_token: string;
  scope?: string;
}

/** The scopes a token answer of the proxy's names (RFC 6749 §5.1). */
const scopesOf = (tokens: TokenAnswer) => (tokens.scope ?? "").split(" ").filter(Boolean);

/** `clientId`'s refresh of the proxy's token, as a client sends it (no `scope`: the grant's). */
async function refreshFor(network: Fetch, clientId: string, tokens: TokenAnswer) {
  const answer = await network("http://localhost/oauth/token", {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "refresh_token",
      refresh_token: tokens.refresh_token,
      client_id: clientId,
      resource: BROKER_URL,
    }),
  });
  expect(answer.status).toBe(200);
  return answer.json<TokenAnswer>();
}

describe.each(EACH_WIRE)("an origin that asks for a scope the sign-in lacks, on %s", (revision) => {
  const call = (network: Fetch, token: string, path: string) =>
    askWithToken(network, token, revision, "tools/call", { name: TOOL, arguments: { path } });

  it("gets the client the proxy's own 403 naming it; a sign-in asking for it gets the call through", async () => {
    const network = broker();
    const { provider } = await signIn(network, revision);
    const before = await refreshesAtOrigin();
    await control(WRITE_FOR_CALLS);
    const token = provider.saved?.access_token ?? "";

    const refused = await call(network, token, "a");
    expect(refused.status).toBe(403);
    expect(refused.headers.get("www-authenticate")).toBe(
      `Bearer realm="OAuth", error="insufficient_scope", scope="origin:files:write", resource_metadata="${METADATA}", error_description="${DESCRIPTION}"`,
    );
    expect(await refused.json()).toEqual({
      error: "insufficient_scope",
      error_description: DESCRIPTION,
    });
    // Nothing is refreshed: a refresh cannot widen a grant (RFC 6749 §6).
    expect(await refreshesAtOrigin()).toEqual(before);
    expect(events("upstream_token_refused")).toEqual([]);
    expect(events("upstream_token_forbidden")).toEqual([
      {
        event: "upstream_token_forbidden",
        origin: ORIGIN_HOST,
        error: "insufficient_scope",
        scope: "files:write",
        named: "origin:files:write",
      },
    ]);

    // The client signs in again for what the challenge named: the consent page lists it, and
    // the origin's authorization server is asked for it beside what the origin's metadata names.
    const { tokens, visit } = await signInFor(network, "origin:files:write");
    expect(visit.html).toContain("<code>files:write</code>");
    expect(askedAtOrigin(visit.visited)).toBe("mcp:tools files:write");
    expect(tokens.scope).toBe("origin:files:write");
    const answered = await call(network, tokens.access_token, "b");
    expect(answered.status).toBe(200);
    expect(await answered.text()).toContain(`"structuredContent":${JSON.stringify(called("b"))}`);
    expect(logged()).not.toContain(token);
    expect(logged()).not.toContain(tokens.access_token);
  });
});

describe("an origin whose 403 names another server's metadata", () => {
  it("reaches the client without the origin's challenge: the client signs in at the proxy alone", async () => {
    // A scope the proxy carries none of: no step-up of the proxy's to name, and the SDK clients
    // follow a 403 insufficient_scope's resource_metadata to any host, register at the
    // authorization server its metadata names, and send the user to sign in there.
    const elsewhere = "https://as.elsewhere.example/.well-known/oauth-protected-resource";
    const network = broker();
    const { provider } = await signIn(network, "2025-11-25");
    await control({
      requiredScope: {
        scope: "files:write",
        tool: "files.read",
        challenge: `Bearer error="insufficient_scope", resource_metadata="${elsewhere}"`,
      },
    });
    const token = provider.saved?.access_token ?? "";
    const refused = await askWithToken(network, token, "2025-11-25", "tools/call", {
      name: TOOL,
      arguments: { path: "a" },
    });
    expect(refused.status).toBe(403);
    expect(extractWWWAuthenticateParams(refused).resourceMetadataUrl).toBeUndefined();
    expect(refused.headers.get("www-authenticate")).toBeNull();
    expect(await refused.json()).toEqual({ error: "insufficient_scope" });
  });
});

describe("the SDK client's own step-up (2026-07-28)", () => {
  it("signs in again for the scope the proxy names, with those it holds, and its call goes through", async () => {
    const network = broker();
    const { client, provider } = await signIn(network, "2026-07-28");
    await control(WRITE_FOR_CALLS);

    await expect(client.callTool(TOOL, { path: "a" })).rejects.toThrow();
    const stepUp = provider.authorizationUrl;
    expect(stepUp?.searchParams.get("scope")).toBe("origin:files:write");
    const first = await answerConsent(network, stepUp as URL);
    expect(askedAtOrigin(first.visited)).toBe("mcp:tools files:write");
    await new ModernTransport(new URL(BROKER_URL), {
      authProvider: provider,
      fetch: network,
    }).finishAuth(first.callback.searchParams);
    expect((await client.callTool(TOOL, { path: "b" })).structuredContent).toEqual(called("b"));

    // Another operation needs another scope: the proxy names it with the one the grant holds.
    provider.authorizationUrl = undefined;
    await control({ requiredScope: { scope: "files:admin" } });
    await expect(client.callTool(TOOL, { path: "c" })).rejects.toThrow();
    expect(events("upstream_token_forbidden").at(-1)).toMatchObject({
      scope: "files:admin",
      named: "origin:files:write origin:files:admin",
    });
    const again = provider.authorizationUrl as URL | undefined;
    expect(again?.searchParams.get("scope")).toBe("origin:files:write origin:files:admin");
    const second = await answerConsent(network, again as URL);
    expect(askedAtOrigin(second.visited)).toBe("mcp:tools files:write files:admin");
    await new ModernTransport(new URL(BROKER_URL), {
      authProvider: provider,
      fetch: network,
    }).finishAuth(second.callback.searchParams);
    expect((await client.callTool(TOOL, { path: "d" })).structuredContent).toEqual(called("d"));
  });
});

describe("the 1.x SDK client's own step-up (2025-11-25)", () => {
  it("refreshes without asking for the scope named, is given the grant's, and fails: a refresh cannot widen a grant", async () => {
    const proxy = broker();
    /** The client's token requests: grant type, the `scope` asked (never a token), the answer's. */
    const tokenRequests: Array<{ grant: string | null; asked: string | null; got?: string }> = [];
    const network: Fetch = async (input, init) => {
      const response = await proxy(input, init);
      const url = new URL(input instanceof Request ? input.url : input);
      if (url.pathname === "/oauth/token" && init?.body instanceof URLSearchParams) {
        const { scope } = await response.clone().json<{ scope?: string }>();
        tokenRequests.push({
          grant: init.body.get("grant_type"),
          asked: init.body.get("scope"),
          got: scope,
        });
      }
      return response;
    };
    const { client, provider } = await signIn(network, "2025-11-25");
    const held = provider.saved?.scope;
    const before = await refreshesAtOrigin();
    await control(WRITE_FOR_CALLS);
    tokenRequests.length = 0;

    await expect(client.callTool(TOOL, { path: "a" })).rejects.toThrow(
      "Server returned 403 after trying upscoping",
    );
    // Never sent to sign in: it refreshed, asking for no scope, got the grant's, and met the same 403.
    expect(provider.authorizationUrl).toBeUndefined();
    expect(tokenRequests).toEqual([{ grant: "refresh_token", asked: null, got: held }]);
    expect(events("upstream_token_forbidden").map(({ named }) => named)).toEqual([
      "origin:files:write",
      "origin:files:write",
    ]);
    // The proxy cannot tell that refresh from any other: the origin's token was refreshed with it.
    expect(await refreshesAtOrigin()).toEqual({
      asked: before.asked + 1,
      refreshed: before.refreshed + 1,
    });

    // An app on 1.x that signs in again itself, for the scope named, gets its call through.
    provider.invalidateCredentials("tokens");
    const scope = "origin:files:write";
    expect(await auth(provider, { serverUrl: BROKER_URL, scope, fetchFn: network })).toBe(
      "REDIRECT",
    );
    const visit = await answerConsent(network, provider.authorizationUrl as URL);
    await new StreamableHTTPClientTransport(new URL(BROKER_URL), {
      authProvider: provider,
      fetch: network,
    }).finishAuth(visit.callback.searchParams.get("code") ?? "");
    expect(provider.saved?.scope).toBe(scope);
    expect((await client.callTool(TOOL, { path: "b" })).structuredContent).toEqual(called("b"));
  });
});

describe("an origin whose authorization server grants fewer scopes than asked", () => {
  const call = (network: Fetch, token: string, path: string) =>
    askWithToken(network, token, "2025-11-25", "tools/call", { name: TOOL, arguments: { path } });

  it("gets the client a token naming only the origin's scopes it granted, at sign-in and at each refresh", async () => {
    const network = broker();
    // The user unticks files:admin at the origin's authorization server (or its policy refuses it).
    await control({ withhold: ["files:admin"] });
    const { clientId, tokens } = await signInFor(network, "origin:files:write origin:files:admin");
    expect(scopesOf(tokens)).toEqual(["origin:files:write"]);
    expect(events("sign_in_completed").at(-1)).toMatchObject({ withheld: "files:admin" });
    await control(WRITE_FOR_CALLS);
    expect((await call(network, tokens.access_token, "a")).status).toBe(200);

    // Its refresh gets files:write refused too: the proxy's new token no longer names it, and the
    // origin's next 403 names it alone, not a scope the client never held beside it.
    await control({ withhold: ["files:write", "files:admin"] });
    const refreshed = await refreshFor(network, clientId, tokens);
    expect(scopesOf(refreshed)).toEqual([]);
    expect(events("upstream_refresh")).toEqual([
      {
        event: "upstream_refresh",
        origin: ORIGIN_HOST,
        result: "refreshed",
        withheld: "files:write",
      },
    ]);
    const refused = await call(network, refreshed.access_token, "b");
    expect(refused.status).toBe(403);
    expect(refused.headers.get("www-authenticate")).toContain('scope="origin:files:write"');
    expect(events("upstream_token_forbidden").at(-1)).toMatchObject({
      named: "origin:files:write",
    });
    expect(logged()).not.toContain(tokens.access_token);
    expect(logged()).not.toContain(refreshed.access_token);
  });
});

describe("the 2.x SDK client (2026-07-28) whose step-up the origin's authorization server refuses", () => {
  it("asks the user again for the scope at the origin's next 403, rather than refresh a token without it", async () => {
    const network = broker();
    const { client, provider } = await signIn(network, "2026-07-28");
    await control({ withhold: ["files:admin"], requiredScope: { scope: "files:admin" } });

    // Its step-up: the user allows, and the origin's authorization server grants all but files:admin.
    await expect(client.callTool(TOOL, { path: "a" })).rejects.toThrow();
    const first = await answerConsent(network, provider.authorizationUrl as URL);
    expect(askedAtOrigin(first.visited)).toBe("mcp:tools files:admin");
    await new ModernTransport(new URL(BROKER_URL), {
      authProvider: provider,
      fetch: network,
    }).finishAuth(first.callback.searchParams);
    expect(provider.saved?.scope ?? "").not.toContain("origin:files:admin");

    // Its token says it lacks the scope the origin names again, so it asks the user (SEP-2350);
    // a token claiming the scope had it refresh instead, which cannot add it, and fail.
    provider.authorizationUrl = undefined;
    const before = await refreshesAtOrigin();
    await expect(client.callTool(TOOL, { path: "b" })).rejects.toThrow();
    const again = provider.authorizationUrl as URL | undefined;
    expect(again?.searchParams.get("scope")).toBe("origin:files:admin");
    expect(await refreshesAtOrigin()).toEqual(before);
  });
});

describe("an authorization request for the origin's scopes", () => {
  it("is refused with invalid_scope where the proxy would not carry them, and nothing is asked of the origin", async () => {
    const network = broker();
    const tooLong = `origin:${"x".repeat(129)}`;
    const tooMany = Array.from({ length: 33 }, (_, i) => `origin:s${i}`).join(" ");
    for (const scope of [tooLong, tooMany, "origin:"]) {
      const { url } = await handBuiltClient(network, BROKER_URL);
      url.searchParams.set("scope", scope);
      const page = await network(url, { redirect: "manual" });
      expect(page.status).toBe(302);
      const location = new URL(page.headers.get("location") ?? "");
      expect(location.href.startsWith(REDIRECT_URL)).toBe(true);
      expect(location.searchParams.get("error")).toBe("invalid_scope");
      expect(location.searchParams.get("state")).toBe("client-state");
    }
    expect(events("sign_in_started")).toEqual([]);
  });

  it("asks the origin for none of a client's own scopes: they grant nothing, as before", async () => {
    const network = broker();
    const { tokens, visit } = await signInFor(network, "profile offline_access");
    expect(askedAtOrigin(visit.visited)).toBe("mcp:tools");
    expect(visit.html).not.toContain("The app asks for");
    expect(tokens.scope).toBe("profile offline_access");
  });
});
