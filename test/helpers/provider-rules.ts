/**
 * What each LLM provider accepts in a tool's input schema, written from the
 * providers' documentation and the errors they answer with, independently of
 * src/schemas: the tests hold the proxy's views to these.
 *
 * - OpenAI function calling: the root is an object schema with no `anyOf`,
 *   `oneOf` or `allOf` beside it (`got 'type: "None"'`); arrays name `items`
 *   (`array schema missing items`), objects `properties` (`object schema
 *   missing properties`).
 * - Anthropic `input_schema` (and Claude through Bedrock Converse): the root as
 *   above (`does not support oneOf, allOf, or anyOf at the top level`), and
 *   valid JSON Schema 2020-12 (`It must match JSON Schema draft 2020-12`): no
 *   older `$schema`, no boolean `exclusiveMinimum`/`exclusiveMaximum`, no
 *   array-valued `items`, no OpenAPI `nullable`, no empty list of schemas
 *   (the meta-schema's `schemaArray` has `minItems: 1`), no name twice in
 *   `required` or `type` (`uniqueItems: true`), `examples` an array.
 * - Bedrock Converse `inputSchema.json`: `type must be one of the following:
 *   object`, and Anthropic's rules for Claude.
 * - OpenAI strict mode (`strict: true`, Structured Outputs, "Supported
 *   schemas"): the root an object and not `anyOf`; every object
 *   `additionalProperties: false` and every property in `required`; only the
 *   supported keywords (types, `anyOf`, `enum`, `$defs`/`$ref`, `description`,
 *   `title`, strings `pattern` and nine `format`s, numbers `multipleOf`,
 *   `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, arrays
 *   `minItems`, `maxItems`); every schema typed, and every `enum` value of
 *   its type (`enum value 0 does not validate against {'type': ['integer',
 *   'null']}`, reported by clients that wrote enums as strings); at most 5,000 object
 *   properties, 10 levels of nesting, 1,000 enum values, 120,000 characters
 *   of property names and enum values.
 * - Gemini `function_declarations[].parameters` (an OpenAPI 3.0 `Schema`):
 *   only its fields (`Unknown name "…"`), one `type` per schema (`Proto field
 *   is not repeating`) and no `null` type, string enums (`TYPE_STRING`),
 *   string formats `enum` and `date-time` (`int32`/`int64`, `float`/`double`
 *   for numbers), no `$ref` (`reference to undefined schema`), `required`
 *   naming declared properties (`property is not defined`), arrays with
 *   `items` (`items: missing field`), nested objects with properties
 *   (`should be non-empty for OBJECT type`), RE2 patterns; `anyOf` with no
 *   other field beside it, `description` and `nullable` included (Vertex AI:
 *   `schema specified other fields alongside any_of. When using any_of, it
 *   must be the only field set`, reported for pydantic's described unions and
 *   Go's jsonschema-go `["null","array"]` beside a `description`).
 */
import type { Schema as GeminiSchema } from "@google/genai";
import { RE2JS } from "re2js";

type Schema = Record<string, unknown>;

/** Whether RE2 (Gemini's regular expressions) compiles `pattern`: RE2JS is RE2, in JavaScript. */
function runsInRe2(pattern: string): boolean {
  try {
    RE2JS.compile(pattern);
    return true;
  } catch {
    return false;
  }
}

const isObject = (value: unknown): value is Schema =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const SCHEMA_MAPS = ["properties", "$defs", "definitions", "patternProperties", "dependentSchemas"];
const SUBSCHEMAS = [
  "items",
  "additionalProperties",
  "not",
  "if",
  "then",
  "else",
  "contains",
  "propertyNames",
  "additionalItems",
];
const SCHEMA_LISTS = ["anyOf", "oneOf", "allOf", "prefixItems"];

/** The schemas directly inside `schema`: its members' values, never the maps that hold them. */
function childSchemas(schema: Schema): unknown[] {
  const children: unknown[] = [];
  for (const [keyword, value] of Object.entries(schema)) {
    if (SCHEMA_MAPS.includes(keyword)) {
      if (isObject(value)) children.push(...Object.values(value));
    } else if (SUBSCHEMAS.includes(keyword)) {
      if (Array.isArray(value)) children.push(...value);
      else children.push(value);
    } else if (SCHEMA_LISTS.includes(keyword) && Array.isArray(value)) {
      children.push(...value);
    }
  }
  return children;
}

/** Every schema inside `schema` (itself included), with whether it is the root. */
export function* schemasIn(schema: unknown, root = true): Generator<[Schema, boolean]> {
  if (!isObject(schema)) return;
  yield [schema, root];
  for (const child of childSchemas(schema)) yield* schemasIn(child, false);
}

/** The property names a schema declares anywhere, `$defs` and compositions included. */
export function declaredNames(schema: unknown): Set<string> {
  const names = new Set<string>();
  for (const [node] of schemasIn(schema)) {
    if (isObject(node.properties)) for (const name of Object.keys(node.properties)) names.add(name);
    if (Array.isArray(node.required)) for (const name of node.required) names.add(String(name));
  }
  return names;
}

