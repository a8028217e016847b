/** `allOf` merged into one schema (merge-branches.ts), then viewed (providers/gemini.ts: no `allOf`). */
import { MAX_MERGES, mergeBranches } from "../merge-branches";
import type { Pass } from "../pass";

export const allOfMerged: Pass = {
  phase: "enter",
  reads: ["allOf"],
  needed: (node) => Array.isArray(node.allOf),
  apply: (node, at, view) => {
    view.applied.add("all_of_merged");
    let merged = node;
    // Past `MAX_MERGES` rounds (a `$ref` back to the schema, or nesting no schema means), the
    // value is asked for as JSON text.
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
