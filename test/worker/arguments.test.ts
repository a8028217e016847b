/** Argument repair through the proxy, against the real demo origin (docs/arguments.md). */
import { afterEach, describe, expect, it, vi } from "vitest";
import { createApp } from "../../src/app";
import { demoSession } from "../helpers/demo";
import { DEMO_NAMES } from "../helpers/demo-names";
import { captureLogs } from "../helpers/logs";
import { messagesOf, openSession, postJson, rpc } from "../helpers/mcp";
import {
  freshOrigin,
  GATEWAY_ORIGIN,
  PROXY_URL,
  receivedByOrigin,
  viaProxy,
} from "../helpers/proxy";

interface ToolResult {
  structuredContent?: { tool: string; arguments: Record<string, unknown> };
  isError?: boolean;
  content: { type: string; text: string }[];
}

async function setUp(vars: Record<string, string> = {}) {
  const { proxy, session, received } = await demoSession({ vars });
  await messagesOf(await postJson(proxy, PROXY_URL, rpc("list", "tools/list"), session));

  async function call(params: Record<string, unknown>, headers: Record<string, string> = {}) {
    const response = await postJson(proxy, PROXY_URL, rpc("call", "tools/call", params), {
      ...session,
      ...headers,
    });
    const [message] = await messagesOf(response);
    return message as {
      id: string;
      result?: ToolResult;
      error?: { code: number; message: string };
    };
  }

  async function callsReceived() {
    return (await received())
      .filter((request) => request.body.includes('"tools/call"'))
      .map((request) => ({ headers: request.headers, body: JSON.parse(request.body) }));
  }

  return { call, callsReceived, received, proxy, session };
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("repairs that make the call work", () => {
  it("payload-json becomes payload_json, with its object", async () => {
    const { call, callsReceived } = await setUp();
    const { result } = await call({
      name: DEMO_NAMES["catering.invoice"],
      arguments: { "payload-json": { invoice_id: "INV-1042", amount: 19.5 } },
    });
    expect(result?.isError).toBeUndefined();
    expect(result?.structuredContent?.arguments).toEqual({
      payload_json: { invoice_id: "INV-1042", amount: 19.5 },
    });
    const [received] = await callsReceived();
    expect(received?.body.params).toEqual({
      name: "catering.invoice",
      arguments: { payload_json: { invoice_id: "INV-1042", amount: 19.5 } },
    });
  });

  it("an object sent as a JSON string arrives as the object", async () => {
    const { call } = await setUp();
    const { result } = await call({
      name: DEMO_NAMES["catering.invoice"],
      arguments: { payloadJson: '{"invoice_id":"INV-7","amount":"12.5"}' },
    });
    expect(result?.structuredContent?.arguments).toEqual({
      payload_json: { invoice_id: "INV-7", amount: 12.5 },
    });
  });

  it("`args` written as JSON text of the arguments, as a model writes `arguments` so, arrives as `arguments`", async () => {
    const { call, callsReceived } = await setUp();
    const { result } = await call({
      name: DEMO_NAMES["files.read"],
      args: '{"path":"src/main.ts"}',
    });
    expect(result?.isError).toBeUndefined();
    const [received] = await callsReceived();
    expect(received?.body.params).toEqual({
      name: "files.read",
      arguments: { path: "src/main.ts" },
    });
  });

  it("JSON text of the arguments that writes a key twice reaches the origin with the last, once", async () => {
    const { call, received } = await setUp();
    const { result } = await call({
      name: DEMO_NAMES["files.read"],
      arguments: '{"path":"a.ts","path":"b.ts"}',
    });
    expect(result?.isError).toBeUndefined();
    const calls = (await received()).filter((request) => request.body.includes('"tools/call"'));
    expect(calls.at(-1)?.body).toContain('"arguments":{"path":"b.ts"}}');
  });

  // The proxy reads no JSON nested deeper than a request body may be: a deeper value would
  // overflow the stack of what reads it after the parse, here and at the origin.
  it("JSON text nested deeper than 512 levels is not unpacked from a string", async () => {
    const { call, callsReceived } = await setUp();
    const deep = `${'{"a":'.repeat(600)}1${"}".repeat(600)}`;
    const inline = await call({
      name: DEMO_NAMES["catering.invoice"],
      arguments: `{"payload_json":${deep}}`,
    });
    expect(inline.error).toMatchObject({ code: -32602 });
    expect(inline.error?.message).toContain("nested deeper than 512 levels");
    const field = await call({
      name: DEMO_NAMES["catering.invoice"],
      arguments: { payload_json: deep },
    });
    expect(field.result?.isError).toBe(true);
    const received = await callsReceived();
    expect(received.map((call) => call.body.params.arguments)).toEqual([{ payload_json: deep }]);
  });

  it("fields sent inline next to an empty `arguments` arrive as the arguments", async () => {
    const { call, callsReceived } = await setUp();
    const { result } = await call({
      name: DEMO_NAMES["files.read"],
      arguments: {},
      path: "src/main.ts",
    });
    expect(result?.structuredContent?.arguments).toEqual({ path: "src/main.ts" });
    const [received] = await callsReceived();
    expect(received?.body.params).toEqual({
      name: "files.read",
      arguments: { path: "src/main.ts" },
    });
  });

  it("an empty string for `arguments`, as some models send for a tool without any, arrives as `{}`", async () => {
    const { call, callsReceived } = await setUp();
    const { result, error } = await call({ name: DEMO_NAMES["unity/health"], arguments: "" });
    expect(error).toBeUndefined();
    expect(result?.isError).toBeUndefined();
    // Beside it, fields sent inline are the arguments, as beside a `null` or `{}`.
    await call({ name: DEMO_NAMES["files.read"], arguments: " ", path: "src/main.ts" });
    expect((await callsReceived()).map((received) => received.body.params)).toEqual([
      { name: "unity/health", arguments: {} },
      { name: "files.read", arguments: { path: "src/main.ts" } },
    ]);
  });

  it('max_bytes "512" arrives as 512', async () => {
    const { call } = await setUp();
    const { result } = await call({
      name: DEMO_NAMES["files.read"],
      arguments: { path: "a.txt", max_bytes: "512" },
    });
    expect(result?.isError).toBeUndefined();
    expect(result?.structuredContent?.arguments).toEqual({ path: "a.txt", max_bytes: 512 });
  });

  it("keeps the envelope: _meta reaches the origin, outside the arguments", async () => {
    const { call, callsReceived } = await setUp();
    await call({
      name: DEMO_NAMES["files.read"],
      _meta: { progressToken: "p-9" },
      path: "x",
      maxBytes: "3",
    });
    const [received] = await callsReceived();
    expect(received?.body.params).toEqual({
      name: "files.read",
      _meta: { progressToken: "p-9" },
      arguments: { path: "x", max_bytes: 3 },
    });
  });

  it("re-derives Mcp-Param-* from the repaired arguments (protocol 2026-07-28)", async () => {
    const { call, callsReceived } = await setUp();
    await call(
      { name: "get-weather", arguments: { City: "Zürich" } },
      { "mcp-method": "tools/call", "mcp-name": "get-weather", "mcp-param-stale": "x" },
    );
    const [received] = await callsReceived();
    expect(received?.body.params.arguments).toEqual({ city: "Zürich" });
    expect(received?.headers["mcp-param-city"]).toBe("=?base64?WsO8cmljaA==?=");
    expect(received?.headers).not.toHaveProperty("mcp-param-stale");
    expect(received?.headers["mcp-name"]).toBe("get-weather");
  });

  it("leaves the headers of a call without a name as the client sent them", async () => {
    const { call, callsReceived } = await setUp();
    await call({ arguments: { a: 1 } }, { "mcp-method": "tools/call", "mcp-name": "as-sent" });
    const [received] = await callsReceived();
    expect(received?.headers["mcp-name"]).toBe("as-sent");
    expect(received?.body.params).toEqual({ arguments: { a: 1 } });
  });

  it("only recovers the envelope of a tool the origin does not list", async () => {
    const { call, callsReceived } = await setUp();
    await call({ name: "not_listed", arguments: {}, count: "5" });
    const [received] = await callsReceived();
    expect(received?.body.params).toEqual({ name: "not_listed", arguments: { count: "5" } });
  });
});

describe("calls the proxy answers itself", () => {
  it.each([
    ["`arguments` as an array", { arguments: [1, 2] }, "arguments", "array"],
    ["`arguments` as a number", { arguments: 4.5 }, "arguments", "number"],
    ["`arguments` as an integer", { arguments: 42 }, "arguments", "integer"],
    ["`arguments` as a boolean", { arguments: true }, "arguments", "boolean"],
    [
      "`arguments` as text that is no JSON object",
      { arguments: "path=SECRET" },
      "arguments",
      "text_not_json_object",
    ],
    [
      "`arguments` as JSON text of an array",
      { arguments: '["SECRET"]' },
      "arguments",
      "text_not_json_object",
    ],
    [
      "`arguments` as JSON text nested too deep",
      { arguments: `${"[".repeat(600)}${"]".repeat(600)}` },
      "arguments",
      "text_nested_too_deep",
    ],
    ["`args` as a number, nothing inline", { args: 7 }, "args", "integer"],
    ["`args` as text", { args: "SECRET" }, "args", "text_not_json_object"],
    // Empty, for a tool whose schema requires arguments: what it was meant to hold is not known.
    ["`arguments` as an empty string", { arguments: "" }, "arguments", "text_not_json_object"],
  ])(
    "%s: -32602 with the request id, origin not called, the line says what was malformed",
    async (_, params, member, malformed) => {
      const { call, callsReceived } = await setUp();
      const logs = captureLogs();
      const message = await call({ name: DEMO_NAMES["files.read"], ...params });
      expect(message).toMatchObject({ id: "call", error: { code: -32602 } });
      expect(message.error?.message).toContain(`\`${member}\` must be an object`);
      // What the client was told, as a code a query can count: never the value.
      expect(logs.events("tool_call_refused")).toEqual([
        {
          event: "tool_call_refused",
          "mcp.method.name": "tools/call",
          "gen_ai.tool.name": "files.read",
          name: DEMO_NAMES["files.read"],
          reason: "malformed_arguments",
          member,
          malformed,
          "error.type": "-32602",
        },
      ]);
      expect(JSON.stringify(logs.lines())).not.toContain("SECRET");
      logs.restore();
      expect(await callsReceived()).toEqual([]);
    },
  );

  it("enforce: a call missing a required field gets isError naming it; the origin sees nothing", async () => {
    const { call, callsReceived } = await setUp({ ARGUMENT_VALIDATION: "enforce" });
    const logs = captureLogs();
    const { result } = await call({
      name: DEMO_NAMES["files.read"],
      arguments: { pth: "src/main.ts" },
    });
    expect(result?.isError).toBe(true);
    const text = result?.content[0]?.text ?? "";
    // Named as the model's listing named it, the name it is to call again, not the origin's.
    expect(text).toMatch(
      /^Invalid arguments for tool `files_read_yqgun6`; the tool was not called/,
    );
    expect(text).toContain("missing required field `path`");
    expect(text).toContain("Keys received: `pth`.");
    expect(text).toContain("Unknown key `pth`: did you mean `path`?");
    // Called by another spelling (the origin's own name, read against the caller's listing).
    const respelled = await call({ name: "files.read", arguments: { pth: "src/main.ts" } });
    expect(respelled.result?.content[0]?.text).toMatch(
      /^Invalid arguments for tool `files_read_yqgun6`;/,
    );
    expect(await callsReceived()).toEqual([]);
    // The line says the call went no further, as its data point does: under `warn` the same
    // line stands for a call the origin answered.
    expect(logs.events("tool_call_repaired")).toMatchObject([
      { validation: "invalid", outcome: "invalid_arguments" },
      { validation: "invalid", outcome: "invalid_arguments", nameRead: "original" },
    ]);
    logs.restore();
  });

  it("enforce, relay mode: answers locally only a caller the origin has shown its tools to", async () => {
    const trace = crypto.randomUUID();
    const proxy = viaProxy(
      {
        ORIGIN_URL: freshOrigin(`${GATEWAY_ORIGIN}/auth`, `&trace=${trace}`),
        ARGUMENT_VALIDATION: "enforce",
      },
      { app: createApp() },
    );
    const signedIn = { authorization: "Bearer demo-token" };
    const session = await openSession(proxy, PROXY_URL, signedIn);
    const invalid = rpc("call", "tools/call", {
      name: DEMO_NAMES["files.read"],
      arguments: { pth: "x" },
    });

    await messagesOf(await postJson(proxy, PROXY_URL, rpc("list", "tools/list"), session));

    // A caller without a token learns nothing from the proxy: the origin's 401, not the schema.
    const { authorization: _, ...anonymous } = session;
    const refused = await postJson(proxy, PROXY_URL, invalid, anonymous);
    expect(refused.status).toBe(401);
    expect(await refused.text()).not.toContain("Declared arguments");
    const forged = await postJson(proxy, PROXY_URL, invalid, {
      ...session,
      authorization: "Bearer guessed",
    });
    expect(forged.status).toBe(401);
    await forged.body?.cancel();

    // The caller the origin listed for gets the proxy's own answer, and the origin sees nothing.
    const before = (await receivedByOrigin(trace)).length;
    const local = await postJson(proxy, PROXY_URL, invalid, session);
    const [answer] = (await messagesOf(local)) as Array<{ result: ToolResult }>;
    expect(answer?.result.content[0]?.text).toContain("Unknown key `pth`: did you mean `path`?");
    expect(await receivedByOrigin(trace)).toHaveLength(before);
  });

  it("enforce: a call that repair made valid goes through", async () => {
    const { call } = await setUp({ ARGUMENT_VALIDATION: "enforce" });
    const { result } = await call({
      name: DEMO_NAMES["files.read"],
      arguments: { Path: "a", maxBytes: "9" },
    });
    expect(result?.structuredContent?.arguments).toEqual({ path: "a", max_bytes: 9 });
  });

  it("enforce: an enum member written in another case reaches the origin as the member", async () => {
    const { call } = await setUp({ ARGUMENT_VALIDATION: "enforce" });
    const logs = captureLogs();
    const { result } = await call({
      name: DEMO_NAMES["get-weather"],
      arguments: { city: "Oslo", Units: "Imperial" },
    });
    expect(result?.isError).toBeUndefined();
    expect(result?.structuredContent?.arguments).toEqual({ city: "Oslo", units: "imperial" });
    // Counted by path, as a coercion is; never the value.
    expect(logs.events("tool_call_repaired")).toMatchObject([
      { renamedKeys: [{ from: "Units", to: "units" }], enumCased: ["units"], validation: "valid" },
    ]);
    expect(JSON.stringify(logs.lines())).not.toContain("Imperial");
    logs.restore();
  });

  it("warn (default): an invalid call is logged and forwarded for the origin to answer", async () => {
    const log = vi.spyOn(console, "log");
    const { call, callsReceived } = await setUp();
    const { result } = await call({
      name: DEMO_NAMES["files.read"],
      arguments: { pth: "secret-value" },
    });
    expect(result?.isError).toBe(true);
    expect(result?.content[0]?.text).toContain("Invalid arguments for tool files.read");
    expect(await callsReceived()).toHaveLength(1);
    const lines = log.mock.calls
      .map(([line]) => String(line))
      .filter((line) => line.includes("tool_call_repaired"));
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0] ?? "{}")).toMatchObject({
      "gen_ai.tool.name": "files.read",
      validation: "invalid",
      // Which key is missing, from the schema: the object's location alone does not say.
      issues: [{ location: "#", keyword: "required", missing: "path" }],
    });
    expect(JSON.parse(lines[0] ?? "{}")).not.toHaveProperty("outcome");
    expect(lines[0]).not.toContain("secret-value");
  });

  it("in a batch, answers the bad call itself and forwards the rest, merging the answers", async () => {
    const { proxy, session, callsReceived } = await setUp({ ARGUMENT_VALIDATION: "enforce" });
    const response = await postJson(
      proxy,
      PROXY_URL,
      [
        rpc("bad", "tools/call", { name: DEMO_NAMES["files.read"], arguments: [] }),
        rpc("good", "tools/call", { name: DEMO_NAMES["files.read"], arguments: { path: "a" } }),
        rpc("invalid", "tools/call", { name: DEMO_NAMES["files.read"], arguments: {} }),
      ],
      session,
    );
    const messages = await messagesOf(response);
    const byId = Object.fromEntries(messages.map((message) => [message.id, message]));
    expect(byId.bad).toMatchObject({ error: { code: -32602 } });
    expect(byId.invalid).toMatchObject({ result: { isError: true } });
    expect(byId.good).toMatchObject({ result: { structuredContent: { tool: "files.read" } } });
    const received = await callsReceived();
    expect(received.map((r) => r.body)).toEqual([
      [
        {
          jsonrpc: "2.0",
          id: "good",
          method: "tools/call",
          params: { name: "files.read", arguments: { path: "a" } },
        },
      ],
    ]);
  });
});

