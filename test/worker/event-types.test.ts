/**
 * An event of an event stream that no client reads as a message: one whose
 * `event` field names another type. The SDKs' clients (1.x and 2.x, as the
 * Python SDK's) read an event's data as a JSON-RPC message only where its type
 * is absent or `message`, and skip any other. An origin's listing in such an
 * event answers no request to them, and must not end the proxy's reading of
 * the stream for one: the listing a client does read is the one after it.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { onlyPoint, recordingDataset } from "../helpers/analytics-dataset";
import { DEMO_NAMES } from "../helpers/demo-names";
import { clientView, isEvent } from "../helpers/event-stream";
import { postJson, rpc } from "../helpers/mcp";
import { PROXY_URL, viaProxy } from "../helpers/proxy";
import { scriptedOrigin } from "../helpers/scripted-origin";

const ID = '"@ID@"';
const files = '{"name":"files.read","inputSchema":{"type":"object"}}';
const secret = '{"name":"secret.admin","inputSchema":{"type":"object"}}';
const listing = (id: string, ...tools: string[]) =>
  `{"jsonrpc":"2.0","id":${id},"result":{"tools":[${tools.join(",")}]}}`;
const INITIALIZED = JSON.stringify({
  jsonrpc: "2.0",
  id: "@ID@",
  result: {
    protocolVersion: "2025-11-25",
    capabilities: { tools: {} },
    serverInfo: { name: "origin", version: "1.0.0" },
  },
});
const eventStream = (body: string) => ({
  status: 200,
  headers: [["Content-Type", "text/event-stream"]] as [string, string][],
  body,
});

/** The messages of a stream as the SDKs' clients read them: events of no type or of `message`. */
const messagesRead = (text: string) =>
  clientView(text)
    .filter(isEvent)
    .filter(({ event }) => event === undefined || event === "message")
    .map(
      ({ data }) => JSON.parse(data) as { id?: unknown; result?: { tools?: { name: string }[] } },
    );

describe("a listing in an event of another type than message, then the one clients read", () => {
  it("has the SDK client's listing renamed: the first answered no request it reads", async () => {
    const origin = await scriptedOrigin(
      {
        initialize: {
          status: 200,
          headers: [["Content-Type", "application/json"]],
          body: INITIALIZED,
        },
        "tools/list": eventStream(
          `event: decoy\ndata: ${listing(ID, files)}\n\nevent: message\ndata: ${listing(ID, files)}\n\n`,
        ),
      },
      ID,
    );
    const proxy = viaProxy({ ORIGIN_URL: origin.originUrl }, { app: createApp() });
    const client = new Client({ name: "event-types-test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(PROXY_URL), { fetch: proxy }));
    const { tools } = await client.listTools();
    await client.close();
    expect(tools.map((tool) => tool.name)).toEqual([DEMO_NAMES["files.read"]]);
  });

  it("hides what the rules hide in the listing clients read, 64 KiB and more after the other, in a batch beside a ping", async () => {
    // The batch also asks for a ping, whose answer comes last: the proxy hands such a stream on
    // 64 KiB past its listings, and the listing after the decoy was handed on unread.
    const progress = Array.from(
      { length: 40 },
      (_, i) =>
        `event: message\ndata: ${JSON.stringify({
          jsonrpc: "2.0",
          method: "notifications/progress",
          params: { progressToken: "p", progress: i, message: "x".repeat(2_000) },
        })}\n\n`,
    ).join("");
    const body =
      `event: decoy\ndata: ${listing("1", files)}\n\n` +
      progress +
      `data: ${listing("1", files, secret)}\n\n` +
      `data: {"jsonrpc":"2.0","id":2,"result":{}}\n\n`;
    const origin = await scriptedOrigin({ "*": eventStream(body) });
    const proxy = viaProxy(
      { ORIGIN_URL: origin.originUrl, TOOL_RULES: JSON.stringify({ hide: ["secret.*"] }) },
      { app: createApp() },
    );
    const response = await postJson(proxy, PROXY_URL, [rpc(1, "tools/list"), rpc(2, "ping")]);
    const text = await response.text();
    const listings = messagesRead(text).filter((message) => message.id === 1);
    expect(listings.map((message) => message.result?.tools?.map((tool) => tool.name))).toEqual([
      [DEMO_NAMES["files.read"]],
    ]);
    expect(text).not.toContain("secret.admin");
    // The ping's answer, after them, reached the client.
    expect(messagesRead(text).map((message) => message.id)).toContain(2);
  });
});

describe("a call's answer in an event of another type than message, then the one clients read", () => {
  it("is judged by the one clients read: call analytics writes what the client got", async () => {
    // An origin may so keep its errors from the operator's dashboards: the client reads the second.
    const body =
      'event: decoy\ndata: {"jsonrpc":"2.0","id":1,"result":{"content":[]}}\n\n' +
      'data: {"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":true}}\n\n';
    const origin = await scriptedOrigin({ "*": eventStream(body) });
    const recording = recordingDataset();
    const proxy = viaProxy(
      { ORIGIN_URL: origin.originUrl },
      { app: createApp(), bindings: recording.bindings, contexts: recording.contexts },
    );
    const response = await postJson(
      proxy,
      PROXY_URL,
      rpc(1, "tools/call", { name: "work", arguments: {} }),
    );
    expect(messagesRead(await response.text())).toContainEqual({
      jsonrpc: "2.0",
      id: 1,
      result: { content: [], isError: true },
    });
    expect(onlyPoint(await recording.points()).blobs).toMatchObject({ outcome: "tool_error" });
  });
});
