/**
 * Protocol coverage through the proxy (docs/transport.md): batches, resumed
 * streams, 2026-07-28 headers and streams. Event-stream behavior itself is in
 * streaming.test.ts.
 */
import { env } from "cloudflare:workers";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { EventSourceMessage } from "eventsource-parser";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { type RequestId, unreadAddressee } from "../../src/protocol/jsonrpc";
import { rewriteResponse } from "../../src/rewrite/response";
import { NO_POLICY, NO_RULES, type ToolPolicy } from "../../src/rules/tool-rules";
import { profileOf } from "../../src/schemas/profile";
import { ToolMapMemory, toolMapScopes } from "../../src/toolmap/isolate-memory";
import { ToolMap } from "../../src/toolmap/tool-map";
import { ReadBudget } from "../../src/transport/read-bounded";
import { countingKv } from "../../support/counting-kv";
import { demoSession } from "../helpers/demo";
import { DEMO_NAMES } from "../helpers/demo-names";
import { digest } from "../helpers/digest";
import { clientView, isEvent } from "../helpers/event-stream";
import { captureLogs } from "../helpers/logs";
import { messagesOf, nextMessage, postJson, rpc, sseEvents, wireRequest } from "../helpers/mcp";
import {
  freshOrigin,
  GATEWAY_ORIGIN,
  newTrace,
  PROXY_URL,
  receivedByOrigin,
  viaProxy,
} from "../helpers/proxy";
import { scriptedOrigin } from "../helpers/scripted-origin";
import { rulesOf } from "../helpers/tool-rules";

const setUp = (query = "") => demoSession({ query });

describe("batches (protocol 2025-03-26)", () => {
  it("rename the tools/list element and repair the tools/call element of one batch", async () => {
    const { proxy, session, trace } = await setUp();
    await messagesOf(await postJson(proxy, PROXY_URL, rpc("warm", "tools/list"), session));
    const response = await postJson(
      proxy,
      PROXY_URL,
      [
        rpc("l", "tools/list"),
        rpc("c", "tools/call", {
          name: DEMO_NAMES["files.read"],
          arguments: { Path: "a", max_bytes: "8" },
        }),
        rpc("p", "ping"),
      ],
      session,
    );
    const byId = Object.fromEntries((await messagesOf(response)).map((m) => [m.id, m]));
    const names = (byId.l as { result: { tools: { name: string }[] } }).result.tools.map(
      (t) => t.name,
    );
    expect(names).toContain(DEMO_NAMES["scope:action"]);
    expect(byId.c).toMatchObject({
      result: { structuredContent: { tool: "files.read", arguments: { path: "a", max_bytes: 8 } } },
    });
    expect(byId.p).toMatchObject({ result: {} });
    const batch = (await receivedByOrigin(trace)).map((r) => r.body).find((b) => b.startsWith("["));
    expect(JSON.parse(batch ?? "[]")[1].params).toEqual({
      name: "files.read",
      arguments: { path: "a", max_bytes: 8 },
    });
  });

  it("refuse a batch that carries Mcp-Method, Mcp-Name or Mcp-Param-* headers: they name one request", async () => {
    const { proxy, session, trace } = await setUp();
    const batch = [
      rpc("c", "tools/call", { name: DEMO_NAMES["files.read"], arguments: { path: "a" } }),
      rpc("p", "ping"),
    ];
    const headers: Array<Record<string, string>> = [
      { "mcp-method": "ping" },
      { "mcp-name": "files.read" },
      { "mcp-param-path": "a" },
    ];
    for (const header of headers) {
      const response = await postJson(proxy, PROXY_URL, batch, { ...session, ...header });
      expect(response.status, Object.keys(header)[0]).toBe(400);
      const answers = (await response.json()) as Array<{ id: string; error: { code: number } }>;
      expect(answers.map(({ id, error }) => [id, error.code])).toEqual([
        ["c", -32020],
        ["p", -32020],
      ]);
    }
    const batches = (await receivedByOrigin(trace)).filter((r) => r.body.startsWith("["));
    expect(batches).toEqual([]);
  });

  it("rename tools/list elements of a JSON array response", async () => {
    const { proxy, session } = await setUp("&json");
    const response = await postJson(
      proxy,
      PROXY_URL,
      [rpc(1, "tools/list"), rpc(2, "ping")],
      session,
    );
    expect(response.headers.get("content-type")).toContain("application/json");
    const body =
      await response.json<Array<{ id: number; result: { tools?: { name: string }[] } }>>();
    expect(body.map((m) => m.id).sort()).toEqual([1, 2]);
    expect(body.find((m) => m.id === 1)?.result.tools?.map((t) => t.name)).toContain(
      DEMO_NAMES["a/b"],
    );
  });

  it("forward a batch of only notifications and responses, and pass its 202 back", async () => {
    const { proxy, session, trace } = await setUp();
    const body = JSON.stringify([
      { jsonrpc: "2.0", method: "notifications/roots/list_changed" },
      { jsonrpc: "2.0", id: "s-1", result: {} },
    ]);
    const response = await postJson(proxy, PROXY_URL, body, session);
    expect(response.status).toBe(202);
    expect(await response.text()).toBe("");
    expect((await receivedByOrigin(trace)).map((r) => r.body)).toContain(body);
  });

  it("take a response whose `method` is no string for a response, not for a request of its id", async () => {
    // JSON-RPC's request has a string method; this one's `result` makes it a response to the
    // server's request "s-1", which a request of the client's may share an id with.
    const origin = await scriptedOrigin(
      {
        "*": {
          status: 200,
          headers: [["Content-Type", "application/json"]],
          body: '{"jsonrpc":"2.0","id":"@ID@","result":{}}',
        },
      },
      '"@ID@"',
    );
    const proxy = viaProxy({ ORIGIN_URL: origin.originUrl });
    const body = JSON.stringify([
      { jsonrpc: "2.0", id: "s-1", method: 5, result: {} },
      { jsonrpc: "2.0", id: "s-1", method: "ping" },
    ]);
    const response = await postJson(proxy, PROXY_URL, body);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual([{ jsonrpc: "2.0", id: "s-1", result: {} }]);
    expect((await origin.received()).map((r) => r.body)).toEqual([body]);
  });
});

