/**
 * `openai-strict` views, measured with the OpenAI Agents SDK's own strict
 * conversion (`convertSchemasToStrict`: `mcpToFunctionTool(tool, server,
 * true)`), which falls back to a non-strict tool whenever it cannot make a
 * schema strict. Every tool of the demo origin and of the schema corpus must
 * come out strict through the proxy's view; straight from the origin, most do
 * not (the measure the issue started from).
 */
import { mcpToFunctionTool } from "@openai/agents";
import { describe, expect, it } from "vitest";
import { demoTools } from "../../demo/src/tools";
import { profileOf } from "../../src/schemas/profile";
import { schemaView } from "../../src/schemas/view";
import corpus from "../fixtures/schema-corpus.json";

const STRICT = profileOf("openai-strict").schemas;

type McpServer = Parameters<typeof mcpToFunctionTool>[1];
/** The conversion reads only the server's name and its optional hooks. */
const server = { name: "through-the-proxy" } as unknown as McpServer;

/** Whether the Agents SDK makes a tool with `inputSchema` strict. */
function convertsToStrict(name: string, inputSchema: unknown): boolean {
  const converted = mcpToFunctionTool(
    { name, description: "", inputSchema: inputSchema as never },
    server,
    true,
  ) as { strict?: boolean };
  return converted.strict === true;
}

const tools: Array<[string, unknown]> = [
  ...demoTools.map((tool): [string, unknown] => [`demo ${tool.name}`, tool.inputSchema]),
  ...corpus.map((entry): [string, unknown] => [
    `${entry.server}@${entry.version} ${entry.tool}`,
    entry.inputSchema,
  ]),
];

describe("the Agents SDK's strict conversion", () => {
  it.each(tools)("makes %s strict through the openai-strict view", (_, inputSchema) => {
    expect(convertsToStrict("tool", schemaView(inputSchema, STRICT).schema)).toBe(true);
  });

  it("counts: every demo tool and every corpus schema, where the origin's own schemas fall short", () => {
    const direct = tools.filter(([name, schema]) =>
      convertsToStrict(name.replace(/\W/g, "_"), schema),
    );
    const viewed = tools.filter(([name, schema]) =>
      convertsToStrict(name.replace(/\W/g, "_"), schemaView(schema, STRICT).schema),
    );
    expect(demoTools).toHaveLength(13);
    expect(corpus).toHaveLength(51);
    expect(viewed).toHaveLength(tools.length);
    expect(direct.length).toBeLessThan(tools.length);
  });
});
