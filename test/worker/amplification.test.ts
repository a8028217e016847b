/**
 * What one client, or one origin, can make the proxy do again and again
 * (docs/limits.md, SECURITY.md "No single request can hurt the proxy or the
 * origin"): KV writes, which a Free plan allows 1,000 a day for the whole
 * account, and log lines. Counted, never timed.
 */
import { waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { createApp } from "../../src/app";
import { sanitizeName } from "../../src/names/sanitize";
import type { ListedTool } from "../../src/protocol/tools-list";
import { NO_RULES } from "../../src/rules/tool-rules";
import { profileOf } from "../../src/schemas/profile";
import { MAX_NEW_CALLER_WRITES } from "../../src/toolmap/caller-pin-records";
import { callerNamed } from "../../src/toolmap/callers";
import { ToolMapMemory, toolMapScopes } from "../../src/toolmap/isolate-memory";
import { decodeMap, encodeMap, mapKey } from "../../src/toolmap/stored-map";
import { ToolMap } from "../../src/toolmap/tool-map";
import { countingKv } from "../../support/counting-kv";
import { CHANGING_TOOL, changingOrigin } from "../helpers/changing-origin";
import { demoSession } from "../helpers/demo";
import { DEMO_NAMES } from "../helpers/demo-names";
import { captureLogs } from "../helpers/logs";
import { messagesOf, openSession, postJson, rawExchange, rpc } from "../helpers/mcp";
import { CATALOG_ORIGIN, DEMO_ORIGIN, freshOrigin, PROXY_URL, viaProxy } from "../helpers/proxy";

/** How many listings each test makes: each would be a KV write where a write per listing is the bug. */
const LISTINGS = 12;

/**
 * A fresh isolate in front of `origin`, its KV operations counted; `list` waits for each
 * listing's writes, and gives the names listed.
 */
async function countedProxy(origin: string, vars: Record<string, string>) {
  const counted = countingKv(env.TOOL_MAP);
  const contexts: ExecutionContext[] = [];
  const proxy = viaProxy(
    { ORIGIN_URL: origin, ...vars },
    { app: createApp(), kv: counted.kv, contexts },
  );
  const session = await openSession(proxy, PROXY_URL);
  const list = async (headers: Record<string, string> = {}) => {
    const [message] = await messagesOf(
      await postJson(proxy, PROXY_URL, rpc(1, "tools/list"), { ...session, ...headers }),
    );
    expect(message).toHaveProperty("result.tools");
    await Promise.all(contexts.splice(0).map((ctx) => waitOnExecutionContext(ctx)));
    return (message as { result: { tools: ListedTool[] } }).result.tools.map((tool) => tool.name);
  };
  return { counted, list };
}

describe("KV writes a client can repeat", () => {
  // Under hold a caller is pinned at their first listing, a write each (docs/rules.md), and in
  // relay mode a caller is whatever credentials the client sends: a made-up cookie (or query) per
  // request was a new caller each, and 1,000 listings spent a Free plan's writes for the day (12
  // writes for these 12). An isolate writes MAX_NEW_CALLER_WRITES new callers' records a minute.
  it("TOOL_CHANGES=hold: listings with made-up cookies are not a KV write each", async () => {
    const { counted, list } = await countedProxy(freshOrigin(DEMO_ORIGIN), {
      TOOL_CHANGES: "hold",
    });
    await list();
    counted.reset();
    const logs = captureLogs();
    for (let i = 0; i < LISTINGS; i++) await list({ cookie: `made-up=${i}` });
    // The minute's records, the first caller's among them; nothing else of the listings.
    expect(counted.counts.put).toBe(MAX_NEW_CALLER_WRITES - 1);
    expect(logs.events("caller_pins_deferred")).toEqual([
      { event: "caller_pins_deferred", limit: MAX_NEW_CALLER_WRITES, deferred: 1 },
    ]);
    logs.restore();
  });

  // Past the budget a new caller's record waits in the isolate's memory: the isolate holds a
  // change for them as for a caller KV holds, and a listing of theirs that finds room writes it.
  it("TOOL_CHANGES=hold: a caller past the minute's budget is held on a change, and written once there is room", async () => {
    const changing = changingOrigin();
    const { list } = await countedProxy(changing.origin, { TOOL_CHANGES: "hold" });
    const { origin } = await toolMapScopes(new URL(changing.origin), profileOf("openai").names);
    const records = async () => (await env.TOOL_MAP.list({ prefix: `${origin}:pins:` })).keys;
    for (let i = 0; i < MAX_NEW_CALLER_WRITES; i++) await list({ cookie: `made-up=${i}` });
    const ann = { cookie: "who=ann" };
    expect(await list(ann)).toContain(CHANGING_TOOL);
    expect(await records()).toHaveLength(MAX_NEW_CALLER_WRITES);

    await changing.change();
    expect(await list(ann)).not.toContain(CHANGING_TOOL);
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      vi.setSystemTime(Date.now() + 60_000);
      expect(await list(ann)).not.toContain(CHANGING_TOOL);
      expect(await records()).toHaveLength(MAX_NEW_CALLER_WRITES + 1);
    } finally {
      vi.useRealTimers();
    }
  });

  // Under the default TOOL_CHANGES=log, a description that changes at every
  // listing (a date, a count: docs/rules.md says origins do this) changes
  // the caller's own pins each time: written each time, a client that lists
  // all day would spend the writes, and past one listing a second the same
  // key meets KV's one write a second. Written once a minute per isolate.
  it("TOOL_CHANGES=log: an origin that changes a description at every listing does not make each a KV write", async () => {
    const changing = changingOrigin();
    const { counted, list } = await countedProxy(changing.origin, { TOOL_CHANGES: "log" });
    await list();
    counted.reset();
    for (let i = 0; i < LISTINGS; i++) {
      await changing.change();
      await list();
    }
    // The caller's pins, once: nothing else of a changed listing is stored again in the minute.
    expect(counted.counts.put).toBe(1);
  });
});

