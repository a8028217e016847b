/** The operator's rules as tests write them. */
import * as v from "valibot";
import { ToolRules, type ToolRulesDocument, ToolRulesSetting } from "../../src/rules/tool-rules";

/** The rules a `TOOL_RULES` setting gives, read and checked as at startup (config/). */
export const rulesOf = (setting: unknown): ToolRules =>
  new ToolRules(v.parse(ToolRulesSetting, setting) as ToolRulesDocument);
