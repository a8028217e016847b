/**
 * What each LLM provider accepts in a tool's input schema, as rule sets the
 * view (view.ts) applies. docs/schemas.md shows each rule with a
 * before and after; the sources are the providers' documentation and the
 * errors they answer with.
 */
import type { ProfileName } from "../names/profiles";

export interface SchemaRules {
  /**
   * The root is `type: "object"`, with no `anyOf`, `oneOf` or `allOf` beside it.
   * OpenAI: `got 'type: "None"'`; Anthropic: `input_schema does not support
   * oneOf, allOf, or anyOf at the top level`; Bedrock: `type must be one of
   * the following: object`; Gemini likewise.
   */
  objectRoot: boolean;
  /**
   * Every array says what its items are, and every object what its properties
   * are. OpenAI: `array schema missing items`, `object schema missing
   * properties`; Gemini: `items: missing field`, `properties: should be
   * non-empty for OBJECT type`.
   */
  explicitShapes: boolean;
  /**
   * The schema is valid JSON Schema 2020-12: no draft-04 boolean
   * `exclusiveMinimum`, no draft-07 tuple `items`, no `$schema` naming an
   * older draft, no OpenAPI `nullable`. Anthropic (and Claude on Bedrock):
   * `JSON schema is invalid. It must match JSON Schema draft 2020-12`.
   */
  draft202012: boolean;
  /**
   * Gemini's `parameters` are an OpenAPI 3.0 subset: a fixed set of keywords
   * (`Invalid JSON payload received. Unknown name "…"`), one `type` per schema
   * (`Proto field is not repeating`), string enums only, string formats
   * `enum` and `date-time` only, no `$ref` (`reference to undefined schema`),
   * `required` naming declared properties only.
   */
  openApiSubset: boolean;
  /** How a value that may be null says so: a type array (JSON Schema), `nullable: true` (OpenAPI), or not at all. */
  nullable: "type-array" | "keyword" | "omit";
}

const AS_IS: SchemaRules = {
  objectRoot: false,
  explicitShapes: false,
  draft202012: false,
  openApiSubset: false,
  nullable: "type-array",
};

export const SCHEMA_RULES: Readonly<Record<ProfileName, SchemaRules>> = {
  openai: { ...AS_IS, objectRoot: true, explicitShapes: true },
  anthropic: { ...AS_IS, objectRoot: true, draft202012: true },
  bedrock: { ...AS_IS, objectRoot: true, draft202012: true },
  gemini: {
    objectRoot: true,
    explicitShapes: true,
    draft202012: false,
    openApiSubset: true,
    nullable: "keyword",
  },
  // Every provider at once: each rule above, and no way to say "may be null"
  // that all of them accept (Gemini refuses type arrays, Anthropic `nullable`).
  portable: {
    objectRoot: true,
    explicitShapes: true,
    draft202012: true,
    openApiSubset: true,
    nullable: "omit",
  },
  mcp: AS_IS,
};

/** Whether the rules change nothing: the view is the schema itself. */
export function changesNothing(rules: SchemaRules): boolean {
  return !rules.objectRoot && !rules.explicitShapes && !rules.draft202012 && !rules.openApiSubset;
}
