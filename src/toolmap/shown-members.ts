/**
 * The members a listing leaves out of its tools because MCP's clients refuse
 * them (protocol/tool-shape.ts: a `description` written `null`, hints that
 * are not booleans, no `inputSchema`), by original (`NamedListing.misshapen`),
 * with one line naming those tools. Each client throws for the whole listing
 * over one such member, so one tool written so left the model no tool.
 */
import { logEvent } from "../log";
import type { ListedTool } from "../protocol/tools-list";
import { misshapenOf } from "../protocol/written-tool";
import type { NamedListing } from "./named-listing";
import type { ToolEntry } from "./plan-listing";
import type { SchemaViews } from "./schema-views";

/** Tools a `tool_members_left_out` line names; the rest are counted. */
const NAMED = 10;

/** What a listing shows of its tools apart from their names and descriptions. */
type ShownApart = Pick<NamedListing, "schemas" | "unfit" | "misshapen">;

/**
 * Search mode's: it shows no tool's schema here, nor its members. A search views them when it
 * first needs them, and shows their title and description only where they are strings.
 */
export const shownInSearchMode = (): ShownApart => ({
  schemas: new Map(),
  unfit: new Map(),
  misshapen: new Map(),
});

/**
 * Each tool's schema as the profile's view (`views`), and the members it is shown without: an
 * input schema that is no object shown as one that takes any arguments, in the profile's view.
 */
export function shownMembers(
  tools: readonly ListedTool[],
  hidden: ReadonlySet<string>,
  entries: ReadonlyArray<ToolEntry & { name: string }>,
  views: SchemaViews,
  profile: string,
): ShownApart {
  const { schemas, unfit } = views.ofListing(entries);
  const misshapen = misshapenTools(tools, hidden, profile);
  for (const [original, members] of misshapen) {
    if (members.includes("inputSchema")) schemas.set(original, views.anyArguments());
  }
  return { schemas, unfit, misshapen };
}

/** original → the members (paths) its tool is shown without, for the tools of `tools` that have any. */
function misshapenTools(
  tools: readonly ListedTool[],
  hidden: ReadonlySet<string>,
  profile: string,
): Map<string, readonly string[]> {
  const misshapen = new Map<string, readonly string[]>();
  for (const tool of tools) {
    if (hidden.has(tool.name)) continue;
    const members = misshapenOf(tool);
    if (members.length > 0) misshapen.set(tool.name, members);
  }
  if (misshapen.size > 0) {
    logEvent("tool_members_left_out", {
      profile,
      count: misshapen.size,
      tools: [...misshapen].slice(0, NAMED).map(([tool, members]) => ({ tool, members })),
    });
  }
  return misshapen;
}
