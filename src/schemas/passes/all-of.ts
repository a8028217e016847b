/** `allOf` merged into one schema (merge-branches.ts), then viewed (providers/gemini.ts: no `allOf`). */
import { mergeBranches } from "../merge-branches";
import type { Pass } from "../pass";

/**
 * Rounds of merging one node may take: a branch's own `allOf` is merged in
 * the next. Past this (a `$ref` back to the schema, or nesting no schema
 * means), the value is asked for as JSON text. A loop, not a view per round:
 * each view would take a stack frame that a deep enough schema runs out of.
 */
const MAX_MERGES = 16;

export const allOfMerged: Pass = {
  phase: "enter",
  needed: (node) => Array.isArray(node.allOf),
  apply: (node, at, view) => {
    view.applied.add("all_of_merged");
    let merged = node;
    for (let round = 0; Array.isArray(merged.allOf); round++) {
      if (round === MAX_MERGES) {
        view.applied.add("value_as_text");
        return view.textSchema(node, "The value, as JSON text.");
      }
      merged = mergeBranches(merged, "allOf", merged.allOf, view.root);
    }
    return view.view(merged, at);
  },
};
