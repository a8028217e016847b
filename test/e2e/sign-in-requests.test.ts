/**
 * What one sign-in request makes the proxy ask of the origin and its
 * authorization server in broker mode (the sign-in row of docs/limits.md),
 * in the isolate where it costs the most: a new one, which has
 * discovered nothing, for a tenant not registered there yet. Counted, never
 * timed: every request the proxy sends while it answers one of the client's.
 */
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { authorizationRequest, brokerFor, refreshAt, signInWithConsent } from "../helpers/broker";
import { BROKERED_ORIGIN, type Fetch } from "../helpers/proxy";

afterEach(() => vi.restoreAllMocks());

const origin = BROKERED_ORIGIN.strict;

/** `OAUTH_KV` as a tenant that has not registered at the origin's authorization server sees it. */
function unregistered(real: KVNamespace): KVNamespace {
  return new Proxy(real, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== "function") return value;
      if (property !== "get") return value.bind(target);
      return (key: string, ...rest: unknown[]) =>
        key.startsWith("edge-rewriter:upstream-client:")
          ? Promise.resolve(null)
          : value.apply(target, [key, ...rest]);
    },
  });
}

/** The hosts the proxy sent requests to while it answered `ask`, each as often as it did. */
async function sentWhile(
  ask: () => Promise<Response>,
): Promise<{ answer: Response; sent: string[] }> {
  const sent: string[] = [];
  const real = globalThis.fetch;
  vi.spyOn(globalThis, "fetch").mockImplementation((input, init) => {
    sent.push(new URL(new Request(input, init).url).host);
    return real(input, init);
  });
  try {
    const answer = await ask();
    return { answer, sent };
  } finally {
    vi.restoreAllMocks();
  }
}

/** How many of `sent` went to the origin, and how many to its authorization server. */
const split = (sent: string[]) => ({
  origin: sent.filter((host) => host === new URL(origin).host).length,
  authorizationServer: sent.filter(
    (host) => host === new URL(BROKERED_ORIGIN.authorizationServer).host,
  ).length,
  elsewhere: sent.filter(
    (host) =>
      host !== new URL(origin).host && host !== new URL(BROKERED_ORIGIN.authorizationServer).host,
  ).length,
});

/**
 * docs/limits.md: a sign-in request asks the origin at most 4 times (its challenge, and its
 * metadata at up to 3 places) and the authorization server at most 4 (its metadata at 2 places,
 * a registration, the token endpoint). Where the origin's metadata is found at once, fewer.
 */
const within = ({ origin, authorizationServer, elsewhere }: ReturnType<typeof split>) => {
  expect(origin).toBeGreaterThan(0);
  expect(origin).toBeLessThanOrEqual(4);
  expect(authorizationServer).toBeGreaterThan(0);
  expect(authorizationServer).toBeLessThanOrEqual(4);
  expect(elsewhere).toBe(0);
};

describe("broker mode, a new isolate", () => {
  it("asks the origin and its authorization server a bounded number of times for a consent page, the tenant not registered there yet", async () => {
    const network: Fetch = brokerFor(
      origin,
      {},
      {
        OAUTH_KV: unregistered(env.OAUTH_KV as KVNamespace),
      },
    );
    const request = await authorizationRequest(network);
    const { answer, sent } = await sentWhile(() => network(request, { redirect: "manual" }));
    expect(answer.status).toBe(200);
    await answer.body?.cancel();
    // Its challenge and metadata; the server's metadata and a registration.
    expect(split(sent)).toEqual({ origin: 2, authorizationServer: 2, elsewhere: 0 });
    within(split(sent));
  });

  it("asks them a bounded number of times for a refresh", async () => {
    // 2026-07-28: its client opens no stream of its own, which would reach the origin meanwhile.
    const { provider, client } = await signInWithConsent(brokerFor(origin), "2026-07-28");
    await client.close();
    // A new isolate of the same tenant: its registration is read from KV, not made again (a new
    // client's would not refresh what the last one signed in for).
    const fresh = brokerFor(origin);
    const { answer, sent } = await sentWhile(() =>
      refreshAt(fresh, provider, provider.saved?.refresh_token ?? ""),
    );
    expect(answer.status).toBe(200);
    await answer.body?.cancel();
    // Its challenge and metadata; the server's metadata and its token endpoint.
    expect(split(sent)).toEqual({ origin: 2, authorizationServer: 2, elsewhere: 0 });
    within(split(sent));
  });
});
