/**
 * Call analytics (docs/observability.md): with the `CALLS` dataset bound (a
 * recording double here), each `tools/call`, `tools/list` and search writes
 * exactly one data point, laid out as data-point.ts says, once its answer is
 * known; never an argument value, nor a name the operator's rules hide.
 */
import { waitOnExecutionContext } from "cloudflare:test";
import fc from "fast-check";
import { afterEach, describe, expect, it, vi } from "vitest";
import { FailureLog } from "../../src/analytics/recorder";
import { createApp } from "../../src/app";
import {
  CARRIED,
  onlyPoint,
  type Point,
  recordingDataset,
  TENANT,
} from "../helpers/analytics-dataset";
import { demoSession } from "../helpers/demo";
import { DEMO_NAMES } from "../helpers/demo-names";
import { captureLogs } from "../helpers/logs";
import {
  ENVELOPE_2026,
  messagesOf,
  openSession,
  PROTOCOL_VERSION,
  postJson,
  rpc,
  wireRequest,
} from "../helpers/mcp";
import {
  CATALOG_ORIGIN,
  CLOSED_ORIGIN,
  type Fetch,
  freshOrigin,
  GATEWAY_ORIGIN,
  heldByOrigin,
  heldOnceClosed,
  leavingClient,
  newTrace,
  PROXY_URL,
  viaProxy,
} from "../helpers/proxy";

/** A demo session through a fresh isolate with the dataset bound, its listing read. */
async function analyticsSession(vars: Record<string, string> = {}, query = "") {
  const recording = recordingDataset();
  const setup = await demoSession({
    vars,
    query,
    app: createApp(),
    bindings: recording.bindings,
    contexts: recording.contexts,
  });
  await messagesOf(
    await postJson(setup.proxy, PROXY_URL, rpc("list", "tools/list"), setup.session),
  );
  recording.clear();
  /** One request, its answer read to the end; the points it wrote. */
  const send = async (body: unknown, headers: Record<string, string> = {}) => {
    const response = await postJson(setup.proxy, PROXY_URL, body, { ...setup.session, ...headers });
    const messages = await messagesOf(response);
    const points = await recording.points();
    recording.clear();
    return { response, messages, points };
  };
  const call = (name: string, args?: unknown, id: string | number = "call") =>
    send(rpc(id, "tools/call", { name, ...(args === undefined ? {} : { arguments: args }) }));
  return { ...setup, ...recording, send, call };
}

