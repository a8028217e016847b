/**
 * Broker mode (`AUTH_MODE=broker`) as the end-to-end tests drive it: the
 * proxy in front of an OAuth origin (test/fixtures/node/oauth-origin.ts), the
 * switches of that origin's authorization server, and the SDK client of
 * either wire signing in through the consent page.
 */
import { afterEach, beforeEach, expect } from "vitest";
import { createApp } from "../../src/app";
import type { Wire } from "./clients";
import { answerConsent } from "./consent";
import { captureLogs } from "./logs";
import { postJson, wireRequest } from "./mcp";
import {
  handBuiltClient,
  type MemoryOAuthClient,
  type SignedIn,
  signInAndConnect,
} from "./oauth-client";
import { clientNetwork, type Fetch, viaProxy } from "./proxy";

/** The proxy on a loopback host: workers-oauth-provider accepts plain http only there. */
export const BROKER_URL = "http://localhost/mcp";

/** Flips the origin's authorization server at `authorizationServer`: `{ expire: true }`, `{ drop: ["/token"] }`, … */
export function controlOrigin(authorizationServer: string, body: Record<string, unknown>) {
  return fetch(new URL("/__control", authorizationServer), {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

/** The proxy in broker mode in front of `origin` as one isolate (`createApp()`), as its clients reach it. */
export function brokerFor(
  origin: string,
  vars: Record<string, string> = {},
  bindings: Partial<Env> = {},
): Fetch {
  return clientNetwork(
    viaProxy({ ORIGIN_URL: origin, AUTH_MODE: "broker", ...vars }, { app: createApp(), bindings }),
    BROKER_URL,
  );
}

/** A client's authorization request to the broker, as the SDK would build it, after registering. */
export const authorizationRequest = async (network: Fetch) =>
  (await handBuiltClient(network, BROKER_URL)).url;

/** The proxy's token endpoint asked to refresh with `refreshToken`, as `provider`'s client asks. */
export function refreshAt(
  network: Fetch,
  provider: MemoryOAuthClient,
  refreshToken: string,
  headers: Record<string, string> = {},
) {
  return network("http://localhost/oauth/token", {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
    body: new URLSearchParams({
      grant_type: "refresh_token",
      refresh_token: refreshToken,
      client_id: String(provider.information?.client_id),
    }),
  });
}

/** One request of `revision` with the proxy's `accessToken`, as a client without the SDK sends it. */
export function askWithToken(
  network: Fetch,
  accessToken: string,
  revision: Wire,
  method: string,
  params?: Record<string, unknown>,
) {
  const { body, headers } = wireRequest(revision, 1, method, params);
  return postJson(network, BROKER_URL, body, {
    ...headers,
    authorization: `Bearer ${accessToken}`,
  });
}

/** The SDK client of `revision` signed in at `url` through `network`, the user allowing it on the consent page. */
export function signInWithConsent(
  network: Fetch,
  revision: Wire,
  url = BROKER_URL,
  provider?: MemoryOAuthClient,
): Promise<SignedIn> {
  return signInAndConnect(url, network, {
    revision,
    approve: async (authorizationUrl) => (await answerConsent(network, authorizationUrl)).callback,
    provider,
  });
}

/**
 * `network` for an SDK client of `revision` to sign in through, and
 * `streamOpened`, which settles once the proxy answered the GET stream the
 * 1.x client (2025-11-25) opens once connected, without waiting (2.x on
 * 2026-07-28 opens none: its connect is answered once it resolves). A
 * stream sent after a test expired the origin's token would be refused, and
 * the client would refresh its grant on its own.
 */
export function watchingStream(network: Fetch, revision: Wire) {
  let opened = () => {};
  const streamOpened =
    revision === "2026-07-28"
      ? Promise.resolve()
      : new Promise<void>((resolve) => {
          opened = resolve;
        });
  const watched: Fetch = async (input, init) => {
    const response = await network(input, init);
    if (init?.method === "GET" && String(input) === BROKER_URL) opened();
    return response;
  };
  return { network: watched, streamOpened };
}

/**
 * For one test file, broker mode in front of `at.strict`, an origin that
 * file alone flips: each test's log lines captured, its signed-in clients
 * closed after it, and the authorization server's switches set to `reset`.
 */
export function brokerOfEachTest(
  at: { authorizationServer: string; strict: string },
  reset: Record<string, unknown>,
) {
  const connected: SignedIn[] = [];
  let logs: ReturnType<typeof captureLogs>;
  beforeEach(() => {
    logs = captureLogs();
  });
  afterEach(async () => {
    logs.restore();
    await Promise.all(connected.splice(0).map(({ client }) => client.close()));
    await control(reset);
  });
  async function control(body: Record<string, unknown>) {
    expect((await controlOrigin(at.authorizationServer, body)).status).toBe(204);
  }
  return {
    control,
    /** The proxy as one isolate, in front of `origin` (the strict one unless said). */
    broker: (vars: Record<string, string> = {}, bindings: Partial<Env> = {}, origin = at.strict) =>
      brokerFor(origin, vars, bindings),
    /** The SDK client of `revision` signed in through `network`, on that revision. */
    async signIn(network: Fetch, revision: Wire = "2025-11-25", url = BROKER_URL) {
      const signedIn = await signInWithConsent(network, revision, url);
      connected.push(signedIn);
      expect(signedIn.client.negotiated()).toBe(revision);
      // Set again only if the client is sent to sign in once more.
      signedIn.provider.authorizationUrl = undefined;
      return signedIn;
    },
    events: (name: string) => logs.events(name),
    /** Every log line as written, to look for what must never be in one. */
    logged: () => JSON.stringify(logs.lines()),
  };
}