/**
 * Gemini's fields, from the Google Gen AI SDK's own `Schema` type: `satisfies`
 * makes the type check fail when the SDK adds or removes one, so this list is
 * the SDK's, not a copy of what the proxy keeps.
 */
const GEMINI_FIELDS = new Set(
  Object.keys({
    anyOf: true,
    default: true,
    description: true,
    enum: true,
    example: true,
    format: true,
    items: true,
    maxItems: true,
    maxLength: true,
    maxProperties: true,
    maximum: true,
    minItems: true,
    minLength: true,
    minProperties: true,
    minimum: true,
    nullable: true,
    pattern: true,
    properties: true,
    propertyOrdering: true,
    required: true,
    title: true,
    type: true,
  } satisfies Record<keyof GeminiSchema, true>),
);
const GEMINI_TYPES = new Set(["string", "number", "integer", "boolean", "object", "array"]);
const GEMINI_FORMATS: Record<string, string[]> = {
  string: ["enum", "date-time"],
  integer: ["int32", "int64"],
  number: ["float", "double"],
};

/** What every provider refuses at the root: anything but one object schema. */
export function rootRules(schema: unknown): string[] {
  if (!isObject(schema)) return ["root is not an object schema"];
  const problems: string[] = [];
  if (schema.type !== "object") problems.push(`root type is ${JSON.stringify(schema.type)}`);
  for (const keyword of ["anyOf", "oneOf", "allOf"]) {
    if (keyword in schema) problems.push(`root has ${keyword}`);
  }
  return problems;
}

function openAiRules(schema: unknown): string[] {
  const problems = rootRules(schema);
  for (const [node] of schemasIn(schema)) {
    const types = [node.type].flat();
    if (types.includes("array") && !isObject(node.items))
      problems.push("array schema missing items");
    if (types.includes("object") && !isObject(node.properties)) {
      problems.push("object schema missing properties");
    }
  }
  return problems;
}

/** Anthropic's and Bedrock's pattern for the names of the root's properties (theirs alone). */
const ANTHROPIC_KEY = /^[a-zA-Z0-9_.-]{1,64}$/;

function anthropicRules(schema: unknown): string[] {
  const problems = rootRules(schema);
  const properties = isObject(schema) ? schema.properties : undefined;
  for (const key of isObject(properties) ? Object.keys(properties) : []) {
    if (!ANTHROPIC_KEY.test(key)) problems.push(`property key ${JSON.stringify(key)} at the root`);
  }
  for (const [node] of schemasIn(schema)) {
    if (typeof node.$schema === "string" && !node.$schema.includes("2020-12")) {
      problems.push(`$schema ${node.$schema}`);
    }
    for (const keyword of ["exclusiveMinimum", "exclusiveMaximum"]) {
      if (keyword in node && typeof node[keyword] !== "number")
        problems.push(`${keyword} is not a number`);
    }
    if (Array.isArray(node.items)) problems.push("items is an array (a draft-07 tuple)");
    for (const keyword of ["anyOf", "oneOf", "allOf", "prefixItems"]) {
      const list = node[keyword];
      if (Array.isArray(list) && list.length === 0) problems.push(`${keyword} is empty`);
    }
    if ("examples" in node && !Array.isArray(node.examples)) problems.push("examples is no array");
    for (const keyword of ["required", "type"]) {
      const list = node[keyword];
      if (Array.isArray(list) && new Set(list).size < list.length)
        problems.push(`${keyword} names one twice`);
    }
    if ("nullable" in node) problems.push("nullable (OpenAPI)");
  }
  return problems;
}

/**
 * Where a node holds `true` or `false` as a schema (in `properties`, a list,
 * `items`): Gemini's `Schema` is a message, which no boolean fills, and strict
 * mode wants an object schema in each place. `additionalProperties` aside.
 */
function booleanSchemas(node: Schema): string[] {
  const isBoolean = (value: unknown) => typeof value === "boolean";
  const places: string[] = [];
  if (isObject(node.properties)) {
    for (const [name, child] of Object.entries(node.properties))
      if (isBoolean(child)) places.push(`properties.${name}`);
  }
  for (const keyword of ["anyOf", "oneOf", "allOf", "prefixItems"]) {
    const list = node[keyword];
    if (Array.isArray(list) && list.some(isBoolean)) places.push(keyword);
  }
  if (isBoolean(node.items)) places.push("items");
  return places.map((place) => `a boolean schema in ${place}`);
}

