/**
 * Broker mode's daily budget of sign-in writes (`SIGN_IN_DAILY_WRITES`,
 * docs/sign-in.md "What sign-in costs"): what a client that has not signed in
 * yet makes the proxy write to `OAUTH_KV` (a registration, a consent page, an
 * Allow) is counted for the whole deployment by the `SIGN_IN_BUDGET` Durable
 * Object, per UTC day; past it the proxy says so and writes nothing. Each test
 * counts in a day of its own, given by the isolate's clock, so none starts
 * with another's count.
 */
import { env } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createApp } from "../../src/app";
import { newIsolateState } from "../../src/routes/app-env";
import { countingKv } from "../../support/counting-kv";
import { answerConsent } from "../helpers/consent";
import { DEMO_NAMES } from "../helpers/demo-names";
import { MemoryOAuthClient, REDIRECT_URL, signInAndConnect } from "../helpers/oauth-client";
import { BROKERED_ORIGIN, clientNetwork, type Fetch, viaProxy } from "../helpers/proxy";

const BROKER_URL = "http://localhost/mcp";
const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

/** A client that identifies with a Client ID Metadata Document, which the proxy fetches. */
const CLIENT_URL = "https://app.example/oauth/client.json";
const CLIENT_DOCUMENT = {
  client_id: CLIENT_URL,
  client_name: "Metadata Document Client",
  redirect_uris: [REDIRECT_URL],
  grant_types: ["authorization_code", "refresh_token"],
  response_types: ["code"],
  token_endpoint_auth_method: "none",
};

let log: ReturnType<typeof vi.spyOn>;
const closing: Array<() => Promise<void>> = [];

beforeEach(() => {
  log = vi.spyOn(console, "log");
  // The proxy fetches the client's document from the network; this one serves it.
  const network = globalThis.fetch;
  vi.spyOn(globalThis, "fetch").mockImplementation((input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    if (url === CLIENT_URL) {
      return Promise.resolve(
        Response.json(CLIENT_DOCUMENT, { headers: { "cache-control": "no-store" } }),
      );
    }
    return network(input, init);
  });
});

afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(closing.splice(0).map((close) => close()));
});

/** Days no other run counts in (in the 22nd century: alarms take no later date than 2189). */
const FIRST_DAY = 50_000 + 10 * Math.floor(Math.random() * 2_000);
let days = 0;

/** An hour into a UTC day no other test counts in. */
function freshDay(): { now: number } {
  days += 2;
  return { now: (FIRST_DAY + days) * DAY_MS + HOUR_MS };
}

/** A broker with the daily budget `writes`, as a fresh isolate whose clock reads `clock.now`. */
function broker(clock: { now: number }, writes: number, bindings: Partial<Env> = {}): Fetch {
  const app = createApp(newIsolateState({ now: () => clock.now }));
  const vars = {
    ORIGIN_URL: BROKERED_ORIGIN.strict,
    AUTH_MODE: "broker",
    SIGN_IN_DAILY_WRITES: String(writes),
  };
  return clientNetwork(viaProxy(vars, { app, bindings }), BROKER_URL);
}

function register(network: Fetch) {
  return network("http://localhost/oauth/register", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      client_name: "Flood",
      redirect_uris: [REDIRECT_URL],
      token_endpoint_auth_method: "none",
    }),
  });
}

/** Spends registrations' half of a budget of 4: two registrations, and the third refused. */
async function spendRegistrations(network: Fetch) {
  expect((await register(network)).status).toBe(201);
  expect((await register(network)).status).toBe(201);
  expect((await register(network)).status).toBe(503);
}

/** The metadata-document client's authorization request, as the SDK builds it. */
function authorizationRequest(state = "client-state"): URL {
  const url = new URL("http://localhost/authorize");
  url.search = new URLSearchParams({
    response_type: "code",
    client_id: CLIENT_URL,
    redirect_uri: REDIRECT_URL,
    code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
    code_challenge_method: "S256",
    state,
    resource: BROKER_URL,
  }).toString();
  return url;
}

interface Consent {
  url: URL;
  handle: string;
  cookie: string;
}

/** A browser at the consent page: the form's handle and the cookie that binds it. */
async function openConsent(network: Fetch, url: URL): Promise<Consent> {
  const page = await network(url, { redirect: "manual" });
  const html = await page.text();
  const handle = /name="handle" value="([^"]*)"/.exec(html)?.[1];
  if (page.status !== 200 || handle === undefined) throw new Error(`no consent page: ${html}`);
  const cookie = page.headers
    .getSetCookie()
    .map((header) => header.split(";")[0])
    .join("; ");
  return { url, handle, cookie };
}

function allow(network: Fetch, { url, handle, cookie }: Consent) {
  return network(url, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie },
    body: new URLSearchParams({ handle, decision: "approve" }),
    redirect: "manual",
  });
}

function events(name: string) {
  return log.mock.calls
    .map(([line]: unknown[]) => JSON.parse(String(line)))
    .filter((line: { event: string }) => line.event === name);
}

/** The metadata-document client, signing in through the SDK and the consent page. */
async function signInWithDocument(network: Fetch) {
  const provider = new (class extends MemoryOAuthClient {
    clientMetadataUrl = CLIENT_URL;
  })();
  const signedIn = await signInAndConnect(BROKER_URL, network, {
    approve: async (url) => (await answerConsent(network, url)).callback,
    provider,
  });
  closing.push(() => signedIn.client.close());
  return signedIn;
}

