/**
 * `x-mcp-header` declarations (protocol 2026-07-28, SEP-2243) as LLM apps'
 * frameworks meet them through the proxy served by wrangler: the Vercel AI
 * SDK (`@ai-sdk/mcp`) and the OpenAI Agents SDK (whose MCP client is the
 * official SDK 2.x's) each leave out of their tools, silently, a tool whose
 * declaration a 2026-07-28 client refuses: one on a property not typed
 * `string`, `integer` or `boolean`. Two origins write such a tool:
 * header-origin.ts's `header.number` (its SDK 2.x server still checks the
 * `number` header), and a pydantic-style optional (`anyOf` with `null`, no
 * `type`) beside its declaration. The proxy writes those headers itself
 * from the origin's schema, so the tool is callable; the profiles whose view
 * keeps `x-mcp-header` (`openai`, `anthropic`, `bedrock`) must list it so.
 * So too a declaration a client refuses for where it is (under `items`,
 * `unevaluatedProperties`), or for a header name declared before it in the
 * same schema.
 */
import { createMCPClient } from "@ai-sdk/mcp";
import { createMcpHandler, Server, type Tool } from "@modelcontextprotocol/server";
import { mcpToFunctionTool, RunContext } from "@openai/agents";
import { generateText, stepCountIs } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHeaderOrigin } from "../fixtures/node/header-origin";
import { serveFetch } from "../fixtures/node/serve-fetch";
import { withAgentsSdkServer } from "./agents-sdk-server";
import { finished, toolCall } from "./ai-sdk-steps";
import { serveProxy } from "./serve-proxy";

/** Python's `region: str | None = None` as pydantic writes it, declared as a header. */
const LOOKUP: Tool = {
  name: "regions.lookup",
  description: "Looks a place up.",
  inputSchema: {
    type: "object",
    properties: {
      q: { type: "string" },
      region: {
        anyOf: [{ type: "string" }, { type: "null" }],
        default: null,
        "x-mcp-header": "Region",
      },
    },
    required: ["q"],
  } as Tool["inputSchema"],
};

/**
 * Declarations under `items` and `unevaluatedProperties`, where a client refuses one: the
 * proxy's views leave them out.
 */
const TAGGED: Tool = {
  name: "regions.tagged",
  description: "Finds places by tag.",
  inputSchema: {
    type: "object",
    properties: { tags: { type: "array", items: { type: "string", "x-mcp-header": "Tag" } } },
    unevaluatedProperties: { type: "string", "x-mcp-header": "Extra" },
  } as Tool["inputSchema"],
};

/** One header name declared twice (case aside): a client refuses both, the views keep the first. */
const ROUTE: Tool = {
  name: "regions.route",
  description: "Routes between two places.",
  inputSchema: {
    type: "object",
    properties: {
      from: { type: "string", "x-mcp-header": "Zone" },
      to: { type: "string", "x-mcp-header": "zone" },
    },
  } as Tool["inputSchema"],
};

const TRACE = crypto.randomUUID();
let headerOrigin: Awaited<ReturnType<typeof startHeaderOrigin>>;
let lookupOrigin: Awaited<ReturnType<typeof serveFetch>>;
const proxies: Record<"header" | "lookup", Awaited<ReturnType<typeof serveProxy>> | undefined> = {
  header: undefined,
  lookup: undefined,
};

beforeAll(async () => {
  headerOrigin = await startHeaderOrigin();
  const handler = createMcpHandler(
    () => {
      const server = new Server(
        { name: "regions", version: "1.0.0" },
        { capabilities: { tools: {} } },
      );
      server.setRequestHandler("tools/list", () => ({ tools: [LOOKUP, TAGGED, ROUTE] }));
      server.setRequestHandler("tools/call", (call) => ({
        content: [{ type: "text", text: JSON.stringify(call.params.arguments ?? {}) }],
      }));
      return server;
    },
    { legacy: "stateless" },
  );
  lookupOrigin = await serveFetch(
    (request) => handler.fetch(request),
    () => void handler.close(),
  );
  const header = new URL(headerOrigin.url);
  header.searchParams.set("number", "");
  header.searchParams.set("trace", TRACE);
  proxies.header = await serveProxy(header.href);
  proxies.lookup = await serveProxy(lookupOrigin.url.href);
});