describe("resumed streams", () => {
  it("rename a tools/list result replayed after Last-Event-ID", async () => {
    const { proxy, session } = await setUp();
    const listing = await postJson(proxy, PROXY_URL, rpc("l1", "tools/list"), session);
    const events = sseEvents(listing);
    const priming = await events.read();
    expect(priming.value?.data).toBe("");
    // Read to the end, so the origin has stored the answer; then resume as a
    // client that lost everything after the priming event.
    while (!(await events.read()).done) {}

    const resumed = await proxy(PROXY_URL, {
      headers: {
        ...session,
        accept: "text/event-stream",
        "last-event-id": priming.value?.id ?? "",
      },
    });
    expect(resumed.status).toBe(200);
    const replayed = await nextMessage(sseEvents(resumed));
    expect(replayed).toMatchObject({ id: "l1" });
    const names = (replayed as { result: { tools: { name: string }[] } }).result.tools.map(
      (t) => t.name,
    );
    expect(names).toContain(DEMO_NAMES["unity/health"]);
    expect(names).not.toContain("unity/health");
  });

  it("rename a replayed listing as they rename it answering its request: one of its tools without an inputSchema too", async () => {
    // Lenient origins list a tool that takes no arguments without an `inputSchema`, and the
    // clients take it; a listing with one such tool passed a resumed stream with every tool's
    // own name, and under rules that hide tools, ended the stream.
    const body = JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      result: {
        tools: [
          { name: "files.read", inputSchema: { type: "object" } },
          { name: "unity/health" },
          { name: "secret.admin", inputSchema: { type: "object" } },
        ],
      },
    });
    const stream = `id: 7\nevent: message\ndata: ${body}\n\n`;
    const rewritten = async (listIds: Set<RequestId> | "by-shape", policy: ToolPolicy) => {
      const profile = profileOf("openai");
      const scope = await toolMapScopes(
        new URL(`https://replayed.example/mcp?${crypto.randomUUID()}`),
        profile.names,
      );
      const response = await rewriteResponse(
        new Response(stream, { headers: { "content-type": "text/event-stream" } }),
        {
          listIds,
          watchesListChanged: listIds === "by-shape",
          reads: new ReadBudget(),
          toolMap: new ToolMap(env.TOOL_MAP, scope, profile, new ToolMapMemory(), () => {}, policy),
          addressee: { ...unreadAddressee(new Headers()), ids: listIds === "by-shape" ? [] : [1] },
        },
      );
      const [event] = clientView(await response.text()).filter(isEvent);
      return JSON.parse((event as EventSourceMessage).data).result.tools.map(
        (tool: { name: string }) => tool.name,
      );
    };
    const hiding = { rules: rulesOf({ hide: ["secret.*"] }), changes: "log" as const };
    for (const policy of [NO_POLICY, hiding]) {
      const answered = await rewritten(new Set([1]), policy);
      expect(answered).toContain(DEMO_NAMES["unity/health"]);
      expect(await rewritten("by-shape", policy)).toEqual(answered);
    }
  });
});

/** The proxy's own answer to one call of a batch (id "bad"), whose rest went to the origin. */
const OWN = { jsonrpc: "2.0", id: "bad", error: { code: -32602, message: "Invalid params" } };

/**
 * `origin`'s answer to the batch's rest, with `OWN` to merge into it; `listIds`, where given, the
 * listings it answers, and the batch's ids ("bad", 2 and theirs) what the client waits for.
 */
async function withOwnAnswer(origin: Response, listIds?: RequestId[]) {
  const profile = profileOf("openai");
  const scope = await toolMapScopes(
    new URL(`https://own.example/mcp?${crypto.randomUUID()}`),
    profile.names,
  );
  const addressee = unreadAddressee(new Headers());
  return rewriteResponse(origin, {
    listIds: new Set(listIds),
    watchesListChanged: false,
    reads: new ReadBudget(),
    toolMap: new ToolMap(env.TOOL_MAP, scope, profile, new ToolMapMemory(), () => {}),
    addressee: listIds ? { ...addressee, ids: ["bad", 2, ...listIds] } : addressee,
    localResponses: [OWN],
  });
}