/** `proxy`'s answer to `body`, of `status`, left unread; the one point it wrote, taken. */
async function pointOfAnswer(
  recording: ReturnType<typeof recordingDataset>,
  proxy: Fetch,
  body: unknown,
  status: number,
): Promise<Point> {
  const response = await postJson(proxy, PROXY_URL, body);
  expect(response.status).toBe(status);
  await response.body?.cancel();
  const point = onlyPoint(await recording.points());
  recording.clear();
  return point;
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("a data point per call", () => {
  it.each(CARRIED)(
    "a call that works, answered in %s: ok, every field as documented",
    async (_, query) => {
      const { call } = await analyticsSession({}, query);
      const requestBody = JSON.stringify(
        rpc("call", "tools/call", {
          name: DEMO_NAMES["files.read"],
          arguments: { path: "src/main.ts", max_bytes: 512 },
        }),
      );
      const { messages, points } = await call(DEMO_NAMES["files.read"], {
        path: "src/main.ts",
        max_bytes: 512,
      });
      expect(messages[0]).toHaveProperty("result");
      const point = onlyPoint(points);
      expect(point.index).toBe(TENANT);
      expect(point.blobs).toEqual({
        "mcp.method.name": "tools/call",
        "gen_ai.tool.name": "files.read",
        outcome: "ok",
        "error.type": "",
        profile: "openai",
        "mcp.client.name": "edge-rewriter-tests",
        "mcp.client.version": "1.0.0",
        repairs: "",
        validation: "valid",
        resolution: "listed",
        search: "",
        refusal: "",
        "mcp.protocol.version": PROTOCOL_VERSION,
        "client.source": "initialize",
        "request.id": "",
      });
      expect(point.doubles["request.bytes"]).toBe(requestBody.length);
      expect(point.doubles["answer.bytes"]).toBeGreaterThan(0);
      expect(point.doubles["duration.ms"]).toBeGreaterThanOrEqual(
        point.doubles["origin.duration.ms"],
      );
      expect(point.doubles["repairs.count"]).toBe(0);
      expect(point.doubles["tools.count"]).toBe(0);
      expect(point.doubles["outcome.weight"]).toBe(1);
    },
  );

  it("a listing: the tools it lists, once named (a listing reused from memory is the one named before it)", async () => {
    const recording = recordingDataset();
    const { proxy, session } = await demoSession({
      app: createApp(),
      bindings: recording.bindings,
      contexts: recording.contexts,
    });
    for (const id of [1, 2]) {
      await messagesOf(await postJson(proxy, PROXY_URL, rpc(id, "tools/list"), session));
    }
    const points = await recording.points();
    expect(points).toHaveLength(2);
    const [named, reused] = points;
    expect(named?.blobs).toMatchObject({
      "mcp.method.name": "tools/list",
      "gen_ai.tool.name": "",
      outcome: "ok",
      search: "",
    });
    expect(named?.doubles["tools.count"]).toBe(13);
    expect(reused?.blobs.outcome).toBe("ok");
    expect(reused?.doubles["tools.count"]).toBe(0);
  });

  it.each(CARRIED)(
    "a long answer in %s: judged by what it mentions, and unread past what is read",
    async (_, query) => {
      const { call } = await analyticsSession({}, query);
      // The demo echoes the arguments twice (text and structured content): about 200 KB, then 600 KB.
      const long = await call(DEMO_NAMES["files.read"], { path: "p".repeat(100_000) });
      expect(long.messages[0]).toHaveProperty("result.structuredContent.tool", "files.read");
      expect(onlyPoint(long.points).blobs.outcome).toBe("ok");
      expect(onlyPoint(long.points).doubles["answer.bytes"]).toBeGreaterThan(200_000);
      const longer = await call(DEMO_NAMES["files.read"], { path: "p".repeat(300_000) });
      expect(longer.messages[0]).toHaveProperty("result.structuredContent.tool", "files.read");
      expect(onlyPoint(longer.points).blobs.outcome).toBe("unread");
    },
  );

  it("a short JSON answer the origin cuts off: unanswered, and the client's body fails as the origin's did", async () => {
    const { proxy, session, points } = await analyticsSession({
      ORIGIN_URL: `${GATEWAY_ORIGIN}/cut/mcp?map=${crypto.randomUUID()}&json`,
    });
    const body = rpc(1, "tools/call", {
      name: DEMO_NAMES["scope:action"],
      arguments: { scope: "billing" },
    });
    const response = await postJson(proxy, PROXY_URL, body, session);
    // Not the proxy's 500: the origin's answer, whose body ends in an error.
    expect(response.status).toBe(200);
    await expect(response.text()).rejects.toThrow();
    expect(onlyPoint(await points()).blobs).toMatchObject({
      "gen_ai.tool.name": "scope:action",
      outcome: "unanswered",
    });
  });

  it("a call whose client goes away while the origin sends nothing: unanswered, the origin's connection closed", async () => {
    const recording = recordingDataset();
    const proxy = viaProxy(
      { ORIGIN_URL: `${GATEWAY_ORIGIN}/held/mcp` },
      { app: createApp(), bindings: recording.bindings, contexts: recording.contexts },
    );
    const trace = newTrace();
    // Its answer passes as the runtime pumps it, and a copy of it is read beside, for the call's response.
    const client = await leavingClient(
      proxy,
      `${PROXY_URL}?trace=${trace}`,
      rpc(1, "tools/call", { name: "work", arguments: {} }),
    );
    expect(client.first).toContain("notifications/progress");
    expect(await heldByOrigin(trace)).toEqual({ opened: 1, closed: 0 });
    await client.goAway();
    expect(await heldOnceClosed(trace)).toEqual({ opened: 1, closed: 1 });
    expect(onlyPoint(await recording.points()).blobs).toMatchObject({
      "gen_ai.tool.name": "work",
      outcome: "unanswered",
    });
  });

  it("a call whose stream the origin ends after a priming event (SSE polling): unread, not unanswered", async () => {
    // The client resumes the stream (GET, Last-Event-ID) for the answer, which this request never
    // sees: the call may well have worked, and an error rate must not count it as failed.
    const recording = recordingDataset();
    const proxy = viaProxy(
      { ORIGIN_URL: `${GATEWAY_ORIGIN}/polled/mcp` },
      { app: createApp(), bindings: recording.bindings, contexts: recording.contexts },
    );
    const response = await postJson(proxy, PROXY_URL, rpc(1, "tools/call", { name: "work" }));
    expect(await response.text()).toBe("id: polled-1\nretry: 100\ndata: \n\n");
    expect(onlyPoint(await recording.points()).blobs).toMatchObject({
      "gen_ai.tool.name": "work",
      outcome: "unread",
    });
  });

  it("a repaired call lists its repairs, sorted, and counts them; its log line names it as the point does", async () => {
    const { call } = await analyticsSession();
    const logs = captureLogs();
    const { messages, points } = await call(DEMO_NAMES["catering.invoice"], {
      "payload-json": { invoice_id: "INV-1042", amount: "19.5" },
    });
    expect(messages[0]).toHaveProperty("result.structuredContent.tool", "catering.invoice");
    const point = onlyPoint(points);
    expect(point.blobs).toMatchObject({
      "gen_ai.tool.name": "catering.invoice",
      outcome: "ok",
      repairs: "coalesced,coerced",
      validation: "valid",
    });
    expect(point.doubles["repairs.count"]).toBe(2);
    expect(logs.events("tool_call_repaired")).toEqual([
      expect.objectContaining({
        "mcp.method.name": point.blobs["mcp.method.name"],
        "gen_ai.tool.name": point.blobs["gen_ai.tool.name"],
        validation: point.blobs.validation,
      }),
    ]);
  });

  it("a repaired call the origin still refuses: its point holds the repairs and the refusal, its line which repairs, no value", async () => {
    const { call } = await analyticsSession();
    const logs = captureLogs();
    // max_bytes coerced from text; path, which files.read requires, missing: forwarded (warn),
    // and the origin's own validation refuses it.
    const { messages, points } = await call(DEMO_NAMES["files.read"], { max_bytes: "4096" });
    expect(messages[0]).toHaveProperty("result.isError", true);
    expect(onlyPoint(points).blobs).toMatchObject({
      "gen_ai.tool.name": "files.read",
      outcome: "tool_error",
      "error.type": "tool_error",
      repairs: "coerced",
      validation: "invalid",
    });
    expect(logs.events("tool_call_repaired")).toEqual([
      expect.objectContaining({
        "gen_ai.tool.name": "files.read",
        coercions: [{ path: "max_bytes", from: "string", to: "integer" }],
        validation: "invalid",
        issues: [expect.objectContaining({ keyword: "required" })],
      }),
    ]);
    expect(JSON.stringify(logs.lines())).not.toContain("4096");
    logs.restore();
  });

  it("members of params beside the arguments are no repair: forwarded as sent; inline ones are recovered", async () => {
    const { send } = await analyticsSession();
    const name = DEMO_NAMES["files.read"];
    const beside = rpc(1, "tools/call", { name, arguments: { path: "a" }, hint: 1, args: {} });
    const inline = rpc(2, "tools/call", { name, path: "a" });
    expect(onlyPoint((await send(beside)).points).blobs.repairs).toBe("");
    expect(onlyPoint((await send(inline)).points).blobs.repairs).toBe("recovered_inline");
  });

  it("the operator's fixed and default values are listed, not counted as the model's repairs", async () => {
    const rules = {
      tools: { "get-weather": { fixed: { units: "metric" }, defaults: { city: "Oslo" } } },
    };
    const { call } = await analyticsSession({ TOOL_RULES: JSON.stringify(rules) });
    const { points } = await call(DEMO_NAMES["get-weather"], {});
    const point = onlyPoint(points);
    expect(point.blobs.repairs).toBe("defaulted,fixed");
    expect(point.doubles["repairs.count"]).toBe(0);
  });

  it("a tool result with isError: tool_error", async () => {
    const { call } = await analyticsSession();
    const { messages, points } = await call(DEMO_NAMES["files.read"], {});
    expect(messages[0]).toHaveProperty("result.isError", true);
    expect(onlyPoint(points).blobs).toMatchObject({
      outcome: "tool_error",
      "error.type": "tool_error",
      validation: "invalid",
    });
  });

  it("a JSON-RPC error from the origin: rpc_error, its code the error type", async () => {
    const { send } = await analyticsSession();
    const { messages, points } = await send(rpc("bad", "tools/call", { arguments: {} }));
    const error = (messages[0] as { error: { code: number } }).error;
    expect(onlyPoint(points).blobs).toMatchObject({
      outcome: "rpc_error",
      "error.type": String(error.code),
      "gen_ai.tool.name": "",
    });
  });

  it("arguments that are no object: refused, with the reason, as its log line says", async () => {
    const { call } = await analyticsSession();
    const logs = captureLogs();
    const { messages, points } = await call(DEMO_NAMES["files.read"], 5);
    expect(messages[0]).toHaveProperty("error.code", -32602);
    const point = onlyPoint(points);
    expect(point.blobs).toMatchObject({
      outcome: "refused",
      "error.type": "-32602",
      refusal: "malformed_arguments",
      "gen_ai.tool.name": "files.read",
    });
    expect(point.doubles["origin.duration.ms"]).toBe(0);
    expect(logs.events("tool_call_refused")).toEqual([
      expect.objectContaining({
        "mcp.method.name": point.blobs["mcp.method.name"],
        "gen_ai.tool.name": point.blobs["gen_ai.tool.name"],
        "error.type": point.blobs["error.type"],
        reason: point.blobs.refusal,
      }),
    ]);
  });

  it("ARGUMENT_VALIDATION=enforce's fix-it answer: invalid_arguments", async () => {
    const { call } = await analyticsSession({ ARGUMENT_VALIDATION: "enforce" });
    const { messages, points } = await call(DEMO_NAMES["files.read"], {});
    expect(messages[0]).toHaveProperty("result.isError", true);
    expect(onlyPoint(points).blobs).toMatchObject({
      outcome: "invalid_arguments",
      "error.type": "tool_error",
      validation: "invalid",
    });
  });

  it("a tool the rules hide: hidden, its name written nowhere", async () => {
    const hiddenName = "files.read";
    const { call, send } = await analyticsSession({
      TOOL_RULES: JSON.stringify({ hide: ["files.*"] }),
    });
    const listing = await send(rpc(9, "tools/list"));
    const byName = await call(hiddenName, { path: "a" });
    const byListedName = await call(DEMO_NAMES["files.read"], { path: "a" });
    for (const { points } of [byName, byListedName]) {
      expect(onlyPoint(points).blobs).toMatchObject({
        outcome: "hidden",
        refusal: "hidden",
        "gen_ai.tool.name": "",
      });
    }
    const written = [...listing.points, ...byName.points, ...byListedName.points];
    for (const point of written) {
      for (const value of [point.index, ...Object.values(point.blobs)]) {
        expect(value).not.toContain("files.read");
        expect(value).not.toContain(DEMO_NAMES["files.read"]);
      }
    }
  });

  it("a name the origin lists none of, where the rules hide tools: refused as unlisted, without the name", async () => {
    const { call } = await analyticsSession({ TOOL_RULES: JSON.stringify({ hide: ["a_b"] }) });
    const { points } = await call("no_such_tool_zq", {});
    expect(onlyPoint(points).blobs).toMatchObject({
      outcome: "refused",
      refusal: "unlisted",
      "gen_ai.tool.name": "",
    });
  });

  it("a name in another spelling: resolution repaired; a name none answers to: refused as unknown", async () => {
    const { call } = await analyticsSession();
    const respelled = await call(DEMO_NAMES["files.read"].toUpperCase(), { path: "a" });
    expect(respelled.messages[0]).toHaveProperty("result.structuredContent.tool", "files.read");
    expect(onlyPoint(respelled.points).blobs).toMatchObject({
      "gen_ai.tool.name": "files.read",
      outcome: "ok",
      resolution: "repaired",
    });
    const unknown = await call("files_wirte_zq", { path: "a" });
    expect(unknown.messages[0]).toHaveProperty("error.code", -32602);
    expect(onlyPoint(unknown.points).blobs).toMatchObject({
      outcome: "refused",
      refusal: "unknown",
      resolution: "unknown",
    });
  });

  it("an unreachable origin: origin_unreachable; an origin too slow: origin_timeout", async () => {
    const recording = recordingDataset();
    const closed = viaProxy(
      { ORIGIN_URL: `${CLOSED_ORIGIN}/mcp` },
      { app: createApp(), bindings: recording.bindings, contexts: recording.contexts },
    );
    const unreachable = rpc(1, "tools/call", { name: "a_b" });
    expect((await pointOfAnswer(recording, closed, unreachable, 502)).blobs).toMatchObject({
      outcome: "origin_unreachable",
      "error.type": "-32000",
    });
    const slow = viaProxy(
      { ORIGIN_URL: `${GATEWAY_ORIGIN}/delay/5000/mcp`, ORIGIN_TIMEOUT_MS: "100" },
      { app: createApp(), bindings: recording.bindings, contexts: recording.contexts },
    );
    expect((await pointOfAnswer(recording, slow, rpc(2, "tools/list"), 504)).blobs).toMatchObject({
      "mcp.method.name": "tools/list",
      outcome: "origin_timeout",
      "error.type": "-32001",
    });
  });

  it("a client that went away while the proxy listed the origin for its call: http_error 499, as docs/errors.md answers it", async () => {
    const recording = recordingDataset();
    // The proxy's own listing of a slow origin, for a name its map does not know.
    const slow = viaProxy(
      { ORIGIN_URL: `${GATEWAY_ORIGIN}/delay/300/mcp?map=${crypto.randomUUID()}` },
      { app: createApp(), bindings: recording.bindings, contexts: recording.contexts },
    );
    const left = new AbortController();
    const answer = slow(PROXY_URL, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify(rpc(1, "tools/call", { name: "files_read" })),
      signal: left.signal,
    });
    setTimeout(() => left.abort(), 50);
    expect((await answer).status).toBe(499);
    expect(onlyPoint(await recording.points()).blobs).toMatchObject({
      outcome: "http_error",
      "error.type": "499",
    });
  });

  it("a call the proxy would answer itself, in a request the client gets an HTTP error for: as the client got it", async () => {
    const recording = recordingDataset();
    const bound = {
      app: createApp(),
      bindings: recording.bindings,
      contexts: recording.contexts,
    };
    // Rules that refuse what they cannot check, and an origin whose listing asks the caller to sign in.
    const signedOut = viaProxy(
      {
        ORIGIN_URL: `${GATEWAY_ORIGIN}/auth/mcp?map=${crypto.randomUUID()}`,
        TOOL_RULES: JSON.stringify({ hide: ["secret.*"] }),
      },
      bound,
    );
    const challenged = rpc(1, "tools/call", { name: "a_b" });
    expect((await pointOfAnswer(recording, signedOut, challenged, 401)).blobs).toMatchObject({
      outcome: "http_error",
      "error.type": "401",
    });
    // Arguments that are no object beside a call that goes on, to an origin that cannot be reached.
    const closed = viaProxy({ ORIGIN_URL: `${CLOSED_ORIGIN}/mcp` }, bound);
    const unreachable = await postJson(closed, PROXY_URL, [
      rpc(1, "tools/call", { name: "a_b", arguments: 5 }),
      rpc(2, "tools/call", { name: "a_b" }),
    ]);
    expect(unreachable.status).toBe(502);
    const errors = (await unreachable.json()) as Array<{ error: { code: number } }>;
    expect(errors.map(({ error }) => error.code)).toEqual([-32000, -32000]);
    const points = await recording.points();
    expect(points.map((point) => point.blobs.outcome)).toEqual([
      "origin_unreachable",
      "origin_unreachable",
    ]);
  });

  it("a call beside one the proxy answered, that the origin answers 202 without its response: unanswered", async () => {
    const recording = recordingDataset();
    const proxy = viaProxy(
      { ORIGIN_URL: `${GATEWAY_ORIGIN}/status/202/mcp?map=${crypto.randomUUID()}` },
      { app: createApp(), bindings: recording.bindings, contexts: recording.contexts },
    );
    const response = await postJson(proxy, PROXY_URL, [
      rpc(1, "tools/call", { name: "a_b", arguments: 5 }),
      rpc(2, "tools/call", { name: "a_b" }),
    ]);
    // The client gets the proxy's own answer alone: nothing answers the call that went on.
    expect((await messagesOf(response)).map((message) => message.id)).toEqual([1]);
    const outcomes = (await recording.points()).map((point) => point.blobs.outcome);
    expect(outcomes.sort()).toEqual(["refused", "unanswered"]);
  });

  /**
   * A session of a proxy under `TOOL_CHANGES=hold` whose origin changed its tools' definitions
   * after the first listing, listed again: its tools are held. Then `call` is sent, and its one
   * data point and its answer read.
   */
  async function heldCall(vars: Record<string, string>, params: Record<string, unknown>) {
    const recording = recordingDataset();
    const map = crypto.randomUUID();
    const proxy = viaProxy(
      { ORIGIN_URL: `${CATALOG_ORIGIN}/mcp?map=${map}&tools=5`, TOOL_CHANGES: "hold", ...vars },
      { app: createApp(), bindings: recording.bindings, contexts: recording.contexts },
    );
    const session = await openSession(proxy, PROXY_URL);
    await messagesOf(await postJson(proxy, PROXY_URL, rpc(1, "tools/list"), session));
    // The pins the first listing stores, written after its answer.
    await recording.points();
    await fetch(`${CATALOG_ORIGIN}/__change?map=${map}`, { method: "POST" });
    await messagesOf(await postJson(proxy, PROXY_URL, rpc(2, "tools/list"), session));
    recording.clear();
    const call = rpc(3, "tools/call", params);
    const [answer] = await messagesOf(await postJson(proxy, PROXY_URL, call, session));
    return { answer, point: onlyPoint(await recording.points()) };
  }

  it("a held tool: held", async () => {
    const { point } = await heldCall({}, { name: "read_text_file", arguments: { path: "a" } });
    expect(point.blobs).toMatchObject({
      outcome: "held",
      "error.type": "-32602",
      refusal: "held",
      "gen_ai.tool.name": "read_text_file",
    });
  });

  it("search mode: a held tool called through call_tool: held, call_tool's tool error", async () => {
    const { answer, point } = await heldCall(
      { MAX_TOOLS: "2" },
      { name: "call_tool", arguments: { name: "read_text_file", arguments: { path: "a" } } },
    );
    expect(answer).toHaveProperty("result.isError", true);
    expect(point.blobs).toMatchObject({
      outcome: "held",
      "error.type": "tool_error",
      refusal: "held",
      search: "search",
      "gen_ai.tool.name": "read_text_file",
    });
  });

  it("search mode: search_tools with what it found, call_tool as the call it carries", async () => {
    const { call } = await analyticsSession({ MAX_TOOLS: "2" });
    const search = await call("search_tools", { query: "read a file" });
    const found = search.points[0]?.doubles["tools.count"];
    expect(onlyPoint(search.points).blobs).toMatchObject({
      "gen_ai.tool.name": "search_tools",
      outcome: "ok",
      search: "search",
      resolution: "",
    });
    expect(found).toBeGreaterThan(0);
    const carried = await call("call_tool", {
      name: DEMO_NAMES["files.read"],
      arguments: { path: "src/main.ts", max_bytes: "512" },
    });
    expect(onlyPoint(carried.points).blobs).toMatchObject({
      "gen_ai.tool.name": "files.read",
      outcome: "ok",
      search: "search",
      repairs: "coerced",
    });
    const unnamed = await call("call_tool", {});
    expect(onlyPoint(unnamed.points).blobs).toMatchObject({
      outcome: "invalid_arguments",
      search: "search",
      "gen_ai.tool.name": "",
      resolution: "",
    });
  });

  it("search mode: a search that finds nothing is counted, and its query written nowhere", async () => {
    const { call } = await analyticsSession({ MAX_TOOLS: "2" });
    const logs = captureLogs();
    // What a model searches for is its own text, which may hold what its user said.
    const query = "zebra xylophone annlee4471";
    const search = await call("search_tools", { query });
    expect(search.messages[0]).toHaveProperty("result.structuredContent.tools", []);
    const point = onlyPoint(search.points);
    expect(point.blobs).toMatchObject({ "gen_ai.tool.name": "search_tools", outcome: "ok" });
    expect(point.doubles["tools.count"]).toBe(0);
    for (const word of query.split(" ")) {
      expect(JSON.stringify(point)).not.toContain(word);
      expect(JSON.stringify(logs.lines())).not.toContain(word);
    }
    logs.restore();
  });

  it("search mode: search_tools and call_tool whose arguments are no object refused as a direct call is", async () => {
    const { call } = await analyticsSession({ MAX_TOOLS: "2" });
    const logs = captureLogs();
    // A malformed tools/call: its `arguments` are no object.
    for (const [name, args, refusal] of [
      ["search_tools", 7, "malformed_arguments"],
      ["call_tool", [DEMO_NAMES["files.read"]], "malformed_arguments"],
    ] as const) {
      const { messages, points } = await call(name, args);
      expect(messages[0], name).toHaveProperty("error.code", -32602);
      expect(onlyPoint(points).blobs, `${name} ${JSON.stringify(args)}`).toMatchObject({
        outcome: "refused",
        "error.type": "-32602",
        refusal,
        search: "search",
        // The name call_tool carries is not read from arguments the proxy could not read.
        "gen_ai.tool.name": name === "search_tools" ? name : "",
      });
      expect(logs.events("tool_call_refused").at(-1), name).toMatchObject({
        name,
        reason: refusal,
      });
    }
  });

  it("search mode: what call_tool carries and cannot call, refused or hidden as a direct call is, with call_tool's tool error", async () => {
    const listed = DEMO_NAMES["files.read"];
    const hiding = { TOOL_RULES: JSON.stringify({ hide: ["scope:*"] }) };
    for (const [vars, carried, outcome, refusal, tool] of [
      [{}, { name: "files_wirte_zq", arguments: {} }, "refused", "unknown", "files_wirte_zq"],
      [{}, { name: listed, arguments: 5 }, "refused", "malformed_arguments", "files.read"],
      [
        {},
        { name: listed, arguments: '{"path":"a","Path":"b"}' },
        "refused",
        "ambiguous_arguments",
        "files.read",
      ],
      // call_tool's own arguments as JSON text: the name it carries is not read.
      [
        {},
        JSON.stringify({ name: listed, arguments: { path: "a", Path: "b" } }),
        "refused",
        "ambiguous_arguments",
        "",
      ],
      [hiding, { name: DEMO_NAMES["scope:action"], arguments: {} }, "hidden", "hidden", ""],
      [hiding, { name: "files_wirte_zq", arguments: {} }, "refused", "unlisted", ""],
    ] as const) {
      const { call } = await analyticsSession({ MAX_TOOLS: "2", ...vars });
      const logs = captureLogs();
      const { messages, points } = await call("call_tool", carried);
      const what = JSON.stringify(carried);
      expect(messages[0], what).toHaveProperty("result.isError", true);
      const point = onlyPoint(points);
      expect(point.blobs, what).toMatchObject({
        outcome,
        "error.type": "tool_error",
        refusal,
        search: "search",
        "gen_ai.tool.name": tool,
      });
      // Its log line as ever, naming what the point names.
      expect(logs.events("tool_call_refused"), what).toEqual([
        expect.objectContaining({
          "mcp.method.name": "tools/call",
          "error.type": point.blobs["error.type"],
          reason: refusal,
        }),
      ]);
      logs.restore();
    }
  });

  it.each(CARRIED)(
    "a batch answered in %s: one data point for each call and listing",
    async (_, query) => {
      const { send } = await analyticsSession({}, query);
      const { points } = await send([
        rpc(1, "tools/call", { name: DEMO_NAMES["scope:action"], arguments: { scope: "billing" } }),
        rpc(2, "tools/list"),
        rpc(3, "tools/call", { name: DEMO_NAMES["files.read"], arguments: 7 }),
        rpc(4, "ping"),
      ]);
      const byMethod = points.map((point) => [point.blobs["mcp.method.name"], point.blobs.outcome]);
      expect(byMethod.sort()).toEqual([
        ["tools/call", "ok"],
        ["tools/call", "refused"],
        ["tools/list", "ok"],
      ]);
    },
  );

  it("a batch that gives two calls one id: refused before either reaches the origin, and no point written", async () => {
    // The origin's SDK answers one of two calls of one id, and the client could not tell which;
    // the proxy refuses the batch (docs/errors.md), so no call of it is counted as made.
    const { send } = await analyticsSession();
    const { response, messages, points } = await send([
      rpc(1, "tools/call", { name: DEMO_NAMES["scope:action"], arguments: { scope: "billing" } }),
      rpc(1, "tools/call", { name: DEMO_NAMES["files.read"], arguments: { path: "a" } }),
    ]);
    expect(response.status).toBe(400);
    expect(messages).toMatchObject([{ error: { code: -32600 } }]);
    expect(points).toEqual([]);
  });
});

