/**
 * `anyOf` beside nothing but words (providers/openai-strict.ts; the OpenAI
 * Agents SDK refuses `anyOf` combined with another keyword): every other
 * keyword goes into each branch, which says the same (a value must match the
 * node's keywords and one branch); where a branch has its own, the branch's
 * stays.
 */
import { isPlainObject } from "../../json";
import type { Pass } from "../pass";

const WORDS = new Set(["anyOf", "description", "title"]);

export const anyOfAlone: Pass = {
  phase: "leave",
  needed: (node) => Array.isArray(node.anyOf) && Object.keys(node).some((key) => !WORDS.has(key)),
  apply: (schema, _at, view) => {
    const moved = Object.keys(schema).filter((key) => !WORDS.has(key));
    const siblings = Object.fromEntries(moved.map((key) => [key, schema[key]]));
    schema.anyOf = (schema.anyOf as unknown[]).map((branch) =>
      isPlainObject(branch) ? { ...siblings, ...branch } : branch,
    );
    for (const key of moved) delete schema[key];
    view.applied.add("any_of_alone");
    return schema;
  },
};
