/** `allOf` merged into one schema (merge-branches.ts), then viewed (providers/gemini.ts: no `allOf`). */
import { resolve } from "../../args/schema-reading";
import { isPlainObject } from "../../json";
import { MAX_MERGES, mergeBranches } from "../merge-branches";
import type { Pass } from "../pass";
import { countText, inlines, refCut, viewInlined } from "./refs";

export const allOfMerged: Pass = {
  phase: "enter",
  reads: ["allOf"],
  needed: (node) => Array.isArray(node.allOf),
  apply: (node, at, view) => {
    view.applied.add("all_of_merged");
    let merged = node;
    // The `$ref`s merged in: inlined as refs.ts inlines one, within its bounds and counted with
    // its nodes. Uncounted, a listing of `allOf`s of one `$ref` each held 283 MiB of views
    // (test/node/schema-views-memory.test.ts).
    const refs = new Set<string>();
    // Past `MAX_MERGES` rounds (a `$ref` back to the schema, or nesting no schema means), the
    // value is asked for as JSON text.
    for (let round = 0; Array.isArray(merged.allOf); round++) {
      if (round === MAX_MERGES) {
        view.applied.add("value_as_text");
        return view.textSchema(node, "The value, as JSON text.");
      }
      // A round's branches are inside the `$ref`s of the rounds before, not inside each other.
      const inside = { ...at, refs: [...at.refs, ...refs] };
      for (const branch of merged.allOf) {
        const ref = isPlainObject(branch) ? branch.$ref : undefined;
        if (typeof ref !== "string" || !ref.startsWith("#")) continue;
        // One that resolves to nothing adds nothing to the merge: nothing to inline.
        const target = resolve(branch, view.root);
        if (target === undefined) continue;
        if (!inlines(ref, target, inside, view)) return refCut(ref, node, view);
        countText(target, view);
        refs.add(ref);
      }
      merged = mergeBranches(merged, "allOf", merged.allOf, view.root);
    }
    return refs.size === 0 ? view.view(merged, at) : viewInlined(merged, [...refs], at, view);
  },
};
