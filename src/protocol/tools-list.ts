/**
 * The `tools/list` result as MCP defines it, read loosely: only `tools` and
 * each tool's `name` and `inputSchema` matter to the proxy; every other field
 * is carried, never required.
 */
import { isPlainObject } from "../json";
import type { Span } from "../json-spans";

/** A tool as a listing describes it; only `name` and `inputSchema` matter here. */
export interface ListedTool {
  name: string;
  title?: unknown;
  description?: unknown;
  inputSchema?: unknown;
  annotations?: unknown;
  outputSchema?: unknown;
  /**
   * Where the listing's text holds `inputSchema` written as `JSON.stringify`
   * writes it (listing-text.ts): fingerprinted there, without writing it again.
   */
  schemaJson?: { text: string; span: Span };
  /** Where the listing's text holds the whole tool, when it was read from its text. */
  written?: { text: string; span: Span };
  /**
   * Read from its text: `false` when what its definition pin covers writes
   * a key twice (listing-text.ts), so it is written from the proxy's reading.
   */
  readonly readsOneWay?: boolean;
}

export type ToolsListResult = { tools: unknown[] } & Record<string, unknown>;

export function isToolsListResult(result: unknown): result is ToolsListResult {
  return isPlainObject(result) && Array.isArray(result.tools);
}

/**
 * A result that can only be a `tools/list` result: a non-empty `tools` array
 * whose every entry has a string `name` and an object `inputSchema`. Used where
 * the request is out of view (events replayed on a resumed stream).
 */
export function looksLikeToolsListResult(result: unknown): result is ToolsListResult {
  return (
    isToolsListResult(result) &&
    result.tools.length > 0 &&
    result.tools.every(
      (tool) =>
        isPlainObject(tool) && typeof tool.name === "string" && isPlainObject(tool.inputSchema),
    )
  );
}

/** The tools of a result that have a name to work with. */
export function namedTools(result: ToolsListResult): ListedTool[] {
  return result.tools.filter(
    (tool): tool is ListedTool => isPlainObject(tool) && typeof tool.name === "string",
  );
}

/** Whether a `tools/list` request asks for a page after the first (it carries a cursor). */
export function asksForLaterPage(request: unknown): boolean {
  return (
    isPlainObject(request) &&
    isPlainObject(request.params) &&
    request.params.cursor !== undefined &&
    request.params.cursor !== null
  );
}
