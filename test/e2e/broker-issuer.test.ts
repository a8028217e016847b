/**
 * Broker mode's grants against an origin that names another authorization
 * server after its users signed in (an origin that moved, or turned
 * hostile, without `UPSTREAM_ISSUER`): the origin's refresh token goes
 * back only to the authorization server that issued it. The origin and the
 * other authorization server are this file's own
 * (test/fixtures/node/oauth-origin.ts), so their counts are this file's.
 */
import { describe, expect, it } from "vitest";
import { brokerFor, brokerOfEachTest, refreshAt } from "../helpers/broker";
import { OTHER_ISSUER_ORIGIN, SWITCHING_ORIGIN } from "../helpers/proxy";

const { control, broker, signIn, events } = brokerOfEachTest(SWITCHING_ORIGIN, {
  authorizationServers: [],
});

/** The refresh requests `authorizationServer` took, whether or not it knew their token. */
async function refreshesAt(authorizationServer: string): Promise<number> {
  const response = await fetch(new URL("/__refreshes", authorizationServer));
  return ((await response.json()) as { asked: number }).asked;
}

describe("broker mode, an origin that names another authorization server", () => {
  it("sends a grant's refresh token to no other authorization server: the client signs in again", async () => {
    const { provider } = await signIn(broker());
    // The origin's metadata now names another authorization server, which an isolate
    // that has not discovered the origin's yet (a new one, or five minutes on) reads.
    await control({ authorizationServers: [OTHER_ISSUER_ORIGIN.authorizationServer] });
    const before = {
      own: await refreshesAt(SWITCHING_ORIGIN.authorizationServer),
      other: await refreshesAt(OTHER_ISSUER_ORIGIN.authorizationServer),
    };
    const refreshed = await refreshAt(
      brokerFor(SWITCHING_ORIGIN.strict),
      provider,
      provider.saved?.refresh_token ?? "",
    );
    expect(refreshed.status).toBe(400);
    expect(await refreshed.json()).toMatchObject({ error: "invalid_grant" });
    expect(await refreshesAt(OTHER_ISSUER_ORIGIN.authorizationServer)).toBe(before.other);
    expect(await refreshesAt(SWITCHING_ORIGIN.authorizationServer)).toBe(before.own);
    expect(events("upstream_grant_other_issuer")).toMatchObject([
      { issuer: OTHER_ISSUER_ORIGIN.authorizationServer },
    ]);
  });
});
