/**
 * Protocol 2026-07-28 end to end, with the official SDK 2.x client and the
 * demo origin's SDK 2.x server: what the proxy writes itself (its re-list, its
 * `enforce` answer) must be valid for the revision, and what it changes (names,
 * keys) must keep the request's headers in line with its body.
 */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterEach, describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { DEMO_NAMES } from "../helpers/demo-names";
import { ACCEPT_BOTH } from "../helpers/mcp";
import {
  DEMO_ORIGIN,
  type Fetch,
  freshOrigin,
  GATEWAY_ORIGIN,
  PROXY_URL,
  receivedByOrigin,
  viaProxy,
} from "../helpers/proxy";

const clients: Client[] = [];

async function connect(url: string, fetch: Fetch = globalThis.fetch): Promise<Client> {
  const client = new Client(
    { name: "edge-rewriter-e2e", version: "2.0.0" },
    { capabilities: { elicitation: {} }, versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { fetch }));
  clients.push(client);
  return client;
}

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
});

/** A proxy that has never seen the origin: a fresh isolate and a tool map empty in memory and KV. */
function coldProxy(vars: Record<string, string> = {}) {
  const trace = crypto.randomUUID();
  const proxy = viaProxy(
    { ORIGIN_URL: freshOrigin(GATEWAY_ORIGIN, `&trace=${trace}`), ...vars },
    { app: createApp() },
  );
  return { trace, proxy };
}

describe("protocol 2026-07-28: what the proxy writes itself", () => {
  it("re-lists on the client's behalf with its envelope, so a call with an empty tool map succeeds", async () => {
    const { trace, proxy } = coldProxy();
    const client = await connect(PROXY_URL, proxy);
    const result = await client.callTool({
      name: DEMO_NAMES["files.read"],
      arguments: { path: "a.ts" },
    });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({ tool: "files.read", arguments: { path: "a.ts" } });

    const received = await receivedByOrigin(trace);
    const call = received.find((r) => r.headers["mcp-method"] === "tools/call");
    const relist = received.find((r) => r.body.includes("mcp-edge-rewriter/relist/"));
    expect(relist?.headers).toMatchObject({
      "mcp-method": "tools/list",
      "mcp-protocol-version": "2026-07-28",
    });
    expect(relist?.headers["mcp-name"]).toBeUndefined();
    const callMeta = JSON.parse(call?.body ?? "{}").params._meta;
    expect(JSON.parse(relist?.body ?? "{}").params).toEqual({
      _meta: {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities":
          callMeta["io.modelcontextprotocol/clientCapabilities"],
        "io.modelcontextprotocol/clientInfo": { name: "edge-rewriter-e2e", version: "2.0.0" },
      },
    });
  });

  it("answers an invalid call under enforce with a result the client accepts, its fix-it text intact", async () => {
    const { trace, proxy } = coldProxy({ ARGUMENT_VALIDATION: "enforce" });
    const client = await connect(PROXY_URL, proxy);
    await client.listTools();
    const result = await client.callTool({
      name: DEMO_NAMES["files.read"],
      arguments: { max_bytes: 5 },
    });
    expect(result.isError).toBe(true);
    expect(result.content).toEqual([
      {
        type: "text",
        text: [
          `Invalid arguments for tool \`${DEMO_NAMES["files.read"]}\`; the tool was not called. Fix these and call it again:`,
          "- missing required field `path`",
          "Keys received: `max_bytes`.",
          "Declared arguments: `path`, `max_bytes`.",
        ].join("\n"),
      },
    ]);
    const calls = (await receivedByOrigin(trace)).filter((r) => r.body.includes('"tools/call"'));
    expect(calls).toEqual([]);
  });
});

describe("protocol 2026-07-28: the rest of the surface, through the proxy", () => {
  it("keeps Mcp-Param-* in line with arguments whose keys it coalesced (no -32020 from the origin)", async () => {
    const { trace, proxy } = coldProxy();
    const client = await connect(PROXY_URL, proxy);
    await client.listTools();
    // The model wrote `City`; the client mirrors `city` (absent) into no header.
    const result = await client.callTool({ name: "get-weather", arguments: { City: "Zürich" } });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({
      tool: "get-weather",
      arguments: { city: "Zürich" },
    });
    const call = (await receivedByOrigin(trace)).find(
      (r) => r.headers["mcp-method"] === "tools/call",
    );
    expect(call?.headers).toMatchObject({
      "mcp-name": "get-weather",
      "mcp-param-city": "=?base64?WsO8cmljaA==?=",
    });
  });

  it("passes server/discover and the listing's cache hints as the origin gives them", async () => {
    const meta = {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities": {},
    };
    const send = (fetch: Fetch, url: string, method: string) =>
      fetch(url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: ACCEPT_BOTH,
          "mcp-protocol-version": "2026-07-28",
          "mcp-method": method,
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: { _meta: meta } }),
      }).then((response) => response.json<{ result: Record<string, unknown> }>());
    const { proxy } = coldProxy();

    const discovered = await send(proxy, PROXY_URL, "server/discover");
    expect(discovered).toEqual(await send(fetch, `${DEMO_ORIGIN}/mcp`, "server/discover"));

    const { tools, ...listing } = (await send(proxy, PROXY_URL, "tools/list")).result;
    const { tools: _, ...direct } = (await send(fetch, `${DEMO_ORIGIN}/mcp`, "tools/list")).result;
    expect(listing).toEqual(direct);
    expect(listing).toMatchObject({ resultType: "complete" });
  });
});