describe("protocol 2026-07-28", () => {
  const ELICITING = {
    ...ENVELOPE_2026,
    "io.modelcontextprotocol/clientCapabilities": { elicitation: { form: {} } },
  };

  it.each(CARRIED)(
    "a call the origin answers input_required, in %s: input_required, no failure; its retry with the input is written as it ends",
    async (_, query) => {
      const recording = recordingDataset();
      const proxy = viaProxy(
        { ORIGIN_URL: freshOrigin(GATEWAY_ORIGIN, query) },
        { app: createApp(), bindings: recording.bindings, contexts: recording.contexts },
      );
      const ask = async (id: number, method: string, params: Record<string, unknown> = {}) => {
        const { headers } = wireRequest("2026-07-28", id, method, params);
        // A client that can answer an elicitation, which the origin asks it for.
        const body = rpc(id, method, { ...params, _meta: ELICITING });
        const [message] = await messagesOf(await postJson(proxy, PROXY_URL, body, headers));
        const point = onlyPoint(await recording.points());
        recording.clear();
        return { message, point };
      };
      await ask(1, "tools/list");
      const call = { name: DEMO_NAMES["deploy:confirm"], arguments: { target: "staging" } };
      // The tool asks the user first (an elicitation): no tool result yet, and no outcome of one.
      const asked = await ask(2, "tools/call", call);
      expect(asked.message).toHaveProperty("result.resultType", "input_required");
      expect(asked.point.blobs).toMatchObject({
        "gen_ai.tool.name": "deploy:confirm",
        outcome: "input_required",
        "error.type": "",
      });
      const retried = await ask(3, "tools/call", {
        ...call,
        inputResponses: { confirm: { action: "accept", content: { confirm: true } } },
      });
      expect(retried.message).toHaveProperty("result.resultType", "complete");
      expect(retried.point.blobs).toMatchObject({
        "gen_ai.tool.name": "deploy:confirm",
        outcome: "ok",
      });
      // Past the 64 KiB parsed (the question quotes the target): judged by what it mentions.
      const long = await ask(4, "tools/call", {
        ...call,
        arguments: { target: "x".repeat(70 * 1024) },
      });
      expect(long.message).toHaveProperty("result.resultType", "input_required");
      expect(long.point.blobs.outcome).toBe("unread");
    },
  );
});

