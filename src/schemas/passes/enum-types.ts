/**
 * An `enum` without a `type` takes the types of its values (providers/openai-strict.ts:
 * every schema typed), before type unions are written as `anyOf`: `["fast",
 * "slow", null]` is `type: ["string", "null"]`, which strict mode takes as
 * "may be null", and `["a", 1]` a branch per type, each with its own values
 * (passes/any-of-alone.ts). An integer among other numbers is a number. An
 * enum that names objects or arrays is asked for as text before
 * (enum-as-text.ts).
 *
 * An `enum` beside a `type` keeps only the values of its types: strict mode
 * checks each value against the type (`enum value 0 does not validate against
 * {'type': ['integer', 'null']}`), and a value of another type is one no
 * argument can be anyway (JSON Schema applies both). Where none is of its
 * types, the `type` goes and the values type the node: the view stays one
 * the provider takes, and validation answers what the origin would.
 */

import type { Schema } from "../../args/json-schema";
import { jsonTypeOf } from "../../args/json-schema";
import { isOfType, typesOf } from "../keywords";
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

/** Whether `value` is of one of `types` (a name JSON Schema does not know takes any value). */
const ofTypes = (value: unknown, types: readonly string[]) =>
  types.some((type) => isOfType(value, type));

export const enumOfItsType: Pass = {
  phase: "enter",
  reads: ["enum"],
  needed: (node) => {
    const types = typesOf(node);
    return (
      types !== undefined &&
      Array.isArray(node.enum) &&
      node.enum.some((value) => !ofTypes(value, types))
    );
  },
  apply: (schema, _at, view) => {
    const types = typesOf(schema) as string[];
    const values = (schema.enum as unknown[]).filter((value) => ofTypes(value, types));
    if (values.length > 0) schema.enum = values;
    else delete schema.type;
    view.applied.add("enum_of_its_type");
    return schema;
  },
};
