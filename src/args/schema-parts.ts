/**
 * What a schema says of a value's parts, for argument repair: an array's elements (its `items`,
 * a tuple's places) and a map's values (`additionalProperties`), read through `$ref`s, `allOf`
 * and the forms of an `anyOf`/`oneOf` that take such a value, as schema-reading.ts bounds them.
 * Schemas come from origins and are untrusted: every lookup is an own-property lookup.
 */
import { isPlainObject, own } from "../json";
import {
  declaresOnCondition,
  formsTogether,
  NO_FORMS,
  saysOfOtherKeys,
  typesIn,
} from "./json-schema";
import {
  allOfOf,
  branchesOf,
  type Reading,
  type RefTargets,
  readingOf,
  resolvedIn,
  type Schema,
} from "./schema-reading";

/** The schema every element of an array must match, when there is one. */
export function itemsOf(schema: unknown, root: Schema, targets?: RefTargets): unknown {
  return itemsIn(schema, readingOf(root, targets));
}

/**
 * A schema's own `items`, or else its `allOf` branches' (a declaration made of several), or else
 * what the forms of its `anyOf`/`oneOf` that take an array say of their elements (pydantic's
 * `list[Line] | None`, the array or `null`). A tuple has none: beside `prefixItems`, `items`
 * speaks only of the elements past them, and `items` as a list (draft-07) of each position.
 */
function itemsIn(schema: unknown, reading: Reading): unknown {
  const resolved = resolvedIn(schema, reading);
  if (!resolved || Array.isArray(own(resolved, "prefixItems"))) return undefined;
  const items = own(resolved, "items");
  if (isPlainObject(items)) return items;
  for (const branchItems of branchesOf(resolved, "allOf", reading, itemsIn)) {
    if (branchItems !== undefined) return branchItems;
  }
  return partsInForms(resolved, reading, "array", itemsIn);
}

/**
 * The schemas of a tuple's places, each the schema of the element at its position: its
 * `prefixItems`, or `items` as a list (draft-07), read through its `$ref`s and, where one form
 * of its `anyOf`/`oneOf` takes an array, that form's (`tuple[Priority, str] | None`);
 * `undefined` for a schema that is no tuple.
 */
export function tuplePlaces(
  schema: unknown,
  root: Schema,
  targets?: RefTargets,
): readonly unknown[] | undefined {
  const places = placesIn(schema, readingOf(root, targets));
  return Array.isArray(places) ? places : undefined;
}

function placesIn(schema: unknown, reading: Reading): unknown {
  const resolved = resolvedIn(schema, reading);
  if (!resolved) return undefined;
  for (const keyword of ["prefixItems", "items"]) {
    const places = own(resolved, keyword);
    if (Array.isArray(places)) return places;
  }
  return partsInForms(resolved, reading, "array", placesIn);
}

/** What a form whose type is known to exclude the value's says of its parts: nothing. */
const OF_ANOTHER_TYPE = Symbol("of another type");

/**
 * What the forms of `schema`'s `anyOf`/`oneOf` that may take a value of `type` say of its parts
 * (an array's elements, a map's values), each read with `read`: one schema, or several as an
 * `anyOf`, which stands for any of them, as a property several forms declare does
 * (`propertiesIn`): a part one of them takes is never brought to suit another. `undefined`
 * where a form may take any part, or none says.
 */
function partsInForms(
  schema: Schema,
  reading: Reading,
  type: "array" | "object",
  read: (form: unknown, reading: Reading) => unknown,
): unknown {
  const forms = formsTogether(schema, reading, (form, next) => {
    const types = typesIn(form, next);
    if (types && !types.has(type)) return new Set([OF_ANOTHER_TYPE]);
    const part = read(form, next);
    return part === undefined ? undefined : new Set([part]);
  });
  if (forms === NO_FORMS || forms === undefined) return undefined;
  const said = [...forms].filter((part) => part !== OF_ANOTHER_TYPE);
  if (said.length === 0) return undefined;
  return said.length === 1 ? said[0] : { anyOf: said };
}

/**
 * The schema an object schema gives the values of the keys it does not declare (a map:
 * `additionalProperties: {"type":"integer"}`, zod's `z.record`, pydantic's `dict[str, int]`),
 * or of the forms of its `anyOf`/`oneOf` that take an object (`dict[str, int] | None`), or
 * `undefined`. None where a key may be taken otherwise, which only the origin could tell: by
 * pattern, on a condition, by `unevaluatedProperties`, under an `allOf` branch (its own
 * `additionalProperties` speaks of the keys that branch does not declare), or by a form that
 * declares properties.
 */
export function otherKeysSchema(schema: unknown, root: Schema, targets?: RefTargets): unknown {
  return othersIn(schema, readingOf(root, targets));
}

function othersIn(schema: unknown, reading: Reading): unknown {
  const resolved = resolvedIn(schema, reading);
  if (!resolved || allOfOf(resolved) || declaresOnCondition(resolved, reading)) return undefined;
  for (const keyword of ["patternProperties", "unevaluatedProperties"]) {
    if (own(resolved, keyword) !== undefined) return undefined;
  }
  const additional = own(resolved, "additionalProperties");
  if (additional !== undefined) return saysOfOtherKeys(additional) ? additional : undefined;
  const properties = own(resolved, "properties");
  if (isPlainObject(properties) && Object.keys(properties).length > 0) return undefined;
  return partsInForms(resolved, reading, "object", othersIn);
}
