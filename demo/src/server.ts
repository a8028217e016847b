/**
 * The demo server for protocol revisions 2025-03-26 to 2025-11-25, built with
 * the official SDK 1.x low-level `Server`, so the tools keep the exact JSON
 * Schemas from `tools.ts` and receive their arguments untouched. Mid-call,
 * tools talk back the 2025 way: progress on the request's stream,
 * `list_changed` on the session's GET stream (it concerns the session, not
 * the call), elicitation as a request of the server's own.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  ElicitResultSchema,
  ListToolsRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker";
import { CONFIRM_SCHEMA, echo, listingPage, refusal, sleep } from "./tool-calls";

export interface DemoOptions {
  /** Tools per `tools/list` page; all on one page when absent. */
  pageSize?: number;
}

export function createDemoServer({ pageSize }: DemoOptions = {}): Server {
  const server = new Server(
    { name: "mcp-edge-rewriter-demo", version: "0.1.0" },
    {
      capabilities: { tools: { listChanged: true } },
      // The SDK's default validator (Ajv) compiles code at runtime, which workerd forbids.
      jsonSchemaValidator: new CfWorkerJsonSchemaValidator(),
    },
  );

  server.setRequestHandler(ListToolsRequestSchema, (request) =>
    listingPage(pageSize, request.params?.cursor),
  );

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const { name } = request.params;
    const args = request.params.arguments ?? {};
    const refused = refusal(name, args);
    if (refused) return refused as CallToolResult;

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
    }

    if (name === "catalog.refresh") {
      await server.sendToolListChanged();
    }

    if (name === "deploy:confirm") {
      const { target } = args as { target: string };
      const answer = await extra.sendRequest(
        {
          method: "elicitation/create",
          params: { message: `Deploy to ${target}?`, requestedSchema: CONFIRM_SCHEMA },
        },
        ElicitResultSchema,
      );
      return echo(name, args, { answer }) as CallToolResult;
    }

    return echo(name, args) as CallToolResult;
  });

  return server;
}
