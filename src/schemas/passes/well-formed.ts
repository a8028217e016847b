/**
 * Keywords whose values JSON Schema does not allow (an empty `anyOf` among
 * them) are left out, and a property or branch that is no schema takes any
 * value (`malformed_dropped`, every profile that adapts schemas): a provider
 * validates the schemas it is given, and one it refuses fails the whole
 * request, not only that tool's. The origin's own checks (args/, on the way
 * back) read its schema as it wrote it. A property's `required: true`, the
 * draft-03 form, names it in its object's `required` instead
 * (`required_collected`): what the origin meant.
 */
import { ownKey as hasOwnKey, isPlainObject, setOwn } from "../../json";
import { typeIndex } from "../keyword-index";
import { childrenIn } from "../keywords";
import type { Pass } from "../pass";

// A constant of this module, which V8 folds into the `for…in`s below (json.ts, `ownKey`).
const ownKey = hasOwnKey;

const isSchema = (value: unknown) => isPlainObject(value) || typeof value === "boolean";
const isString = (value: unknown) => typeof value === "string";
const isBoolean = (value: unknown) => typeof value === "boolean";
const isNumber = (value: unknown) => typeof value === "number";
const isCount = (value: unknown) => Number.isSafeInteger(value) && (value as number) >= 0;
// By its index, not `TYPES.includes`: nearly every node has a `type`.
const isType = (value: unknown) => typeIndex(value) >= 0;
/**
 * `required` and a list of types name each at most once (the meta-schema's `uniqueItems`).
 * A short list is compared in place: nearly every object has a `required`, and a set for each
 * is most of what reading it costs.
 */
function isUnique(list: unknown[]): boolean {
  if (list.length > 16) return new Set(list).size === list.length;
  for (let i = 1; i < list.length; i++) {
    for (let j = 0; j < i; j++) if (list[i] === list[j]) return false;
  }
  return true;
}
const isNameList = (value: unknown) =>
  Array.isArray(value) && value.every(isString) && isUnique(value);
// The meta-schema's `schemaArray` has `minItems: 1`: an empty list says nothing, and a provider
// that validates against it (Anthropic) refuses it.
const isSchemaList = (value: unknown) =>
  Array.isArray(value) && value.length > 0 && value.every(isSchema);

/** Whether `pattern` is a regular expression at all: a provider refuses one that is not. */
function isRegExp(pattern: string): boolean {
  try {
    new RegExp(pattern);
    return true;
  } catch {
    return false;
  }
}

function isSchemaMap(value: unknown): boolean {
  if (!isPlainObject(value)) return false;
  for (const name in value) if (ownKey.call(value, name) && !isSchema(value[name])) return false;
  return true;
}

/**
 * Whether `keyword`'s value maps names to schemas, or lists schemas: those the walk views
 * (keywords.ts `childrenIn`, a `switch` there too), and the maps it does not and draft 7's
 * `items` list (schema-keywords.test.ts holds them to `SCHEMA_LISTS` and `CHILDREN`).
 */
export function schemasIn(keyword: string): "map" | "list" | undefined {
  switch (keyword) {
    case "patternProperties":
    case "dependentSchemas":
      return "map";
    case "items":
      return "list";
    default: {
      const kind = childrenIn(keyword);
      return kind === "one" ? undefined : kind;
    }
  }
}

/**
 * Whether JSON Schema allows `value` for `keyword` (the 2020-12 meta-schema,
 * with draft 4's boolean bounds, draft 7's list of `items` and OpenAPI's
 * `nullable`), each schema of a list or map included. A table written as a
 * `switch`: a first listing looks up every keyword of every node.
 */
