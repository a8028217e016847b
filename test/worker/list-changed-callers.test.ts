/**
 * `notifications/tools/list_changed` comes on one session's stream (the GET
 * stream, a `subscriptions/listen` stream): the origin tells that session its
 * tools changed, and its client lists them again. Any client whose calls can
 * make an origin say so (the demo's `catalog.refresh`, an origin whose tools
 * change per session) sends it when it likes. It is no word about other
 * callers' listings, which their clients keep, nor a reason to ask the origin
 * for more listings than the isolate's bound (SECURITY.md, "No single request
 * can hurt the proxy or the origin").
 */
import { waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { sanitizeName } from "../../src/names/sanitize";
import { profileOf } from "../../src/schemas/profile";
import { MAX_RELISTS } from "../../src/toolmap/profile-names";
import { timedPuts } from "../../support/counting-kv";
import { demoSession } from "../helpers/demo";
import { DEMO_NAMES } from "../helpers/demo-names";
import { kvHolding } from "../helpers/kv";
import { messagesOf, nextMessage, openSession, postJson, rpc, sseEvents } from "../helpers/mcp";
import { type Fetch, PROXY_URL, viaProxy } from "../helpers/proxy";
import { scriptedOrigin } from "../helpers/scripted-origin";

async function call(proxy: Fetch, session: Record<string, string>, name: string) {
  const response = await postJson(
    proxy,
    PROXY_URL,
    rpc("c", "tools/call", { name, arguments: {} }),
    session,
  );
  const [message] = await messagesOf(response);
  return message as {
    result?: { structuredContent?: { tool: string } };
    error?: { message: string };
  };
}

/** Alice and mallory, each a session of their own and listed, through one isolate under hold. */
async function twoCallers() {
  const { proxy, received } = await demoSession({ vars: { TOOL_CHANGES: "hold" } });
  const alice = { ...(await openSession(proxy, PROXY_URL)), cookie: "who=alice" };
  const mallory = { ...(await openSession(proxy, PROXY_URL)), cookie: "who=mallory" };
  for (const caller of [alice, mallory]) {
    const [listed] = await messagesOf(
      await postJson(proxy, PROXY_URL, rpc(1, "tools/list"), caller),
    );
    expect(listed).toHaveProperty("result.tools");
  }
  /** Mallory's GET stream, and her call that has the origin tell her session its tools changed. */
  const toldChanged = async () => {
    const stream = await proxy(PROXY_URL, {
      headers: { ...mallory, accept: "text/event-stream" },
    });
    const events = sseEvents(stream);
    await call(proxy, mallory, DEMO_NAMES["catalog.refresh"]);
    expect(await nextMessage(events)).toMatchObject({
      method: "notifications/tools/list_changed",
    });
    await events.cancel();
  };
  /**
   * Calls by callers mallory makes up (a cookie each), each new to the isolate: a re-list each,
   * while there is room. Each listed first under another query (another caller, the same
   * source): the demo origin lists any cookie, so each is a source it listed, with a share of
   * its own of the isolate's re-lists, not one of those of sources it never listed.
   */
  const madeUp = async (from: number, count: number) => {
    for (let i = from; i < from + count; i++) {
      const who = { ...mallory, cookie: `who=m${i}` };
      const [listed] = await messagesOf(
        await postJson(proxy, `${PROXY_URL}?listed`, rpc(1, "tools/list"), who),
      );
      expect(listed).toHaveProperty("result.tools");
      await call(proxy, who, DEMO_NAMES["unity/health"]);
    }
  };
  const relists = async () =>
    (await received()).filter((request) => request.body.includes("mcp-edge-rewriter/relist/"));
  return { proxy, alice, mallory, toldChanged, madeUp, relists };
}

describe("mallory's session told its tools changed", () => {
  it("makes the isolate ask the origin for no more listings than its bound a minute", async () => {
    const { toldChanged, madeUp, relists } = await twoCallers();
    await madeUp(0, MAX_RELISTS);
    expect(await relists()).toHaveLength(MAX_RELISTS);
    await toldChanged();
    await madeUp(MAX_RELISTS, 10);
    expect(await relists()).toHaveLength(MAX_RELISTS);
  });

  // It dropped every caller's listing in the isolate, so that under hold each was listed again
  // before their next call, when mallory chose (and, the minute's re-lists spent, alice's calls
  // were refused `unchecked` until it was over).
  it("leaves alice's listing as it was: her next call costs the origin no listing on her behalf", async () => {
    const { proxy, alice, toldChanged, relists } = await twoCallers();
    await toldChanged();
    const answer = await call(proxy, alice, DEMO_NAMES["unity/health"]);
    expect(answer.result?.structuredContent?.tool).toBe("unity/health");
    expect((await relists()).filter((request) => request.headers.cookie === "who=alice")).toEqual(
      [],
    );
  });
});

describe("an origin that says its tools changed between listings that differ", () => {
  it("has the answer remembered for new isolates written to KV once a minute, not at each", async () => {
    // The answer is written at most once a minute per isolate and profile (KV takes a write a
    // second a key, a Free plan 1,000 a day): the notification made it writable again at once.
    const listing = (name: string) => ({
      status: 200,
      headers: [["Content-Type", "application/json"]] as [string, string][],
      body: `{"jsonrpc":"2.0","id":"@ID@","result":{"tools":[{"name":"${name}","inputSchema":{"type":"object"}}]}}`,
    });
    const told = {
      status: 200,
      headers: [["Content-Type", "text/event-stream"]] as [string, string][],
      body: 'data: {"jsonrpc":"2.0","method":"notifications/tools/list_changed"}\n\n',
    };
    const origin = await scriptedOrigin({ "tools/list": listing("a.one"), "*": told }, '"@ID@"');
    const { kv, puts } = timedPuts(env.TOOL_MAP);
    const contexts: ExecutionContext[] = [];
    const proxy = viaProxy({ ORIGIN_URL: origin.originUrl }, { app: createApp(), kv, contexts });
    const settled = () => Promise.all(contexts.splice(0).map((ctx) => waitOnExecutionContext(ctx)));
    for (const name of ["a.one", "b.two", "a.one", "b.two"]) {
      await origin.change({ "tools/list": listing(name), "*": told });
      const [listed] = await messagesOf(await postJson(proxy, PROXY_URL, rpc(1, "tools/list")));
      expect(listed).toHaveProperty("result.tools");
      await settled();
      // The GET stream, on which the origin says its tools changed.
      const stream = await proxy(PROXY_URL, { headers: { accept: "text/event-stream" } });
      await stream.text();
      await settled();
    }
    expect(puts.filter(({ key }) => key.includes(":answer:"))).toHaveLength(1);
  });
});

describe("names handed out before mallory's session was told its tools changed", () => {
  // `a.b` is named `a_b_<hash>` (openai), and the legal tool of that very name `a_b_<hash>_2`
  // (names/assign.ts). Alice keeps her listing; mallory is then listed the legal one alone.
  const dotted = "a.b";
  const fingerprinted = sanitizeName(dotted, profileOf("openai").names).name;
  const listing = (names: string[]) => ({
    status: 200,
    headers: [["Content-Type", "application/json"]] as [string, string][],
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: "@ID@",
      result: { tools: names.map((name) => ({ name, inputSchema: { type: "object" } })) },
    }),
  });
  const answers = (names: string[]) => ({
    "tools/list": listing(names),
    "tools/call": {
      status: 200,
      headers: [["Content-Type", "application/json"]] as [string, string][],
      body: '{"jsonrpc":"2.0","id":"@ID@","result":{"content":[]}}',
    },
    "*": {
      status: 200,
      headers: [["Content-Type", "text/event-stream"]] as [string, string][],
      body: 'data: {"jsonrpc":"2.0","method":"notifications/tools/list_changed"}\n\n',
    },
  });

  // KV's write of alice's listing not made yet: after the response (`waitUntil`), a second after
  // the isolate's last write, or never (a day's writes spent). `landed`: made before mallory's.
  it.each([
    ["held", "log"],
    ["landed", "log"],
    ["held", "hold"],
  ] as const)(
    "still stand for the tools alice was shown under them (KV's write %s, TOOL_CHANGES=%s)",
    async (writes, changes) => {
      const origin = await scriptedOrigin(answers([dotted, fingerprinted]), '"@ID@"');
      const holding = kvHolding(
        env.TOOL_MAP,
        (operation) => writes === "held" && operation === "put",
      );
      const contexts: ExecutionContext[] = [];
      const proxy = viaProxy(
        { ORIGIN_URL: origin.originUrl, TOOL_CHANGES: changes },
        { app: createApp(), kv: holding.kv, contexts },
      );
      const alice = { authorization: "Bearer alice" };
      const mallory = { authorization: "Bearer mallory" };
      const list = async (who: Record<string, string>) => {
        const [listed] = await messagesOf(
          await postJson(proxy, PROXY_URL, rpc(1, "tools/list"), who),
        );
        return (listed as { result: { tools: { name: string }[] } }).result.tools.map(
          (t) => t.name,
        );
      };
      try {
        expect(await list(alice)).toEqual([fingerprinted, `${fingerprinted}_2`]);
        if (writes === "landed")
          await Promise.all(contexts.map((ctx) => waitOnExecutionContext(ctx)));
        // Mallory's GET stream, on which the origin says her tools changed; then her listing.
        await (
          await proxy(PROXY_URL, { headers: { ...mallory, accept: "text/event-stream" } })
        ).text();
        await origin.change(answers([fingerprinted]));
        expect(await list(mallory)).toHaveLength(1);
        await origin.received();

        await origin.change(answers([dotted, fingerprinted]));
        for (const name of [fingerprinted, `${fingerprinted}_2`]) {
          await messagesOf(
            await postJson(proxy, PROXY_URL, rpc(2, "tools/call", { name, arguments: {} }), alice),
          );
        }
        const reached = (await origin.received()).map(
          (request) => JSON.parse(request.body) as { method: string; params?: { name?: string } },
        );
        // Each by the tool alice was shown under the name, and her listing here stands: the
        // origin is asked for none on her behalf.
        expect(reached.map(({ method, params }) => `${method} ${params?.name}`)).toEqual([
          `tools/call ${dotted}`,
          `tools/call ${fingerprinted}`,
        ]);
      } finally {
        holding.release();
        await Promise.all(contexts.map((ctx) => waitOnExecutionContext(ctx)));
      }
    },
  );
});
