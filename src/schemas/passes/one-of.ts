/**
 * `oneOf` as `anyOf` (providers/gemini.ts: no `oneOf`): "exactly one of"
 * widens to "one of"; validation against the origin's schema keeps the rest.
 * Beside an `anyOf` of its own, both apply: viewed as an `allOf` of the two,
 * whose merge offers a form for each way of taking one of each (all-of.ts);
 * joined into one list, the forms took a value of one list's alone.
 */
import type { Pass } from "../pass";

export const oneOfAsAnyOf: Pass = {
  phase: "enter",
  reads: ["oneOf"],
  needed: (node) => Array.isArray(node.oneOf),
  apply: (schema, at, view) => {
    const { anyOf, oneOf, ...rest } = schema;
    view.applied.add("one_of_as_any_of");
    if (Array.isArray(anyOf)) return view.view({ ...rest, allOf: [{ anyOf }, { oneOf }] }, at);
    schema.anyOf = oneOf;
    delete schema.oneOf;
    return schema;
  },
};
