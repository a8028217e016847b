/**
 * A `tools/list` result as the model sees it: each tool's `name` model-facing,
 * its `inputSchema` the profile's view where that differs, its description
 * as the operator's rules give it, and the tools they hide (or hold) left out,
 * with every tool after the first of its name (`firstOfItsName`), and each
 * member no MCP client takes left out (protocol/tool-shape.ts). Every other
 * field of the tool and of the result (`nextCursor`, `_meta`, `annotations`,
 * `outputSchema`, `ttlMs`, fields added by later protocol revisions) is
 * carried as it came, in the same order, but a `cacheScope` of `"public"`
 * where what the caller is shown is theirs alone (`scopedToCaller`). A tool whose view is still beyond
 * its provider's limits says so in its `_meta` (`UNFIT_META`), so a client can
 * fall back (docs/schemas.md, "openai-strict").
 */
import { isPlainObject, writtenAsIn } from "../json";
import { kindOf, misshapenResultMembers, withoutMembers } from "../protocol/tool-shape";
import { firstOfItsName, isListedTool, type ToolsListResult } from "../protocol/tools-list";
import type { NamedListing } from "../toolmap/tool-map";

/** The `_meta` key that marks a tool whose view its provider may still refuse, with why. */
export const UNFIT_META = "io.github.mcp-edge-rewriter/unfit";

export function renameTools(result: ToolsListResult, listing: NamedListing): ToolsListResult {
  const seen = new Set<string>();
  const once = (tool: unknown) => !isListedTool(tool) || firstOfItsName(tool, seen);
  const tools = result.tools.filter(once).flatMap((tool) => renamedTool(tool, listing));
  return scopedToCaller(shapedResult(writtenAsIn({ ...result, tools }, result)), listing);
}

/**
 * `result` without the members beside its tools the clients refuse the
 * whole result over (tool-shape.ts `misshapenResultMembers`: a `nextCursor`
 * that is no string, a `_meta` that is no object); itself where it has none.
 */
export function shapedResult<T extends Record<string, unknown>>(result: T): T {
  const misshapen = misshapenResultMembers((member) =>
    result[member] === undefined ? undefined : kindOf(result[member]),
  );
  return misshapen.length === 0 ? result : (withoutMembers(result, misshapen) as T);
}

/** The `cacheScope` (2026-07-28) of a listing for its caller alone. */
export const PRIVATE_SCOPE = "private";

/**
 * Whether a listing's `cacheScope` must be written `"private"`: the origin
 * says `"public"`, that any cache may serve it to any caller, while what the
 * proxy shows depends on the caller (`NamedListing.perCaller`), and a shared
 * cache would show one caller a definition held for them, from another's.
 */
export const narrowsScope = (cacheScope: unknown, listing: NamedListing) =>
  listing.perCaller && cacheScope === "public";

/** `result`, its `cacheScope` private where `narrowsScope` says so. */
export function scopedToCaller<T extends Record<string, unknown>>(
  result: T,
  listing: NamedListing,
): T {
  return narrowsScope(result.cacheScope, listing)
    ? writtenAsIn({ ...result, cacheScope: PRIVATE_SCOPE }, result)
    : result;
}

/**
 * One entry of a listing's `tools` as the model sees it: `[]` when it is left out, `[tool]` as it
 * came when nothing changes. An entry that is no tool (not an object with a string `name`) is
 * left out: every client refuses the whole listing over it (docs/names.md), and no rule judged it.
 */
export function renamedTool(tool: unknown, listing: NamedListing): unknown[] {
  if (!isListedTool(tool)) return [];
  const original = tool.name;
  if (listing.hidden.has(original)) return [];
  const name = listing.names.get(original) ?? original;
  const schema = listing.schemas.get(original);
  const unfit = listing.unfit.get(original);
  const described = listing.descriptions.has(original);
  const misshapen = listing.misshapen.get(original);
  const unchanged = schema === undefined && unfit === undefined && !described && !misshapen;
  if (name === original && unchanged) return [tool];
  // What no client takes left out first: a description or `_meta` the proxy writes stands.
  const shown = misshapen ? withoutMembers(tool, misshapen) : tool;
  const meta = isPlainObject(shown._meta) ? shown._meta : {};
  const description = listing.descriptions.get(original);
  return [
    writtenAsIn(
      {
        ...shown,
        name,
        ...(described ? { description } : {}),
        ...(schema === undefined ? {} : { inputSchema: schema }),
        ...(unfit === undefined
          ? {}
          : { _meta: writtenAsIn({ ...meta, [UNFIT_META]: unfit }, meta) }),
      },
      tool,
    ),
  ];
}
