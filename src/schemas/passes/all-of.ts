/**
 * `allOf` merged into one schema (merge-branches.ts), then viewed (providers/gemini.ts: no
 * `allOf`). Where branches each have forms (`anyOf`, `oneOf`), the view offers a form for each
 * way of taking one of each, within `MAX_FORMS`; past it, or past the view's room, the value is
 * asked for as JSON text: offered together, the forms took a value of one branch's that the
 * others refuse. A form offered in several combinations is written in each, which the origin's
 * schema did not: counted as an inlined `$ref` is (refs.ts), or a schema of a few hundred
 * characters, combinations of combinations, would be viewed as thousands of nodes uncounted.
 */
import { resolve } from "../../args/schema-reading";
import { isPlainObject } from "../../json";
import { type FormProduct, MAX_FORMS, MAX_MERGES, mergeBranches } from "../merge-branches";
import type { Pass } from "../pass";
import { countText, hasRoom, inlines, refCut, viewInlined } from "./refs";

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
    // One room for every round's combinations: a round's forms are the next round's list.
    const room = hasRoom(view) ? MAX_FORMS : 0;
    const product: FormProduct = { room, over: false, repeated: [] };
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
      merged = mergeBranches(merged, "allOf", merged.allOf, view.root, product);
      if (product.over) {
        view.applied.add("value_as_text");
        return view.textSchema(node, "The value, as JSON text.");
      }
    }
    // Forms written more than once weigh their text each time, and their nodes as inlined.
    for (const [form, times] of product.repeated) {
      const target = resolve(form, view.root);
      if (target !== undefined) view.inlined += times * view.textWeight(target);
    }
    const inlined = refs.size > 0 || product.repeated.length > 0;
    return inlined ? viewInlined(merged, [...refs], at, view) : view.view(merged, at);
  },
};
