/**
 * `tools/call` as LLM apps make it, through the proxy served by wrangler: the
 * OpenAI Agents SDK's strict tools at `/mcp/openai-strict`, and a Vercel AI
 * SDK agent loop (its mock model) at `/mcp/gemini` and `/mcp/anthropic`. The
 * origin lists a tool whose schema is written as OpenAPI-minded generators
 * write it (zod-to-json-schema's openApi3 target: `nullable: true`, a nullable
 * enum) with a tuple (pydantic's `tuple[int, *tuple[str, ...]]`), Google
 * Sheets' rows, and FastMCP's optional list of models, and echoes what
 * reached it.
 */
import { Validator } from "@cfworker/json-schema";
import type { Tool } from "@modelcontextprotocol/server";
import { mcpToFunctionTool, RunContext } from "@openai/agents";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serveEchoOrigin } from "../fixtures/node/echo-origin";
import { withAgentsSdkServer } from "./agents-sdk-server";
import { callOnce, withMcpClient } from "./ai-sdk-steps";
import { serveProxy } from "./serve-proxy";

const SEARCH: Tool = {
  name: "issues.search",
  description: "Search issues.",
  inputSchema: {
    type: "object",
    properties: {
      q: { type: "string" },
      // Required, and may be null: the first page.
      cursor: { type: "string", nullable: true },
      sort: { type: "string", enum: ["asc", "desc"], nullable: true },
      row: { type: "array", prefixItems: [{ type: "integer" }], items: { type: "string" } },
    },
    required: ["q", "cursor"],
  } as Tool["inputSchema"],
};

/** Google Sheets' way: rows of cells; and labels, a list. */
const APPEND: Tool = {
  name: "sheet.append",
  description: "Append rows.",
  inputSchema: {
    type: "object",
    properties: {
      values: { type: "array", items: { type: "array", items: { type: "string" } } },
      labels: { type: "array", items: { type: "string" } },
    },
    required: ["values"],
  } as Tool["inputSchema"],
};

/**
 * FastMCP's way (pydantic): an optional list of models is `anyOf` of the array and `null`, each
 * model a `$ref`, as `def create(lines: list[Line] | None = None, priorities: list[Priority] |
 * None = None, by_sku: dict[str, int] | None = None)` lists it.
 */
const ORDER: Tool = {
  name: "order.create",
  description: "Create an order.",
  inputSchema: {
    type: "object",
    title: "createArguments",
    properties: {
      lines: {
        anyOf: [{ type: "array", items: { $ref: "#/$defs/Line" } }, { type: "null" }],
        default: null,
        title: "Lines",
      },
      // `list[Priority] | None`, an `IntEnum`: Gemini's view asks for its values as strings.
      priorities: {
        anyOf: [{ type: "array", items: { $ref: "#/$defs/Priority" } }, { type: "null" }],
        default: null,
      },
      // `dict[str, int] | None`: quantities by SKU.
      by_sku: {
        anyOf: [{ type: "object", additionalProperties: { type: "integer" } }, { type: "null" }],
        default: null,
        title: "By Sku",
      },
    },
    $defs: {
      Priority: { type: "integer", enum: [1, 2, 3], title: "Priority" },
      Line: {
        type: "object",
        title: "Line",
        properties: { sku: { type: "string" }, quantity: { type: "integer" } },
        required: ["sku", "quantity"],
      },
    },
  } as Tool["inputSchema"],
};

/** pydantic's `def plan(slot: tuple[Priority, str])`: a tuple whose first place is an `IntEnum`. */
const PLAN: Tool = {
  name: "task.plan",
  description: "Plan a task.",
  inputSchema: {
    type: "object",
    properties: {
      slot: {
        type: "array",
        prefixItems: [{ $ref: "#/$defs/Priority" }, { type: "string" }],
        minItems: 2,
        maxItems: 2,
      },
    },
    required: ["slot"],
    $defs: { Priority: { type: "integer", enum: [1, 2, 3], title: "Priority" } },
  } as Tool["inputSchema"],
};

