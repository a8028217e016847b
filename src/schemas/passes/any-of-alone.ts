/**
 * `anyOf` beside nothing but words (providers/openai-strict.ts; the OpenAI
 * Agents SDK refuses `anyOf` combined with another keyword): every other
 * keyword goes into each branch, which says the same (a value must match the
 * node's keywords and one branch); where a branch has its own, the branch's
 * stays. A branch of one type takes only what constrains that type: a
 * keyword of another type says nothing there, and an `enum` value of another
 * type matches nothing there (a provider that checks enum values against
 * the type, as Gemini does, refuses one). A branch whose type takes none of
 * the node's `enum` accepts nothing, and is left out.
 */
import { isPlainObject } from "../../json";
import { constrains, isOfType } from "../keywords";
import type { Pass } from "../pass";

const WORDS = new Set(["anyOf", "description", "title"]);

/** What of `siblings` a branch of `type` takes; `undefined` when it takes no value of their `enum`. */
function siblingsFor(siblings: Record<string, unknown>, type: unknown) {
  if (typeof type !== "string") return siblings;
  const kept = Object.fromEntries(
    Object.entries(siblings).filter(([key]) => constrains(key, type)),
  );
  if (!Array.isArray(kept.enum)) return kept;
  const values = kept.enum.filter((value) => isOfType(value, type));
  return values.length === 0 ? undefined : { ...kept, enum: values };
}

export const anyOfAlone: Pass = {
  phase: "leave",
  reads: ["anyOf"],
  needed: (node) => Array.isArray(node.anyOf) && Object.keys(node).some((key) => !WORDS.has(key)),
  apply: (schema, _at, view) => {
    const moved = Object.keys(schema).filter((key) => !WORDS.has(key));
    const siblings = Object.fromEntries(moved.map((key) => [key, schema[key]]));
    const branches = (schema.anyOf as unknown[]).flatMap((branch) => {
      if (!isPlainObject(branch)) return [branch];
      const taken = siblingsFor(siblings, branch.type);
      return taken === undefined ? [] : [{ ...taken, ...branch }];
    });
    // Where no branch takes a value of the enum, the node accepts none: it says so as it did.
    schema.anyOf =
      branches.length > 0
        ? branches
        : (schema.anyOf as unknown[]).map((branch) =>
            isPlainObject(branch) ? { ...siblings, ...branch } : branch,
          );
    for (const key of moved) delete schema[key];
    view.applied.add("any_of_alone");
    // Each branch took the node's keywords: its enum, its properties, counted once.
    view.uncount();
    return schema;
  },
};