describe("KV reads one request can make", () => {
  // A cold isolate (or one whose memory let the schemas go) reads a called tool's schema from KV
  // by reading the map's schema chunks whole (map-store.ts readSchema: up to 2 values of 8 million
  // characters): once a request, kept while its calls are planned, not once a tool, which was 256
  // reads at MAX_BATCH_MESSAGES' ceiling (some 4 GB against an origin of 10,000 tools).
  it("a batch of calls to different known tools reads the schema chunks once", async () => {
    const contexts: ExecutionContext[] = [];
    const listed = await demoSession({ contexts });
    await messagesOf(
      await postJson(listed.proxy, PROXY_URL, rpc("list", "tools/list"), listed.session),
    );
    await Promise.all(contexts.splice(0).map((ctx) => waitOnExecutionContext(ctx)));
    // Another isolate, cold: the map and the schemas are in KV alone.
    const counted = countingKv(env.TOOL_MAP);
    const cold = viaProxy(
      { ORIGIN_URL: listed.origin },
      { app: createApp(), kv: counted.kv, contexts },
    );
    const session = await openSession(cold, PROXY_URL);
    counted.reset();
    const names = Object.values(DEMO_NAMES);
    const calls = names.map((name, id) => rpc(id, "tools/call", { name, arguments: {} }));
    await messagesOf(await postJson(cold, PROXY_URL, calls, session));
    await Promise.all(contexts.splice(0).map((ctx) => waitOnExecutionContext(ctx)));
    // As a cold isolate's one call (docs/tool-map.md): the map, and the chunks once (was 1 + 13);
    // and the caller's own pins, for the listing of theirs asked for first (`log`, as shipped).
    expect(counted.counts.get).toBeLessThanOrEqual(3);
  });
});

