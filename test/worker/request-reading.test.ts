/**
 * One reading of a request (SECURITY.md, One reading of every request): its
 * 2026-07-28 headers beside its body, as the proxy and the origin both read
 * them, or a refusal before the origin is called.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { demoSession } from "../helpers/demo";
import { ENVELOPE_2026, messagesOf, postJson, rpc, wireRequest } from "../helpers/mcp";
import {
  freshOrigin,
  GATEWAY_ORIGIN,
  HEADER_ORIGIN,
  PROXY_URL,
  receivedByOrigin,
  viaProxy,
} from "../helpers/proxy";

/** The `mcp` profile's URL, where the origin's tools keep their names. */
const MCP_URL = `${PROXY_URL}/mcp`;

const withoutMethod = (header: string) =>
  `Header mismatch: the ${header} header comes without Mcp-Method, which every request that mirrors its body in headers carries (protocol 2026-07-28)`;

describe("Mcp-Name and Mcp-Param-* without Mcp-Method", () => {
  // The SDK 2.x origin (test/fixtures/node/header-origin.ts) records the Mcp-Param-* headers of
  // every call that reaches it, per trace, before it judges the call.
  async function headerOrigin() {
    const trace = crypto.randomUUID();
    const url = new URL(HEADER_ORIGIN);
    url.searchParams.set("trace", trace);
    const proxy = viaProxy({ ORIGIN_URL: url.href }, { app: createApp() });
    const list = wireRequest("2026-07-28", "list", "tools/list");
    await messagesOf(await postJson(proxy, MCP_URL, list.body, list.headers));
    const reached = async () =>
      (await (
        await fetch(new URL(`/__received?trace=${trace}`, HEADER_ORIGIN))
      ).json()) as unknown[];
    return { proxy, reached };
  }

  it.each([
    ["Mcp-Param-*", { "mcp-param-region": "us-east" }],
    ["Mcp-Name", { "mcp-name": "header.string" }],
    ["Mcp-Name", { "mcp-name": "header.string", "mcp-param-region": "us-east" }],
  ])(
    "are refused -32020 as the SDK's server refuses them, the origin not called: %s",
    async (header, sent) => {
      // The proxy coalesces `Region` to `region`: the body it would forward says eu-west, the
      // header a gateway before it read says us-east.
      const { proxy, reached } = await headerOrigin();
      const response = await postJson(
        proxy,
        MCP_URL,
        rpc(7, "tools/call", {
          name: "header.string",
          arguments: { Region: "eu-west" },
          _meta: ENVELOPE_2026,
        }),
        { "mcp-protocol-version": "2026-07-28", ...sent },
      );
      expect(response.status).toBe(400);
      expect(await response.json()).toEqual({
        jsonrpc: "2.0",
        id: 7,
        error: { code: -32020, message: withoutMethod(header) },
      });
      expect(await reached()).toEqual([]);
    },
  );

  it("are refused in a 2025-11-25 session too, where no client sends them: the origin not called", async () => {
    // An origin of that revision ignores them; a gateway before the proxy may not, and the body
    // the proxy forwards (`city` for `City`) is not the one such a header was written from.
    const { proxy, session, received } = await demoSession();
    await messagesOf(await postJson(proxy, PROXY_URL, rpc("list", "tools/list"), session));
    const calls = async () =>
      (await received()).filter((r) => r.body.includes('"tools/call"')).length;
    const before = await calls();
    const call = rpc(8, "tools/call", { name: "get-weather", arguments: { City: "Zürich" } });
    for (const [header, sent] of [
      ["Mcp-Param-*", { "mcp-param-city": "Oslo" }],
      ["Mcp-Name", { "mcp-name": "get-weather" }],
    ] as const) {
      const response = await postJson(proxy, PROXY_URL, call, { ...session, ...sent });
      expect(response.status, header).toBe(400);
      expect(await response.json()).toEqual({
        jsonrpc: "2.0",
        id: 8,
        error: { code: -32020, message: withoutMethod(header) },
      });
    }
    expect(await calls()).toBe(before);
  });

  it("beside a response are no request's: it reaches the origin as sent, a `method` of another type in it too", async () => {
    // JSON-RPC's response to a request of the origin's, as the proxy reads it everywhere else
    // (jsonrpc.ts isRequest): a `method` that is no string makes no request of it. The origin
    // judges such a message itself (the SDK's server takes none of another type).
    const { proxy, session, received } = await demoSession();
    for (const response of [
      '{"jsonrpc":"2.0","id":"elicit-1","result":{}}',
      '{"jsonrpc":"2.0","id":"elicit-2","result":{},"method":1}',
    ]) {
      const answer = await postJson(proxy, PROXY_URL, response, {
        ...session,
        "mcp-name": "get-weather",
      });
      expect(await answer.text(), response).not.toContain("-32020");
      expect((await received()).map((r) => r.body)).toContain(response);
    }
  });

  it("pass with Mcp-Method, brought in line with the call the proxy forwards", async () => {
    const { proxy, reached } = await headerOrigin();
    const { body, headers } = wireRequest("2026-07-28", 9, "tools/call", {
      name: "header.string",
      arguments: { Region: "eu-west" },
    });
    const [answer] = await messagesOf(
      await postJson(proxy, MCP_URL, body, { ...headers, "mcp-param-region": "eu-west" }),
    );
    expect(answer).toMatchObject({
      id: 9,
      result: { structuredContent: { arguments: { region: "eu-west" } } },
    });
    expect(await reached()).toEqual([{ "mcp-param-region": "eu-west" }]);
  });
});

