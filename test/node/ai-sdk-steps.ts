/** What tests that run the Vercel AI SDK share: its mock model's steps, one turn of its agent loop, its MCP client. */
import { createMCPClient } from "@ai-sdk/mcp";
import { generateText, stepCountIs, type ToolSet } from "ai";
import { MockLanguageModelV4 } from "ai/test";

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

/** One step of the mock model: a call of `toolName` with `input`. */
export const toolCall = (toolName: string, input: unknown) => ({
  content: [
    { type: "tool-call" as const, toolCallId: toolName, toolName, input: JSON.stringify(input) },
  ],
  finishReason: { unified: "tool-calls" as const, raw: undefined },
  usage,
  warnings: [],
});

/** The mock model's last step: `text`, and no more calls. */
export const finished = (text: string) => ({
  content: [{ type: "text" as const, text }],
  finishReason: { unified: "stop" as const, raw: undefined },
  usage,
  warnings: [],
});

/**
 * One turn of the AI SDK's agent loop (`generateText` and its mock model):
 * the model calls `toolName` with `input`, then stops; the call's result.
 */
export async function callOnce(tools: ToolSet, toolName: string, input: unknown, prompt: string) {
  let step = 0;
  const model = new MockLanguageModelV4({
    doGenerate: async () => (++step === 1 ? toolCall(toolName, input) : finished("done")),
  });
  const result = await generateText({ model, tools, prompt, stopWhen: stepCountIs(2) });
  return result.steps.flatMap((s) => s.toolResults)[0];
}

/** `use` with the AI SDK's MCP client of `url`, closed after, whatever `use` does. */
export async function withMcpClient<T>(
  url: string,
  use: (client: Awaited<ReturnType<typeof createMCPClient>>) => Promise<T>,
): Promise<T> {
  const client = await createMCPClient({ transport: { type: "http", url } });
  try {
    return await use(client);
  } finally {
    await client.close();
  }
}