describe("bounds", () => {
  it("passes a JSON tools/list answer larger than the rewrite bound through whole, unrewritten", async () => {
    const tool = JSON.stringify({
      name: "t/x",
      description: "d".repeat(1000),
      inputSchema: { type: "object" },
    });
    const body = () => {
      let sent = 0;
      return new ReadableStream<Uint8Array>({
        pull(controller) {
          const encoder = new TextEncoder();
          if (sent === 0)
            controller.enqueue(encoder.encode('{"jsonrpc":"2.0","id":1,"result":{"tools":['));
          if (sent < 17_000) controller.enqueue(encoder.encode(`${sent === 0 ? "" : ","}${tool}`));
          else {
            controller.enqueue(encoder.encode("]}}"));
            controller.close();
          }
          sent++;
        },
      });
    };
    const profile = profileOf("openai");
    const scope = await toolMapScopes(new URL("https://big.example/mcp"), profile.names);
    const toolMap = new ToolMap(env.TOOL_MAP, scope, profile, new ToolMapMemory(), () => {});
    const logs = captureLogs();
    const response = await rewriteResponse(
      new Response(body(), { headers: { "content-type": "application/json" } }),
      {
        listIds: new Set([1]),
        watchesListChanged: false,
        reads: new ReadBudget(),
        toolMap,
        addressee: unreadAddressee(new Headers()),
      },
    );
    const [through, original] = await Promise.all([
      digest(response.body as ReadableStream<Uint8Array>),
      digest(body()),
    ]);
    expect(through.bytes).toBeGreaterThan(16 * 1024 * 1024);
    expect(through).toEqual(original);
    expect(logs.events("response_not_rewritten")).toEqual([
      { event: "response_not_rewritten", reason: "body over 16777216 bytes" },
    ]);
    logs.restore();
  });

  it.each([
    ["no body", null],
    ["an empty body", ""],
  ])(
    "answers a batch whose forwarded part the origin answered 200 with %s with its own answers",
    async (_, body) => {
      // MCP asks for 202 where only notifications and responses were sent; some origins send 200.
      const response = await withOwnAnswer(
        new Response(body, { status: 200, headers: { "content-type": "application/json" } }),
      );
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual([OWN]);
    },
  );

  it("keeps the origin's answer to a batch it could not merge its own answers into, and says so", async () => {
    const logs = captureLogs();
    const response = await withOwnAnswer(
      new Response("Service Unavailable", { headers: { "content-type": "application/json" } }),
    );
    expect(await response.text()).toBe("Service Unavailable");
    expect(logs.events("local_answers_dropped")).toEqual([
      { event: "local_answers_dropped", reason: "origin body is not JSON", count: 1 },
    ]);
    logs.restore();
  });

  // Two Content-Type lines, joined: the SDK clients read an event stream in it, the proxy neither.
  it.each(["text/plain", "text/event-stream, application/json"])(
    "says so too where the origin answers a batch with a listing in another type than JSON or an event stream: %s",
    async (type) => {
      const logs = captureLogs();
      const response = await withOwnAnswer(
        new Response("Service Unavailable", { headers: { "content-type": type } }),
        [1],
      );
      expect(await response.text()).toBe("Service Unavailable");
      const reason = `content-type ${type}`;
      expect(logs.events("local_answers_dropped")).toEqual([
        { event: "local_answers_dropped", reason, count: 1 },
      ]);
      expect(logs.events("response_not_rewritten")).toEqual([
        { event: "response_not_rewritten", reason },
      ]);
      logs.restore();
    },
  );
});

describe("the proxy's own answers before an origin's event stream", () => {
  const CALL = { jsonrpc: "2.0", id: 2, result: { content: [{ type: "text", text: "done" }] } };
  const LISTING = {
    jsonrpc: "2.0",
    id: 1,
    result: { tools: [{ name: "files.read", inputSchema: { type: "object" } }] },
  };
  // An event as the spec's simplest server writes it: a `data` line alone, no `event` line.
  const event = (message: unknown) => `data: ${JSON.stringify(message)}\n\n`;
  const BOM = [0xef, 0xbb, 0xbf];

  /** The messages a client reads of the proxy's answer to an origin that sent `chunks`. */
  async function clientReads(chunks: number[][], listIds: RequestId[]) {
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const chunk of chunks) controller.enqueue(new Uint8Array(chunk));
        controller.close();
      },
    });
    const response = await withOwnAnswer(
      new Response(body, { headers: { "content-type": "text/event-stream" } }),
      listIds,
    );
    // As a client decodes it: a BOM is dropped only where the stream starts (TextDecoderStream).
    const text = new TextDecoder().decode(await response.arrayBuffer());
    return clientView(text)
      .filter(isEvent)
      .map(({ data }) => JSON.parse(data) as { id?: RequestId });
  }

  it.each([
    ["a call's answer alone", [] as RequestId[]],
    ["a call's answer beside a listing", [1] as RequestId[]],
  ])("reach the client at once, while the origin has sent nothing yet (%s)", async (_, listIds) => {
    // The origin answered with headers and holds its stream open: its call is still running.
    let origin: ReadableStreamDefaultController<Uint8Array> | undefined;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        origin = controller;
      },
    });
    const response = await withOwnAnswer(
      new Response(body, { headers: { "content-type": "text/event-stream" } }),
      listIds,
    );
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const { value } = await reader.read();
    const [first] = clientView(new TextDecoder().decode(value)).filter(isEvent);
    expect(JSON.parse(first?.data ?? "null")).toEqual(OWN);
    origin?.close();
    await reader.cancel();
  });

  it.each([
    ["a call's answer alone", [] as RequestId[]],
    ["a call's answer beside a listing", [1] as RequestId[]],
  ])(
    "reach the client with every answer of an origin whose stream starts with a BOM (%s)",
    async (_, listIds) => {
      const bytes = [
        ...new TextEncoder().encode(event(CALL) + (listIds.length ? event(LISTING) : "")),
      ];
      // The BOM whole, and cut by chunk boundaries as an origin's chunks may cut it.
      for (const chunks of [
        [[...BOM, ...bytes]],
        [[BOM[0] as number], [...BOM.slice(1), ...bytes]],
      ]) {
        const ids = (await clientReads(chunks, listIds)).map((message) => message.id);
        expect(ids).toEqual(["bad", 2, ...listIds]);
      }
    },
  );
});

