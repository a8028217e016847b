/**
 * Gate mode's `ORIGIN_USER_HEADER`: the origin is told each user's verified
 * email, and trusts it because the proxy's key comes with it. An address the
 * origin could read as another's is not told: one outside printable ASCII
 * (U+212A KELVIN SIGN, which Unicode folds to "k", goes out as UTF-8 bytes an
 * origin reads another way), one that holds a list (an origin that splits it
 * takes its first entry), one with a line break (which the runtime refuses in
 * a header). Its user is refused at sign-in with a page that says why, and a
 * grant made before (the setting added later, or an older proxy) ends at its
 * next request and refresh. The address is in no log line.
 */

import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import {
  gateNetwork,
  grantEnded,
  initializeWith,
  neverShowsItsKeys,
  signedInByHand,
  walkAs,
} from "../helpers/gate";
import { GATEWAY_ORIGIN, IDENTITY_PROVIDER, newTrace, receivedByOrigin } from "../helpers/proxy";

const events = neverShowsItsKeys();
const USER_HEADER = { ORIGIN_USER_HEADER: "X-User-Email" };

/** What of each address must never be logged (its local part first): all of it but a plain domain. */
const NEVER_LOGGED: Record<string, string[]> = {
  kelvin: ["\u212A", "ate@"],
  lister: ["kate", "lister"],
  breaker: ["breaker", "x-user-email", "\r", "\n"],
};

/** No sign-in log line of this file names any part of `user`'s address but its domain. */
function neverLogged(user: string) {
  const names = ["sign_in_refused", "gate_refused", "sign_in_completed", "sign_in_failed"];
  const text = JSON.stringify(names.flatMap((name) => events(name)));
  for (const fragment of NEVER_LOGGED[user] ?? []) {
    expect(text).not.toContain(JSON.stringify(fragment).slice(1, -1));
  }
}

describe("gate mode: an address the origin could read as another's is not told (ORIGIN_USER_HEADER)", () => {
  it.each([
    ["kelvin", "a letter outside ASCII that Unicode folds to an ASCII one"],
    ["lister", "a list whose first entry is kate@acme.test"],
    ["breaker", "a line break and a header line of its own"],
  ])(
    "refuses %s (%s) at sign-in, with a page that says why, and sends the origin nothing",
    async (user) => {
      const trace = newTrace();
      const network = gateNetwork({
        ...USER_HEADER,
        ORIGIN_URL: `${GATEWAY_ORIGIN}/mcp?trace=${trace}`,
      });
      const walk = (await walkAs(network, user)).walk;
      expect(walk.callback).toBeUndefined();
      expect(walk.stopped?.status).toBe(403);
      expect(walk.stopped?.html).toContain("is not a plain address");
      // Shown, it would be shown as the origin could not read it.
      expect(walk.stopped?.html).not.toContain(NEVER_LOGGED[user]?.[0]);
      const back = /href="([^"]*)"/.exec(walk.stopped?.html ?? "")?.[1]?.replaceAll("&#38;", "&");
      expect(new URL(back ?? "").searchParams.get("error")).toBe("access_denied");
      expect(events("sign_in_refused")).toContainEqual(
        expect.objectContaining({ reason: "unpassable_email" }),
      );
      neverLogged(user);
      expect(await receivedByOrigin(trace)).toEqual([]);
    },
  );

  it("refuses it from GitHub too", async () => {
    const network = gateNetwork({
      ...USER_HEADER,
      IDP_PROTOCOL: "github",
      IDP_ISSUER: `${IDENTITY_PROVIDER}/github`,
      ALLOWED_GROUPS: undefined,
    });
    const walk = (await walkAs(network, "kelvin")).walk;
    expect(walk.stopped?.status).toBe(403);
    expect(walk.stopped?.html).toContain("is not a plain address");
  });

  it("lets the same user in without the setting: the address then goes nowhere", async () => {
    const walk = (await walkAs(gateNetwork(), "kelvin")).walk;
    expect(walk.callback?.searchParams.get("code")).toBeTruthy();
  });

  it("ends a grant made before the setting was added: at its next request and refresh, before the origin", async () => {
    const app = createApp();
    const grant = await signedInByHand(gateNetwork({}, app), "kelvin");
    const trace = newTrace();
    const after = gateNetwork(
      { ...USER_HEADER, ORIGIN_URL: `${GATEWAY_ORIGIN}/mcp?trace=${trace}` },
      app,
    );
    await grantEnded(after, grant, "unpassable_email", events);
    neverLogged("kelvin");
    expect(await receivedByOrigin(trace)).toEqual([]);
  });

  it("tells the origin a plain address with the punctuation addresses hold, in lower case", async () => {
    const trace = newTrace();
    const network = gateNetwork({
      ...USER_HEADER,
      ORIGIN_URL: `${GATEWAY_ORIGIN}/mcp?trace=${trace}`,
    });
    const { token } = await signedInByHand(network, "quinn");
    expect((await initializeWith(network, token)).status).toBe(200);
    const received = await receivedByOrigin(trace);
    expect(received.length).toBeGreaterThan(0);
    for (const { headers } of received) {
      expect(headers["x-user-email"]).toBe("quinn.o'brien+mcp@acme.test");
    }
  });
});
