/**
 * Callers made up from one credential (SECURITY.md, "No single request can
 * hurt the proxy or the origin"): to the proxy a caller is what the origin
 * sees, the credentials, the URL's query and the session, and with one
 * valid token mallory makes as many as she likes by sending a new
 * `Mcp-Session-Id` each time (the caller origin, stateless, ignores it). What
 * the isolate keeps or asks the origin for on behalf of callers, it shares
 * among them by source, the credentials alone: mallory's made-up callers
 * spend her source's share, not alice's.
 */
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { sanitizeName } from "../../src/names/sanitize";
import { profileOf } from "../../src/schemas/profile";
import {
  MAX_RELISTS,
  MAX_RELISTS_PER_SOURCE,
  MAX_UNPROVEN_RELISTS,
} from "../../src/toolmap/profile-names";
import { ADMIN_PAYROLL, callerOrigin, signedInAs, USER_READ } from "../helpers/caller-origin";
import { clientsOfEachTest, EACH_WIRE, type Wire } from "../helpers/clients";
import { captureLogs } from "../helpers/logs";
import { messagesOf, postJson, wireRequest } from "../helpers/mcp";
import { type Fetch, PROXY_URL, viaProxy } from "../helpers/proxy";

const connect = clientsOfEachTest();

const READ_NAME = sanitizeName(USER_READ.name, profileOf("openai").names).name;

/** Mallory's raw requests through `proxy`, signed in with her one token (or `token`; `""`: none), each in session `session`. */
function mallory(proxy: Fetch, wire: Wire) {
  let id = 0;
  return async (
    session: string,
    method: string,
    params: Record<string, unknown>,
    token = "mallory",
  ) => {
    const { body, headers } = wireRequest(wire, ++id, method, params);
    const response = await postJson(proxy, PROXY_URL, body, {
      ...headers,
      ...(token === "" ? {} : { authorization: `Bearer ${token}` }),
      "mcp-session-id": session,
    });
    return (await messagesOf(response))[0] as { result?: unknown; error?: { message: string } };
  };
}

/** One isolate whose rules hide a tool (calls are refused unchecked without a listing), before a fresh caller origin. */
async function setup(wire: Wire) {
  const origin = callerOrigin();
  await origin.list("alice", [USER_READ, ADMIN_PAYROLL]);
  await origin.list("mallory", [USER_READ]);
  const proxy = viaProxy(
    { ORIGIN_URL: origin.url, TOOL_RULES: JSON.stringify({ hide: ["admin.*"] }) },
    { app: createApp() },
  );
  return { origin, proxy, send: mallory(proxy, wire) };
}

