/**
 * Gate mode in tests: the proxy on a loopback host with the test identity
 * provider (test/fixtures/node/identity-provider.ts), a browser that signs in
 * there as one of its users, and a record of everything the proxy answered
 * and logged, to show that no key it holds ever appears in either.
 */
import { afterAll, beforeAll, expect, vi } from "vitest";
import { createApp } from "../../src/app";
import { IDP_CLIENT_ID, IDP_CLIENT_SECRET } from "../fixtures/idp-client";
import type { Wire } from "./clients";
import { answerConsent, type BrowserOptions, walkSignIn } from "./consent";
import { initialize, postJson } from "./mcp";
import { handBuiltClient, REDIRECT_URL, type SignedIn, signInAndConnect } from "./oauth-client";
import { clientNetwork, type Fetch, GATEWAY_ORIGIN, IDENTITY_PROVIDER, viaProxy } from "./proxy";

/** The proxy on a loopback host: workers-oauth-provider accepts plain http only there. */
export const GATE_URL = "http://localhost/mcp";

/** Keys no test writes anywhere but in the settings: each must never leave the proxy. */
export const SHARED_KEY = `sk-shared-${crypto.randomUUID()}`;
export const USER_KEY = `sk-user-${crypto.randomUUID()}`;
const NEVER_SHOWN = [SHARED_KEY, USER_KEY, IDP_CLIENT_SECRET];

/** Gate mode's settings, on top of wrangler.toml's: alice's domain and dave's group may connect. */
export function gateVars(vars: Record<string, string | undefined> = {}) {
  return {
    AUTH_MODE: "gate",
    ORIGIN_URL: `${GATEWAY_ORIGIN}/mcp`,
    IDP_ISSUER: IDENTITY_PROVIDER,
    IDP_CLIENT_ID,
    IDP_CLIENT_SECRET,
    ALLOWED_DOMAINS: "acme.test",
    ALLOWED_GROUPS: "mcp-users",
    ORIGIN_SECRET: SHARED_KEY,
    ...vars,
  };
}

/** Everything the proxy answered in this file, an answer a text: status, headers and body. */
const answered: Array<{ text: string }> = [];

/** `proxy`, with every answer's headers and body copied into `answered` as they pass. */
function recorded(proxy: Fetch): Fetch {
  return async (input, init) => {
    const response = await proxy(input, init);
    const answer = { text: `${response.status} ${JSON.stringify([...response.headers])}\n` };
    answered.push(answer);
    if (response.body === null) return response;
    const decoder = new TextDecoder();
    const copy = new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        answer.text += decoder.decode(chunk, { stream: true });
        controller.enqueue(chunk);
      },
    });
    return new Response(response.body.pipeThrough(copy), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}

/**
 * The network a client of a gate proxy with `vars` and `bindings` sees (`app`:
 * one isolate for several networks), the proxy reached at `urls` (each a host
 * of one Worker, with one `env`).
 */
export function gateNetwork(
  vars: Record<string, string | undefined> = {},
  app = createApp(),
  bindings: Partial<Env> = {},
  urls: readonly string[] = [GATE_URL],
): Fetch {
  // Bindings last: one may stand where gateVars puts a var (a Secrets Store binding for ORIGIN_SECRET).
  const settings = { ...gateVars(vars), ...bindings } as unknown as Record<string, string>;
  return clientNetwork(recorded(viaProxy(settings, { app })), urls);
}

/** The browser signs in at the identity provider as `user`, with the provider playing `fault` if any. */
export function signInAs(user: string, fault?: string): BrowserOptions {
  return {
    visit(url) {
      if (url.origin !== IDENTITY_PROVIDER) return url;
      const signed = new URL(url);
      signed.searchParams.set("user", user);
      if (fault !== undefined) signed.searchParams.set("fault", fault);
      return signed;
    },
  };
}

/** The SDK client signed in through the gate as `user`. */
export async function connectAs(
  user: string,
  network: Fetch,
  revision?: Wire,
  url = GATE_URL,
): Promise<SignedIn> {
  return signInAndConnect(url, network, {
    revision,
    approve: async (authorizationUrl) =>
      (await answerConsent(network, authorizationUrl, "approve", signInAs(user))).callback,
  });
}