describe("a batch of listings (protocol 2025-03-26), each a listing of many held changes", () => {
  // Each tools/list of a batch is named on its own: what one listing may spend (10 accept keys
  // read, 10 change lines, a map write noting what it held) was spent again for every listing,
  // so the batch's size multiplied it: 32 listings read 320 accept keys and wrote the map 32
  // times (KV allows one write a second to a key), and at MAX_BATCH_MESSAGES' ceiling of 256,
  // 2,560 reads passed the 1,000 KV operations an invocation may make.
  it("costs the KV operations and log lines of one listing, not one listing's each", async () => {
    const origin = `${CATALOG_ORIGIN}/mcp?map=${crypto.randomUUID()}&tools=400`;
    const counted = countingKv(env.TOOL_MAP);
    const contexts: ExecutionContext[] = [];
    const isolate = () =>
      viaProxy(
        { ORIGIN_URL: origin, TOOL_CHANGES: "hold" },
        { app: createApp(), kv: counted.kv, contexts },
      );
    const settled = () => Promise.all(contexts.splice(0).map((ctx) => waitOnExecutionContext(ctx)));
    const first = isolate();
    const opened = await openSession(first, PROXY_URL);
    // Listed first to another caller: ann, listed next, has no pin of her own.
    for (const who of ["first", "ann"]) {
      const caller = { ...opened, cookie: `who=${who}` };
      await messagesOf(await postJson(first, PROXY_URL, rpc(1, "tools/list"), caller));
      await settled();
    }
    // Every tool changes for her: the map's pins as another definition's.
    const key = mapKey((await toolMapScopes(new URL(origin), profileOf("openai").names)).origin);
    const stored = decodeMap((await env.TOOL_MAP.get(key, "text")) ?? "");
    const tools = [...(stored?.tools.values() ?? [])];
    const pins = tools.map((tool) => tool.pin);
    for (const [i, tool] of tools.entries()) tool.pin = pins[(i + 1) % pins.length];
    expect(tools).toHaveLength(400);
    if (stored) await env.TOOL_MAP.put(key, encodeMap(stored));

    const cold = isolate();
    const session = {
      ...(await openSession(cold, PROXY_URL)),
      cookie: "who=ann",
      "mcp-protocol-version": "2025-03-26",
    };
    counted.reset();
    const logs = captureLogs();
    const batch = Array.from({ length: 32 }, (_, id) => rpc(id, "tools/list"));
    const answers = await messagesOf(await postJson(cold, PROXY_URL, batch, session));
    await settled();
    expect(answers).toHaveLength(32);
    // One listing's (docs/tool-map.md): the answer, the map, her pins, 10 accept keys; one write.
    expect(counted.counts.get).toBeLessThanOrEqual(3 + 10);
    expect(counted.counts.put).toBeLessThanOrEqual(1);
    expect(logs.events("tool_definition_changed")).toHaveLength(10);
    expect(logs.lines().length).toBeLessThan(20);
    logs.restore();
  });
});

describe("log bytes one request can make", () => {
  // Workers Logs keeps the first 256 KB of an invocation's lines and records nothing after them:
  // a batch of calls whose repairs each log a long line filled it, and the lines of its last
  // calls (what a client would most want unseen) were never recorded.
  it("a batch of repaired calls stays within what Workers Logs keeps, every call's line written", async () => {
    const { proxy, session } = await demoSession();
    await messagesOf(await postJson(proxy, PROXY_URL, rpc("list", "tools/list"), session));
    // Each call's filters: 100 long names given numbers, which the schema says are strings.
    const filters = Object.fromEntries(
      Array.from({ length: 100 }, (_, i) => [`${"column_".repeat(30)}${i}`, i]),
    );
    // MAX_BATCH_MESSAGES' default: 32 calls wrote some 500 KB.
    const batch = Array.from({ length: 32 }, (_, id) =>
      rpc(id, "tools/call", {
        name: DEMO_NAMES["reports.query"],
        arguments: { limit: 5, filters },
      }),
    );
    const logs = captureLogs();
    const answers = await messagesOf(
      await postJson(proxy, PROXY_URL, batch, { ...session, "mcp-protocol-version": "2025-03-26" }),
    );
    expect(answers).toHaveLength(32);
    const bytes = logs.lines().reduce((sum, line) => sum + JSON.stringify(line).length, 0);
    expect(bytes).toBeLessThan(256 * 1024);
    const repaired = logs.events("tool_call_repaired");
    expect(repaired).toHaveLength(32);
    expect(repaired.at(-1)).toMatchObject({ "gen_ai.tool.name": "reports.query" });
    logs.restore();
  });
});