/** The proxy's `-32602` for a member a lenient reader takes for one it reads (docs/errors.md). */
const misspelled = (written: string, member: string, where = "params write") =>
  `Invalid params: ${where} the key ${JSON.stringify(written)}, which lenient readers take for ${JSON.stringify(member)}; write it as MCP does, or leave it out`;

const ENVELOPE = JSON.stringify(ENVELOPE_2026);

describe("a member of params the proxy reads, in a spelling Go's encoding/json takes for it", () => {
  // mcp-go and the Go SDK read `_Meta` as `_meta`, `Cursor` as `cursor`: the proxy read none, and
  // held no revision claim to the MCP-Protocol-Version header, or took a later page for a first.
  function behindGateway() {
    const trace = crypto.randomUUID();
    const proxy = viaProxy(
      { ORIGIN_URL: freshOrigin(GATEWAY_ORIGIN, `&trace=${trace}`) },
      { app: createApp() },
    );
    return { proxy, received: () => receivedByOrigin(trace) };
  }
  const headersOf = (method: string) => ({
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": method,
  });

  it.each([
    [
      "tools/list's _Meta",
      "tools/list",
      `{"_Meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25"}}`,
      misspelled("_Meta", "_meta"),
    ],
    [
      "tools/list's Cursor",
      "tools/list",
      `{"Cursor":"2","_meta":${ENVELOPE}}`,
      misspelled("Cursor", "cursor"),
    ],
    [
      "prompts/get's Name",
      "prompts/get",
      `{"Name":"greeting","_meta":${ENVELOPE}}`,
      misspelled("Name", "name"),
    ],
    [
      "resources/read's URI",
      "resources/read",
      `{"URI":"demo://a","_meta":${ENVELOPE}}`,
      misspelled("URI", "uri"),
    ],
    [
      "tasks/get's taſkId",
      "tasks/get",
      `{"taſkId":"t-1","_meta":${ENVELOPE}}`,
      misspelled("taſkId", "taskId"),
    ],
    [
      "a revision claim in another case",
      "ping",
      `{"_meta":{"IO.modelcontextprotocol/protocolVersion":"2025-11-25"}}`,
      misspelled(
        "IO.modelcontextprotocol/protocolVersion",
        "io.modelcontextprotocol/protocolVersion",
        "params._meta writes",
      ),
    ],
    // A call's members beside its arguments are the call's (docs/arguments.md); its `_meta` is read here.
    [
      "a call's capabilities in another case",
      "tools/call",
      `{"name":"get-weather","arguments":{"city":"Oslo"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientcapabilities":{"tasks":{}}}}`,
      misspelled(
        "io.modelcontextprotocol/clientcapabilities",
        "io.modelcontextprotocol/clientCapabilities",
        "params._meta writes",
      ),
    ],
  ])("%s: refused -32602, the origin not called", async (_, method, params, message) => {
    const { proxy, received } = behindGateway();
    const body = `{"jsonrpc":"2.0","id":"r-1","method":"${method}","params":${params}}`;
    const response = await postJson(proxy, MCP_URL, body, headersOf(method));
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      jsonrpc: "2.0",
      id: "r-1",
      error: { code: -32602, message },
    });
    expect(await received()).toEqual([]);
  });

  // A call's `name`, and beside arguments that hold the arguments its envelope's members
  // (docs/arguments.md): Go's encoding/json reads `Name` as the tool, `TASK` as a task.
  it.each([
    [
      "a call's _Meta beside its arguments",
      `{"name":"get-weather","arguments":{"city":"Oslo"},"_Meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25"}}`,
      misspelled("_Meta", "_meta"),
    ],
    [
      "a call's TASK beside arguments sent as JSON text",
      `{"name":"get-weather","arguments":"{\\"city\\":\\"Oslo\\"}","TASK":{"ttl":60000},"_meta":${ENVELOPE}}`,
      misspelled("TASK", "task"),
    ],
    [
      "a call's Name, with no name",
      `{"Name":"get-weather","arguments":{"city":"Oslo"},"_meta":${ENVELOPE}}`,
      misspelled("Name", "name"),
    ],
    [
      "a call's nAME, with no name and its arguments inline",
      `{"nAME":"get-weather","city":"Oslo","_meta":${ENVELOPE}}`,
      misspelled("nAME", "name"),
    ],
  ])(
    "%s: refused 400 -32602 as any message's, the origin not called",
    async (_, params, message) => {
      const { proxy, received } = behindGateway();
      const body = `{"jsonrpc":"2.0","id":"c-1","method":"tools/call","params":${params}}`;
      const response = await postJson(proxy, MCP_URL, body, headersOf("tools/call"));
      expect(response.status).toBe(400);
      expect(await response.json()).toEqual({
        jsonrpc: "2.0",
        id: "c-1",
        error: { code: -32602, message },
      });
      expect(await received()).toEqual([]);
    },
  );

  it("a call's, as the SDK's client sends it: the client's request fails with HTTP 400 naming the key", async () => {
    const { proxy, received } = await demoSession();
    const client = new Client(
      { name: "request-reading", version: "1.0.0" },
      { jsonSchemaValidator: new CfWorkerJsonSchemaValidator() },
    );
    await client.connect(new StreamableHTTPClientTransport(new URL(PROXY_URL), { fetch: proxy }));
    try {
      const before = (await received()).length;
      const params = { name: "get-weather", arguments: { city: "Oslo" }, Task: { ttl: 60000 } };
      const call = client.request({ method: "tools/call", params }, CallToolResultSchema);
      await expect(call).rejects.toMatchObject({
        code: 400,
        message: expect.stringContaining(
          JSON.stringify({ code: -32602, message: misspelled("Task", "task") }),
        ),
      });
      expect((await received()).length).toBe(before);
    } finally {
      await client.close();
    }
  });

  it("but beside arguments written inline, such a member is one of them: forwarded inside arguments", async () => {
    const { proxy, received } = behindGateway();
    const { body, headers } = wireRequest("2026-07-28", "c-2", "tools/call", {
      name: "get-weather",
      city: "Oslo",
      Task: "x",
    });
    const [answer] = await messagesOf(await postJson(proxy, MCP_URL, body, headers));
    expect(answer).toHaveProperty("result");
    const calls = (await received()).filter((r) => r.body.includes('"tools/call"'));
    expect(calls.map((r) => JSON.parse(r.body).params.arguments)).toEqual([
      { city: "Oslo", Task: "x" },
    ]);
  });

  it("a notification: refused 400 without an id, as the revision writes an error to no request", async () => {
    const { proxy, received } = behindGateway();
    const body = `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"_Meta":${ENVELOPE}}}`;
    const response = await postJson(proxy, MCP_URL, body, headersOf("notifications/cancelled"));
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      jsonrpc: "2.0",
      error: { code: -32602, message: misspelled("_Meta", "_meta") },
    });
    expect(await received()).toEqual([]);
  });

  it("a batch element (2025-03-26): each request of the batch refused, none sent on", async () => {
    const { proxy, session, received } = await demoSession();
    const before = (await received()).length;
    const response = await postJson(
      proxy,
      PROXY_URL,
      [rpc("p", "ping"), rpc("l", "tools/list", { CURSOR: "2" })],
      session,
    );
    expect(response.status).toBe(400);
    const message = misspelled("CURSOR", "cursor", "batch element 1: params write");
    expect(await response.json()).toEqual([
      { jsonrpc: "2.0", id: "p", error: { code: -32602, message } },
      { jsonrpc: "2.0", id: "l", error: { code: -32602, message } },
    ]);
    expect((await received()).length).toBe(before);
  });

  it("but members the proxy does not read pass as the client wrote them, whatever their case", async () => {
    const { proxy, received } = behindGateway();
    const body = `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"Vendor/Trace":"x"},"Vendor":1,"_metadata":{},"cursors":null}}`;
    const response = await postJson(proxy, MCP_URL, body, headersOf("tools/list"));
    expect(response.status).toBe(200);
    await response.body?.cancel();
    expect((await received()).map((r) => r.body)).toEqual([body]);
  });
});
