/**
 * Per-source shares in gate mode with the shared `ORIGIN_SECRET` alone
 * (SECURITY.md, "What the proxy answers itself"): the origin is sent the same
 * key for every user and tells none apart, but the gate signed each in. A
 * user who sends each request with a query the origin ignores (or in a new
 * session: gate mode takes back only a session id it handed that user,
 * gate-sessions.test.ts, so each costs an `initialize`) is a new caller each
 * time, as one token's are in relay mode: their re-lists are their own share
 * of the isolate's, not every user's.
 */
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { sanitizeName } from "../../src/names/sanitize";
import { profileOf } from "../../src/schemas/profile";
import { MAX_RELISTS, MAX_RELISTS_PER_SOURCE } from "../../src/toolmap/profile-names";
import { ADMIN_PAYROLL, callerOrigin, USER_READ } from "../helpers/caller-origin";
import { connectAs, GATE_URL, gateNetwork, signedInByHand } from "../helpers/gate";
import { messagesOf, postJson, wireRequest } from "../helpers/mcp";

const READ_NAME = sanitizeName(USER_READ.name, profileOf("openai").names).name;
/**
 * The shared key of this file's proxy: the caller origin writes the key it was sent into its
 * answers, and test/helpers/gate.ts's `SHARED_KEY` must appear in none.
 */
const SHARED_KEY = `quota-${crypto.randomUUID()}`;

describe("gate mode, the shared key alone", () => {
  it("leaves other users the isolate's re-lists, however many callers one user makes up", async () => {
    const wire = "2026-07-28";
    const origin = callerOrigin();
    // The origin lists by the key it is sent: the shared one, every user's.
    await origin.list(SHARED_KEY, [USER_READ, ADMIN_PAYROLL]);
    const network = gateNetwork(
      {
        ORIGIN_URL: origin.url,
        ORIGIN_SECRET: SHARED_KEY,
        TOOL_RULES: JSON.stringify({ hide: ["admin.*"] }),
      },
      createApp(),
    );
    // Mallory (dave, of the allowed group), signed in once: each call with a query new to the
    // isolate has the proxy list the origin on its behalf.
    const { token } = await signedInByHand(network, "dave");
    for (let i = 0; i < MAX_RELISTS; i++) {
      const { body, headers } = wireRequest(wire, i + 1, "tools/call", {
        name: READ_NAME,
        arguments: { id: "1" },
      });
      await messagesOf(
        await postJson(network, `${GATE_URL}?m=${i}`, body, {
          ...headers,
          authorization: `Bearer ${token}`,
        }),
      );
    }
    expect((await origin.listings())[SHARED_KEY]).toBe(MAX_RELISTS_PER_SOURCE);
    // Alice, new to the isolate, calls a tool of hers: only a listing tells the rules' verdict.
    const { client } = await connectAs("alice", network, wire);
    const result = await client.callTool(READ_NAME, { id: "2" });
    expect(result.structuredContent).toMatchObject({ tool: "user.read", arguments: { id: "2" } });
    expect((await origin.listings())[SHARED_KEY]).toBe(MAX_RELISTS_PER_SOURCE + 1);
    await client.close();
  });
});
