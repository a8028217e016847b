/**
 * Every object closed and every property required, an optional one made
 * nullable instead (providers/openai-strict.ts: strict mode's `All fields must
 * be required`, `additionalProperties: false must always be set`). On the way
 * back, a `null` for a property the view made nullable means "left out", and
 * goes (way-back.ts); a property that took `null` already keeps its `null`.
 */
import { valuesExcludeNull } from "../../args/json-schema";
import { ownKey as hasOwnKey, isPlainObject, setOwn, writtenAsIn } from "../../json";
import { hasType, typesOf } from "../keywords";
import { noteOn } from "../notes";
import type { Pass, ViewContext } from "../pass";

// A constant of this module, which V8 folds into the `for…in` below (json.ts, `ownKey`).
const ownKey = hasOwnKey;

/** Whether a schema already lets `null` through, as strict mode reads it. */
function allowsNull(schema: Record<string, unknown>): boolean {
  // `["string","null"]` beside `["asc","desc"]` takes no null, as repair reads it too: taken
  // for nullable, it would give strict mode no way to leave the property out.
  if (valuesExcludeNull(schema)) return false;
  if (hasType(schema, "null")) return true;
  if (Array.isArray(schema.anyOf))
    return schema.anyOf.some((b) => isPlainObject(b) && allowsNull(b));
  return schema.type === undefined && Array.isArray(schema.enum) && schema.enum.includes(null);
}

/**
 * `schema`'s keywords in their order, with `type` as given: written key by key, not as a
 * spread with `type` after it, which over the many shapes of a listing's schemas costs more
 * (openai-strict's views of npm run bench's listing, a tenth of their time).
 */
function withType(schema: Record<string, unknown>, type: unknown[]): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  for (const key in schema) {
    if (ownKey.call(schema, key)) setOwn(result, key, key === "type" ? type : schema[key]);
  }
  return result;
}

/**
 * `schema` that also takes `null`: a type with `null`, a `null` branch, `null` among the values.
 * The walk's own copy of a property (one a pass changed already) is changed in place, not copied
 * again; its lists are new all the same, as the origin's may be among them.
 */
function nullable(schema: unknown, view: ViewContext): unknown {
  if (!isPlainObject(schema) || allowsNull(schema)) return schema;
  let result: Record<string, unknown> | undefined;
  const owned = view.owns(schema);
  const type = schema.type;
  if (typeof type === "string" || Array.isArray(type)) {
    const named = typesOf(schema) ?? [];
    const types = named.includes("null") ? named : [...named, "null"];
    if (owned) schema.type = types;
    result = owned ? schema : withType(schema, types);
  } else if (Array.isArray(schema.anyOf)) {
    const anyOf = [...schema.anyOf, { type: "null" }];
    result = owned ? schema : { ...schema };
    result.anyOf = anyOf;
  } else if (Array.isArray(schema.enum)) result = owned ? schema : { ...schema };
  if (result === undefined) return schema;
  // A copy keeps the texts its numbers were read from, as the walk's copies do (walk.ts `copy`).
  if (result !== schema) writtenAsIn(result, schema);
  if (Array.isArray(result.enum) && !result.enum.includes(null))
    result.enum = writtenAsIn([...result.enum, null], result.enum);
  view.keepAsText(schema, result);
  view.nullMeansAbsent(result);
  return result;
}

/** A node's `required`, to look names up in: a set where the list is long. */
type Names = ReadonlySet<unknown> | readonly unknown[];
const NO_NAMES: Names = [];

function requiredOf(node: Record<string, unknown>): Names {
  const required = node.required;
  if (!Array.isArray(required)) return NO_NAMES;
  return required.length > 16 ? new Set(required) : required;
}

function isIn(names: Names, name: string): boolean {
  return Array.isArray(names) ? names.includes(name) : (names as ReadonlySet<unknown>).has(name);
}

/** Whether a property of `properties` is left out of `required`. */
function someOptional(properties: Record<string, unknown>, required: Names): boolean {
  for (const name in properties)
    if (ownKey.call(properties, name) && !isIn(required, name)) return true;
  return false;
}

export const closedObjects: Pass = {
  phase: "leave",
  reads: ["properties"],
  needed: (node) => {
    const properties = node.properties;
    if (!isPlainObject(properties)) return false;
    return node.additionalProperties !== false || someOptional(properties, requiredOf(node));
  },
  apply: (schema, _at, view) => {
    const properties = schema.properties as Record<string, unknown>;
    const required = requiredOf(schema);
    const names = Object.keys(properties);
    if (someOptional(properties, required)) {
      // `properties` the walk copied already are closed in place (a property of theirs changed).
      const closed: Record<string, unknown> = view.owns(properties) ? properties : {};
      // `for…in`, not over `names`: V8 reads each value from the loop's own list of keys, where a
      // lookup by a name from a list was a fifth of this pass.
      for (const name in properties) {
        if (!ownKey.call(properties, name)) continue;
        const property = properties[name];
        const value = isIn(required, name) ? property : nullable(property, view);
        if (closed !== properties || value !== property) setOwn(closed, name, value);
      }
      schema.properties = closed;
      view.applied.add("optional_as_nullable");
    }
    const extra = schema.additionalProperties;
    if (extra !== undefined && extra !== false) {
      schema.description = noteOn(
        schema.description,
        "The tool accepts more keys than these, but they cannot be sent here.",
      );
    }
    if (extra !== false) {
      schema.additionalProperties = false;
      view.applied.add("objects_closed");
    }
    schema.required = names;
    return schema;
  },
};
