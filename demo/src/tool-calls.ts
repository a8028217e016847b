/**
 * What every demo tool does with a call, whichever protocol era it arrived in:
 * check the arguments against the tool's own schema, as production servers do,
 * and echo the tool's name and the arguments exactly as they arrived.
 */
import { Validator } from "@cfworker/json-schema";
import { demoTools } from "./tools";

const validators = new Map(
  demoTools.map((tool) => [
    tool.name,
    new Validator(tool.inputSchema as ConstructorParameters<typeof Validator>[0], "2020-12", false),
  ]),
);

export interface ToolText {
  content: Array<{ type: "text"; text: string }>;
  structuredContent?: Record<string, unknown>;
  isError?: true;
}

/** Why a call must be refused (an unknown tool, invalid arguments), or `undefined` to run it. */
export function refusal(name: string, args: unknown): ToolText | undefined {
  const validator = validators.get(name);
  if (!validator) return toolError(`Unknown tool: ${name}`);
  const result = validator.validate(args);
  if (result.valid) return undefined;
  const problems = result.errors.map((error) => `${error.instanceLocation}: ${error.error}`);
  return toolError(`Invalid arguments for tool ${name}: ${problems.join("; ")}`);
}

/** The answer of every demo tool: its own name and the arguments it received. */
export function echo(tool: string, args: unknown, extra: Record<string, unknown> = {}): ToolText {
  const received = { tool, arguments: args, ...extra };
  return {
    content: [{ type: "text", text: JSON.stringify(received) }],
    structuredContent: received,
  };
}

export function toolError(text: string): ToolText {
  return { content: [{ type: "text", text }], isError: true };
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The question `deploy:confirm` asks before it answers. */
export const CONFIRM_SCHEMA: {
  type: "object";
  properties: { confirm: { type: "boolean" } };
  required: string[];
} = { type: "object", properties: { confirm: { type: "boolean" } }, required: ["confirm"] };

/** One page of the listing: all tools when `pageSize` is absent. */
export function listingPage(pageSize: number | undefined, cursor: unknown) {
  if (!pageSize) return { tools: demoTools };
  const start = Number(cursor ?? 0);
  const end = start + pageSize;
  return {
    tools: demoTools.slice(start, end),
    ...(end < demoTools.length ? { nextCursor: String(end) } : {}),
  };
}
