/**
 * Search mode as an OpenAI Agents SDK app meets it: an `Agent` with the
 * proxy as its MCP server (300 catalog tools, over OpenAI's 128: the SDK
 * gets `search_tools` and `call_tool`), run by the SDK's `Runner` with a
 * model of the test's own, which reads what the SDK hands it. The server has
 * the SDK's default `errorFunction`, which hands the model no JSON-RPC
 * error's message ("An error occurred while running the tool. Please try
 * again."): what `call_tool` refuses of what it carries is its tool error
 * (SEP-1303), so the model reads the names it meant and calls again. The
 * proxy is served by wrangler; the catalog origin echoes what reached it.
 */
import {
  Agent,
  type Model,
  type ModelRequest,
  type ModelResponse,
  Runner,
  type StreamEvent,
  Usage,
} from "@openai/agents";
import { describe, expect, it } from "vitest";
import { withAgentsSdkServer } from "./agents-sdk-server";
import { searchModeProxy } from "./search-mode-proxy";

const proxyUrl = searchModeProxy();

/** The text the SDK handed the model as the output of its last function call. */
function lastOutput(request: ModelRequest): string {
  const items = typeof request.input === "string" ? [] : request.input;
  const result = items.findLast((item) => item.type === "function_call_result");
  const output = result?.type === "function_call_result" ? result.output : [];
  // A string, one item (`{ type: "text", text }`), or a list of them (`input_text`).
  return [output]
    .flat()
    .map((part) => (typeof part === "string" ? part : "text" in part ? part.text : ""))
    .join("");
}

/** A model that answers each turn with `step`, given what the SDK sent it. */
function scriptedModel(step: (turn: number, request: ModelRequest) => ModelResponse["output"]) {
  let turn = 0;
  const model: Model = {
    getResponse: async (request) => ({ usage: new Usage(), output: step(++turn, request) }),
    getStreamedResponse(): AsyncIterable<StreamEvent> {
      throw new Error("the test runs the agent without streaming");
    },
  };
  return model;
}

const callTool = (callId: string, args: unknown): ModelResponse["output"] => [
  {
    type: "function_call",
    callId,
    name: "call_tool",
    arguments: JSON.stringify(args),
    status: "completed",
  },
];

describe("the OpenAI Agents SDK through search mode, its default errorFunction", () => {
  it("hands the model call_tool's did-you-mean for a name no tool has, and the model's next call reaches the tool", async () => {
    await withAgentsSdkServer(proxyUrl(), "catalog", async (server) => {
      const seen: string[] = [];
      const model = scriptedModel((turn, request) => {
        if (turn === 1) {
          expect(request.tools.map((tool) => tool.name)).toEqual(["search_tools", "call_tool"]);
          return callTool("misnamed", { name: "read_txt_file", arguments: { path: "notes.md" } });
        }
        seen.push(lastOutput(request));
        if (turn === 2) {
          // The model takes the first name the answer offers, as it was told it.
          const meant = /Did you mean: ([\w-]+)/.exec(seen[0] ?? "")?.[1];
          return callTool("meant", { name: meant, arguments: { path: "notes.md" } });
        }
        return [
          {
            type: "message",
            role: "assistant",
            status: "completed",
            content: [{ type: "output_text", text: "done" }],
          },
        ];
      });
      const agent = new Agent({
        name: "reader",
        instructions: "Read notes.md.",
        model,
        mcpServers: [server],
      });
      const result = await new Runner({ tracingDisabled: true }).run(agent, "Read notes.md.", {
        maxTurns: 4,
      });
      expect(seen[0]).toContain("Unknown tool: read_txt_file. Did you mean: read_text_file");
      expect(seen[0]).not.toContain("An error occurred while running the tool");
      expect(JSON.parse(seen[1] ?? "")).toEqual({
        tool: "read_text_file",
        arguments: { path: "notes.md" },
      });
      expect(result.finalOutput).toBe("done");
    });
  });
});