let origin: Awaited<ReturnType<typeof serveEchoOrigin>>;
let proxy: Awaited<ReturnType<typeof serveProxy>>;

beforeAll(async () => {
  origin = await serveEchoOrigin("issues", [SEARCH, APPEND, ORDER, PLAN]);
  proxy = await serveProxy(origin.url.href);
});

afterAll(async () => {
  await proxy?.dispose();
  origin?.close();
});

describe("the OpenAI Agents SDK's strict tool at /mcp/openai-strict", () => {
  it("takes the strict model's nulls: the required nullable reaches the origin, the optional is left out", async () => {
    await withAgentsSdkServer(`${proxy.url.href}/openai-strict`, "issues", async (server) => {
      const [listed] = await server.listTools();
      expect(listed?.name).toMatch(/^issues_search_[0-9a-z]{6}$/);
      const tool = mcpToFunctionTool(listed as never, server, true);
      expect(tool.strict).toBe(true);
      // What a strict model writes when it leaves out all it may: every property, null for each.
      const input = { q: "bug", cursor: null, sort: null, row: null };
      expect(new Validator(tool.parameters as never, "2020-12").validate(input).valid).toBe(true);
      const output = await tool.invoke(new RunContext(), JSON.stringify(input));
      expect(JSON.parse((output as unknown as { text: string }).text)).toEqual({
        tool: "issues.search",
        arguments: { q: "bug", cursor: null },
      });
    });
  });
});

describe("the OpenAI Agents SDK's strict tool at /mcp/openai-strict, a pydantic map", () => {
  it("takes the map's JSON text with its counts as strings: the origin gets integers", async () => {
    await withAgentsSdkServer(`${proxy.url.href}/openai-strict`, "orders", async (server) => {
      const listed = (await server.listTools()).find((tool) => tool.name.startsWith("order_"));
      const tool = mcpToFunctionTool(listed as never, server, true);
      expect(tool.strict).toBe(true);
      // The view asks for the map as JSON text, which says nothing of its values' type: a model
      // writes the counts as it read them.
      const input = { lines: null, priorities: null, by_sku: '{"A-1":"2","B-7":"10"}' };
      expect(new Validator(tool.parameters as never, "2020-12").validate(input).valid).toBe(true);
      const output = await tool.invoke(new RunContext(), JSON.stringify(input));
      expect(JSON.parse((output as unknown as { text: string }).text)).toEqual({
        tool: "order.create",
        arguments: { lines: null, priorities: null, by_sku: { "A-1": 2, "B-7": 10 } },
      });
    });
  });
});

describe("the Vercel AI SDK at /mcp/gemini", () => {
  it("delivers the model's valid call to the origin as the model wrote it", async () => {
    await withMcpClient(`${proxy.url.href}/gemini`, async (client) => {
      const tools = await client.tools();
      // A name Gemini takes as it is.
      const [name] = Object.keys(tools);
      expect(name).toBe("issues.search");
      const input = { q: "bug", cursor: null, row: [7, "open", "p1"] };
      const called = await callOnce(tools, name as string, input, "Find bugs.");
      expect(called?.output).toMatchObject({
        content: [{ text: JSON.stringify({ tool: "issues.search", arguments: input }) }],
      });
    });
  });
});

describe("the Vercel AI SDK at /mcp/gemini, an optional list of an integer enum", () => {
  it("gives the origin the integers of the string enum the view asked the model for", async () => {
    await withMcpClient(`${proxy.url.href}/gemini`, async (client) => {
      const { tools: listed } = await client.listTools();
      const order = listed.find((tool) => tool.name === "order.create");
      // Gemini takes string enums only: the view lists the priorities as "1", "2", "3".
      expect(order?.inputSchema.properties?.priorities).toMatchObject({
        type: "array",
        items: { type: "string", enum: ["1", "2", "3"] },
      });
      const tools = await client.tools();
      // A model that writes exactly what the view says.
      const input = { priorities: ["2", "3"] };
      const called = await callOnce(tools, "order.create", input, "Order at priorities 2 and 3.");
      expect(called?.output).toMatchObject({
        content: [
          { text: JSON.stringify({ tool: "order.create", arguments: { priorities: [2, 3] } }) },
        ],
      });
    });
  });
});