/**
 * A hand-built client's sign-in at the proxy's `url`, up to where the
 * browser stops: at the client (`callback`), or at a page (`stopped`); the
 * user signs in at the provider as `user`, which plays `fault` if any.
 */
export async function walkAs(network: Fetch, user: string, fault?: string, url = GATE_URL) {
  const client = await handBuiltClient(network, url);
  return {
    ...client,
    walk: await walkSignIn(network, client.url, "approve", signInAs(user, fault)),
  };
}

export { walkSignIn };

/** A session's start at the demo origin through the proxy at `url`, with `token`. */
export function initializeWith(network: Fetch, token: string, url = GATE_URL) {
  return postJson(network, url, initialize(), { authorization: `Bearer ${token}` });
}

/** The token endpoint of the proxy at `url`, with a form. */
export function tokenRequest(network: Fetch, form: Record<string, string>, url = GATE_URL) {
  return network(new URL("/oauth/token", url), {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(form),
  });
}

/** A refresh of the grant behind `refresh`, by its client. */
export const refreshWith = (network: Fetch, refresh: string, clientId: string) =>
  tokenRequest(network, {
    grant_type: "refresh_token",
    refresh_token: refresh,
    client_id: clientId,
  });

/** Signs a hand-built client in as `user` at the proxy's `url`, and exchanges its code: its tokens. */
export async function signedInByHand(network: Fetch, user = "alice", url = GATE_URL) {
  const { clientId, verifier, walk } = await walkAs(network, user, undefined, url);
  const code = walk.callback?.searchParams.get("code");
  if (!code) {
    throw new Error(`no code: ${walk.callback?.search ?? walk.stopped?.html.slice(0, 300)}`);
  }
  const form = {
    grant_type: "authorization_code",
    code,
    redirect_uri: REDIRECT_URL,
    client_id: clientId,
    code_verifier: verifier,
    resource: url,
  };
  const tokens = await tokenRequest(network, form, url).then((response) =>
    response.json<{ access_token: string; refresh_token: string }>(),
  );
  return { clientId, token: tokens.access_token, refresh: tokens.refresh_token, walk };
}

/**
 * Under `network`'s settings the grant is refused for `reason`: its next
 * request gets the proxy's `401 invalid_token`, its refresh `invalid_grant`
 * (which revokes it), and both are logged (`events`: the file's log).
 */
export async function grantEnded(
  network: Fetch,
  { token, refresh, clientId }: { token: string; refresh: string; clientId: string },
  reason: string,
  events: (name: string) => Array<Record<string, unknown>>,
) {
  const refused = await initializeWith(network, token);
  expect(refused.status).toBe(401);
  expect(refused.headers.get("www-authenticate")).toContain('error="invalid_token"');
  const refreshed = await refreshWith(network, refresh, clientId);
  expect(refreshed.status).toBe(400);
  expect(await refreshed.json()).toMatchObject({ error: "invalid_grant" });
  expect(events("gate_refused")).toEqual(
    expect.arrayContaining([
      expect.objectContaining({ at: "request", reason }),
      expect.objectContaining({ at: "refresh", reason }),
    ]),
  );
}

/**
 * In the calling file: every log line is kept, and once its tests ran, no
 * key or secret the proxy holds is found in any answer or log line. Returns
 * the log's events of one name, for the tests to read.
 */
export function neverShowsItsKeys(): (name: string) => Array<Record<string, unknown>> {
  const logged: string[] = [];
  beforeAll(() => {
    for (const level of ["log", "info", "warn", "error", "debug"] as const) {
      const original = console[level].bind(console);
      vi.spyOn(console, level).mockImplementation((...args: unknown[]) => {
        logged.push(args.map((arg) => (typeof arg === "string" ? arg : String(arg))).join(" "));
        original(...args);
      });
    }
  });
  afterAll(() => {
    expect(answered.length).toBeGreaterThan(0);
    expect(logged.length).toBeGreaterThan(0);
    const everything = [...answered.map(({ text }) => text), ...logged].join("\n");
    for (const secret of NEVER_SHOWN) expect(everything).not.toContain(secret);
    vi.restoreAllMocks();
  });
  return (name) =>
    logged
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line.event === name);
}