describe("protocol 2026-07-28", () => {
  it("keeps Mcp-Method and Mcp-Name consistent with the body, and carries the envelope of a retried call", async () => {
    const { proxy, session, trace } = await setUp();
    await messagesOf(await postJson(proxy, PROXY_URL, rpc("l", "tools/list"), session));
    const response = await postJson(
      proxy,
      PROXY_URL,
      rpc("retry", "tools/call", {
        name: DEMO_NAMES["scope:action"],
        inputResponses: { "elicit-1": { action: "accept" } },
        requestState: "opaque-state",
        Scope: "billing",
      }),
      { ...session, "mcp-method": "tools/call", "mcp-name": DEMO_NAMES["scope:action"] },
    );
    await messagesOf(response);
    const call = (await receivedByOrigin(trace)).find((r) => r.body.includes('"retry"'));
    expect(call?.headers["mcp-method"]).toBe("tools/call");
    expect(call?.headers["mcp-name"]).toBe("scope:action");
    expect(JSON.parse(call?.body ?? "{}").params).toEqual({
      name: "scope:action",
      inputResponses: { "elicit-1": { action: "accept" } },
      requestState: "opaque-state",
      arguments: { scope: "billing" },
    });
  });

  // The SDK's server takes Mcp-Name from params.taskId for these (SEP-2663): a gateway may route a
  // task's requests to the instance that holds it by the header, and the body names another task.
  it.each(["tasks/get", "tasks/update", "tasks/cancel"])(
    "refuses %s whose Mcp-Name names another task than params.taskId (-32020)",
    async (method) => {
      const { proxy, session, trace } = await setUp();
      const response = await postJson(proxy, PROXY_URL, rpc("t", method, { taskId: "mine" }), {
        ...session,
        "mcp-method": method,
        "mcp-name": "theirs",
      });
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ id: "t", error: { code: -32020 } });
      const sent = (await receivedByOrigin(trace)).filter((r) => r.body.includes(method));
      expect(sent).toEqual([]);
    },
  );

  // The SDK's server refuses these (-32020) before it reads further; the proxy answered some
  // itself as the revision the body claims (a search, a hidden tool's refusal), and listed the
  // origin for them first.
  it.each([
    ["another revision", "2025-11-25"],
    ["a later one", "2099-01-01"],
    ["no revision at all", "latest"],
  ])(
    "refuses a request whose MCP-Protocol-Version header (%s) is not the revision its body claims (-32020), before it answers it itself",
    async (_, header) => {
      const trace = newTrace();
      const proxy = viaProxy(
        {
          ORIGIN_URL: freshOrigin(GATEWAY_ORIGIN, `&trace=${trace}`),
          TOOL_RULES: JSON.stringify({ hide: ["files.read"] }),
          MAX_TOOLS: "2",
        },
        { app: createApp() },
      );
      const calls = [
        { name: "search_tools", arguments: { query: "read" } },
        { name: DEMO_NAMES["files.read"], arguments: { path: "a.ts" } },
      ];
      for (const params of calls) {
        const { body, headers } = wireRequest("2026-07-28", "v", "tools/call", params);
        const response = await postJson(proxy, PROXY_URL, body, {
          ...headers,
          "mcp-protocol-version": header,
        });
        expect(response.status).toBe(400);
        expect(await response.json()).toEqual({
          jsonrpc: "2.0",
          id: "v",
          error: {
            code: -32020,
            message:
              "Header mismatch: the MCP-Protocol-Version header does not match the request body",
          },
        });
      }
      expect(await receivedByOrigin(trace)).toEqual([]);
    },
  );

  // A batch is 2025-03-26's, read as its header's revision; a message of it that claims another
  // was listed for as the claim's (the envelope, Mcp-Method) and answered as the header's.
  it("refuses a batch whose message claims another revision than its MCP-Protocol-Version header (-32020), before it answers it itself", async () => {
    const trace = newTrace();
    const proxy = viaProxy(
      { ORIGIN_URL: freshOrigin(GATEWAY_ORIGIN, `&trace=${trace}`), MAX_TOOLS: "2" },
      { app: createApp() },
    );
    const { body } = wireRequest("2026-07-28", "v", "tools/call", {
      name: "search_tools",
      arguments: { query: "read" },
    });
    // Said by the header, or without one 2025-03-26, the revision before the header existed.
    const said: Record<string, string>[] = [{ "mcp-protocol-version": "2025-03-26" }, {}];
    for (const headers of said) {
      const response = await postJson(proxy, PROXY_URL, [body, rpc("w", "tools/list")], headers);
      expect(response.status).toBe(400);
      const message =
        "Header mismatch: the MCP-Protocol-Version header does not match the request body";
      expect(await response.json()).toEqual([
        { jsonrpc: "2.0", id: "v", error: { code: -32020, message } },
        { jsonrpc: "2.0", id: "w", error: { code: -32020, message } },
      ]);
    }
    expect(await receivedByOrigin(trace)).toEqual([]);
  });

  it("hands a call's answer stream to the client untouched, list_changed and all", async () => {
    const profile = profileOf("openai");
    const memory = new ToolMapMemory();
    const scope = await toolMapScopes(new URL("https://answer.example/mcp"), profile.names);
    const toolMap = new ToolMap(env.TOOL_MAP, scope, profile, memory, () => {});
    await toolMap.nameListing([{ name: "a/b", inputSchema: { type: "object" } }]);
    const answer =
      'data: {"jsonrpc":"2.0","method":"notifications/tools/list_changed"}\r\n\r\n: comment\n\nid: 7\ndata: {"jsonrpc":"2.0","id":1,"result":{"content":[]}}\n\n';
    const response = await rewriteResponse(
      new Response(answer, { headers: { "content-type": "text/event-stream" } }),
      {
        listIds: new Set(),
        watchesListChanged: false,
        reads: new ReadBudget(),
        toolMap,
        addressee: unreadAddressee(new Headers()),
      },
    );
    expect(await response.text()).toBe(answer);
    // Not watched: the names stay until the client lists again.
    expect((await toolMap.calls.resolve(DEMO_NAMES["a/b"]))?.source).toBe("memory");
  });

  it("passes a subscriptions/listen stream through and drops cached names on tools/list_changed", async () => {
    const counted = countingKv(env.TOOL_MAP);
    const profile = profileOf("openai");
    const memory = new ToolMapMemory();
    const scope = await toolMapScopes(new URL("https://listen.example/mcp"), profile.names);
    const writes: Promise<unknown>[] = [];
    const toolMap = new ToolMap(counted.kv, scope, profile, memory, (write) => writes.push(write));
    await toolMap.nameListing([{ name: "a/b", inputSchema: { type: "object" } }]);
    await Promise.all(writes);

    const events = [
      'id: 1\ndata: {"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"x"}}\n\n',
      'id: 2\ndata: {"jsonrpc":"2.0","method":"notifications/tools/list_changed"}\n\n',
    ];
    let push: ((text: string) => void) | undefined;
    const open = new ReadableStream<Uint8Array>({
      start(controller) {
        push = (text) => controller.enqueue(new TextEncoder().encode(text));
      },
    });
    const response = await rewriteResponse(
      new Response(open, { headers: { "content-type": "text/event-stream" } }),
      {
        listIds: new Set(),
        watchesListChanged: true,
        reads: new ReadBudget(),
        toolMap,
        addressee: unreadAddressee(new Headers()),
      },
    );
    const reader = (response.body as ReadableStream<Uint8Array>)
      .pipeThrough(new TextDecoderStream())
      .getReader();
    push?.(events[0] ?? "");
    expect((await reader.read()).value).toBe(events[0]);
    counted.reset();
    expect((await toolMap.calls.resolve(DEMO_NAMES["a/b"]))?.source).toBe("memory");

    push?.(events[1] ?? "");
    expect((await reader.read()).value).toBe(events[1]);
    // The stream is still open, and the name is read from KV again: memory was dropped
    // (the origin's map, then the chunk that holds the schema).
    expect((await toolMap.calls.resolve(DEMO_NAMES["a/b"]))?.source).toBe("kv");
    expect(counted.counts).toMatchObject({ get: 2, list: 0, put: 0 });
    await reader.cancel();
  });

  it("reads a revision only in its date form, so a claim in the body never becomes a header", async () => {
    const { proxy, trace } = await setUp();
    for (const claim of ["2026-07-28\r\nX-Injected: yes", "9999 X-Injected: yes"]) {
      const response = await postJson(
        proxy,
        PROXY_URL,
        rpc("odd", "tools/call", {
          name: "never_listed",
          arguments: {},
          _meta: { "io.modelcontextprotocol/protocolVersion": claim },
        }),
        // No header beside it: one that is not the claim is refused first (above).
        { "mcp-method": "tools/call" },
      );
      expect(response.status).not.toBe(500);
      await response.body?.cancel();
    }
    const received = await receivedByOrigin(trace);
    expect(received.some(({ body }) => body.includes("mcp-edge-rewriter/relist/"))).toBe(true);
    for (const request of received) {
      expect(request.headers).not.toHaveProperty("x-injected");
      expect(request.headers["mcp-protocol-version"] ?? "2026-07-28").toMatch(
        /^\d{4}-\d{2}-\d{2}$/,
      );
    }
  });

  it("drops cached names only for a list_changed notification, not for text that mentions one", async () => {
    const profile = profileOf("openai");
    const memory = new ToolMapMemory();
    const scope = await toolMapScopes(new URL("https://mention.example/mcp"), profile.names);
    const toolMap = new ToolMap(env.TOOL_MAP, scope, profile, memory, () => {});
    await toolMap.nameListing([{ name: "a/b", inputSchema: { type: "object" } }]);
    const mentions = [
      'data: {"jsonrpc":"2.0","method":"notifications/message","params":{"data":"notifications/tools/list_changed"}}\n\n',
      'data: {"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"\\"method\\":\\"notifications/tools/list_changed\\""}]}}\n\n',
      ": notifications/tools/list_changed\n\n",
    ].join("");
    const response = await rewriteResponse(
      new Response(mentions, { headers: { "content-type": "text/event-stream" } }),
      {
        listIds: new Set(),
        watchesListChanged: true,
        reads: new ReadBudget(),
        toolMap,
        addressee: unreadAddressee(new Headers()),
      },
    );
    expect(await response.text()).toBe(mentions);
    expect((await toolMap.calls.resolve(DEMO_NAMES["a/b"]))?.source).toBe("memory");
  });
});

