/**
 * Builds the demo MCP server with the official SDK's low-level `Server`, so the
 * tools keep the exact JSON Schemas from `tools.ts` and receive their arguments
 * untouched. Arguments are validated the way production servers do it, and a
 * failure is answered as a tool error naming what was wrong.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  ElicitResultSchema,
  ListToolsRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker";
import { demoTools } from "./tools";

// The SDK's default validator (Ajv) compiles code at runtime, which workerd forbids.
const validator = new CfWorkerJsonSchemaValidator();
const validators = new Map(
  demoTools.map((tool) => [tool.name, validator.getValidator(tool.inputSchema)]),
);

function echo(tool: string, args: unknown, extra: Record<string, unknown> = {}): CallToolResult {
  const received = { tool, arguments: args, ...extra };
  return {
    content: [{ type: "text", text: JSON.stringify(received) }],
    structuredContent: received,
  };
}

function toolError(text: string): CallToolResult {
  return { content: [{ type: "text", text }], isError: true };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface DemoOptions {
  /** Tools per `tools/list` page; all on one page when absent. */
  pageSize?: number;
}

export function createDemoServer({ pageSize }: DemoOptions = {}): Server {
  const server = new Server(
    { name: "mcp-edge-rewriter-demo", version: "0.1.0" },
    { capabilities: { tools: { listChanged: true } }, jsonSchemaValidator: validator },
  );

  server.setRequestHandler(ListToolsRequestSchema, (request) => {
    if (!pageSize) return { tools: demoTools };
    const start = Number(request.params?.cursor ?? 0);
    const end = start + pageSize;
    return {
      tools: demoTools.slice(start, end),
      ...(end < demoTools.length ? { nextCursor: String(end) } : {}),
    };
  });

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const { name } = request.params;
    const args = request.params.arguments ?? {};
    const validate = validators.get(name);
    if (!validate) return toolError(`Unknown tool: ${name}`);
    const result = validate(args);
    if (!result.valid) {
      return toolError(`Invalid arguments for tool ${name}: ${result.errorMessage}`);
    }

    if (name === "tasks.countdown") {
      const { steps, delay_ms: delayMs = 100 } = args as { steps: number; delay_ms?: number };
      const progressToken = request.params._meta?.progressToken;
      for (let step = 1; step <= steps; step++) {
        if (progressToken !== undefined) {
          await extra.sendNotification({
            method: "notifications/progress",
            params: { progressToken, progress: step, total: steps, message: `step ${step}` },
          });
        }
        if (step < steps) await sleep(delayMs);
      }
      return echo(name, args);
    }

    if (name === "catalog.refresh") {
      await extra.sendNotification({ method: "notifications/tools/list_changed" });
      return echo(name, args);
    }

    if (name === "deploy:confirm") {
      const { target } = args as { target: string };
      const answer = await extra.sendRequest(
        {
          method: "elicitation/create",
          params: {
            message: `Deploy to ${target}?`,
            requestedSchema: {
              type: "object",
              properties: { confirm: { type: "boolean" } },
              required: ["confirm"],
            },
          },
        },
        ElicitResultSchema,
      );
      return echo(name, args, { answer });
    }

    return echo(name, args);
  });

  return server;
}
