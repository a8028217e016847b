/**
 * The demo's tools. Each one echoes its own name and the arguments exactly as
 * they arrived, so a user looking through the proxy sees what the origin got.
 *
 * The names are the ones LLM APIs reject (`unity/health`, `files.read`,
 * `scope:action`, over 64 characters, a digit first, `a_b` beside `a/b`) and the
 * schemas are the ones models get wrong (`payload_json`, `max_bytes`).
 */
import type { Tool } from "@modelcontextprotocol/sdk/types.js";

export const LONG_TOOL_NAME =
  "analytics_reporting_service.generate_quarterly_revenue_summary_by_region";

const noArguments: Tool["inputSchema"] = { type: "object", properties: {} };

/** Plain echo tools: the result is the name and the arguments received. */
export const echoTools: Tool[] = [
  {
    name: "unity/health",
    description: "Reports the health of the Unity bridge.",
    inputSchema: noArguments,
  },
  {
    name: "files.read",
    description: "Reads a file from the workspace.",
    annotations: { readOnlyHint: true },
    inputSchema: {
      type: "object",
      properties: {
        path: { type: "string", description: "Path relative to the workspace root." },
        max_bytes: { type: "integer", minimum: 1, description: "Read at most this many bytes." },
      },
      required: ["path"],
    },
  },
  {
    name: "catering.invoice",
    description: "Creates a catering invoice.",
    inputSchema: {
      type: "object",
      properties: {
        payload_json: {
          type: "object",
          description: "The invoice payload.",
          properties: {
            invoice_id: { type: "string" },
            amount: { type: "number" },
          },
        },
        invoice_id: { type: "string", description: "Invoice to amend, if any." },
      },
      required: ["payload_json"],
    },
  },
  {
    name: "scope:action",
    description: "Performs an action in a scope.",
    inputSchema: {
      type: "object",
      properties: { scope: { type: "string" } },
    },
  },
  {
    name: LONG_TOOL_NAME,
    description: "A tool whose name is longer than most LLM APIs allow.",
    inputSchema: {
      type: "object",
      properties: { region: { type: "string" }, quarter: { type: "integer" } },
    },
  },
  { name: "a_b", description: "The tool named a_b.", inputSchema: noArguments },
  { name: "a/b", description: "The tool named a/b.", inputSchema: noArguments },
  {
    name: "21st_century",
    description: "A tool whose name starts with a digit.",
    inputSchema: noArguments,
  },
  {
    name: "reports.query",
    description: "Runs a report query.",
    // The shapes LLM providers refuse: a draft-07 `$schema`, `additionalProperties`,
    // an exclusive bound, a default, a numeric enum, a type array with null, a
    // string format, an open object, `uniqueItems`.
    inputSchema: {
      $schema: "http://json-schema.org/draft-07/schema#",
      type: "object",
      properties: {
        limit: {
          type: "integer",
          exclusiveMinimum: 0,
          maximum: 500,
          default: 50,
          description: "Rows to return.",
        },
        priority: { type: "integer", enum: [1, 2, 3], description: "1 is the highest." },
        since: { type: ["string", "null"], format: "date", description: "First day, or null." },
        filters: {
          type: "object",
          additionalProperties: { type: "string" },
          description: "Column filters.",
        },
        columns: { type: "array", items: { type: "string" }, uniqueItems: true },
      },
      required: ["limit"],
      additionalProperties: false,
    },
  },
  {
    name: "get-weather",
    description: "A tool whose name is already legal everywhere but Bedrock Agents.",
    inputSchema: {
      type: "object",
      properties: {
        // Protocol 2026-07-28 clients mirror this argument into an `Mcp-Param-City` header.
        city: { type: "string", "x-mcp-header": "City" },
        units: { type: "string", enum: ["metric", "imperial"] },
      },
      required: ["city"],
    },
  },
];

/** Tools that talk back to the client mid-call, to show streaming through the proxy. */
export const interactiveTools: Tool[] = [
  {
    name: "tasks.countdown",
    description: "Counts down, sending a progress notification each step.",
    inputSchema: {
      type: "object",
      properties: {
        steps: { type: "integer", minimum: 1, maximum: 100 },
        delay_ms: { type: "integer", minimum: 0, maximum: 10000 },
      },
      required: ["steps"],
    },
  },
  {
    name: "catalog.refresh",
    description: "Tells the client that the tool list changed (notifications/tools/list_changed).",
    inputSchema: noArguments,
  },
  {
    name: "deploy:confirm",
    description: "Asks the user to confirm (MCP elicitation) before it answers.",
    annotations: { destructiveHint: true },
    inputSchema: {
      type: "object",
      properties: { target: { type: "string" } },
      required: ["target"],
    },
  },
];

export const demoTools: Tool[] = [...echoTools, ...interactiveTools];