describe("how many points a request writes", () => {
  /** `forwarded` calls the origin answers, then `refused` the proxy refuses itself (arguments 7). */
  const batchOf = (forwarded: number, refused = 0) => [
    ...Array.from({ length: forwarded }, (_, i) =>
      rpc(i, "tools/call", { name: DEMO_NAMES["scope:action"], arguments: { scope: `s${i}` } }),
    ),
    ...Array.from({ length: refused }, (_, i) =>
      rpc(`r${i}`, "tools/call", { name: DEMO_NAMES["files.read"], arguments: 7 }),
    ),
  ];
  const countOf = (points: Point[]) => {
    const counts: Record<string, number> = {};
    for (const { blobs } of points) counts[blobs.outcome] = (counts[blobs.outcome] ?? 0) + 1;
    return counts;
  };

  it.each(CARRIED)(
    "one for each call of a batch of MAX_BATCH_MESSAGES' default 32 answered in %s, the proxy's refusals too",
    async (_, query) => {
      const { send } = await analyticsSession({}, query);
      const { messages, points } = await send(batchOf(28, 4));
      expect(messages).toHaveLength(32);
      expect(countOf(points)).toEqual({ ok: 28, refused: 4 });
    },
  );

  it("at most 250, Analytics Engine's bound per invocation, at MAX_BATCH_MESSAGES' ceiling: each call answered as ever", async () => {
    const { send } = await analyticsSession({ MAX_BATCH_MESSAGES: "256" });
    // The demo's SDK takes batches of 100 at most: the proxy answers the rest itself.
    const { response, messages, points } = await send(batchOf(90, 166));
    expect(response.status).toBe(200);
    expect(messages).toHaveLength(256);
    const counts = countOf(points);
    expect((counts.ok ?? 0) + (counts.refused ?? 0)).toBe(250);
  });
});

