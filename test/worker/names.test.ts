/** Tool names through the proxy, against the real demo origin (docs/names.md, "Tool names"; docs/tool-map.md). */
import { waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { createApp } from "../../src/app";
import { profileOf } from "../../src/schemas/profile";
import { toolMapScopes } from "../../src/toolmap/isolate-memory";
import { countingKv } from "../../support/counting-kv";
import { demoSession } from "../helpers/demo";
import { VALID_ARGUMENTS } from "../helpers/demo-calls";
import { DEMO_NAMES } from "../helpers/demo-names";
import { kvFailingOnly } from "../helpers/kv";
import { expectOriginsToolsAsViewed } from "../helpers/listing";
import { captureLogs } from "../helpers/logs";
import { messagesOf, nextMessage, openSession, postJson, rpc, sseEvents } from "../helpers/mcp";
import {
  type Fetch,
  freshOrigin,
  GATEWAY_ORIGIN,
  PROXY_URL,
  receivedByOrigin,
  viaProxy,
} from "../helpers/proxy";

const OPENAI_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const LONG = "analytics_reporting_service.generate_quarterly_revenue_summary_by_region";

interface Tool {
  name: string;
  [field: string]: unknown;
}

async function listTools(fetch: Fetch, url: string, session: Record<string, string>) {
  const tools: Tool[] = [];
  const pages: Record<string, unknown>[] = [];
  let cursor: string | undefined;
  do {
    const response = await postJson(
      fetch,
      url,
      rpc(`list-${pages.length}`, "tools/list", cursor ? { cursor } : {}),
      session,
    );
    const [message] = await messagesOf(response);
    const result = (message as { result: { tools: Tool[]; nextCursor?: string } }).result;
    pages.push(result);
    tools.push(...result.tools);
    cursor = result.nextCursor;
  } while (cursor);
  return { tools, pages };
}

/** How many requests that reached the origin for `trace` carry `what` in their body. */
async function countReceived(trace: string, what: string): Promise<number> {
  return (await receivedByOrigin(trace)).filter((r) => r.body.includes(what)).length;
}

async function callTool(
  fetch: Fetch,
  url: string,
  session: Record<string, string>,
  name: string,
  args: Record<string, unknown> = {},
) {
  const response = await postJson(
    fetch,
    url,
    rpc("call", "tools/call", { name, arguments: args }),
    session,
  );
  const messages = await messagesOf(response);
  return messages.find((message) => message.id === "call") as {
    result: {
      structuredContent?: { tool: string };
      isError?: boolean;
      content: { text: string }[];
    };
  };
}

describe("tools/list through the proxy", () => {
  it("hands out the documented names and keeps every other field", async () => {
    const { proxy, session, origin } = await demoSession();
    const { tools } = await listTools(proxy, PROXY_URL, session);

    const directSession = await openSession(fetch, origin);
    const { tools: originTools } = await listTools(fetch, origin, directSession);
    expectOriginsToolsAsViewed(tools, originTools);

    const names = Object.fromEntries(originTools.map((tool, i) => [tool.name, tools[i]?.name]));
    expect(names).toEqual({
      "unity/health": DEMO_NAMES["unity/health"],
      "files.read": DEMO_NAMES["files.read"],
      "catering.invoice": DEMO_NAMES["catering.invoice"],
      "scope:action": DEMO_NAMES["scope:action"],
      [LONG]: expect.stringMatching(
        /^analytics_reporting_service_generate_quarterly_revenue_su_[0-9a-z]{6}$/,
      ),
      a_b: "a_b",
      "a/b": DEMO_NAMES["a/b"],
      "21st_century": "21st_century",
      "reports.query": DEMO_NAMES["reports.query"],
      "get-weather": "get-weather",
      "tasks.countdown": DEMO_NAMES["tasks.countdown"],
      "catalog.refresh": DEMO_NAMES["catalog.refresh"],
      "deploy:confirm": DEMO_NAMES["deploy:confirm"],
    });
    for (const tool of tools) expect(tool.name).toMatch(OPENAI_NAME);
  });

  it("follows NAME_PROFILE", async () => {
    const { proxy, session } = await demoSession({ vars: { NAME_PROFILE: "portable" } });
    const names = (await listTools(proxy, PROXY_URL, session)).tools.map((tool) => tool.name);
    expect(names).toContain("t_21st_century_gc8iis");
    expect(names).toContain("get_weather_1506qe");
    for (const name of names) expect(name).toMatch(/^[A-Za-z][A-Za-z0-9_]{0,62}$/);
  });

  it("follows NAME_MAX_LENGTH", async () => {
    const { proxy, session } = await demoSession({ vars: { NAME_MAX_LENGTH: "40" } });
    const names = (await listTools(proxy, PROXY_URL, session)).tools.map((tool) => tool.name);
    expect(names).toEqual([
      DEMO_NAMES["unity/health"],
      DEMO_NAMES["files.read"],
      DEMO_NAMES["catering.invoice"],
      DEMO_NAMES["scope:action"],
      "analytics_reporting_service_gener_oshsl2", // 33 characters, `_`, the hash: 40
      "a_b",
      DEMO_NAMES["a/b"],
      "21st_century",
      DEMO_NAMES["reports.query"],
      "get-weather",
      DEMO_NAMES["tasks.countdown"],
      DEMO_NAMES["catalog.refresh"],
      DEMO_NAMES["deploy:confirm"],
    ]);
  });

  it("renames every page of a paginated listing, consistently with the whole", async () => {
    const whole = await demoSession();
    const expected = (await listTools(whole.proxy, PROXY_URL, whole.session)).tools;

    const paged = await demoSession({ query: "&page_size=5" });
    const { tools, pages } = await listTools(paged.proxy, PROXY_URL, paged.session);
    expect(pages).toHaveLength(3);
    expect(pages.map((page) => page.nextCursor)).toEqual(["5", "10", undefined]);
    expect(tools).toEqual(expected);
  });

  it("rewrites application/json responses as well as event streams", async () => {
    const { proxy, session } = await demoSession({ query: "&json" });
    const response = await postJson(proxy, PROXY_URL, rpc(1, "tools/list"), session);
    expect(response.headers.get("content-type")).toContain("application/json");
    const body = await response.json<{ result: { tools: Tool[] } }>();
    expect(body.result.tools.map((tool) => tool.name)).toContain(DEMO_NAMES["unity/health"]);
  });
});

/** [original, model-facing] for every demo tool, from the origin's and the proxy's listings. */
async function namePairs(
  setup: Awaited<ReturnType<typeof demoSession>>,
): Promise<[string, string][]> {
  const { tools } = await listTools(setup.proxy, PROXY_URL, setup.session);
  const direct = await listTools(fetch, setup.origin, await openSession(fetch, setup.origin));
  return direct.tools.map((tool, i) => [tool.name, tools[i]?.name ?? ""]);
}

function callsReceived(trace: string) {
  return receivedByOrigin(trace).then((requests) =>
    requests
      .map((request) => JSON.parse(request.body || "null"))
      .filter((body) => body?.method === "tools/call"),
  );
}

describe("tools/call by model-facing name", () => {
  it("reaches the original tool, for every tool", async () => {
    const setup = await demoSession();
    const pairs = (await namePairs(setup)).filter(([original]) => original !== "deploy:confirm");
    expect(pairs).toHaveLength(12);

    for (const [original, modelName] of pairs) {
      const { result } = await callTool(
        setup.proxy,
        PROXY_URL,
        setup.session,
        modelName,
        VALID_ARGUMENTS[original],
      );
      expect(result.isError, `${modelName}: ${result.content[0]?.text}`).toBeUndefined();
      expect(result.structuredContent?.tool).toBe(original);
    }
    const received = await callsReceived(setup.trace);
    expect(received.map((call) => call.params.name)).toEqual(pairs.map(([original]) => original));
  });

  it("sets Mcp-Name to the original name when the client sent one", async () => {
    const setup = await demoSession();
    await listTools(setup.proxy, PROXY_URL, setup.session);
    const response = await postJson(
      setup.proxy,
      PROXY_URL,
      rpc(5, "tools/call", { name: DEMO_NAMES["unity/health"], arguments: {} }),
      { ...setup.session, "mcp-method": "tools/call", "mcp-name": DEMO_NAMES["unity/health"] },
    );
    await response.body?.cancel();
    const [call] = (await receivedByOrigin(setup.trace)).filter((r) =>
      r.body.includes("tools/call"),
    );
    expect(call?.headers["mcp-name"]).toBe("unity/health");
    expect(call?.headers["mcp-method"]).toBe("tools/call");
    expect(call?.headers["content-length"]).toBe(
      String(new TextEncoder().encode(call?.body).length),
    );
  });

  it("in a fresh isolate with empty memory and KV, asks the origin for its tools first", async () => {
    const setup = await demoSession();
    const pairs = await namePairs(setup);
    const isolate = viaProxy({ ORIGIN_URL: setup.origin }, { app: createApp() });
    const freshKv = viaProxy(
      { ORIGIN_URL: freshOrigin(GATEWAY_ORIGIN, `&trace=${setup.trace}`) },
      { app: createApp() },
    );

    for (const proxy of [isolate, freshKv]) {
      const { result } = await callTool(proxy, PROXY_URL, setup.session, DEMO_NAMES["a/b"]);
      expect(result.structuredContent?.tool).toBe("a/b");
    }
    const relists = (await receivedByOrigin(setup.trace)).filter((r) =>
      r.body.includes('"id":"mcp-edge-rewriter/relist/'),
    );
    // One in each: the fresh KV scope's to learn the name, and the fresh isolate of the first
    // scope, which found KV warm, the caller's own listing, which it holds none of: the schema
    // the map holds may be another caller's (SECURITY.md, "What the proxy answers itself").
    expect(relists).toHaveLength(2);
    for (const relist of relists) {
      expect(relist.headers["mcp-session-id"]).toBe(setup.session["mcp-session-id"]);
    }
    expect(pairs).toContainEqual(["a/b", DEMO_NAMES["a/b"]]);
  });

  it.each([
    ["/cr-lines", "an event stream whose lines end with a lone CR, the last one too", ""],
    ["/upper-type", "an answer whose Content-Type is written in upper case", ""],
    ["/batch-list", "an event stream whose listing is a batch of one", ""],
    ["/batch-list", "a JSON body whose listing is a batch of one", "&json"],
  ])("reads the origin's listing to restore a name from %s: %s", async (route, _, query) => {
    const setup = await demoSession({ query });
    const proxy = viaProxy(
      { ORIGIN_URL: freshOrigin(`${GATEWAY_ORIGIN}${route}`, `&trace=${setup.trace}${query}`) },
      { app: createApp() },
    );
    const logs = captureLogs();
    const response = await postJson(
      proxy,
      PROXY_URL,
      rpc(5, "tools/call", { name: DEMO_NAMES["a/b"], arguments: {} }),
      setup.session,
    );
    await response.body?.cancel();
    expect(logs.events("relist_failed")).toEqual([]);
    logs.restore();
    const received = await receivedByOrigin(setup.trace);
    expect(received.filter((r) => r.body.includes("mcp-edge-rewriter/relist/"))).toHaveLength(1);
    const [call] = received.filter((r) => r.body.includes('"tools/call"'));
    expect(JSON.parse(call?.body ?? "{}").params.name).toBe("a/b");
  });

  it.each([
    ["an event stream", ""],
    ["JSON", "&json"],
  ])("renames a listing sent as %s under a Content-Type in upper case", async (_, query) => {
    const setup = await demoSession({ query });
    const proxy = viaProxy({
      ORIGIN_URL: freshOrigin(`${GATEWAY_ORIGIN}/upper-type`, `&trace=${setup.trace}${query}`),
    });
    const response = await postJson(proxy, PROXY_URL, rpc(1, "tools/list"), setup.session);
    expect(response.headers.get("content-type")).toBe(
      query ? "APPLICATION/JSON" : "TEXT/EVENT-STREAM",
    );
    const [message] = await messagesOf(response);
    const { tools } = (message as { result: { tools: Tool[] } }).result;
    expect(tools.map((tool) => tool.name)).toContain(DEMO_NAMES["a/b"]);
    expect(tools.map((tool) => tool.name)).not.toContain("a/b");
  });

  it("in a cold isolate with a warm KV, reads the map, and asks the origin for the caller's own listing alone", async () => {
    const contexts: ExecutionContext[] = [];
    const setup = await demoSession({ contexts });
    await listTools(setup.proxy, PROXY_URL, setup.session);
    await Promise.all(contexts.map((ctx) => waitOnExecutionContext(ctx)));

    const counted = countingKv(env.TOOL_MAP);
    const cold = viaProxy({ ORIGIN_URL: setup.origin }, { app: createApp(), kv: counted.kv });
    const { result } = await callTool(cold, PROXY_URL, setup.session, DEMO_NAMES["files.read"], {
      path: "x",
    });
    expect(result.structuredContent?.tool).toBe("files.read");
    expect(counted.counts).toMatchObject({ put: 0, list: 0 });
    expect(counted.counts.get).toBeLessThanOrEqual(3);
    // Its schema is read from the caller's own listing (the map's may be another caller's).
    const relists = (await receivedByOrigin(setup.trace)).filter((r) => r.body.includes("relist"));
    expect(relists).toHaveLength(1);
  });

  it("asks the origin nothing for a name it could never have handed out, and logs it cut short", async () => {
    const log = vi.spyOn(console, "log");
    const setup = await demoSession();
    for (const name of ["x".repeat(3_000_000), "files.read", "has space"]) {
      const response = await postJson(
        setup.proxy,
        PROXY_URL,
        rpc(7, "tools/call", { name, arguments: {} }),
        setup.session,
      );
      await response.body?.cancel();
    }
    const received = await receivedByOrigin(setup.trace);
    expect(received.filter((r) => r.body.includes("relist"))).toEqual([]);
    expect(received.filter((r) => r.body.includes('"tools/call"'))).toHaveLength(3);
    const lines = log.mock.calls.map(([line]) => String(line));
    expect(lines.filter((line) => line.includes('"tool_unknown"'))).toHaveLength(3);
    for (const line of lines) expect(line.length).toBeLessThan(4096);
    log.mockRestore();
  });

  it("writes no tool_unknown line for a call it refuses: the line says the call went on", async () => {
    const logs = captureLogs();
    const setup = await demoSession();
    // Arguments no object (the SDK sends none such): -32602, and the origin never sees the call.
    const response = await postJson(
      setup.proxy,
      PROXY_URL,
      rpc(8, "tools/call", { name: "files.read", arguments: [1, 2] }),
      setup.session,
    );
    const [answer] = await messagesOf(response);
    expect(answer).toMatchObject({ id: 8, error: { code: -32602 } });
    const received = await receivedByOrigin(setup.trace);
    expect(received.filter((r) => r.body.includes('"tools/call"'))).toEqual([]);
    expect(logs.events("tool_call_refused")).toMatchObject([
      { name: "files.read", reason: "malformed_arguments" },
    ]);
    expect(logs.events("tool_unknown")).toEqual([]);
    logs.restore();
  });

  it("lists the origin at most once a minute per caller and session for names its listing lacks", async () => {
    const setup = await demoSession();
    const relists = () => countReceived(setup.trace, "relist");
    const calls = () => countReceived(setup.trace, '"tools/call"');
    for (const name of ["no_such_tool", "no_such_tool", "nor_this_one"]) {
      await callTool(setup.proxy, PROXY_URL, setup.session, name);
    }
    // Each call still reaches the origin, which answers for a tool it does not have.
    expect(await calls()).toBe(3);
    expect(await relists()).toBe(1);
    // Another caller's listing, or another session's, may hold other tools: it is asked for.
    const other = { ...setup.session, authorization: "Bearer another-caller" };
    await callTool(setup.proxy, PROXY_URL, other, "no_such_tool");
    expect(await relists()).toBe(2);
    await callTool(
      setup.proxy,
      PROXY_URL,
      await openSession(setup.proxy, PROXY_URL),
      "no_such_tool",
    );
    expect(await relists()).toBe(3);
    // A minute on, the origin may list new tools: it is asked again.
    const now = Date.now();
    vi.spyOn(Date, "now").mockImplementation(() => now + 61_000);
    await callTool(setup.proxy, PROXY_URL, setup.session, "no_such_tool");
    vi.restoreAllMocks();
    expect(await relists()).toBe(4);
    expect(await calls()).toBe(6);
  });

  it("says on its tool_unknown line whether it read the origin's listing for the caller before it forwarded the call", async () => {
    const setup = await demoSession();
    const logs = captureLogs();
    const relists = () => countReceived(setup.trace, "relist");
    // Asked for and read: the listing lacks the name.
    await callTool(setup.proxy, PROXY_URL, setup.session, "no_such_tool");
    expect(await relists()).toBe(1);
    // Not asked for again within the minute: a tool listed since is not known to the proxy yet.
    await callTool(setup.proxy, PROXY_URL, setup.session, "no_such_tool");
    // A name the proxy could never have handed out asks for nothing, in a session of its own.
    await callTool(setup.proxy, PROXY_URL, await openSession(setup.proxy, PROXY_URL), "files.read");
    expect(await relists()).toBe(1);
    expect(logs.events("tool_unknown")).toEqual([
      { event: "tool_unknown", name: "no_such_tool", relisted: true, forwarded: "as_called" },
      { event: "tool_unknown", name: "no_such_tool", relisted: false, forwarded: "as_called" },
      { event: "tool_unknown", name: "files.read", relisted: false, forwarded: "as_called" },
    ]);
    logs.restore();
  });

  it("lists the origin at most 10 times a minute per isolate for callers of credentials it never listed, however many the client makes up", async () => {
    const setup = await demoSession();
    const logs = captureLogs();
    const received = (what: string) => countReceived(setup.trace, what);
    // A caller is what the origin sees: a cookie the client makes up is another one, and another
    // source, which the origin has not listed in this isolate (toolmap/profile-names.ts
    // MAX_UNPROVEN_RELISTS; the isolate's 30 are request-bounds.test.ts's).
    for (let caller = 0; caller < 31; caller++) {
      const session = { ...setup.session, cookie: `made_up=${caller}` };
      await callTool(setup.proxy, PROXY_URL, session, "no_such_tool");
    }
    expect(await received('"tools/call"')).toBe(31);
    expect(await received("relist")).toBe(10);
    expect(logs.events("relist_limited")).toEqual(
      Array(21).fill({ event: "relist_limited", profile: "openai", per: "unproven", limit: 10 }),
    );
    // The calls past the limit went on without a listing of their callers'.
    const relisted = logs.events("tool_unknown").map((line) => line.relisted);
    expect(relisted).toEqual([...Array(10).fill(true), ...Array(21).fill(false)]);
    logs.restore();
  }, 30_000);

  describe("when KV fails in part", () => {
    /**
     * A name layout 1 stored for the origin: `unity_health` stands for a tool
     * the origin no longer lists, so the listed `unity/health` may not take it.
     */
    async function storedMap(origin: string) {
      const { legacy } = await toolMapScopes(new URL(origin), profileOf("openai").names);
      const key = `${legacy}:tool:unity_health`;
      const inputSchema = { type: "object" };
      await env.TOOL_MAP.put(key, JSON.stringify({ original: "unity:health", inputSchema }), {
        // Layout 1's metadata for this schema, its fingerprint as layout 1 wrote it.
        metadata: { original: "unity:health", schema: "2.qvqss7" },
      });
      return async () => (await env.TOOL_MAP.get<{ original: string }>(key, "json"))?.original;
    }

    it("list fails: the listing is answered, and no stored name is overwritten", async () => {
      const contexts: ExecutionContext[] = [];
      const trace = crypto.randomUUID();
      const origin = freshOrigin(GATEWAY_ORIGIN, `&trace=${trace}`);
      const storedFor = await storedMap(origin);
      const kv = countingKv(kvFailingOnly(env.TOOL_MAP, "list"));
      const proxy = viaProxy({ ORIGIN_URL: origin }, { app: createApp(), kv: kv.kv, contexts });
      const session = await openSession(proxy, PROXY_URL);
      const { tools } = await listTools(proxy, PROXY_URL, session);
      await Promise.all(contexts.map((ctx) => waitOnExecutionContext(ctx)));
      expect(tools.map((tool) => tool.name)).toContain(DEMO_NAMES["unity/health"]);
      expect(kv.counts.put).toBe(0);
      expect(await storedFor()).toBe("unity:health");
    });

    it("healthy KV keeps the stored name for its tool, and the listed one gets its own", async () => {
      const contexts: ExecutionContext[] = [];
      const trace = crypto.randomUUID();
      const origin = freshOrigin(GATEWAY_ORIGIN, `&trace=${trace}`);
      const storedFor = await storedMap(origin);
      const proxy = viaProxy({ ORIGIN_URL: origin }, { app: createApp(), contexts });
      const { tools } = await listTools(proxy, PROXY_URL, await openSession(proxy, PROXY_URL));
      await Promise.all(contexts.map((ctx) => waitOnExecutionContext(ctx)));
      expect(tools.map((tool) => tool.name)).toContain(DEMO_NAMES["unity/health"]);
      expect(tools.map((tool) => tool.name)).not.toContain("unity_health");
      expect(await storedFor()).toBe("unity:health");
    });
  });

  it("forwards a call unchanged when the origin will not list for the caller, and says why", async () => {
    const logs = captureLogs();
    const trace = crypto.randomUUID();
    const proxy = viaProxy({
      ORIGIN_URL: freshOrigin(`${GATEWAY_ORIGIN}/auth`, `&trace=${trace}`),
    });
    const response = await postJson(
      proxy,
      PROXY_URL,
      rpc(1, "tools/call", { name: "never_listed" }),
    );
    expect(response.status).toBe(401);
    await response.body?.cancel();
    expect(logs.events("relist_failed")).toMatchObject([{ status: 401 }]);
    logs.restore();
  });

  it("forwards a name nobody knows unchanged, for the origin to answer", async () => {
    const setup = await demoSession();
    const { result } = await callTool(setup.proxy, PROXY_URL, setup.session, "no_such_tool");
    expect(result).toMatchObject({
      isError: true,
      content: [{ text: "Unknown tool: no_such_tool" }],
    });
    const [call] = await callsReceived(setup.trace);
    expect(call.params.name).toBe("no_such_tool");
  });

  it("leaves a legal name's call byte for byte as the client sent it", async () => {
    const setup = await demoSession();
    await listTools(setup.proxy, PROXY_URL, setup.session);
    const body = `{"jsonrpc":"2.0", "id":9, "method":"tools/call", "params":{"name":"get-weather","arguments":{"city":"Oslo"}}}`;
    const response = await postJson(setup.proxy, PROXY_URL, body, setup.session);
    await response.body?.cancel();
    const received = (await receivedByOrigin(setup.trace)).filter((r) =>
      r.body.includes("get-weather"),
    );
    expect(received[0]?.body).toBe(body);
  });
});

describe("the tool map's KV costs", () => {
  it("writes the map, its schemas and the answer once, and nothing for a listing it already knows", async () => {
    const counted = countingKv(env.TOOL_MAP);
    const contexts: ExecutionContext[] = [];
    const setup = await demoSession({ kv: counted.kv, contexts });
    const { tools } = await listTools(setup.proxy, PROXY_URL, setup.session);
    await Promise.all(contexts.map((ctx) => waitOnExecutionContext(ctx)));
    expect(tools.length).toBe(13);
    // The map, its schemas, and the rewritten answer for new isolates of this deployment.
    expect(counted.counts.put).toBe(3);

    counted.reset();
    await listTools(setup.proxy, PROXY_URL, setup.session);
    await Promise.all(contexts.map((ctx) => waitOnExecutionContext(ctx)));
    expect(counted.counts).toMatchObject({ put: 0, list: 0, get: 0 });

    counted.reset();
    const cold = viaProxy(
      { ORIGIN_URL: setup.origin },
      { app: createApp(), kv: counted.kv, contexts },
    );
    await listTools(cold, PROXY_URL, setup.session);
    await Promise.all(contexts.map((ctx) => waitOnExecutionContext(ctx)));
    // A new isolate of the same deployment reads the answer another rewrote, and nothing else.
    expect(counted.counts).toMatchObject({ put: 0, list: 0, get: 1 });
  });

  it("a warm tools/call reads nothing from KV", async () => {
    const counted = countingKv(env.TOOL_MAP);
    const setup = await demoSession({ kv: counted.kv });
    await listTools(setup.proxy, PROXY_URL, setup.session);
    counted.reset();
    const { result } = await callTool(
      setup.proxy,
      PROXY_URL,
      setup.session,
      DEMO_NAMES["unity/health"],
    );
    expect(result.structuredContent?.tool).toBe("unity/health");
    expect(counted.counts).toMatchObject({ get: 0, list: 0, put: 0 });
  });

  it("forgets cached names when the origin sends notifications/tools/list_changed on the GET stream", async () => {
    const counted = countingKv(env.TOOL_MAP);
    const setup = await demoSession({ kv: counted.kv });
    await listTools(setup.proxy, PROXY_URL, setup.session);
    const stream = await setup.proxy(PROXY_URL, {
      headers: { ...setup.session, accept: "text/event-stream" },
    });
    const events = sseEvents(stream);
    const refresh = await callTool(
      setup.proxy,
      PROXY_URL,
      setup.session,
      DEMO_NAMES["catalog.refresh"],
    );
    expect(refresh.result.structuredContent?.tool).toBe("catalog.refresh");
    expect(await nextMessage(events)).toMatchObject({
      method: "notifications/tools/list_changed",
    });
    await events.cancel();

    counted.reset();
    const { result } = await callTool(
      setup.proxy,
      PROXY_URL,
      setup.session,
      DEMO_NAMES["unity/health"],
    );
    expect(result.structuredContent?.tool).toBe("unity/health");
    // Memory was dropped: the map and the chunk with the schema are read again.
    expect(counted.counts.get).toBe(2);
  });
});
