/**
 * Search mode as a Vercel AI SDK app meets it: `@ai-sdk/mcp` turns the
 * proxy's listing (300 catalog tools, over OpenAI's 128) into model tools,
 * and `generateText` runs the agent loop with the SDK's mock model, which
 * searches, then calls the tool it found by the name the search gave. The
 * proxy is served by wrangler; the catalog origin echoes what reached it.
 */
import { createMCPClient } from "@ai-sdk/mcp";
import { generateText, stepCountIs } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { describe, expect, it } from "vitest";
import { finished, toolCall } from "./ai-sdk-steps";
import { searchModeProxy } from "./search-mode-proxy";

const proxyUrl = searchModeProxy();

describe("the Vercel AI SDK through search mode", () => {
  it("the model searches, calls what it found, and the origin receives the call", async () => {
    const client = await createMCPClient({ transport: { type: "http", url: proxyUrl() } });
    try {
      const tools = await client.tools();
      expect(Object.keys(tools)).toEqual(["search_tools", "call_tool"]);

      let step = 0;
      const model = new MockLanguageModelV4({
        doGenerate: async ({ prompt }) => {
          step++;
          if (step === 1) return toolCall("search_tools", { query: "brave web search" });
          if (step === 2) {
            // The search's answer, as the SDK handed it to the model: the first match's name.
            const text = JSON.stringify(prompt.at(-1));
            const name = /\\n([\w-]+): brave_web_search of /.exec(text)?.[1];
            return toolCall("call_tool", {
              name,
              arguments: { query: "edge proxies", count: "5" },
            });
          }
          return finished("done");
        },
      });

      const result = await generateText({
        model,
        tools,
        prompt: "Search the web for edge proxies.",
        stopWhen: stepCountIs(3),
      });

      const [, called] = result.steps.flatMap((s) => s.toolResults);
      expect(called?.toolName).toBe("call_tool");
      expect(called?.output).toMatchObject({
        structuredContent: {
          tool: "brave_web_search",
          arguments: { query: "edge proxies", count: 5 },
        },
      });
      expect(result.text).toBe("done");
    } finally {
      await client.close();
    }
  });
});