describe("whose points (the index)", () => {
  it("two tenants in front of one origin host write their own indexes, by WRANGLER_ENV, never ORIGIN_URL's path or query", async () => {
    // One hosted origin, a tenant each by its query (a key or a tenant parameter).
    const origin = freshOrigin(GATEWAY_ORIGIN);
    const pointOf = async (tenant: string) => {
      const recording = recordingDataset();
      const proxy = viaProxy(
        { ORIGIN_URL: `${origin}&tenant=${tenant}-k3y`, WRANGLER_ENV: tenant },
        { app: createApp(), bindings: recording.bindings, contexts: recording.contexts },
      );
      await messagesOf(await postJson(proxy, PROXY_URL, rpc(1, "tools/list")));
      return onlyPoint(await recording.points());
    };
    const acme = await pointOf("acme");
    const globex = await pointOf("globex");
    expect(acme.index).not.toBe(globex.index);
    expect(acme.index).toBe("acme");
    expect(globex.index).toBe("globex");
    for (const point of [acme, globex]) expect(point.index).not.toContain("k3y");
  });
});

describe("which answers are read (CALLS_ANSWER_SAMPLING_RATE)", () => {
  /** A proxy in front of the demo whose calls' answers are read for `rate` of requests. */
  async function sampledSession(rate: string, query = "") {
    const session = await analyticsSession({ CALLS_ANSWER_SAMPLING_RATE: rate }, query);
    const readScope = async (id: number) => {
      const { messages, points } = await session.call(
        DEMO_NAMES["scope:action"],
        { scope: "billing" },
        id,
      );
      // The client gets the origin's answer whether it was read or not.
      expect(messages[0]).toHaveProperty("result.structuredContent.tool", "scope:action");
      return onlyPoint(points);
    };
    return { ...session, readScope };
  }

  it.each(CARRIED)(
    "none, in %s: every call written, unsampled, standing for no outcome; what is known without reading, as it is",
    async (_, query) => {
      const { call, readScope } = await sampledSession("0", query);
      const point = await readScope(1);
      expect(point.blobs).toMatchObject({
        "gen_ai.tool.name": "scope:action",
        outcome: "unsampled",
        "error.type": "",
        validation: "valid",
        resolution: "listed",
      });
      expect(point.doubles["outcome.weight"]).toBe(0);
      // A tool error is not known unread; a refusal is the proxy's own.
      const failing = onlyPoint((await call(DEMO_NAMES["files.read"], {})).points);
      expect(failing.blobs.outcome).toBe("unsampled");
      const refused = onlyPoint((await call(DEMO_NAMES["files.read"], 5)).points);
      expect(refused.blobs.outcome).toBe("refused");
      expect(refused.doubles["outcome.weight"]).toBe(1);
    },
  );

  it("none: an HTTP error, an origin that cannot be reached, and a listing are known of every call", async () => {
    const recording = recordingDataset();
    const bound = {
      app: createApp(),
      bindings: { ...recording.bindings, CALLS_ANSWER_SAMPLING_RATE: "0" },
      contexts: recording.contexts,
    };
    const signedOut = viaProxy(
      { ORIGIN_URL: `${GATEWAY_ORIGIN}/auth/mcp?map=${crypto.randomUUID()}` },
      bound,
    );
    const challenged = await pointOfAnswer(
      recording,
      signedOut,
      rpc(1, "tools/call", { name: "a_b" }),
      401,
    );
    expect(challenged.blobs).toMatchObject({ outcome: "http_error", "error.type": "401" });
    expect(challenged.doubles["outcome.weight"]).toBe(1);
    const closed = viaProxy({ ORIGIN_URL: `${CLOSED_ORIGIN}/mcp` }, bound);
    const unreachable = await pointOfAnswer(
      recording,
      closed,
      rpc(2, "tools/call", { name: "a_b" }),
      502,
    );
    expect(unreachable.blobs.outcome).toBe("origin_unreachable");
    expect(unreachable.doubles["outcome.weight"]).toBe(1);
    const { proxy, session } = await demoSession(bound);
    await messagesOf(await postJson(proxy, PROXY_URL, rpc(3, "tools/list"), session));
    const listing = onlyPoint(await recording.points());
    expect(listing.blobs).toMatchObject({ "mcp.method.name": "tools/list", outcome: "ok" });
    expect(listing.doubles["outcome.weight"]).toBe(1);
  });

  it.each(CARRIED)(
    "half, a batch answered in %s: the call read stands for two or unsampled for none, its listing and the proxy's own answer for one each",
    async (_, query) => {
      const { send } = await sampledSession("0.5", query);
      const outcomes = new Set<string>();
      for (let i = 0; i < 16; i++) {
        const { messages, points } = await send([
          rpc(1, "tools/call", {
            name: DEMO_NAMES["scope:action"],
            arguments: { scope: "billing" },
          }),
          rpc(2, "tools/list"),
          rpc(3, "tools/call", { name: DEMO_NAMES["files.read"], arguments: 7 }),
        ]);
        expect(messages).toHaveLength(3);
        const weighed = points.map((point) => [
          point.blobs["mcp.method.name"],
          point.blobs.outcome,
          point.doubles["outcome.weight"],
        ]);
        const call = weighed.find(
          ([method, outcome]) => method === "tools/call" && outcome !== "refused",
        );
        outcomes.add(String(call?.[1]));
        expect(weighed.sort()).toEqual(
          [
            ["tools/call", "refused", 1],
            ["tools/list", "ok", 1],
            call?.[1] === "ok" ? ["tools/call", "ok", 2] : ["tools/call", "unsampled", 0],
          ].sort(),
        );
      }
      // 16 fair draws all alike: a chance of 1 in 32,768.
      expect([...outcomes].sort()).toEqual(["ok", "unsampled"]);
    },
  );

  it("every one: each outcome read stands for one call", async () => {
    const { readScope } = await sampledSession("1");
    const point = await readScope(1);
    expect(point.blobs.outcome).toBe("ok");
    expect(point.doubles["outcome.weight"]).toBe(1);
  });

  it.each(CARRIED)(
    "half, in %s: about half the calls read, each standing for two; the others unsampled",
    async (_, query) => {
      const { readScope } = await sampledSession("0.5", query);
      const points: Point[] = [];
      for (let id = 1; id <= 80; id++) points.push(await readScope(id));
      const read = points.filter((point) => point.blobs.outcome !== "unsampled");
      for (const point of read) {
        expect(point.blobs.outcome).toBe("ok");
        expect(point.doubles["outcome.weight"]).toBe(2);
      }
      for (const point of points.filter((point) => !read.includes(point))) {
        expect(point.doubles["outcome.weight"]).toBe(0);
      }
      // 80 fair draws: fewer than 20 or more than 60 heads is a chance of about 1 in 100,000.
      expect(read.length).toBeGreaterThanOrEqual(20);
      expect(read.length).toBeLessThanOrEqual(60);
    },
  );
});

