/**
 * What a `tools/call` the proxy does not forward is answered with
 * (tools-call.ts, search-mode.ts): the text of each refusal (a hidden tool
 * reads as none), whether it is the protocol's `-32602` or `call_tool`'s tool
 * error (`RefusedAs`), its `tool_call_refused` line and its record.
 */
import type { CallReport } from "../analytics/call-record";
import type { Malformed } from "../args/recover";
import { logEvent } from "../log";
import { ErrorCode, type JsonRpcRequest, jsonRpcError, toolError } from "../protocol/jsonrpc";
import type { Revision } from "../protocol/revision";
import type { ResolvedTool } from "../toolmap/resolve-tool";

/** A refused call's answer, and what the proxy made of the call. */
export interface RefusalAnswer {
  kind: "answer";
  response: unknown;
  report: CallReport;
}

/**
 * What a call to no tool the client may see is told: one text, so a hidden
 * tool reads as none, with the closest names the caller was shown, where
 * the proxy knows them (names/match.ts).
 */
const unknownTool = (name: string, closest: readonly string[] = []) =>
  `Unknown tool: ${name}${closest.length > 0 ? `. Did you mean: ${closest.join(", ")}?` : ""}`;

/** Refusals whose text is the did-you-mean of a tool that is none. */
export const UNKNOWN: ReadonlySet<string> = new Set(["hidden", "unlisted", "unknown"]);

/** What a refused call is told (docs/rules.md): a hidden tool is unknown, as if it did not exist. */
export const REFUSALS: Record<
  NonNullable<ResolvedTool["refused"]> | "unknown",
  (name: string, closest?: readonly string[]) => string
> = {
  hidden: unknownTool,
  unlisted: unknownTool,
  unknown: unknownTool,
  held: (name) =>
    `Tool ${name} is held: its definition changed since it was approved, and the operator has not accepted the change`,
  unchecked: (name) =>
    `Tool ${name} cannot be checked now: the origin's tool listing for this caller could not be read; try again`,
};

/**
 * A call's log lines name what its data point names by the same OpenTelemetry
 * names (`mcp.method.name`, `gen_ai.tool.name`, `error.type`), so a query
 * written for one reads the other (docs/observability.md).
 */
export const CALL_LINE = { "mcp.method.name": "tools/call" } as const;

/** Refusals whose tool may be one the operator's rules hide: its name is written to no record. */
const NAME_UNSURE: ReadonlySet<string> = new Set(["hidden", "unlisted", "unchecked"]);

/**
 * What the log is told of a refused call, for the engineer who reads it
 * without the answer. Of a call refused as no tool of the caller's: the
 * names the client was offered, and the tool an older listing showed under
 * the called name (one the origin renamed or removed since, or another
 * caller's). Of `malformed_arguments`: what the client was told was no
 * object, as codes.
 */
interface RefusalNote {
  closest?: readonly string[];
  handedOutFor?: string;
  malformed?: Malformed;
}

/**
 * What a refusal is answered with. A direct call's: the protocol's `-32602`,
 * for a malformed request or a tool the server has none of (MCP's protocol
 * errors). A call `call_tool` carries is `call_tool`'s input: its refusal is
 * `call_tool`'s tool result with `isError: true`, as `revision` writes
 * results (MCP 2025-11-25, SEP-1303: input validation errors are tool
 * execution errors), which the model reads where a framework hands it no
 * protocol error's message (the OpenAI Agents SDK's default, docs/limits.md).
 */
export type RefusedAs = { kind: "protocol_error" } | { kind: "tool_error"; revision: Revision };

export const PROTOCOL_ERROR: RefusedAs = { kind: "protocol_error" };

/**
 * The proxy's answer to a call it does not forward, `text` as `as` says,
 * logged with `reason` and what it names; recorded without a name the rules
 * may hide.
 */
export function refusal(
  message: JsonRpcRequest,
  named: { tool?: string; name?: string },
  reason: string,
  text: string,
  as: RefusedAs,
  resolution?: CallReport["resolution"],
  { closest, handedOutFor, malformed }: RefusalNote = {},
): RefusalAnswer {
  const toolResult = as.kind === "tool_error";
  logEvent("tool_call_refused", {
    ...CALL_LINE,
    "gen_ai.tool.name": named.tool,
    name: named.name,
    reason,
    ...malformed,
    // As the call's data point says it (analytics/call-record.ts `localVerdict`).
    "error.type": toolResult ? "tool_error" : String(ErrorCode.InvalidParams),
    ...(closest?.length ? { closest } : {}),
    ...(handedOutFor === undefined ? {} : { handedOutFor }),
  });
  const tool = NAME_UNSURE.has(reason) ? undefined : named.tool;
  return {
    kind: "answer",
    response: toolResult
      ? toolError(message.id, text, as.revision)
      : jsonRpcError(message.id, ErrorCode.InvalidParams, text),
    report: { tool, resolution, refused: reason, repairs: {} },
  };
}
