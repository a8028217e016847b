/**
 * Keywords as numbers, for the lookups a view makes of every keyword of
 * every node (gate.ts: what each keyword tells the passes). A `switch` over
 * interned strings costs about what the loop around it does; a `Map`'s
 * lookup cost three times as much, a twentieth of `openai-strict`'s views.
 * The cases are `INDEXED`, in the order a listing's schemas have them most
 * (schema-keywords.test.ts holds the `switch` to the list).
 */

/** JSON Schema's keywords (2020-12 and the drafts before), OpenAPI's, and MCP's `x-mcp-header`, each at its index. */
export const INDEXED: readonly string[] = [
  "type",
  "description",
  "properties",
  "required",
  "items",
  "enum",
  "format",
  "title",
  "default",
  "additionalProperties",
  "minimum",
  "maximum",
  "anyOf",
  "oneOf",
  "allOf",
  "$ref",
  "const",
  "pattern",
  "minLength",
  "maxLength",
  "minItems",
  "maxItems",
  "examples",
  "example",
  "nullable",
  "$schema",
  "$defs",
  "definitions",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "multipleOf",
  "uniqueItems",
  "deprecated",
  "readOnly",
  "writeOnly",
  "minProperties",
  "maxProperties",
  "prefixItems",
  "additionalItems",
  "patternProperties",
  "propertyNames",
  "not",
  "if",
  "then",
  "else",
  "contains",
  "minContains",
  "maxContains",
  "dependentRequired",
  "dependentSchemas",
  "unevaluatedProperties",
  "unevaluatedItems",
  "$id",
  "$anchor",
  "$comment",
  "contentEncoding",
  "contentMediaType",
  "contentSchema",
  "$dynamicRef",
  "$dynamicAnchor",
  "$vocabulary",
  "dependencies",
  "discriminator",
  "x-mcp-header",
];

/** `INDEXED.indexOf(keyword)`, as a `switch`. */
export function keywordIndex(keyword: string): number {
  switch (keyword) {
    case "type":
      return 0;
    case "description":
      return 1;
    case "properties":
      return 2;
    case "required":
      return 3;
    case "items":
      return 4;
    case "enum":
      return 5;
    case "format":
      return 6;
    case "title":
      return 7;
    case "default":
      return 8;
    case "additionalProperties":
      return 9;
    case "minimum":
      return 10;
    case "maximum":
      return 11;
    case "anyOf":
      return 12;
    case "oneOf":
      return 13;
    case "allOf":
      return 14;
    case "$ref":
      return 15;
    case "const":
      return 16;
    case "pattern":
      return 17;
    case "minLength":
      return 18;
    case "maxLength":
      return 19;
    case "minItems":
      return 20;
    case "maxItems":
      return 21;
    case "examples":
      return 22;
    case "example":
      return 23;
    case "nullable":
      return 24;
    case "$schema":
      return 25;
    case "$defs":
      return 26;
    case "definitions":
      return 27;
    case "exclusiveMinimum":
      return 28;
    case "exclusiveMaximum":
      return 29;
    case "multipleOf":
      return 30;
    case "uniqueItems":
      return 31;
    case "deprecated":
      return 32;
    case "readOnly":
      return 33;
    case "writeOnly":
      return 34;
    case "minProperties":
      return 35;
    case "maxProperties":
      return 36;
    case "prefixItems":
      return 37;
    case "additionalItems":
      return 38;
    case "patternProperties":
      return 39;
    case "propertyNames":
      return 40;
    case "not":
      return 41;
    case "if":
      return 42;
    case "then":
      return 43;
    case "else":
      return 44;
    case "contains":
      return 45;
    case "minContains":
      return 46;
    case "maxContains":
      return 47;
    case "dependentRequired":
      return 48;
    case "dependentSchemas":
      return 49;
    case "unevaluatedProperties":
      return 50;
    case "unevaluatedItems":
      return 51;
    case "$id":
      return 52;
    case "$anchor":
      return 53;
    case "$comment":
      return 54;
    case "contentEncoding":
      return 55;
    case "contentMediaType":
      return 56;
    case "contentSchema":
      return 57;
    case "$dynamicRef":
      return 58;
    case "$dynamicAnchor":
      return 59;
    case "$vocabulary":
      return 60;
    case "dependencies":
      return 61;
    case "discriminator":
      return 62;
    case "x-mcp-header":
      return 63;
    default:
      return -1;
  }
}

/** keywords.ts `TYPES.indexOf(name)`, as a `switch`: a node's `type` is looked up as often. */
export function typeIndex(name: unknown): number {
  switch (name) {
    case "string":
      return 0;
    case "number":
      return 1;
    case "integer":
      return 2;
    case "boolean":
      return 3;
    case "object":
      return 4;
    case "array":
      return 5;
    case "null":
      return 6;
    default:
      return -1;
  }
}