describe("the daily budget of sign-in writes", () => {
  it("refuses registrations past their share of it for the whole deployment, with a 503 that says when to come back, and writes nothing", async () => {
    const oauthKv = countingKv(env.OAUTH_KV as KVNamespace);
    const clock = freshDay();
    // Registrations may take half of the day's 4 writes.
    const network = broker(clock, 4, { OAUTH_KV: oauthKv.kv });
    expect((await register(network)).status).toBe(201);
    expect((await register(network)).status).toBe(201);
    const writes = oauthKv.counts.put;

    const refused = await register(network);
    expect(refused.status).toBe(503);
    // Until 00:00 UTC, 23 hours on.
    expect(refused.headers.get("retry-after")).toBe(String(23 * 3600));
    expect(await refused.json()).toMatchObject({
      error: "temporarily_unavailable",
      error_description: expect.stringContaining("00:00 UTC"),
    });
    // Another address, at another isolate of the deployment, is refused too.
    expect((await register(broker(clock, 4, { OAUTH_KV: oauthKv.kv }))).status).toBe(503);
    expect(oauthKv.counts.put).toBe(writes);
    expect(events("sign_in_budget_spent")).toMatchObject([
      { write: "registration", budget: 4 },
      { write: "registration", budget: 4 },
    ]);
  });

  it("leaves a client with a metadata document its sign-in once registrations are spent", async () => {
    const clock = freshDay();
    const network = broker(clock, 4);
    await spendRegistrations(network);

    const { client, provider } = await signInWithDocument(network);
    expect(provider.information?.client_id).toBe(CLIENT_URL);
    expect((await client.listTools()).map((tool) => tool.name)).toEqual([DEMO_NAMES["files.read"]]);
    expect(events("sign_in_completed")).toMatchObject([{ client: CLIENT_URL }]);
  });

  it("answers a consent page or an Allow past the budget with a page that says so and leads back to the app, and writes nothing", async () => {
    const oauthKv = countingKv(env.OAUTH_KV as KVNamespace);
    const clock = freshDay();
    const network = broker(clock, 3, { OAUTH_KV: oauthKv.kv });
    const first = await openConsent(network, authorizationRequest("first"));
    const second = await openConsent(network, authorizationRequest("second"));
    const allowed = await allow(network, first);
    expect(allowed.status).toBe(302);
    expect(new URL(allowed.headers.get("location") ?? "").origin).toBe(
      new URL(BROKERED_ORIGIN.authorizationServer).origin,
    );
    const writes = oauthKv.counts.put;

    const refusals = [
      { state: "second", refused: await allow(network, second) },
      { state: "third", refused: await network(authorizationRequest("third")) },
    ];
    for (const { state, refused } of refusals) {
      expect(refused.status).toBe(503);
      expect(refused.headers.get("retry-after")).toBe(String(23 * 3600));
      expect(refused.headers.get("content-type")).toMatch(/^text\/html/);
      const html = await refused.text();
      expect(html).toContain("00:00 UTC");
      // The link as a browser reads the attribute: character references decoded.
      const href = /<a href="([^"]*)"/.exec(html)?.[1] ?? "";
      const callback = new URL(
        href.replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code))),
      );
      expect(callback.href.startsWith(REDIRECT_URL)).toBe(true);
      expect(callback.hash).toBe("");
      expect(callback.searchParams.get("error")).toBe("temporarily_unavailable");
      expect(callback.searchParams.get("error_description")).toContain("00:00 UTC");
      expect(callback.searchParams.get("state")).toBe(state);
    }
    expect(oauthKv.counts.put).toBe(writes);
    expect(events("sign_in_budget_spent")).toMatchObject([
      { write: "approval", budget: 3 },
      { write: "consent", budget: 3 },
    ]);
  });

  it("starts again at 00:00 UTC", async () => {
    const clock = freshDay();
    const network = broker(clock, 4);
    await spendRegistrations(network);
    clock.now += DAY_MS;
    expect((await register(network)).status).toBe(201);
  });

  it("refuses the write, never passes it, when the budget cannot be counted", async () => {
    const oauthKv = countingKv(env.OAUTH_KV as KVNamespace);
    const failing = {
      getByName: () => ({
        take: () => Promise.reject(new Error("Durable Object unavailable (test)")),
      }),
    } as unknown as Env["SIGN_IN_BUDGET"];
    const network = broker(freshDay(), 4, { OAUTH_KV: oauthKv.kv, SIGN_IN_BUDGET: failing });
    const refused = await register(network);
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBe("60");
    expect(await refused.json()).toMatchObject({ error: "temporarily_unavailable" });
    expect(oauthKv.counts.put).toBe(0);
    expect(events("sign_in_budget_unavailable")).toMatchObject([{ write: "registration" }]);
  });

  it("advertises Client ID Metadata Documents, the registration that writes nothing", async () => {
    const network = broker(freshDay(), 4);
    const metadata = await network("http://localhost/.well-known/oauth-authorization-server");
    expect(await metadata.json()).toMatchObject({
      client_id_metadata_document_supported: true,
      registration_endpoint: "http://localhost/oauth/register",
    });
  });
});
