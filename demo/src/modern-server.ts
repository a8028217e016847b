/**
 * The demo server for protocol revision 2026-07-28, built with the official
 * SDK 2.x low-level `Server` and served by its `createMcpHandler`: the same
 * tools and schemas as the 2025 server, with the 2026 ways of talking back.
 * Progress goes on the call's own stream; `list_changed` goes to
 * `subscriptions/listen` streams; elicitation is an `input_required` result
 * the client answers by retrying the call (multi round-trip requests).
 */
import {
  acceptedContent,
  type CallToolResult,
  createMcpHandler,
  type InputRequiredResult,
  inputRequired,
  type ListToolsResult,
  type McpHttpHandler,
  Server,
} from "@modelcontextprotocol/server";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/server/validators/cf-worker";
import { CONFIRM_SCHEMA, echo, listingPage, refusal, sleep } from "./tool-calls";

type ToolAnswer = CallToolResult | InputRequiredResult;

function createModernServer(request: Request | undefined, toolsChanged: () => void): Server {
  const server = new Server(
    { name: "mcp-edge-rewriter-demo", version: "0.1.0" },
    {
      capabilities: { tools: { listChanged: true } },
      // The SDK's default validator (Ajv) compiles code at runtime, which workerd forbids.
      jsonSchemaValidator: new CfWorkerJsonSchemaValidator(),
    },
  );
  const pageSize = Number(new URL(request?.url ?? "http://demo").searchParams.get("page_size"));

  server.setRequestHandler(
    "tools/list",
    // The schemas are the demo's own JSON, not the SDK's typed view of them.
    (listRequest) =>
      listingPage(pageSize || undefined, listRequest.params?.cursor) as ListToolsResult,
  );

  server.setRequestHandler("tools/call", async (call, ctx): Promise<ToolAnswer> => {
    const { name } = call.params;
    const args = call.params.arguments ?? {};
    const refused = refusal(name, args);
    if (refused) return refused as CallToolResult;

    if (name === "tasks.countdown") {
      const { steps, delay_ms: delayMs = 100 } = args as { steps: number; delay_ms?: number };
      const progressToken = ctx.mcpReq._meta?.progressToken;
      for (let step = 1; step <= steps; step++) {
        if (progressToken !== undefined) {
          await ctx.mcpReq.notify({
            method: "notifications/progress",
            params: { progressToken, progress: step, total: steps, message: `step ${step}` },
          });
        }
        if (step < steps) await sleep(delayMs);
      }
    }

    if (name === "catalog.refresh") toolsChanged();

    if (name === "deploy:confirm") {
      const { target } = args as { target: string };
      const content = acceptedContent(ctx.mcpReq.inputResponses, "confirm");
      if (content === undefined) {
        return inputRequired({
          inputRequests: {
            confirm: inputRequired.elicit({
              message: `Deploy to ${target}?`,
              requestedSchema: CONFIRM_SCHEMA,
            }),
          },
        });
      }
      return echo(name, args, { answer: { action: "accept", content } }) as CallToolResult;
    }

    return echo(name, args) as CallToolResult;
  });

  return server;
}

/**
 * The handler for 2026-07-28 requests. `?json` answers every request with a
 * JSON body (progress is then dropped, as the SDK documents); otherwise a
 * request that sends anything before its result gets an event stream.
 */
export function createModernHandler(json: boolean): McpHttpHandler {
  const handler: McpHttpHandler = createMcpHandler(
    ({ requestInfo }) => createModernServer(requestInfo, () => handler.notify.toolsChanged()),
    { legacy: "reject", responseMode: json ? "json" : "auto" },
  );
  return handler;
}