/** The blobs of the one point a 2026-07-28 listing writes, its envelope naming the client `clientInfo`. */
async function blobsOfListingBy(
  clientInfo: { name: string; version: string },
  headers: Record<string, string> = {},
) {
  const recording = recordingDataset();
  const proxy = viaProxy(
    { ORIGIN_URL: freshOrigin(GATEWAY_ORIGIN) },
    { app: createApp(), bindings: recording.bindings, contexts: recording.contexts },
  );
  const meta = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": clientInfo,
  };
  const response = await postJson(proxy, PROXY_URL, rpc(1, "tools/list", { _meta: meta }), {
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": "tools/list",
    ...headers,
  });
  await messagesOf(response);
  return onlyPoint(await recording.points()).blobs;
}

describe("which client", () => {
  it("the 2026-07-28 envelope's clientInfo, on every request", async () => {
    const blobs = await blobsOfListingBy(
      { name: "modern-client", version: "2.1.0" },
      { "cf-ray": "8f1d2c3b4a5e6f70-AMS" },
    );
    expect(blobs).toMatchObject({
      "mcp.client.name": "modern-client",
      "mcp.client.version": "2.1.0",
      "client.source": "meta",
      "mcp.protocol.version": "2026-07-28",
      "request.id": "8f1d2c3b4a5e6f70-AMS",
    });
  });

  it("else the User-Agent's product, its control characters replaced", async () => {
    const recording = recordingDataset();
    const proxy = viaProxy(
      { ORIGIN_URL: `${CLOSED_ORIGIN}/mcp` },
      { app: createApp(), bindings: recording.bindings, contexts: recording.contexts },
    );
    const response = await postJson(proxy, PROXY_URL, rpc(1, "tools/list"), {
      "user-agent": "agent\u0001x/3.2 (linux)",
    });
    await response.body?.cancel();
    expect(onlyPoint(await recording.points()).blobs).toMatchObject({
      "mcp.client.name": "agent\ufffdx",
      "mcp.client.version": "3.2",
      "client.source": "user_agent",
    });
  });
});

