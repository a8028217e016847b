/**
 * What naming a listing tells the operator beside the listing itself, in
 * log lines bounded per listing (docs/logs.md): the tools whose own names
 * other tools have, and the operator's rules that name none of its tools.
 */
import { logEvent } from "../log";
import type { Taken } from "../names/assign";
import type { ToolRules } from "../rules/tool-rules";
import { type JudgedListing, type RuleJudgements, unmatchedRules } from "../rules/unmatched-rules";

/**
 * `tool_name_taken` lines per listing: an origin that lists thousands of
 * tools under names others have gets one more line for the rest, not one
 * per tool (a 16 MiB listing could otherwise log some 200,000 lines, a Free
 * plan's Workers Logs for a day).
 */
const TAKEN_LINES = 10;

/** A line for each of the first `TAKEN_LINES` tools whose own names others have, one for the rest. */
export function logTaken(taken: readonly Taken[]): void {
  for (const each of taken.slice(0, TAKEN_LINES)) logEvent("tool_name_taken", { ...each });
  if (taken.length <= TAKEN_LINES) return;
  const rest = taken.slice(TAKEN_LINES).map((each) => each.tool);
  logEvent("tool_names_taken_unlogged", { count: rest.length, tools: rest });
}

/**
 * A rule no tool of the whole listings judged answers to (a typo, a
 * model-facing name) is off, and nothing else says so: one line for those
 * this `listing` settles as such (rules/unmatched-rules.ts).
 */
export function logUnmatchedRules(
  rules: ToolRules,
  listing: JudgedListing,
  judged: RuleJudgements,
): void {
  const unmatched = unmatchedRules(rules.document, listing, judged);
  if (unmatched.length > 0) {
    logEvent("tool_rules_unmatched", { profile: listing.profile, rules: unmatched });
  }
}
