/**
 * A `tools/list` result with model-facing names. Only each tool's `name`
 * changes; every other field of the tool and of the result (`nextCursor`,
 * `_meta`, `annotations`, `outputSchema`, `ttlMs`, fields added by later
 * protocol revisions) is carried as it came, in the same order.
 */
import { isPlainObject } from "../json";
import type { ToolsListResult } from "../protocol/tools-list";

export function renameTools(
  result: ToolsListResult,
  names: ReadonlyMap<string, string>,
): ToolsListResult {
  return {
    ...result,
    tools: result.tools.map((tool) => {
      const original = isPlainObject(tool) ? tool.name : undefined;
      const name = typeof original === "string" ? names.get(original) : undefined;
      return name === undefined || name === original ? tool : { ...(tool as object), name };
    }),
  };
}
