/**
 * What providers refuse the whole request for, through the proxy served by
 * wrangler to a Vercel AI SDK agent loop (its mock model); the origin echoes
 * what reached it.
 *
 * - A tool whose top-level parameters are named as REST APIs name them
 *   (`filter[id]`, `$select`, `Account Number`), at `/mcp/anthropic` and
 *   `/mcp/bedrock`: Anthropic's Messages API and Bedrock's Converse API
 *   refuse a tool that declares a top-level property outside
 *   `^[a-zA-Z0-9_.-]{1,64}$` (`input_schema.properties: Property keys should
 *   match pattern …`; passes/property-keys.ts).
 * - A description of 2,780 characters, as the reference sequential-thinking
 *   server's, at `/mcp/openai`: OpenAI refuses one over 1,024 (`Invalid
 *   'tools[0].function.description': string too long`); and an empty one at
 *   `/mcp/bedrock`, which takes one of at least a character
 *   (schemas/tool-descriptions.ts).
 */
import type { Tool } from "@modelcontextprotocol/server";
import { generateText, stepCountIs } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serveEchoOrigin } from "../fixtures/node/echo-origin";
import { callOnce, finished, toolCall, withMcpClient } from "./ai-sdk-steps";
import { serveProxy } from "./serve-proxy";

const ANTHROPIC_KEY = /^[a-zA-Z0-9_.-]{1,64}$/;

/** OData's and JSON:API's query parameters, and a spreadsheet's column, as an OpenAPI-made server lists them. */
const FIND: Tool = {
  name: "accounts_find",
  description: "Find accounts.",
  inputSchema: {
    type: "object",
    properties: {
      "filter[id]": { type: "integer" },
      $select: { type: "string" },
      "Account Number": { type: "string" },
      limit: { type: "integer" },
    },
    required: ["filter[id]"],
    additionalProperties: false,
  } as Tool["inputSchema"],
};

/** Paragraphs of guidance, as a reasoning tool's description reads: 2,780 characters in all. */
const GUIDANCE = Array.from(
  { length: 40 },
  (_, i) => `Step ${i + 1}: question what the last thought assumed. Say what would change it.`,
)
  .join("\n")
  .slice(0, 2_780);

const THINK: Tool = {
  name: "think",
  description: GUIDANCE,
  inputSchema: { type: "object", properties: { thought: { type: "string" } } },
};

const PING: Tool = {
  name: "ping",
  description: "",
  inputSchema: { type: "object", properties: {} },
};

let origin: Awaited<ReturnType<typeof serveEchoOrigin>>;
let proxy: Awaited<ReturnType<typeof serveProxy>>;
/** The same, with a ceiling of two tools, under the origin's three: search mode at every profile. */
let searching: Awaited<ReturnType<typeof serveProxy>>;

beforeAll(async () => {
  origin = await serveEchoOrigin("crm", [FIND, THINK, PING]);
  proxy = await serveProxy(origin.url.href);
  searching = await serveProxy(origin.url.href, { MAX_TOOLS: "2" });
});

afterAll(async () => {
  await proxy?.dispose();
  await searching?.dispose();
  origin?.close();
});

describe.each(["anthropic", "bedrock"])("the Vercel AI SDK at /mcp/%s", (profile) => {
  it("is listed parameter names the provider takes, and the origin gets its own names", async () => {
    await withMcpClient(`${proxy.url.href}/${profile}`, async (client) => {
      const tools = await client.tools();
      const { inputSchema } = tools.accounts_find ?? {};
      const { jsonSchema: schema } = inputSchema as {
        jsonSchema: { properties: object; required: string[] };
      };
      const names = Object.keys(schema.properties);
      for (const name of names) expect(name).toMatch(ANTHROPIC_KEY);
      expect(names).toContain("limit");
      const id = names.find((name) => name.startsWith("filter_id_")) as string;
      const select = names.find((name) => name.startsWith("_select_")) as string;
      const account = names.find((name) => name.startsWith("Account_Number_")) as string;
      expect(schema.required).toEqual([id]);

      // As a model writes it: the listed names, a number as a string.
      const input = { [id]: "42", [select]: "name", [account]: "A-1", limit: 5 };
      const called = await callOnce(tools, "accounts_find", input, "Find account 42.");
      const received = {
        tool: "accounts_find",
        arguments: { "filter[id]": 42, $select: "name", "Account Number": "A-1", limit: 5 },
      };
      expect(called?.output).toMatchObject({ content: [{ text: JSON.stringify(received) }] });
    });
  });
});

describe("the Vercel AI SDK at /mcp/openai", () => {
  it("is listed a description OpenAI takes, cut where a line ends; /mcp/anthropic the whole", async () => {
    const described = async (profile: string) => {
      return await withMcpClient(`${proxy.url.href}/${profile}`, async (client) => {
        return (await client.tools()).think?.description as string;
      });
    };
    const openai = await described("openai");
    expect(openai.length).toBeLessThanOrEqual(1024);
    expect(openai.length).toBeGreaterThan(800);
    expect(openai.endsWith("…")).toBe(true);
    // Whole lines of the origin's, up to where it is cut.
    expect(GUIDANCE.startsWith(openai.slice(0, -1))).toBe(true);
    expect(GUIDANCE[openai.length - 1]).toBe("\n");
    expect(await described("anthropic")).toBe(GUIDANCE);
  });
});

describe("the Vercel AI SDK at /mcp/bedrock", () => {
  it("is listed no empty description, which Bedrock refuses; /mcp/anthropic the origin's", async () => {
    const listed = async (profile: string) => {
      return await withMcpClient(`${proxy.url.href}/${profile}`, async (client) => {
        return (await client.listTools()).tools.find((tool) => tool.name === "ping");
      });
    };
    expect(await listed("bedrock")).not.toHaveProperty("description");
    expect(await listed("anthropic")).toHaveProperty("description", "");
  });
});

describe("the Vercel AI SDK through search mode at /mcp/anthropic", () => {
  it("finds the tool with the names Anthropic takes, and call_tool's call reaches the origin under its own", async () => {
    await withMcpClient(`${searching.url.href}/anthropic`, async (client) => {
      const tools = await client.tools();
      expect(Object.keys(tools)).toEqual(["search_tools", "call_tool"]);
      let step = 0;
      let answer = "";
      const model = new MockLanguageModelV4({
        doGenerate: async ({ prompt }) => {
          step++;
          if (step === 1) return toolCall("search_tools", { query: "find accounts" });
          if (step === 2) {
            // The search's answer, as the SDK handed it to the model: the match's input schema.
            answer = JSON.stringify(prompt.at(-1));
            const id = /filter_id__[0-9a-z]{6}/.exec(answer)?.[0] ?? "?";
            return toolCall("call_tool", { name: "accounts_find", arguments: { [id]: "7" } });
          }
          return finished("done");
        },
      });
      const result = await generateText({
        model,
        tools,
        prompt: "Find account 7.",
        stopWhen: stepCountIs(3),
      });
      expect(answer).toMatch(/accounts_find/);
      // The schema it was shown names no parameter as Anthropic refuses it.
      for (const refused of ["filter[id]", "$select", "Account Number"]) {
        expect(answer).not.toContain(refused);
      }
      const [, called] = result.steps.flatMap((s) => s.toolResults);
      const received = { tool: "accounts_find", arguments: { "filter[id]": 7 } };
      expect(called?.output).toMatchObject({ content: [{ text: JSON.stringify(received) }] });
    });
  });
});
