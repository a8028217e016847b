/** Reading a schema node's keywords the way every pass reads them. Pure. */

import { jsonTypeOf, type Schema } from "../args/json-schema";
import { isPlainObject } from "../json";

export const TYPES = ["string", "number", "integer", "boolean", "object", "array", "null"];

/**
 * Keywords a pass reads before a view that copies only its provider's
 * keywords (`ViewPasses.copies`) leaves them out, or turns them into words.
 */
export const READ_BEFORE_DROPPED = [
  "$ref",
  "allOf",
  "oneOf",
  "const",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "multipleOf",
  "uniqueItems",
  "default",
  "examples",
  "deprecated",
  "prefixItems",
];

/** Keywords that constrain values of one type only (JSON Schema validation, §6). */
const ONLY_FOR_TYPE: ReadonlyMap<string, string> = new Map([
  ...["pattern", "format", "minLength", "maxLength"].map((key) => [key, "string"] as const),
  ...["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"].map(
    (key) => [key, "number"] as const,
  ),
  ...["items", "prefixItems", "minItems", "maxItems", "uniqueItems", "contains"].map(
    (key) => [key, "array"] as const,
  ),
  ...[
    ...["properties", "required", "additionalProperties", "patternProperties"],
    ...["propertyNames", "minProperties", "maxProperties"],
  ].map((key) => [key, "object"] as const),
]);

/** Whether `keyword` constrains values of one type only: beside a node of another type it says nothing. */
export const isTypeSpecific = (keyword: string) => ONLY_FOR_TYPE.has(keyword);

/** Whether `keyword` constrains values of `type` (`number`'s constrain integers too). */
export function constrains(keyword: string, type: string): boolean {
  const only = ONLY_FOR_TYPE.get(keyword);
  return only === undefined || only === type || (only === "number" && type === "integer");
}

/** Whether `value` is of `type`, as JSON Schema reads types; any value for a type it does not name. */
export function isOfType(value: unknown, type: string): boolean {
  if (!TYPES.includes(type)) return true;
  const actual = jsonTypeOf(value);
  return actual === type || (actual === "integer" && type === "number");
}

/** The types a node names, as a list; `undefined` when it names none. */
export function typesOf(schema: Schema): string[] | undefined {
  const type = schema.type;
  if (typeof type === "string") return [type];
  if (Array.isArray(type)) return type.filter((t): t is string => typeof t === "string");
  return undefined;
}

/**
 * The types a value of both `a` and `b` may have: an integer is a number, so `number` and
 * `integer` meet in `integer`.
 */
export function commonTypes(a: readonly string[], b: readonly string[]): string[] {
  // A set, not a list looked through for each type: a `type` may name 50,000 (their square).
  const other = new Set(b);
  const common = new Set<string>();
  for (const type of a) {
    if (other.has(type)) common.add(type);
    else if (type === "integer" && other.has("number")) common.add(type);
    else if (type === "number" && other.has("integer")) common.add("integer");
  }
  return [...common];
}

/** Whether a node names types at all (`typesOf` is not `undefined`). */
export function namesTypes(schema: Schema): boolean {
  const type = schema.type;
  return typeof type === "string" || Array.isArray(type);
}

/** The first type a node names (`typesOf(schema)?.[0]`), without making the list of them. */
export function firstType(schema: Schema): string | undefined {
  const type = schema.type;
  if (typeof type === "string") return type;
  if (Array.isArray(type)) for (const name of type) if (typeof name === "string") return name;
  return undefined;
}

/** Whether a node names `type` among its types; allocates nothing (the read-only walk asks it of every node). */
export function hasType(schema: Schema, type: string): boolean {
  const named = schema.type;
  return named === type || (Array.isArray(named) && named.includes(type));
}

/**
 * `{"type": "null"}` or `{"const": null}`, with a description or title at most: a
 * form that takes null alone (beside another in an `anyOf`, that one may be null).
 */
export function isNullSchema(schema: unknown): boolean {
  if (!isPlainObject(schema) || Object.keys(schema).length > 2) return false;
  return schema.type === "null" || (Object.hasOwn(schema, "const") && schema.const === null);
}

/** A `$schema` naming a draft before 2020-12. */
export function isOlderDraft(value: unknown): boolean {
  return typeof value === "string" && !value.includes("2020-12");
}

export const EXCLUSIVE_BOUNDS = [
  ["exclusiveMinimum", "minimum", "greater"],
  ["exclusiveMaximum", "maximum", "less"],
] as const;

/** Keywords whose value is one schema, a list of them, or a map of names to them. */
const ONE_SCHEMA = [
  ...["items", "additionalProperties", "not", "if", "then", "else", "contains"],
  ...["propertyNames", "unevaluatedProperties", "unevaluatedItems"],
];
export const SCHEMA_LISTS = ["anyOf", "oneOf", "allOf", "prefixItems"];
export type Children = "one" | "list" | "map";
export const CHILDREN: ReadonlyMap<string, Children> = new Map([
  ...ONE_SCHEMA.map((keyword) => [keyword, "one"] as const),
  ...SCHEMA_LISTS.map((keyword) => [keyword, "list"] as const),
  ...["properties", "$defs", "definitions", "patternProperties", "dependentSchemas"].map(
    (keyword) => [keyword, "map"] as const,
  ),
]);

/**
 * `CHILDREN.get(keyword)`, as a `switch`: the walk asks it of every keyword of every node with
 * children, where a map's lookup was a twentieth of `openai-strict`'s views. The lists are
 * `CHILDREN`'s (schema-keywords.test.ts holds them to it); `properties` first, as most are.
 */
export function childrenIn(keyword: string): Children | undefined {
  switch (keyword) {
    case "properties":
    case "$defs":
    case "definitions":
    case "patternProperties":
    case "dependentSchemas":
      return "map";
    case "items":
    case "additionalProperties":
    case "not":
    case "if":
    case "then":
    case "else":
    case "contains":
    case "propertyNames":
    case "unevaluatedProperties":
    case "unevaluatedItems":
      return "one";
    case "anyOf":
    case "oneOf":
    case "allOf":
    case "prefixItems":
      return "list";
    default:
      return undefined;
  }
}
