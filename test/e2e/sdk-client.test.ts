/**
 * The official MCP SDK client, through the proxy and straight to the origin:
 * a user of the proxy sees what they would see without it.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker";
import { afterEach, describe, expect, it } from "vitest";
import { VALID_ARGUMENTS } from "../helpers/demo-calls";
import { DEMO_NAMES } from "../helpers/demo-names";
import { expectOriginsToolsAsViewed } from "../helpers/listing";
import { DEMO_ORIGIN, type Fetch, PROXY_URL, viaProxy } from "../helpers/proxy";

const clients: Client[] = [];

async function connect(url: string, fetch?: Fetch): Promise<Client> {
  const client = new Client(
    { name: "edge-rewriter-e2e", version: "1.0.0" },
    {
      capabilities: { elicitation: {} },
      // The SDK's default validator (Ajv) compiles code at runtime; workerd forbids that.
      jsonSchemaValidator: new CfWorkerJsonSchemaValidator(),
    },
  );
  client.setRequestHandler(ElicitRequestSchema, () => ({
    action: "accept",
    content: { confirm: true },
  }));
  await client.connect(new StreamableHTTPClientTransport(new URL(url), fetch ? { fetch } : {}));
  clients.push(client);
  return client;
}

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
});

describe("the SDK client through the proxy", () => {
  it("initializes like the origin, and lists every tool under a name LLM APIs accept", async () => {
    const direct = await connect(`${DEMO_ORIGIN}/mcp`);
    const proxied = await connect(PROXY_URL, viaProxy());

    expect(proxied.getServerVersion()).toEqual(direct.getServerVersion());
    expect(proxied.getServerCapabilities()).toEqual(direct.getServerCapabilities());

    const { tools } = await proxied.listTools();
    const { tools: originTools } = await direct.listTools();
    expectOriginsToolsAsViewed(tools, originTools);
    for (const tool of tools) expect(tool.name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
  });

  it("calls every tool by its listed name and gets the origin's own result", async () => {
    const direct = await connect(`${DEMO_ORIGIN}/mcp`);
    const proxied = await connect(PROXY_URL, viaProxy());
    const { tools } = await proxied.listTools();
    const { tools: originTools } = await direct.listTools();

    for (const [i, tool] of tools.entries()) {
      const original = originTools[i]?.name ?? "";
      const args = VALID_ARGUMENTS[original];
      const result = await proxied.callTool({ name: tool.name, arguments: args });
      expect(result).toEqual(await direct.callTool({ name: original, arguments: args }));
      expect(result.structuredContent).toMatchObject({ tool: original });
    }
  });

  it("answers an elicitation mid-call", async () => {
    const proxied = await connect(PROXY_URL, viaProxy());
    const result = await proxied.callTool({
      name: DEMO_NAMES["deploy:confirm"],
      arguments: { target: "eu" },
    });
    expect(result.structuredContent).toMatchObject({
      answer: { action: "accept", content: { confirm: true } },
    });
  });

  it("terminates the session at the origin", async () => {
    const proxied = await connect(PROXY_URL, viaProxy());
    const transport = proxied.transport as StreamableHTTPClientTransport;
    const sessionId = transport.sessionId;
    expect(sessionId).toBeTruthy();

    await transport.terminateSession();
    expect(transport.sessionId).toBeUndefined();

    const stale = await viaProxy()(PROXY_URL, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-session-id": sessionId ?? "",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(stale.status).toBe(404);
  });
});
