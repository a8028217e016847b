/**
 * `oneOf` as `anyOf` (providers/gemini.ts: no `oneOf`): "exactly one of"
 * widens to "one of"; validation against the origin's schema keeps the rest.
 */
import type { Pass } from "../pass";

export const oneOfAsAnyOf: Pass = {
  phase: "enter",
  reads: ["oneOf"],
  needed: (node) => Array.isArray(node.oneOf),
  apply: (schema, _at, view) => {
    const oneOf = schema.oneOf as unknown[];
    schema.anyOf = [...(Array.isArray(schema.anyOf) ? schema.anyOf : []), ...oneOf];
    delete schema.oneOf;
    view.applied.add("one_of_as_any_of");
    return schema;
  },
};
