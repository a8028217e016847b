/** Steps the Vercel AI SDK's mock model (`ai/test`) answers with, for tests that run its agent loop. */

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
