/**
 * An `enum` without a `type` takes the types of its values (providers/openai-strict.ts:
 * every schema typed), before type unions are written as `anyOf`: `["fast",
 * "slow", null]` is `type: ["string", "null"]`, which strict mode takes as
 * "may be null", and `["a", 1]` a branch per type, each with its own values
 * (passes/any-of-alone.ts). An integer among other numbers is a number. An
 * enum that names objects or arrays is asked for as text before
 * (enum-as-text.ts).
 */

import type { Schema } from "../../args/json-schema";
import { jsonTypeOf } from "../../args/json-schema";
import type { Pass } from "../pass";

/** The types of `values`, in the order first seen; `undefined` where they take no `type` to say. */
function typesOfValues(values: readonly unknown[]): string[] | undefined {
  const types = new Set(values.map(jsonTypeOf));
  if (types.has("number")) types.delete("integer");
  return types.size === 0 ? undefined : [...types];
}

const untypedEnum = (node: Schema) =>
  node.type === undefined && !Array.isArray(node.anyOf) && Array.isArray(node.enum);

export const enumTypes: Pass = {
  phase: "enter",
  reads: ["enum"],
  needed: (node) => untypedEnum(node) && typesOfValues(node.enum as unknown[]) !== undefined,
  apply: (schema, _at, view) => {
    const types = typesOfValues(schema.enum as unknown[]) as string[];
    schema.type = types.length === 1 ? types[0] : types;
    view.applied.add("type_supplied");
    return schema;
  },
};
