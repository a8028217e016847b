/**
 * A `tools/list` result with model-facing names. Only each tool's `name`
 * changes; every other field of the tool and of the result (`nextCursor`,
 * `_meta`, `annotations`, `outputSchema`, `ttlMs`, fields added by later
 * protocol revisions) is carried as it came, in the same order.
 */
import type { ListedTool } from "../toolmap/plan-listing";

type ListResult = { tools: unknown[] } & Record<string, unknown>;

export function isToolsListResult(result: unknown): result is ListResult {
  return (
    typeof result === "object" && result !== null && Array.isArray((result as ListResult).tools)
  );
}

/**
 * A result that can only be a `tools/list` result: a non-empty `tools` array
 * whose every entry has a string `name` and an object `inputSchema`. Used where
 * the request is out of view (events replayed on a resumed stream).
 */
export function looksLikeToolsListResult(result: unknown): result is ListResult {
  return (
    isToolsListResult(result) &&
    result.tools.length > 0 &&
    result.tools.every((tool) => {
      const { name, inputSchema } = (tool ?? {}) as { name?: unknown; inputSchema?: unknown };
      return typeof name === "string" && typeof inputSchema === "object" && inputSchema !== null;
    })
  );
}

/** The tools of a result that have a name to work with. */
export function namedTools(result: ListResult): ListedTool[] {
  return result.tools.filter(
    (tool): tool is ListedTool => typeof (tool as ListedTool | null)?.name === "string",
  );
}

export function renameTools(result: ListResult, names: ReadonlyMap<string, string>): ListResult {
  return {
    ...result,
    tools: result.tools.map((tool) => {
      const original = (tool as ListedTool | null)?.name;
      const name = typeof original === "string" ? names.get(original) : undefined;
      return name === undefined || name === original ? tool : { ...(tool as object), name };
    }),
  };
}
