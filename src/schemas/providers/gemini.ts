/**
 * Gemini and Vertex AI (`function_declarations[].parameters`): an OpenAPI
 * 3.0 `Schema`, not JSON Schema.
 *
 * - Only its fields (`Invalid JSON payload received. Unknown name "…"`):
 *   `GEMINI_KEYWORDS`.
 * - One `type` per schema (`Proto field is not repeating, cannot start list`),
 *   no `null` type: "may be null" is `nullable: true`.
 * - `enum` of strings only (`TYPE_STRING`); `format` only `enum` and
 *   `date-time` for strings, `int32`/`int64` for integers, `float`/`double`
 *   for numbers: `GEMINI_FORMATS`.
 * - No `$ref` (`reference to undefined schema`), no `allOf`, `oneOf`, `const`.
 * - `required` names declared properties only (`property is not defined`).
 * - Arrays with `items` (`items: missing field`), objects with properties
 *   (`properties: should be non-empty for OBJECT type`).
 * - `pattern` is RE2: no lookaround, no backreferences.
 * - `anyOf` alone, not even a `description` beside it (Vertex AI: `schema
 *   specified other fields alongside any_of. When using any_of, it must be
 *   the only field set`): passes/any-of-alone.ts.
 */

import { READ_BEFORE_DROPPED } from "../keywords";
import type { Pass, ViewPasses } from "../pass";
import { allOfMerged } from "../passes/all-of";
import { anyOfOnly } from "../passes/any-of-alone";
import { booleanSchemas } from "../passes/boolean-schemas";
import { constAsEnum } from "../passes/const";
import { describedConstraints, type SubsetFacts } from "../passes/described-constraints";
import { enumAsText } from "../passes/enum-as-text";
import { explicitShapes } from "../passes/explicit-shapes";
import { nullability } from "../passes/nullability";
import { objectIntoForms } from "../passes/object-into-forms";
import { oneOfAsAnyOf } from "../passes/one-of";
import { refsInlined } from "../passes/refs";
import { rootObject } from "../passes/root-object";
import { rootProperties } from "../passes/root-properties";
import { knownNames, subset } from "../passes/subset";
import { wellFormed } from "../passes/well-formed";

/** Gemini's `Schema`: every field it accepts. */
export const GEMINI_KEYWORDS: ReadonlySet<string> = new Set([
  "type",
  "format",
  "title",
  "description",
  "nullable",
  "enum",
  "maxItems",
  "minItems",
  "properties",
  "required",
  "minProperties",
  "maxProperties",
  "minLength",
  "maxLength",
  "pattern",
  "example",
  "anyOf",
  "items",
  "minimum",
  "maximum",
]);

/** Constructs RE2 cannot run: lookaround and backreferences. */
const NOT_RE2 = /\(\?<?[=!]|\\[1-9]|\\k</;

export const GEMINI_FACTS: SubsetFacts = {
  keywords: GEMINI_KEYWORDS,
  stringEnums: true,
  formats: {
    string: new Set(["enum", "date-time"]),
    integer: new Set(["int32", "int64"]),
    number: new Set(["float", "double"]),
  },
  canRun: (pattern) => !NOT_RE2.test(pattern),
};

/** Gemini's passes after "may be null" is said: shared with `portable`. */
export function openApiPasses(extra: readonly Pass[] = []): Pass[] {
  return [
    refsInlined,
    allOfMerged,
    oneOfAsAnyOf,
    constAsEnum,
    enumAsText,
    ...extra,
    describedConstraints(GEMINI_FACTS),
    explicitShapes("as-text"),
    subset(GEMINI_KEYWORDS),
    knownNames,
    anyOfOnly,
  ];
}

export const GEMINI: ViewPasses = {
  root: [rootObject, rootProperties],
  nodes: [wellFormed, booleanSchemas, objectIntoForms, nullability("keyword"), ...openApiPasses()],
  // `additionalItems`: the items after a draft-07 tuple's, which explicit-shapes.ts offers too.
  copies: new Set([...GEMINI_KEYWORDS, ...READ_BEFORE_DROPPED, "additionalItems"]),
  viewsDefinitions: false,
  textNull: "nullable",
};
