/**
 * A `tools/list` result as the model sees it: each tool's `name` model-facing,
 * and its `inputSchema` the profile's view where that differs. Every other
 * field of the tool and of the result (`nextCursor`, `_meta`, `annotations`,
 * `outputSchema`, `ttlMs`, fields added by later protocol revisions) is
 * carried as it came, in the same order.
 */
import { isPlainObject } from "../json";
import type { ToolsListResult } from "../protocol/tools-list";
import type { NamedListing } from "../toolmap/tool-map";

export function renameTools(result: ToolsListResult, listing: NamedListing): ToolsListResult {
  return {
    ...result,
    tools: result.tools.map((tool) => {
      const original = isPlainObject(tool) ? tool.name : undefined;
      if (typeof original !== "string") return tool;
      const name = listing.names.get(original) ?? original;
      const schema = listing.schemas.get(original);
      if (name === original && schema === undefined) return tool;
      return {
        ...(tool as object),
        name,
        ...(schema === undefined ? {} : { inputSchema: schema }),
      };
    }),
  };
}
