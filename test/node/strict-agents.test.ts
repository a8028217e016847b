/**
 * `/mcp/openai-strict` measured the way an OpenAI Agents SDK app meets it: the
 * SDK's own MCP client lists the tools and converts them with
 * `convertSchemasToStrict`, which falls back to a non-strict tool whenever it
 * cannot make a schema strict. Through the proxy (served by wrangler) every
 * tool of the demo origin and of the schema corpus must come out strict;
 * straight from the origin, most do not (the measure the issue started from).
 */
import { mcpToFunctionTool, RunContext } from "@openai/agents";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { unstable_startWorker } from "wrangler";
import { demoTools } from "../../demo/src/tools";
import { SCHEMA_PASSES } from "../../src/schemas/profile";
import { schemaView } from "../../src/schemas/view";
import { startCatalogOrigin } from "../fixtures/node/catalog-origin";
import corpusSchemas from "../fixtures/schema-corpus.json";
import { declaredNames } from "../helpers/provider-rules";
import { withAgentsSdkServer } from "./agents-sdk-server";
import { serveProxy } from "./serve-proxy";

type AgentsSdkTool = ReturnType<typeof mcpToFunctionTool>;

/**
 * Does `use` with the function tools an Agents SDK app gets from the MCP server
 * at `url`, asking for strict schemas. (Tool by tool: `getAllMcpTools` refuses
 * the demo origin's own listing, whose `a_b` and `a/b` the SDK renames alike.)
 */
const withAgentsSdkTools = <T>(url: string, use: (tools: AgentsSdkTool[]) => Promise<T>) =>
  withAgentsSdkServer(url, "origin", async (server) => {
    const listed = await server.listTools();
    return use(listed.map((tool) => mcpToFunctionTool(tool, server, true)));
  });

const listedByAgentsSdk = (url: string) => withAgentsSdkTools(url, async (tools) => tools);

const notStrict = (tools: AgentsSdkTool[]) =>
  tools.filter((tool) => !tool.strict).map((tool) => tool.name);

let demo: Awaited<ReturnType<typeof unstable_startWorker>>;
let corpus: Awaited<ReturnType<typeof startCatalogOrigin>>;
const origins: Record<"demo" | "corpus", string> = { demo: "", corpus: "" };
const proxies: Array<Awaited<ReturnType<typeof serveProxy>>> = [];
const strictUrls: Record<"demo" | "corpus", string> = { demo: "", corpus: "" };

beforeAll(async () => {
  demo = await unstable_startWorker({
    config: "demo/wrangler.toml",
    dev: {
      server: { hostname: "127.0.0.1", port: 0 },
      inspector: false,
      logLevel: "error",
      persist: false,
    },
  });
  await demo.ready;
  corpus = await startCatalogOrigin();
  origins.demo = new URL("/mcp", await demo.url).href;
  origins.corpus = corpus.url.href;
  for (const key of ["demo", "corpus"] as const) {
    const proxy = await serveProxy(origins[key]);
    proxies.push(proxy);
    strictUrls[key] = `${proxy.url.href}/openai-strict`;
  }
});

afterAll(async () => {
  await Promise.all(proxies.map((proxy) => proxy.dispose()));
  corpus?.close();
  await demo?.dispose();
});

describe("the Agents SDK's strict conversion of tools listed at /mcp/openai-strict", () => {
  it("makes every demo tool strict, where the origin's own schemas fall short", async () => {
    const through = await listedByAgentsSdk(strictUrls.demo);
    const direct = await listedByAgentsSdk(origins.demo);
    expect(through).toHaveLength(demoTools.length);
    expect(demoTools).toHaveLength(13);
    expect(notStrict(through)).toEqual([]);
    expect(notStrict(direct).length).toBeGreaterThan(0);
  });

  it("makes every schema of the corpus strict, where the origin's own schemas fall short", async () => {
    const through = await listedByAgentsSdk(strictUrls.corpus);
    const direct = await listedByAgentsSdk(origins.corpus);
    expect(through).toHaveLength(corpusSchemas.length);
    expect(corpusSchemas).toHaveLength(51);
    expect(notStrict(through)).toEqual([]);
    expect(notStrict(direct).length).toBeGreaterThan(0);
  });

  it("a call the SDK makes the strict way reaches the demo tool as an unconstrained call would", async () => {
    const output = await withAgentsSdkTools(strictUrls.demo, async (tools) => {
      const readFile = tools.find((tool) => tool.name === "files_read_yqgun6");
      // What a strict-mode model writes for "read src/main.ts": every property, null for the one it leaves out.
      return readFile?.invoke(new RunContext(), '{"path":"src/main.ts","max_bytes":null}') ?? null;
    });
    // The SDK hands the model the tool's text content: the demo echoes what reached it.
    expect(JSON.parse((output as unknown as { text: string }).text)).toEqual({
      tool: "files.read",
      arguments: { path: "src/main.ts" },
    });
  });
});