describe("log lines one listing can make", () => {
  it("an origin listing many tools whose own names others have: 10 tool_name_taken lines, the rest in one", async () => {
    const origin = new URL(`https://origin.example/mcp?map=${crypto.randomUUID()}`);
    const profile = profileOf("openai");
    const writes: Promise<unknown>[] = [];
    const scopes = await toolMapScopes(origin, profile.names);
    const toolMap = new ToolMap(env.TOOL_MAP, scopes, profile, new ToolMapMemory(), (write) =>
      writes.push(write),
    );
    // Each illegal name beside a legal tool named as it would be: the legal one is renamed.
    const pairs = 2_000;
    const tools: ListedTool[] = [];
    for (let i = 0; i < pairs; i++) {
      const illegal = `t/${i}`;
      tools.push({ name: illegal, inputSchema: { type: "object" } });
      tools.push({
        name: sanitizeName(illegal, profile.names).name,
        inputSchema: { type: "object" },
      });
    }
    const logs = captureLogs();
    const listing = await toolMap.nameListing(tools);
    await Promise.all(writes.splice(0));
    // Every legal tool was renamed, and names stay distinct.
    expect(new Set(listing.names.values()).size).toBe(2 * pairs);
    expect(logs.events("tool_name_taken")).toHaveLength(10);
    const [rest, ...more] = logs.events("tool_names_taken_unlogged");
    expect(more).toEqual([]);
    expect(rest).toMatchObject({ count: pairs - 10 });
    expect(logs.lines().length).toBeLessThan(20);
    logs.restore();
  });

  it("a large listing an isolate names anew: one line with its tools and characters, none when it is listed again", async () => {
    // Naming, pinning and viewing a listing from scratch is what may pass a Free plan's 10 ms of
    // CPU (docs/limits.md): the line says how large it was, for the listing the runtime stopped.
    const origin = `${CATALOG_ORIGIN}/mcp?map=${crypto.randomUUID()}&tools=300`;
    const [direct] = await (await rawExchange("2026-07-28", fetch, origin))("list", "tools/list");
    const tools = (direct as { result: { tools: unknown[] } }).result.tools;
    // The origin writes each tool as JSON.stringify does: its characters in the page.
    const chars = tools.reduce<number>((sum, tool) => sum + JSON.stringify(tool).length, 0);
    const anthropic = `${PROXY_URL}/anthropic`;
    const list = async (proxy: ReturnType<typeof viaProxy>) => {
      const response = await postJson(proxy, anthropic, rpc(1, "tools/list"), {
        "mcp-protocol-version": "2025-11-25",
      });
      await response.text();
      return response;
    };

    const logs = captureLogs();
    const proxy = viaProxy({ ORIGIN_URL: origin }, { app: createApp() });
    expect((await list(proxy)).status).toBe(200);
    expect(logs.events("listing_large")).toEqual([
      { event: "listing_large", profile: "anthropic", tools: 300, chars },
    ]);
    expect((await list(proxy)).status).toBe(200);
    expect(logs.events("listing_large")).toHaveLength(1);
    // A listing of a few tools, in an isolate of its own: no line.
    const small = viaProxy({ ORIGIN_URL: `${CATALOG_ORIGIN}/mcp?map=${crypto.randomUUID()}` });
    expect((await list(small)).status).toBe(200);
    expect(logs.events("listing_large")).toHaveLength(1);
    logs.restore();
  });
});

describe("a batch of listings under TOOL_CHANGES=hold, each showing the caller a tool new to them", () => {
  // Each listing that shows a caller a tool they were not listed writes their record (their own
  // pins and what they were listed): a batch of 256 tools/list (2025-03-26) whose every answer
  // adds a tool wrote one key 256 times in one request, where KV takes one write a second to a
  // key (the rest fail, and KV may keep an earlier record than the last).
  it("writes the caller's record at most twice, the last as the listings left it", async () => {
    const scopes = await toolMapScopes(
      new URL(`https://origin.example/mcp?map=${crypto.randomUUID()}`),
      profileOf("openai").names,
    );
    const puts: string[] = [];
    const kv = new Proxy(env.TOOL_MAP, {
      get(target, property) {
        const value = Reflect.get(target, property);
        if (typeof value !== "function") return value;
        return (...args: unknown[]) => {
          if (property === "put") puts.push(String(args[0]));
          return value.apply(target, args);
        };
      },
    });
    const writes: Promise<unknown>[] = [];
    const hold = { rules: NO_RULES, changes: "hold" as const };
    const request = () =>
      new ToolMap(
        kv,
        scopes,
        profileOf("openai"),
        new ToolMapMemory(),
        (w) => writes.push(w),
        hold,
        undefined,
        callerNamed("ann"),
      );
    const tool = (i: number) => ({ name: `tool_${i}`, description: "A tool.", inputSchema: {} });
    await request().nameListing([tool(0)]);
    await Promise.all(writes.splice(0));
    puts.length = 0;
    const batch = request();
    for (let i = 1; i <= 32; i++) {
      await batch.nameListing(Array.from({ length: i + 1 }, (_, j) => tool(j)));
    }
    await Promise.all(writes.splice(0));
    const recordKey = `${scopes.origin}:pins:ann`;
    expect(puts.filter((key) => key === recordKey).length).toBeLessThanOrEqual(2);
    const seen = JSON.parse((await env.TOOL_MAP.get(recordKey, "text")) ?? "{}").seen;
    expect(seen.split(",")).toHaveLength(33);
  });
});
