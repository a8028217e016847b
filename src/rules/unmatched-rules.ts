/**
 * The operator's rules that name no tool the origin lists (docs/rules.md, "A
 * rule that names no tool"): `npm run check` and startup cannot know the
 * origin's tools, and such a rule does nothing. The likeliest cause is a
 * model-facing name copied from a client's listing where rules take the
 * origin's, so each comes with the originals whose model-facing names it
 * names. Pure: tool-map.ts logs them.
 */
import { settingPath } from "../json";
import { matcher } from "./globs";
import type { ToolRulesDocument } from "./tool-rules";

/** A rule that names tools: its path as an operator reads it, what keys it as judged, what it names. */
interface NamingRule {
  path: string;
  key: string;
  named: (name: string) => boolean;
}

/** A rule no tool of a listing answers to, and the originals whose model-facing names it names. */
export interface UnmatchedRule {
  rule: string;
  modelFacingOf?: string[];
}

/** Each glob of `hide` and `only` (matched as its list matches), and each tool's own rule. */
function namingRules(document: ToolRulesDocument): NamingRule[] {
  const globbed = (list: "hide" | "only", longMatches: boolean) =>
    document[list].map((pattern, at) => {
      const path = settingPath(["TOOL_RULES", list, at]);
      return { path, key: `${path}\n${pattern}`, named: matcher([pattern], longMatches) };
    });
  const tools = Object.keys(document.tools).map((original) => {
    const path = settingPath(["TOOL_RULES", "tools", original]);
    return { path, key: path, named: (name: string) => name === original };
  });
  return [...globbed("hide", true), ...globbed("only", false), ...tools];
}

/** Each document's naming rules, compiled on first use. */
const compiled = new WeakMap<ToolRulesDocument, NamingRule[]>();

/**
 * The rules of `document` that name none of a whole listing's tools
 * (`listed`: original → model-facing name), each with the originals whose
 * model-facing name it names instead. `judged` holds the rules already told
 * or found naming a tool, by path and text, and gets those judged here: each
 * is judged once, a listing's tools tested against no rule again.
 */
export function unmatchedRules(
  document: ToolRulesDocument,
  listed: ReadonlyMap<string, string>,
  judged: Set<string>,
): UnmatchedRule[] {
  let naming = compiled.get(document);
  if (naming === undefined) {
    naming = namingRules(document);
    compiled.set(document, naming);
  }
  const unmatched: UnmatchedRule[] = [];
  // Made for the first rule not judged yet: most listings have none (or no rules at all).
  let originals: string[] | undefined;
  for (const { path, key, named } of naming) {
    if (judged.has(key)) continue;
    judged.add(key);
    originals ??= [...listed.keys()];
    if (originals.some(named)) continue;
    const modelFacingOf = [...listed].flatMap(([original, name]) =>
      name !== original && named(name) ? [original] : [],
    );
    unmatched.push(modelFacingOf.length > 0 ? { rule: path, modelFacingOf } : { rule: path });
  }
  return unmatched;
}