function wellWritten(keyword: string, value: unknown): boolean {
  switch (keyword) {
    // Nearly every node has these: asked first.
    case "description":
    case "title":
    case "format":
      return isString(value);
    case "type":
      return (
        isType(value) ||
        (Array.isArray(value) && value.length > 0 && value.every(isType) && isUnique(value))
      );
    case "additionalProperties":
    case "additionalItems":
    case "unevaluatedProperties":
    case "unevaluatedItems":
    case "propertyNames":
    case "contains":
    case "not":
    case "if":
    case "then":
    case "else":
      return isSchema(value);
    case "required":
      return isNameList(value);
    case "enum":
    case "examples":
      return Array.isArray(value);
    case "dependentRequired":
      return isPlainObject(value) && Object.values(value).every(isNameList);
    case "contentSchema":
      return isSchema(value);
    case "multipleOf":
      return isNumber(value) && (value as number) > 0;
    case "minimum":
    case "maximum":
      return isNumber(value);
    case "exclusiveMinimum":
    case "exclusiveMaximum":
      return isNumber(value) || isBoolean(value);
    case "minLength":
    case "maxLength":
    case "minItems":
    case "maxItems":
    case "minProperties":
    case "maxProperties":
    case "minContains":
    case "maxContains":
      return isCount(value);
    case "pattern":
      return isString(value) && isRegExp(value);
    case "$ref":
    case "$schema":
    case "$id":
    case "$anchor":
    case "$comment":
    case "contentEncoding":
    case "contentMediaType":
      return isString(value);
    case "uniqueItems":
    case "nullable":
    case "deprecated":
    case "readOnly":
    case "writeOnly":
      return isBoolean(value);
    default: {
      const schemas = schemasIn(keyword);
      if (schemas === "map") return isSchemaMap(value);
      if (schemas === "list")
        return isSchemaList(value) || (keyword === "items" && isSchema(value));
      return true;
    }
  }
}

/**
 * A malformed value brought to one JSON Schema allows, where what the origin
 * meant stays: a list or map of schemas with `{}` for each member that is no
 * schema (a property or branch taking any value, as the origin's own checks
 * will judge), `required` and a list of types with each name once.
 * `undefined` where there is no such value: the keyword goes.
 */
function wellWrittenAs(keyword: string, value: unknown): unknown {
  if ((keyword === "required" || keyword === "type") && Array.isArray(value)) {
    const once = [...new Set(value)];
    return once.length > 0 && once.every(keyword === "type" ? isType : isString) ? once : undefined;
  }
  if (schemasIn(keyword) === "list" && Array.isArray(value) && value.length > 0) {
    return value.map((item) => (isSchema(item) ? item : {}));
  }
  if (schemasIn(keyword) !== "map" || !isPlainObject(value)) return undefined;
  const repaired: Record<string, unknown> = {};
  for (const [name, member] of Object.entries(value)) {
    setOwn(repaired, name, isSchema(member) ? member : {});
  }
  return repaired;
}

const NONE: readonly string[] = [];

/** The properties of `node` that say `required: true` themselves (draft 3). */
function requiredByThemselves(node: Record<string, unknown>): readonly string[] {
  const { properties } = node;
  if (!isPlainObject(properties)) return NONE;
  let named: string[] | undefined;
  for (const name in properties) {
    const property = properties[name];
    if (!ownKey.call(properties, name) || !isPlainObject(property)) continue;
    if (property.required !== true) continue;
    named ??= [];
    named.push(name);
  }
  return named ?? NONE;
}

/**
 * Whether `properties` is no map of schemas, or names one that says `required: true`: one
 * reading of the map for both, as most nodes with properties have neither.
 */
function propertiesToMend(properties: unknown): boolean {
  if (!isPlainObject(properties)) return true;
  for (const name in properties) {
    if (!ownKey.call(properties, name)) continue;
    const property = properties[name];
    if (!isSchema(property) || (isPlainObject(property) && property.required === true)) return true;
  }
  return false;
}

export const wellFormed: Pass = {
  phase: "enter",
  needed: (node) => {
    for (const keyword in node) {
      if (!ownKey.call(node, keyword)) continue;
      const value = node[keyword];
      if (keyword === "properties" ? propertiesToMend(value) : !wellWritten(keyword, value))
        return true;
    }
    return false;
  },
  apply: (schema, _at, view) => {
    // Collected before the node's own `required` may go as malformed (`true` itself, say).
    const named = requiredByThemselves(schema);
    for (const keyword in schema) {
      if (!ownKey.call(schema, keyword) || wellWritten(keyword, schema[keyword])) continue;
      view.applied.add("malformed_dropped");
      const repaired = wellWrittenAs(keyword, schema[keyword]);
      if (repaired !== undefined) schema[keyword] = repaired;
      else {
        delete schema[keyword];
        view.dropped.add(keyword);
      }
    }
    if (named.length > 0) {
      const required = Array.isArray(schema.required) ? schema.required : [];
      schema.required = [...new Set([...required, ...named])];
      view.applied.add("required_collected");
    }
    return schema;
  },
};