afterAll(async () => {
  await Promise.all(Object.values(proxies).map((proxy) => proxy?.dispose()));
  headerOrigin?.close();
  lookupOrigin?.close();
});

/** The `Mcp-Param-*` headers of the header origin's last call. */
async function lastHeaders(): Promise<Record<string, string> | undefined> {
  const url = new URL(`/__received?trace=${TRACE}`, headerOrigin.url);
  return ((await (await fetch(url)).json()) as Array<Record<string, string>>).at(-1);
}

/** The text an AI SDK agent loop gets back from calling the listed tool named like `pattern`. */
async function viaAiSdk(url: string, pattern: RegExp, input: unknown) {
  const client = await createMCPClient({ transport: { type: "http", url } });
  try {
    const tools = await client.tools();
    const name = Object.keys(tools).find((listed) => pattern.test(listed));
    if (name === undefined) return { listed: Object.keys(tools) };
    let step = 0;
    const model = new MockLanguageModelV4({
      doGenerate: async () => (++step === 1 ? toolCall(name, input) : finished("done")),
    });
    const result = await generateText({ model, tools, prompt: "Go.", stopWhen: stepCountIs(2) });
    const [called] = result.steps.flatMap((s) => s.toolResults);
    return { text: (called?.output as { content?: Array<{ text?: string }> })?.content?.[0]?.text };
  } finally {
    await client.close();
  }
}

/** The text an Agents SDK function tool named like `pattern` answers `input` with. */
const viaAgentsSdk = (url: string, pattern: RegExp, input: unknown) =>
  withAgentsSdkServer(url, "origin", async (server) => {
    const listed = await server.listTools();
    const tool = listed.find(({ name }) => pattern.test(name));
    if (tool === undefined) return { listed: listed.map(({ name }) => name) };
    const output = await mcpToFunctionTool(tool, server, false).invoke(
      new RunContext(),
      JSON.stringify(input),
    );
    return { text: (output as unknown as { text: string }).text };
  });

const FRAMEWORKS = [
  ["the Vercel AI SDK", viaAiSdk],
  ["the OpenAI Agents SDK", viaAgentsSdk],
] as const;

describe.each(FRAMEWORKS)("%s", (_, call) => {
  describe.each(["", "/anthropic", "/bedrock"])("at /mcp%s", (profile) => {
    it("lists a tool whose number parameter is declared a header, and its call gets the header", async () => {
      const url = `${proxies.header?.url.href}${profile}`;
      const answer = await call(url, /^header_number_/, { ratio: 1.5 });
      expect(answer).toEqual({ text: JSON.stringify({ ratio: 1.5 }) });
      expect(await lastHeaders()).toEqual({ "mcp-param-ratio": "1.5" });
    });

    it("lists a tool whose optional parameter, an anyOf with null, is declared a header", async () => {
      const url = `${proxies.lookup?.url.href}${profile}`;
      const answer = await call(url, /^regions_lookup_/, { q: "Oslo", region: "eu" });
      expect(answer).toEqual({ text: JSON.stringify({ q: "Oslo", region: "eu" }) });
    });

    it("lists a tool with a header declared under items and unevaluatedProperties", async () => {
      const url = `${proxies.lookup?.url.href}${profile}`;
      const answer = await call(url, /^regions_tagged_/, { tags: ["coast"] });
      expect(answer).toEqual({ text: JSON.stringify({ tags: ["coast"] }) });
    });

    it("lists a tool that declares one header name twice", async () => {
      const url = `${proxies.lookup?.url.href}${profile}`;
      const answer = await call(url, /^regions_route_/, { from: "Oslo", to: "Bergen" });
      expect(answer).toEqual({ text: JSON.stringify({ from: "Oslo", to: "Bergen" }) });
    });
  });
});
