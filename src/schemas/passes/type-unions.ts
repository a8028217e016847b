/**
 * A `type` naming several types other than `null` as `anyOf`, one branch a
 * type (providers/openai-strict.ts); a type with `null` alone stays, as
 * strict mode writes "may be null". Each branch takes the keywords that
 * constrain its type alone (`items` the array's, `pattern` the string's), so
 * the passes after see each branch whole; the rest stay beside the branches.
 * A node with an `anyOf` of its own has a branch for each type and each of
 * its branches, typed: a value is one of the types and matches one of them.
 */
import type { Schema } from "../../args/json-schema";
import { isPlainObject, setOwn } from "../../json";
import { TYPE_LIST } from "../gate";
import { constrains, isTypeSpecific } from "../keywords";
import type { Pass } from "../pass";

/** The type of values both of `type` and of what `other` names; `undefined` when none are. */
function meet(type: string, other: unknown): string | undefined {
  const named = typeof other === "string" ? [other] : Array.isArray(other) ? other : undefined;
  if (named === undefined || named.includes(type)) return type;
  const numeric = (name: unknown) => name === "number" || name === "integer";
  return numeric(type) && named.some(numeric) ? "integer" : undefined;
}

/** `branch` for values of `type`, with what of `node` constrains that type; none where no such value matches it. */
function typedBranch(node: Schema, type: unknown, branch: unknown): Schema[] {
  if (typeof type !== "string") return [];
  if (branch === false || (branch !== true && !isPlainObject(branch))) return [];
  const own: Schema = branch === true ? {} : branch;
  const met = meet(type, own.type);
  if (met === undefined) return [];
  const typed: Schema = { type: met };
  for (const key of Object.keys(node)) {
    if (isTypeSpecific(key) && constrains(key, met)) setOwn(typed, key, node[key]);
  }
  for (const key of Object.keys(own)) {
    if (key !== "type" && constrains(key, met)) setOwn(typed, key, own[key]);
  }
  return [typed];
}

/**
 * `node` (whose `type` names several) as an `anyOf` of one branch per type
 * (and own branch), without `type` and the keywords the branches took. Also
 * the way nullability.ts writes a union for Gemini and the portable profile.
 */
export function typeUnionAsAnyOf(node: Schema, types: readonly unknown[]): void {
  const own = Array.isArray(node.anyOf) ? node.anyOf : [true];
  const branches = types.flatMap((type) =>
    own.flatMap((branch) => typedBranch(node, type, branch)),
  );
  // No value matches the node: its types alone, as an empty `anyOf` is no schema a provider takes.
  node.anyOf = branches.length > 0 ? branches : types.map((type) => ({ type }));
  delete node.type;
  for (const key of Object.keys(node)) if (isTypeSpecific(key)) delete node[key];
}

export const typeUnionsAsAnyOf: Pass = {
  phase: "enter",
  reads: [TYPE_LIST],
  needed: (node) =>
    Array.isArray(node.type) && node.type.filter((type) => type !== "null").length > 1,
  apply: (schema, _at, view) => {
    typeUnionAsAnyOf(schema, schema.type as unknown[]);
    view.applied.add("type_union_as_any_of");
    return schema;
  },
};