describe("what a client or an origin wrote, cleaned", () => {
  it("a client's name and version without the controls that reorder text, as the consent page shows it", async () => {
    // U+202E turns what follows right to left: a dashboard would show "Claude evil.example".
    const blobs = await blobsOfListingBy({
      name: "Claude \u202Eelpmaxe.live\u202C",
      version: "1\u2066.2\u2069\u202A.3",
    });
    expect(blobs).toMatchObject({
      "mcp.client.name": "Claude elpmaxe.live",
      "mcp.client.version": "1.2.3",
    });
  });
});

describe("what a client or an origin wrote, unseen characters shown", () => {
  it("a zero-width character, a line separator, the BOM, a soft hyphen or a tag character in a client's name shows as �, as a log line escapes it", async () => {
    // "Claude\u200B" groups apart from "Claude" in a dashboard that shows both alike; U+2028
    // breaks a table's row; tag characters spell text nothing shows.
    const blobs = await blobsOfListingBy({
      name: "Claude\u200B Desk\u2028top\uFEFF",
      version: "1.\u00AD2\u{E0031}",
    });
    expect(blobs).toMatchObject({
      "mcp.client.name": "Claude\ufffd Desk\ufffdtop\ufffd",
      "mcp.client.version": "1.\ufffd2\ufffd",
    });
  });
});