/** Input schemas as generators in other languages write them, which no server in the corpus runs. */
const GENERATED: Record<string, Record<string, unknown>> = {
  // Go's invopop/jsonschema: the input a `$ref` at the root; the Go SDK's maps `["null","object"]`.
  "a root $ref, a nullable map": {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    $ref: "#/$defs/SearchArgs",
    $defs: {
      SearchArgs: {
        type: "object",
        properties: {
          query: { type: "string" },
          limit: { type: "integer" },
          labels: { type: ["null", "object"], additionalProperties: { type: "string" } },
        },
        required: ["query", "labels"],
        additionalProperties: false,
      },
    },
  },
  // schemars 0.8 (Rust's rmcp): a described `$ref` as a one-branch `allOf`.
  "a described $ref as allOf": {
    $schema: "http://json-schema.org/draft-07/schema#",
    type: "object",
    properties: {
      mode: { description: "How", allOf: [{ $ref: "#/definitions/Mode" }] },
      count: { type: ["integer", "null"], format: "uint32", minimum: 0 },
    },
    required: ["mode"],
    definitions: { Mode: { type: "string", enum: ["fast", "slow"] } },
  },
  // OpenAPI generators' `allOf` of `oneOf`s (a mixin's variants, and a payload's): one of each.
  "an allOf of two unions": {
    type: "object",
    properties: {
      target: {
        allOf: [
          {
            oneOf: [
              { type: "object", properties: { user: { type: "string" } }, required: ["user"] },
              { type: "object", properties: { team: { type: "string" } }, required: ["team"] },
            ],
          },
          {
            oneOf: [
              { type: "object", properties: { read: { type: "boolean" } }, required: ["read"] },
              { type: "object", properties: { write: { type: "boolean" } }, required: ["write"] },
            ],
          },
        ],
      },
    },
    required: ["target"],
  },
  // "At least one of": forms that only require, beside the object that declares the properties.
  "an anyOf of required names beside properties": {
    type: "object",
    properties: {
      contact: {
        type: "object",
        properties: { email: { type: "string" }, phone: { type: "string" } },
        anyOf: [{ required: ["email"] }, { required: ["phone"] }],
      },
    },
    required: ["contact"],
  },
};

describe("the Agents SDK's strict conversion of other generators' schemas", () => {
  const strict = (name: string, inputSchema: unknown) =>
    mcpToFunctionTool(
      { name, description: name, inputSchema } as never,
      { name: "origin" } as never,
      true,
    ).strict;

  it.each(Object.entries(GENERATED))(
    "%s: strict as viewed under openai-strict",
    (name, original) => {
      const { schema } = schemaView(original, SCHEMA_PASSES["openai-strict"]);
      expect(strict(name, schema)).toBe(true);
      expect(strict(name, original)).toBe(false);
      // Strict, and with every field the origin asks for.
      expect(declaredNames(schema)).toEqual(declaredNames(original));
    },
  );

  it("an enum of arrays and objects: strict, each value one of its texts", () => {
    // The SDK takes the origin's as it is; strict mode then lets a model send none of its values
    // (`[0, 0]` is no array of strings, the items the view asked for).
    const original = {
      type: "object",
      properties: { origin: { const: [0, 0] }, unit: { enum: [{ px: 1 }, "auto", null] } },
      required: ["origin", "unit"],
    };
    const { schema } = schemaView(original, SCHEMA_PASSES["openai-strict"]);
    expect(strict("enum_of_shapes", schema)).toBe(true);
    expect(schema).toMatchObject({
      properties: {
        origin: { type: "string", enum: ["[0,0]"] },
        unit: { type: ["string", "null"], enum: ['{"px":1}', '"auto"', null] },
      },
    });
  });
});