describe("a listing in an event stream, however its keys are spelled", () => {
  it("is renamed when the origin writes `tools` with escapes: JSON reads it the same", async () => {
    const profile = profileOf("openai");
    const scope = await toolMapScopes(new URL("https://escaped.example/mcp"), profile.names);
    const toolMap = new ToolMap(env.TOOL_MAP, scope, profile, new ToolMapMemory(), () => {});
    const data =
      '{"jsonrpc":"2.0","id":1,"result":{"\\u0074ools":[{"name":"files.read","inputSchema":{"type":"object"}}]}}';
    const response = await rewriteResponse(
      new Response(`event: message\ndata: ${data}\n\n`, {
        headers: { "content-type": "text/event-stream" },
      }),
      {
        listIds: new Set([1]),
        watchesListChanged: false,
        reads: new ReadBudget(),
        toolMap,
        addressee: unreadAddressee(new Headers()),
      },
    );
    const listing = (await nextMessage(sseEvents(response))) as {
      result: { tools: { name: string }[] };
    };
    expect(listing.result.tools.map((tool) => tool.name)).toEqual([DEMO_NAMES["files.read"]]);
  });
});

describe("a listing the proxy cannot read, under rules that edit listings", () => {
  const HIDING = {
    rules: rulesOf({ hide: ["secret.*"] }),
    changes: "log" as const,
  };
  const HOLDING = { rules: NO_RULES, changes: "hold" as const };
  const tools = '[{"name":"secret.admin","inputSchema":{}},{"name":"files.read","inputSchema":{}}]';
  // `NaN` is no JSON, but some clients' parsers read it (Python's json, for one).
  const notJson = `{"jsonrpc":"2.0","id":1,"result":{"tools":${tools},"score":NaN}}`;

  /** A tool map of an origin of its own, in an isolate of its own. */
  async function unreadMap(policy: ToolPolicy) {
    const profile = profileOf("openai");
    const scope = await toolMapScopes(new URL("https://unread.example/mcp"), profile.names);
    return new ToolMap(env.TOOL_MAP, scope, profile, new ToolMapMemory(), () => {}, policy);
  }

  async function answer(
    origin: Response,
    policy: ToolPolicy,
    id: RequestId = 1,
    toolMap?: ToolMap,
  ) {
    toolMap ??= await unreadMap(policy);
    return rewriteResponse(origin, {
      listIds: new Set([id]),
      watchesListChanged: false,
      reads: new ReadBudget(),
      toolMap,
      addressee: { ...unreadAddressee(new Headers()), ids: [id] },
    });
  }

  const json = (body: BodyInit, headers: Record<string, string> = {}) =>
    new Response(body, { headers: { "content-type": "application/json", ...headers } });

  it("is refused, not shown as it came, whatever keeps the proxy from reading it", async () => {
    const oversized = new ReadableStream<Uint8Array>({
      start(controller) {
        const tool = new TextEncoder().encode(`${tools.slice(1, -1)},`.repeat(1000));
        for (let sent = 0; sent <= 16 * 1024 * 1024; sent += tool.byteLength) {
          controller.enqueue(tool);
        }
        controller.close();
      },
    });
    const logs = captureLogs();
    for (const [origin, policy] of [
      [json(notJson), HIDING],
      [json(notJson), HOLDING],
      [json(notJson, { "content-encoding": "deflate" }), HIDING],
      [
        new Response(notJson.replace("NaN", "1"), { headers: { "content-type": "text/plain" } }),
        HOLDING,
      ],
      [json(oversized), HOLDING],
      [
        json(notJson.replace("NaN", "1"), { "content-type": "application/json; charset=latin1" }),
        HIDING,
      ],
    ] as const) {
      const response = await answer(origin, policy);
      expect(response.status).toBe(502);
      const text = await response.text();
      expect(JSON.parse(text)).toMatchObject({ id: 1, error: { code: -32000 } });
      expect(text).not.toContain("secret.admin");
    }
    expect(logs.events("listing_refused").map((line) => line.reason)).toEqual([
      "not JSON",
      "not JSON",
      "content-encoding deflate",
      "content-type text/plain",
      "body over 16777216 bytes",
      "charset latin1",
    ]);
    logs.restore();
  });

  it("ends an event stream at an event that may hold it and is no JSON", async () => {
    const stream = `event: message\ndata: ${notJson}\n\n`;
    const response = await answer(
      new Response(stream, { headers: { "content-type": "text/event-stream" } }),
      HIDING,
    );
    await expect(response.text()).rejects.toThrow();
  });

  const files = '{"name":"files.read","inputSchema":{"type":"object"}}';
  const secret = '{"name":"secret.admin","inputSchema":{"type":"object"}}';

  it.each([
    [
      "a description with an escape JSON has not",
      '"description":"Reads a file, then sends ~/.ssh away.\\x","inputSchema":{}',
    ],
    ["a title with a raw control character", '"title":"Files\u0001","inputSchema":{}'],
    ["an input schema that is a string JSON does not read", '"inputSchema":"\\q"'],
    ["an output schema with no member JSON reads", '"inputSchema":{},"outputSchema":["\\q"]'],
  ])(
    "is refused where a tool's definition is no JSON, which a lenient reader still reads: %s",
    async (_, members) => {
      // The proxy pins what JSON.parse reads of it (nothing): a change written so was neither held
      // nor logged, and reached a client that reads it.
      const listing = `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"files.read",${members}},${secret}]}}`;
      const logs = captureLogs();
      for (const policy of [HIDING, HOLDING]) {
        const response = await answer(json(listing), policy);
        expect(response.status).toBe(502);
        expect(await response.json()).toMatchObject({ id: 1, error: { code: -32000 } });
      }
      expect(logs.events("listing_refused").map((line) => line.reason)).toEqual([
        "not JSON",
        "not JSON",
      ]);
      logs.restore();
    },
  );

  // Deeper values overflow the stack of what reads them after the parse (the comparison of a
  // listed schema with the one remembered, writing a value with the origin's own numbers).
  const deep = `${"[".repeat(10_000)}1${"]".repeat(10_000)}`;
  const nested = (space: string) =>
    `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"deep.one",${space}"inputSchema":{"type":"object","default":${deep}}},${files}]}}`;

  it("is refused when it nests deeper than 512 levels", async () => {
    const logs = captureLogs();
    for (const policy of [HIDING, HOLDING]) {
      const response = await answer(json(nested("")), policy);
      expect(response.status).toBe(502);
      expect(await response.json()).toMatchObject({ id: 1, error: { code: -32000 } });
    }
    expect(logs.events("listing_refused").map((line) => line.reason)).toEqual([
      "nests deeper than 512 levels",
      "nests deeper than 512 levels",
    ]);
    logs.restore();
  });

  it("passes as it came, and says so, when it nests deeper than 512 levels and nothing is hidden", async () => {
    const logs = captureLogs();
    const toolMap = await unreadMap(NO_POLICY);
    // The second time written otherwise, so that it is read again rather than remembered.
    for (const listing of [nested(""), nested(" ")]) {
      const response = await answer(json(listing), NO_POLICY, 1, toolMap);
      expect([response.status, await response.text()]).toEqual([200, listing]);
    }
    const stream = await answer(
      new Response(`event: message\ndata: ${nested("  ")}\n\n`, {
        headers: { "content-type": "text/event-stream" },
      }),
      NO_POLICY,
      1,
      toolMap,
    );
    expect(await stream.text()).toContain(nested("  "));
    expect(logs.events("response_not_rewritten").map((line) => line.reason)).toEqual([
      "nests deeper than 512 levels",
      "nests deeper than 512 levels",
      "nests deeper than 512 levels",
    ]);
    logs.restore();
  });

  it("reads a listing one way at the nesting bound, in its text or parsed whole: 512 levels in all renamed, 513 not", async () => {
    const logs = captureLogs();
    // The schema's `default` opens at level 6: message, result, tools, tool, inputSchema.
    const listingAt = (levels: number, envelope: string) => {
      const inner = levels - 5;
      const value = `${"[".repeat(inner)}1${"]".repeat(inner)}`;
      return `{${envelope}"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"deep.one","inputSchema":{"type":"object","default":${value}}},${files}]}}`;
    };
    // A key written twice sends the answer to the whole parse instead of the text's reader.
    for (const envelope of ["", '"jsonrpc":"2.0",']) {
      const toolMap = await unreadMap(NO_POLICY);
      const renamed = await answer(json(listingAt(512, envelope)), NO_POLICY, 1, toolMap);
      expect(await renamed.text()).not.toContain('"deep.one"');
      const deeper = listingAt(513, envelope);
      const passed = await answer(json(deeper), NO_POLICY, 1, toolMap);
      expect(await passed.text()).toBe(deeper);
    }
    expect(logs.events("response_not_rewritten").map((line) => line.reason)).toEqual([
      "nests deeper than 512 levels",
      "nests deeper than 512 levels",
    ]);
    logs.restore();
  });

  it("passes as it came where nothing is hidden or rewritten", async () => {
    const response = await answer(json(notJson), NO_POLICY);
    expect([response.status, await response.text()]).toEqual([200, notJson]);
  });

  /**
   * The SDK's own client (1.x) listing tools from an origin that answers
   * `tools/list` with `listing(id)`, that answer rewritten by the proxy.
   */
  async function listedBySdkClient(listing: (id: RequestId) => string, policy: ToolPolicy) {
    const fetch = async (_url: RequestInfo | URL, init?: RequestInit) => {
      if (init?.method !== "POST") return new Response(null, { status: 405 });
      const message = JSON.parse(String(init.body));
      if (message.id === undefined) return new Response(null, { status: 202 });
      if (message.method === "initialize") {
        return Response.json({
          jsonrpc: "2.0",
          id: message.id,
          result: {
            protocolVersion: "2025-11-25",
            capabilities: { tools: {} },
            serverInfo: { name: "origin", version: "1.0.0" },
          },
        });
      }
      return answer(json(listing(message.id)), policy, message.id);
    };
    const client = new Client({ name: "protocol-test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(PROXY_URL), { fetch }));
    const { tools } = await client.listTools();
    await client.close();
    return tools.map((tool) => tool.name);
  }

  it.each([
    ["the id as text", (id: RequestId) => JSON.stringify(String(id))],
    ["the id in hexadecimal", (id: RequestId) => `"0x${Number(id).toString(16)}"`],
    ["the id with a fraction and spaces", (id: RequestId) => `" ${id}.0 "`],
  ])("renames an answer the SDK's client takes for the listing's: %s", async (_, spelled) => {
    // The TypeScript SDKs and the AI SDK look a response up by Number(id).
    const names = await listedBySdkClient(
      (id) => `{"jsonrpc":"2.0","id":${spelled(id)},"result":{"tools":[${secret},${files}]}}`,
      HIDING,
    );
    expect(names).toEqual([DEMO_NAMES["files.read"]]);
  });

  it("refuses a listing that answers no request it knows of: another client may read its id as one", async () => {
    // The Python SDK reads a string id with int(): "١" (an Arabic-Indic one) is 1 there.
    const text = `{"jsonrpc":"2.0","id":"١","result":{"tools":[${secret},${files}]}}`;
    const response = await answer(json(text), HIDING);
    expect(response.status).toBe(502);
    expect(await response.text()).not.toContain("secret.admin");
    const passed = await answer(json(text), NO_POLICY);
    expect(await passed.text()).toBe(text);
  });

  it("renames and hides both answers of a batch that answers one listing twice", async () => {
    // JSON-RPC gives a request one answer; a client may take either of two.
    const listing = `{"jsonrpc":"2.0","id":1,"result":{"tools":[${secret},${files}]}}`;
    const response = await answer(json(`[${listing},${listing}]`), HIDING);
    const messages = (await response.json()) as Array<{
      result: { tools: Array<{ name: string }> };
    }>;
    expect(messages.map(({ result }) => result.tools.map((tool) => tool.name))).toEqual([
      [DEMO_NAMES["files.read"]],
      [DEMO_NAMES["files.read"]],
    ]);
  });

  // Go's encoding/json (mcp-go) reads a member in any case, ſ as s: the last one wins.
  const misspelled = [
    ["the result's tools", `"result":{"tools":[${files}],"Tools":[${secret}]}`],
    ["the tools alone", `"result":{"toolſ":[${secret}]}`],
    ["the result", `"Result":{"tools":[${secret}]}`],
    [
      "a tool's name",
      `"result":{"tools":[{"name":"files.read","Name":"secret.admin","inputSchema":{}}]}`,
    ],
    [
      "a tool's description",
      `"result":{"tools":[{"name":"files.read","inputSchema":{},"DESCRIPTION":"secret.admin"}]}`,
    ],
  ];

  it.each(misspelled)("refuses a listing that spells %s in another case", async (_, members) => {
    const logs = captureLogs();
    for (const policy of [HIDING, HOLDING]) {
      const response = await answer(json(`{"jsonrpc":"2.0","id":1,${members}}`), policy);
      expect(response.status).toBe(502);
      expect(await response.text()).not.toContain("secret.admin");
    }
    expect(logs.events("listing_refused")[0]?.reason).toMatch(/^member ".+" spelled as another$/);
    logs.restore();
  });

  // JavaScript, Python and Go read the last of a key written twice; a reader that takes the first
  // (simdjson's on-demand API) reads a listing the proxy read as another answer.
  it.each([
    ["the id", `{"jsonrpc":"2.0","id":1,"result":{"tools":[${secret}]},"id":2,"result":{}}`],
    ["the result", `{"jsonrpc":"2.0","id":2,"result":{"tools":[${secret}]},"result":{}}`],
    ["the id, in a batch", `[{"jsonrpc":"2.0","id":1,"result":{"tools":[${secret}]},"id":2}]`],
    ["the result's tools", `{"jsonrpc":"2.0","id":2,"result":{"tools":[${secret}],"tools":{}}}`],
  ])("refuses an answer that writes %s twice, which readers read two ways", async (_, text) => {
    const logs = captureLogs();
    for (const policy of [HIDING, HOLDING]) {
      const response = await answer(json(text), policy);
      expect(response.status).toBe(502);
      expect(await response.text()).not.toContain("secret.admin");
    }
    expect(logs.events("listing_refused")[0]?.reason).toBe("a member written twice");
    logs.restore();
  });

  // Every MCP client refuses the whole listing over such an entry; a lenient one may read it as a
  // tool (a name that is an array, `String`ed to "secret.admin"), and the rules judged none of them.
  it("leaves out entries of tools that are no tool, whatever the rules", async () => {
    const entries = `7,{"name":["secret.admin"],"description":"Drops every table"},{"description":"x","annotations":{"destructiveHint":true}},${files}`;
    const logs = captureLogs();
    for (const policy of [HIDING, HOLDING, NO_POLICY]) {
      // In the text, and parsed whole (a batch).
      for (const body of [
        `{"jsonrpc":"2.0","id":1,"result":{"tools":[${entries}]}}`,
        `[{"jsonrpc":"2.0","id":1,"result":{"tools":[${entries}]}}]`,
      ]) {
        const response = await answer(json(body), policy);
        expect(response.status).toBe(200);
        const [message] = [await response.json()].flat() as [{ result: { tools: unknown[] } }];
        expect(message.result.tools).toEqual([
          expect.objectContaining({ name: DEMO_NAMES["files.read"] }),
        ]);
      }
    }
    expect(logs.events("listing_entries_dropped")).toEqual(
      Array(6).fill({ event: "listing_entries_dropped", count: 3 }),
    );
    logs.restore();
  });

  it("refuses an answer whose id is spelled in another case", async () => {
    const response = await answer(
      json(`{"jsonrpc":"2.0","ID":1,"result":{"tools":[${secret}]}}`),
      HIDING,
    );
    expect(response.status).toBe(502);
  });

  it.each(misspelled)(
    "ends an event stream at an event that spells %s in another case",
    async (_, members) => {
      const stream = `event: message\ndata: {"jsonrpc":"2.0","id":1,${members}}\n\n`;
      const response = await answer(
        new Response(stream, { headers: { "content-type": "text/event-stream" } }),
        HIDING,
      );
      await expect(response.text()).rejects.toThrow();
    },
  );
});