describe("what a client or an origin wrote, cut", () => {
  it("at its bound, never between the two halves of a character", async () => {
    // 64 characters at most: the cut falls inside the emoji's surrogate pair.
    const blobs = await blobsOfListingBy({ name: `${"a".repeat(62)}\u{1F600}b`, version: "1" });
    const name = blobs["mcp.client.name"];
    // Asked first: a lone surrogate in a failure's message breaks the test runner's own channel.
    expect(name?.isWellFormed()).toBe(true);
    expect(name).toBe(`${"a".repeat(62)}…`);
  });

  it("within what Analytics Engine takes of a point, the longest names a client writes in every blob it fills", async () => {
    // Analytics Engine takes one index of 96 bytes and 20 blobs of 5,120 bytes together (16 KB
    // since June 2025); past them a point is lost. "€" is 3 bytes in UTF-8: a name of 1,000 is
    // 3,000, and the tool's, the client's name and version together 9,000 (a header is ASCII).
    const long = "€".repeat(1000);
    const { send } = await analyticsSession();
    const { points } = await send(
      rpc("call", "tools/call", {
        name: long,
        arguments: {},
        _meta: { "io.modelcontextprotocol/clientInfo": { name: long, version: long } },
      }),
      { "cf-ray": "r".repeat(1000) },
    );
    const { index, blobs } = onlyPoint(points);
    // Each is written, cut at its bound.
    expect(blobs).toMatchObject({
      "gen_ai.tool.name": `${"€".repeat(255)}…`,
      "mcp.client.name": `${"€".repeat(63)}…`,
      "mcp.client.version": `${"€".repeat(63)}…`,
      "request.id": `${"r".repeat(63)}…`,
    });
    const bytes = (text: string) => new TextEncoder().encode(text).byteLength;
    expect(bytes(index)).toBeLessThanOrEqual(96);
    expect(Object.values(blobs).reduce((sum, blob) => sum + bytes(blob), 0)).toBeLessThanOrEqual(
      5120,
    );
  });
});

describe("what is never written", () => {
  it("no argument value appears in any field", async () => {
    const { call } = await analyticsSession();
    // Values long enough not to be part of a field by chance, in every place a repair looks.
    const value = fc
      .string({ minLength: 6, maxLength: 40 })
      .filter((text) => text.trim().length >= 6);
    await fc.assert(
      fc.asyncProperty(value, value, fc.integer({ min: 100_000 }), async (path, city, bytes) => {
        const written = [
          ...(await call(DEMO_NAMES["files.read"], { path, max_bytes: String(bytes) })).points,
          ...(await call(DEMO_NAMES["get-weather"], JSON.stringify({ City: city }))).points,
          ...(await call(DEMO_NAMES["files.read"], { PATH: path, extra: city })).points,
        ];
        expect(written).toHaveLength(3);
        for (const point of written) {
          const fields = [point.index, ...Object.values(point.blobs)];
          for (const field of fields) {
            expect(field).not.toContain(path);
            expect(field).not.toContain(city);
            expect(field).not.toContain(String(bytes));
          }
          expect(Object.values(point.doubles)).not.toContain(bytes);
        }
      }),
      { numRuns: 15 },
    );
    // 45 calls: a loaded machine takes longer than vitest's 5 s default.
  }, 60_000);
});

describe("a dataset that fails", () => {
  it("leaves the calls as they were, and is logged once a minute at most per isolate", async () => {
    const logs = captureLogs();
    const failing: AnalyticsEngineDataset = {
      writeDataPoint: () => {
        throw new Error("dataset unavailable");
      },
    };
    const contexts: ExecutionContext[] = [];
    const { proxy, session } = await demoSession({
      app: createApp(),
      bindings: { CALLS: failing, WRANGLER_ENV: TENANT },
      contexts,
    });
    for (const id of [1, 2, 3]) {
      const response = await postJson(
        proxy,
        PROXY_URL,
        rpc(id, "tools/call", {
          name: DEMO_NAMES["scope:action"],
          arguments: { scope: "billing" },
        }),
        session,
      );
      expect(response.status).toBe(200);
      const [message] = await messagesOf(response);
      expect(message).toHaveProperty("result.structuredContent.tool", "scope:action");
    }
    await Promise.all(contexts.map((ctx) => waitOnExecutionContext(ctx)));
    expect(logs.events("analytics_failed")).toEqual([
      expect.objectContaining({ error: "dataset unavailable", failed: 1 }),
    ]);
  });

  it("logs once a minute at most: a minute on its clock later, the writes that failed since", () => {
    const logs = captureLogs();
    let now = 1_000_000;
    const failures = new FailureLog(() => now);
    const failed = () => failures.failed(new Error("dataset unavailable"));
    const lines = () => logs.events("analytics_failed").map((line) => line.failed);
    failed();
    failed();
    now += 59_999;
    failed();
    expect(lines()).toEqual([1]);
    now += 1;
    failed();
    expect(lines()).toEqual([1, 3]);
    failed();
    now += 60_000;
    failed();
    expect(lines()).toEqual([1, 3, 2]);
  });
});
