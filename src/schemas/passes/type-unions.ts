/**
 * A `type` naming several types other than `null` as `anyOf`, one branch a
 * type (providers/openai-strict.ts); a type with `null` alone stays, as
 * strict mode writes "may be null".
 */
import type { Pass } from "../pass";

export const typeUnionsAsAnyOf: Pass = {
  phase: "enter",
  needed: (node) =>
    Array.isArray(node.type) && node.type.filter((type) => type !== "null").length > 1,
  apply: (schema, _at, view) => {
    const types = schema.type as unknown[];
    delete schema.type;
    const branches = types.map((type) => ({ type }));
    schema.anyOf = [...(Array.isArray(schema.anyOf) ? schema.anyOf : []), ...branches];
    view.applied.add("type_union_as_any_of");
    return schema;
  },
};
