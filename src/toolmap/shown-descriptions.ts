/**
 * The descriptions a listing shows other than the origin's, by original
 * (`NamedListing.descriptions`): the operator's rules' (rules/apply-rules.ts),
 * then each as the profile's provider takes it (schemas/tool-descriptions.ts:
 * cut to OpenAI's 1,024 characters, an empty one left out for Bedrock), with
 * one line for those the provider would have refused.
 */
import { logEvent } from "../log";
import type { ListedTool } from "../protocol/tools-list";
import { WrittenTool } from "../protocol/written-tool";
import { ruleDescriptions } from "../rules/apply-rules";
import type { ToolRules } from "../rules/tool-rules";
import type { Profile } from "../schemas/profile";
import { DESCRIPTION_RULES, fittedDescription, mayChange } from "../schemas/tool-descriptions";

/** Tools a `tool_descriptions_fitted` line names; the rest are counted. */
const NAMED = 10;

/**
 * The tool's own description where the provider may refuse it, else
 * `undefined`: one read from a listing's text is not parsed where the
 * length of its text says the provider takes it (the usual one).
 */
function ownDescription(
  tool: ListedTool | undefined,
  rules: (typeof DESCRIPTION_RULES)[keyof typeof DESCRIPTION_RULES],
): string | undefined {
  if (tool instanceof WrittenTool) {
    const span = tool.spanOf("description");
    if (span === undefined || !mayChange(span[1] - span[0], rules)) return undefined;
  }
  const { description } = tool ?? {};
  return typeof description === "string" ? description : undefined;
}

export function shownDescriptions(
  entries: ReadonlyArray<{ original: string; tool: ListedTool | undefined }>,
  toolRules: Pick<ToolRules, "ruleFor">,
  profile: Profile,
  /** In search mode: no description is a function's, and the search reads each whole. */
  searched: boolean,
): Map<string, string | undefined> {
  const descriptions = ruleDescriptions(entries, toolRules);
  const rules = DESCRIPTION_RULES[profile.name];
  if (searched || (rules.max === undefined && !rules.nonEmpty)) return descriptions;
  const cut: string[] = [];
  let emptied = 0;
  for (const { original, tool } of entries) {
    const description = descriptions.has(original)
      ? descriptions.get(original)
      : ownDescription(tool, rules);
    if (description === undefined) continue;
    // The operator's paragraph, appended to the description, is what is kept of it first.
    const appended = descriptions.has(original)
      ? toolRules.ruleFor(original)?.appendDescription
      : undefined;
    const fitted = fittedDescription(description, rules, appended?.length);
    if (fitted === description) continue;
    descriptions.set(original, fitted);
    if (fitted === undefined) emptied++;
    else cut.push(original);
  }
  if (cut.length > 0 || emptied > 0) {
    logEvent("tool_descriptions_fitted", {
      profile: profile.name,
      ...(rules.max === undefined ? {} : { max: rules.max }),
      cut: cut.length,
      tools: cut.slice(0, NAMED),
      emptied,
    });
  }
  return descriptions;
}
