/** `allOf` merged into one schema (merge-branches.ts), then viewed (providers/gemini.ts: no `allOf`). */
import { mergeBranches } from "../merge-branches";
import type { Pass } from "../pass";

export const allOfMerged: Pass = {
  phase: "enter",
  needed: (node) => Array.isArray(node.allOf),
  apply: (node, at, view) => {
    view.applied.add("all_of_merged");
    return view.view(mergeBranches(node, "allOf", node.allOf as unknown[], view.root), at);
  },
};