describe.each(EACH_WIRE)("callers made up from one token, protocol %s", (wire) => {
  it("leaves other tokens' callers the isolate's re-lists, however many callers one token makes up", async () => {
    const { origin, proxy, send } = await setup(wire);
    // Every call of a session new to the isolate has the proxy list the origin on its behalf.
    for (let i = 0; i < MAX_RELISTS; i++) {
      await send(`m${i}`, "tools/call", { name: READ_NAME, arguments: { id: "1" } });
    }
    // Alice, new to the isolate too, calls a tool of hers: only her listing tells the rules'
    // verdict, and the proxy asks the origin for it.
    const alice = await connect(wire, signedInAs("alice", proxy));
    const result = await alice.callTool(READ_NAME, { id: "2" });
    expect(result.structuredContent).toEqual({
      tool: "user.read",
      arguments: { id: "2" },
      caller: "alice",
    });
    const listings = await origin.listings();
    expect(listings.alice).toBe(1);
    // Mallory's made-up callers had a share of the minute's re-lists, not all of them.
    expect(listings.mallory).toBe(MAX_RELISTS_PER_SOURCE);
  });

  it("leaves a token the origin listed its re-lists, however many tokens a client makes up", async () => {
    const { origin, proxy, send } = await setup(wire);
    // Alice lists and calls: the origin answered a listing for her token in this isolate.
    const alice = await connect(wire, signedInAs("alice", proxy), `${PROXY_URL}?tab=1`);
    expect((await alice.listTools()).map((tool) => tool.name)).toEqual([READ_NAME]);
    await alice.callTool(READ_NAME, { id: "1" });
    // Relay mode checks no token: each call of mallory's comes with one she made up, a source of
    // its own, new to the isolate, as many as the isolate's minute of re-lists.
    for (let i = 0; i < MAX_RELISTS; i++) {
      await send("m", "tools/call", { name: READ_NAME, arguments: { id: "1" } }, `made-up-${i}`);
    }
    // Alice again, as a caller whose listing the isolate has not read (another query): the proxy
    // asks the origin for it, and her call is judged, not refused as one it cannot check now.
    const again = await connect(wire, signedInAs("alice", proxy), `${PROXY_URL}?tab=2`);
    const result = await again.callTool(READ_NAME, { id: "2" });
    expect(result.structuredContent).toEqual({
      tool: "user.read",
      arguments: { id: "2" },
      caller: "alice",
    });
    const listings = await origin.listings();
    expect(listings.alice).toBe(2);
    // The made-up tokens together had the share of sources the origin never listed, not the minute.
    const madeUp = Object.entries(listings).filter(([caller]) => caller.startsWith("made-up-"));
    expect(madeUp.reduce((sum, [, count]) => sum + count, 0)).toBe(MAX_UNPROVEN_RELISTS);
  });

  it("leaves a token the origin listed its re-lists, however many requests without credentials an origin that takes tokens is sent", async () => {
    // An origin that answers 401 to a request without a token.
    const origin = callerOrigin("&bearer");
    await origin.list("alice", [USER_READ, ADMIN_PAYROLL]);
    const proxy = viaProxy(
      { ORIGIN_URL: origin.url, TOOL_RULES: JSON.stringify({ hide: ["admin.*"] }) },
      { app: createApp() },
    );
    const send = mallory(proxy, wire);
    const alice = await connect(wire, signedInAs("alice", proxy), `${PROXY_URL}?tab=1`);
    expect((await alice.listTools()).map((tool) => tool.name)).toEqual([READ_NAME]);
    const logs = captureLogs();
    // Requests without credentials are one source, and one the origin never listed: each made-up
    // session a caller of its own, as many as the isolate's minute of re-lists.
    for (let i = 0; i < MAX_RELISTS; i++) {
      await send(`n${i}`, "tools/call", { name: READ_NAME, arguments: { id: "1" } }, "");
    }
    const again = await connect(wire, signedInAs("alice", proxy), `${PROXY_URL}?tab=2`);
    const result = await again.callTool(READ_NAME, { id: "2" });
    expect(result.structuredContent).toMatchObject({ tool: "user.read", caller: "alice" });
    expect((await origin.listings()).alice).toBe(2);
    // Those past the unproven sources' share were refused it, and alice's was not.
    expect(logs.events("relist_limited")).toEqual(
      Array(MAX_RELISTS - MAX_UNPROVEN_RELISTS).fill({
        event: "relist_limited",
        profile: "openai",
        per: "unproven",
        limit: MAX_UNPROVEN_RELISTS,
      }),
    );
    logs.restore();
  });

  it("leaves callers without credentials, told apart by their query, the isolate's whole minute of re-lists", async () => {
    // An origin that keys callers by a query parameter (`?key=`): no source but the isolate.
    const origin = callerOrigin();
    await origin.list("", [USER_READ, ADMIN_PAYROLL]);
    const proxy = viaProxy(
      { ORIGIN_URL: origin.url, TOOL_RULES: JSON.stringify({ hide: ["admin.*"] }) },
      { app: createApp() },
    );
    for (let i = 0; i <= MAX_RELISTS; i++) {
      const user = await connect(wire, proxy, `${PROXY_URL}?key=user${i}`);
      if (i < MAX_RELISTS) {
        const result = await user.callTool(READ_NAME, { id: "1" });
        expect(result.structuredContent).toMatchObject({ tool: "user.read", caller: "" });
      } else {
        // Past the isolate's bound, as before sources were counted.
        await expect(user.callTool(READ_NAME, { id: "1" })).rejects.toThrow(
          /cannot be checked now/,
        );
      }
    }
    expect((await origin.listings())[""]).toBe(MAX_RELISTS);
  });
});

// The isolate's callers' listings are the same whatever the wire: one revision's clients, as the
// test lists over four thousand times.
describe("callers made up from one token, listing", () => {
  const wire = "2026-07-28";
  it("reads the rest of a token's first listing over a tool ceiling, however many tokens new to the isolate list at once", async () => {
    // Three tools, two a page, over a ceiling of two: the proxy reads the rest, a re-list, and
    // answers in search mode (docs/search-mode.md).
    const origin = callerOrigin("&page_size=2");
    const tools = [USER_READ, ADMIN_PAYROLL, { ...USER_READ, name: "user.write" }];
    const users = Array.from({ length: MAX_UNPROVEN_RELISTS + 1 }, (_, i) => `user${i}`);
    for (const user of users) await origin.list(user, tools);
    const proxy = viaProxy({ ORIGIN_URL: origin.url, MAX_TOOLS: "2" }, { app: createApp() });
    for (const user of users) {
      const client = await connect(wire, signedInAs(user, proxy));
      // Each user's first page is the origin's answer for them: the read of the rest is theirs,
      // not one of those of sources the origin never listed.
      expect((await client.listTools()).map((tool) => tool.name)).toEqual([
        "search_tools",
        "call_tool",
      ]);
    }
  });

  it("keeps another token's listing, however many callers one token makes up and lists", async () => {
    const { origin, proxy, send } = await setup(wire);
    const alice = await connect(wire, signedInAs("alice", proxy));
    expect((await alice.listTools()).map((tool) => tool.name)).toEqual([READ_NAME]);
    // More sessions listed than the isolate keeps callers' listings of (4,096), a few at once.
    const sessions = 4_100;
    for (let from = 0; from < sessions; from += 50) {
      await Promise.all(
        Array.from({ length: Math.min(50, sessions - from) }, (_, i) =>
          send(`m${from + i}`, "tools/list", {}),
        ),
      );
    }
    expect((await origin.listings()).mallory).toBe(sessions);
    // Alice's call is judged from her own listing, still here: none asked for on her behalf.
    const result = await alice.callTool(READ_NAME, { id: "2" });
    expect(result.structuredContent).toEqual({
      tool: "user.read",
      arguments: { id: "2" },
      caller: "alice",
    });
    expect((await origin.listings()).alice).toBe(1);
  }, 120_000);
});