function geminiRules(schema: unknown): string[] {
  const problems = rootRules(schema);
  for (const [node, root] of schemasIn(schema)) {
    problems.push(...booleanSchemas(node));
    for (const keyword of Object.keys(node)) {
      if (!GEMINI_FIELDS.has(keyword)) problems.push(`Unknown name "${keyword}"`);
    }
    if (node.type === undefined && !Array.isArray(node.anyOf)) problems.push("no type");
    if (Array.isArray(node.anyOf) && Object.keys(node).some((keyword) => keyword !== "anyOf")) {
      problems.push("other fields alongside any_of");
    }
    if (
      node.type !== undefined &&
      (typeof node.type !== "string" || !GEMINI_TYPES.has(node.type))
    ) {
      problems.push(`type ${JSON.stringify(node.type)}`);
    }
    if (Array.isArray(node.enum)) {
      if (node.enum.some((value) => typeof value !== "string"))
        problems.push("enum value not a string");
      if (node.type !== "string") problems.push("enum on a non-string type");
    }
    if (
      typeof node.format === "string" &&
      !GEMINI_FORMATS[String(node.type)]?.includes(node.format)
    ) {
      problems.push(`format ${node.format}`);
    }
    if (typeof node.pattern === "string" && !runsInRe2(node.pattern)) {
      problems.push("pattern RE2 cannot run");
    }
    if (Array.isArray(node.required)) {
      const declared = isObject(node.properties) ? node.properties : {};
      for (const name of node.required) {
        if (!Object.hasOwn(declared, String(name)))
          problems.push(`required ${name} is not defined`);
      }
    }
    if (node.type === "array" && !isObject(node.items)) problems.push("items: missing field");
    if (node.type === "object" && !root) {
      if (!isObject(node.properties) || Object.keys(node.properties).length === 0) {
        problems.push("properties: should be non-empty for OBJECT type");
      }
    }
  }
  return problems;
}

const STRICT_KEYWORDS = new Set([
  "type",
  "anyOf",
  "enum",
  "$defs",
  "$ref",
  "description",
  "title",
  "properties",
  "required",
  "additionalProperties",
  "items",
  "pattern",
  "format",
  "multipleOf",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "minItems",
  "maxItems",
]);
const STRICT_FORMATS = new Set([
  "date-time",
  "time",
  "date",
  "duration",
  "email",
  "hostname",
  "ipv4",
  "ipv6",
  "uuid",
]);

/** How deep objects nest in `schema`: the root object is level 1. */
/**
 * Levels of objects with properties, schema inside schema: a map of
 * properties is no level of its own, though one of them is named `properties`.
 */
function objectNesting(schema: unknown): number {
  if (!isObject(schema)) return 0;
  const inner = Math.max(0, ...childSchemas(schema).map(objectNesting));
  return isObject(schema.properties) ? 1 + inner : inner;
}

/** Whether `value` is of one of `types`, as JSON Schema reads them (an integer is a number). */
function ofTypes(value: unknown, types: unknown[]): boolean {
  const type =
    value === null
      ? "null"
      : Array.isArray(value)
        ? "array"
        : typeof value === "number" && Number.isInteger(value)
          ? "integer"
          : typeof value;
  return types.includes(type) || (type === "integer" && types.includes("number"));
}

function openAiStrictRules(schema: unknown): string[] {
  const problems = rootRules(schema);
  let properties = 0;
  let enumValues = 0;
  let characters = 0;
  for (const [node] of schemasIn(schema)) {
    problems.push(...booleanSchemas(node));
    for (const keyword of Object.keys(node)) {
      if (!STRICT_KEYWORDS.has(keyword)) problems.push(`unsupported keyword ${keyword}`);
    }
    const types = [node.type].flat();
    if (node.type === undefined && !Array.isArray(node.anyOf) && node.$ref === undefined) {
      if (!Array.isArray(node.enum)) problems.push("schema without a type");
    }
    if (isObject(node.properties) || types.includes("object")) {
      if (node.additionalProperties !== false)
        problems.push("'additionalProperties' is required to be supplied and to be false");
      const keys = Object.keys(isObject(node.properties) ? node.properties : {});
      const required = Array.isArray(node.required) ? node.required : [];
      if (keys.some((key) => !required.includes(key)))
        problems.push("'required' must include every key in properties");
      properties += keys.length;
      characters += keys.join("").length;
    }
    if (types.includes("array") && !isObject(node.items))
      problems.push("array schema missing items");
    if (typeof node.format === "string" && !STRICT_FORMATS.has(node.format))
      problems.push(`format ${node.format}`);
    if (Array.isArray(node.enum)) {
      if (node.type !== undefined) {
        for (const value of node.enum.filter((value) => !ofTypes(value, types)))
          problems.push(`enum value ${JSON.stringify(value)} does not validate against its type`);
      }
      enumValues += node.enum.length;
      characters += node.enum.map(String).join("").length;
    }
  }
  if (objectNesting(schema) > 10) problems.push("more than 10 levels of nesting");
  if (properties > 5_000) problems.push("more than 5,000 object properties");
  if (enumValues > 1_000) problems.push("more than 1,000 enum values");
  if (characters > 120_000) problems.push("more than 120,000 characters of names and values");
  return problems;
}

/** What the provider behind `profile` would refuse in `schema`; empty when it accepts it. */
export const PROVIDER_RULES: Record<string, (schema: unknown) => string[]> = {
  openai: openAiRules,
  "openai-strict": openAiStrictRules,
  anthropic: anthropicRules,
  bedrock: anthropicRules,
  gemini: (schema) => [...openAiRules(schema), ...geminiRules(schema)],
  portable: (schema) => [
    ...new Set([...openAiRules(schema), ...anthropicRules(schema), ...geminiRules(schema)]),
  ],
};