describe("the log line", () => {
  it("says what was repaired, and never the argument values", async () => {
    const log = vi.spyOn(console, "log");
    const { call } = await setUp();
    await call({
      name: DEMO_NAMES["catering.invoice"],
      arguments: { "payload-json": '{"invoice_id":"SECRET-INVOICE"}', invoice_id: null },
    });
    const line = log.mock.calls
      .map(([l]) => String(l))
      .find((l) => l.includes("tool_call_repaired"));
    expect(JSON.parse(line ?? "{}")).toEqual({
      event: "tool_call_repaired",
      "mcp.method.name": "tools/call",
      "gen_ai.tool.name": "catering.invoice",
      name: DEMO_NAMES["catering.invoice"],
      renamed: true,
      source: "memory",
      recovery: "as_sent",
      renamedKeys: [{ from: "payload-json", to: "payload_json" }],
      coercions: [{ path: "payload_json", from: "string", to: "object" }],
      dropped: ["invoice_id"],
      validation: "valid",
    });
    expect(line).not.toContain("SECRET");
  });

  it("stays within 16 KiB, however many keys the call's arguments hold", async () => {
    const log = vi.spyOn(console, "log");
    const { call } = await setUp();
    // reports.query reads `filters` as strings: each `null` under a long key (which repair makes
    // no string: a map's key is data, its value kept) is an issue of the line, which was 19 KB
    // for this call, and a batch of them passed the 256 KB of an invocation's lines that Workers
    // Logs keeps.
    const filters = Object.fromEntries(
      Array.from({ length: 1_000 }, (_, i) => [`${"k".repeat(300)}_${i}`, null]),
    );
    await call({ name: DEMO_NAMES["reports.query"], arguments: { limit: 5, filters } });
    const lines = log.mock.calls
      .map(([line]) => String(line))
      .filter((line) => line.includes('"tool_call_repaired"'));
    expect(lines).toHaveLength(1);
    const [line = ""] = lines;
    expect(line.length).toBeLessThanOrEqual(16 * 1024);
    // Its fields all there, the list of issues cut, saying how much it left out.
    const logged = JSON.parse(line);
    expect(logged).toMatchObject({ "gen_ai.tool.name": "reports.query", validation: "invalid" });
    expect(logged.issues[0]).toEqual({ location: "#/filters", keyword: "additionalProperties" });
    expect(logged.issues.at(-1)).toMatch(/^… \(\d+ more\)$/);
  });
});