describe("the Vercel AI SDK at /mcp/gemini, a tuple's integer enum", () => {
  it("gives the origin the integer of the string enum the view asked the model for", async () => {
    await withMcpClient(`${proxy.url.href}/gemini`, async (client) => {
      const { tools: listed } = await client.listTools();
      const plan = listed.find((tool) => tool.name === "task.plan");
      // Gemini takes neither tuples nor integer enums: one `items` of either place, "1" for 1.
      expect(plan?.inputSchema.properties?.slot).toMatchObject({
        type: "array",
        items: { anyOf: [{ type: "string", enum: ["1", "2", "3"] }, { type: "string" }] },
      });
      const tools = await client.tools();
      const input = { slot: ["2", "write the docs"] };
      const called = await callOnce(tools, "task.plan", input, "Plan the docs at priority 2.");
      const slot = [2, "write the docs"];
      expect(called?.output).toMatchObject({
        content: [{ text: JSON.stringify({ tool: "task.plan", arguments: { slot } }) }],
      });
    });
  });
});

describe("the Vercel AI SDK at /mcp/gemini, a model's list slips", () => {
  it("delivers a flat row and a comma list as the model wrote them, never as a column or one label", async () => {
    await withMcpClient(`${proxy.url.href}/gemini`, async (client) => {
      const tools = await client.tools();
      expect(Object.keys(tools)).toContain("sheet.append");
      // One row of three cells, written flat; two labels written as one string.
      const input = { values: ["Ada", "Lovelace", "1815"], labels: "people,math" };
      const called = await callOnce(tools, "sheet.append", input, "Add Ada.");
      // Read cell by cell, the row was a column of three rows, and the labels one label with a
      // comma: valid calls of another meaning. As sent, the origin (or validation) refuses them.
      expect(called?.output).toMatchObject({
        content: [{ text: JSON.stringify({ tool: "sheet.append", arguments: input }) }],
      });
    });
  });
});

describe("the Vercel AI SDK at /mcp/anthropic, a pydantic model's optional list", () => {
  it("repairs each element as it does a property: a quantity as text, a key in another case", async () => {
    await withMcpClient(`${proxy.url.href}/anthropic`, async (client) => {
      const tools = await client.tools();
      const name = Object.keys(tools).find((listed) => listed.startsWith("order_create"));
      expect(name).toMatch(/^order_create_[0-9a-z]{6}$/);
      // What models write for `list[Line] | None`: the integer as a string, a key as its title.
      const input = {
        lines: [
          { sku: "A-1", quantity: "2" },
          { SKU: "B-7", Quantity: 1 },
        ],
      };
      const called = await callOnce(
        tools,
        name as string,
        input,
        "Order two of A-1 and one of B-7.",
      );
      const lines = [
        { sku: "A-1", quantity: 2 },
        { sku: "B-7", quantity: 1 },
      ];
      expect(called?.output).toMatchObject({
        content: [{ text: JSON.stringify({ tool: "order.create", arguments: { lines } }) }],
      });
    });
  });
});

describe("the Vercel AI SDK at /mcp/gemini, an enum in another case", () => {
  it("gives the origin the member the model wrote in capitals, under the key it spelled otherwise", async () => {
    await withMcpClient(`${proxy.url.href}/gemini`, async (client) => {
      const { tools: listed } = await client.listTools();
      const search = listed.find((tool) => tool.name === "issues.search");
      expect(search?.inputSchema.properties?.sort).toMatchObject({ enum: ["asc", "desc"] });
      const tools = await client.tools();
      // What models write for `enum: ["asc","desc"]`: the SQL keyword, and the key as a title.
      const input = { q: "bug", cursor: null, Sort: "ASC" };
      const called = await callOnce(tools, "issues.search", input, "Oldest bugs first.");
      const received = { q: "bug", cursor: null, sort: "asc" };
      expect(called?.output).toMatchObject({
        content: [{ text: JSON.stringify({ tool: "issues.search", arguments: received }) }],
      });
    });
  });
});
