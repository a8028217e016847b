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

/** Tools a `tool_members_left_out` line names; the rest are counted. */
const NAMED = 10;

/** original → the members (paths) its tool is shown without, for the tools of `tools` that have any. */
export function misshapenTools(
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
