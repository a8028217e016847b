/**
 * OpenAI's strict function calling (`strict: true`; Structured Outputs,
 * "Supported schemas": https://platform.openai.com/docs/guides/structured-outputs#supported-schemas),
 * which makes the model's arguments always match the schema, and accepts only
 * a subset of JSON Schema:
 *
 * - The root is an object, not `anyOf`; every object sets `additionalProperties:
 *   false` (`'additionalProperties' is required to be supplied and to be
 *   false`); every property is in `required` (`'required' is required to be
 *   supplied and to be an array including every key in properties`), an
 *   optional field written as a union with `null`.
 * - Types string, number, integer, boolean, object, array, enum, `anyOf`;
 *   `description` and `title`. Supported keywords: strings `pattern` and
 *   `format` (`STRICT_FORMATS`), numbers `multipleOf`, `minimum`, `maximum`,
 *   `exclusiveMinimum`, `exclusiveMaximum`, arrays `minItems`, `maxItems`.
 *   Not: `minLength`, `maxLength`, `patternProperties`, `propertyNames`,
 *   `minProperties`, `maxProperties`, `uniqueItems`, `allOf`, `not`,
 *   `if`/`then`/`else`, `dependentRequired`, `dependentSchemas`; `default` is
 *   not in the supported list.
 * - An open object (a free-form map) cannot be said: there is no way to allow
 *   unknown keys; such a value is asked for as JSON text.
 * - Sizes (`STRICT_LIMITS`): at most 5,000 object properties in all, 10 levels
 *   of nesting, 1,000 enum values, 120,000 characters of property names,
 *   definition names and enum values, and a string enum of more than 250
 *   values at most 15,000 characters.
 *
 * The OpenAI Agents SDK's strict conversion (`@openai/agents`,
 * `convertSchemasToStrict`) also refuses `$ref` or `anyOf` beside other
 * keywords: the view inlines every `$ref` and keeps `anyOf` alone.
 */
import { ownKey as hasOwnKey, isPlainObject } from "../../json";
import { READ_BEFORE_DROPPED } from "../keywords";
import type { Pass, ViewPasses } from "../pass";
import { allOfMerged } from "../passes/all-of";
import { anyOfAlone } from "../passes/any-of-alone";
import { booleanSchemas } from "../passes/boolean-schemas";
import { closedObjects } from "../passes/closed-objects";
import { constAsEnum } from "../passes/const";
import { describedConstraints, type SubsetFacts } from "../passes/described-constraints";
import { draft202012 } from "../passes/draft-2020-12";
import { enumAsText } from "../passes/enum-as-text";
import { enumOfItsType, enumTypes } from "../passes/enum-types";
import { explicitShapes } from "../passes/explicit-shapes";
import { objectIntoForms } from "../passes/object-into-forms";
import { oneOfAsAnyOf } from "../passes/one-of";
import { refsInlined } from "../passes/refs";
import { rootObject } from "../passes/root-object";
import { rootProperties } from "../passes/root-properties";
import { knownNames, subset } from "../passes/subset";
import { typeUnionsAsAnyOf } from "../passes/type-unions";
import { wellFormed } from "../passes/well-formed";
import type { ViewSizes } from "../sizes";

// A constant of this module, which V8 folds into the `for…in`s below (json.ts, `ownKey`).
const ownKey = hasOwnKey;

/** Every keyword strict mode accepts. */
export const STRICT_KEYWORDS: ReadonlySet<string> = new Set([
  "type",
  "description",
  "title",
  "properties",
  "required",
  "additionalProperties",
  "items",
  "anyOf",
  "enum",
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

const STRING_FORMATS = [
  "date-time",
  "time",
  "date",
  "duration",
  "email",
  "hostname",
  "ipv4",
  "ipv6",
  "uuid",
];

const STRICT_FACTS: SubsetFacts = {
  keywords: STRICT_KEYWORDS,
  formats: { string: new Set(STRING_FORMATS) },
  canRun: () => true,
  stringEnums: false,
};

export const STRICT_LIMITS = {
  properties: 5_000,
  nesting: 10,
  enumValues: 1_000,
  characters: 120_000,
  longEnum: { values: 250, characters: 15_000 },
};

/**
 * Whether what the walk counted of a view as it made it (sizes.ts) is within
 * strict mode's sizes however the view was closed: each property it made
 * nullable may have gained a `null` among its values (closed-objects.ts),
 * one value and four characters more.
 */
function countedWithin(counted: ViewSizes): boolean {
  const nulls = counted.properties;
  return (
    !counted.uncounted &&
    counted.properties <= STRICT_LIMITS.properties &&
    counted.enumValues + nulls <= STRICT_LIMITS.enumValues &&
    counted.characters + 4 * nulls <= STRICT_LIMITS.characters &&
    counted.longestEnum + 1 <= STRICT_LIMITS.longEnum.values
  );
}

/** Why a finished view is over strict mode's sizes; `undefined` when it is within them. */
function overLimits(schema: unknown, counted: ViewSizes): string | undefined {
  if (countedWithin(counted)) return undefined;
  const { properties, enumValues, characters, longEnum } = sizesOf(schema);
  return (
    over(properties, STRICT_LIMITS.properties, "object properties") ??
    over(enumValues, STRICT_LIMITS.enumValues, "enum values") ??
    over(characters, STRICT_LIMITS.characters, "characters of names and enum values") ??
    (longEnum ? "an enum of more than 250 values over 15,000 characters" : undefined)
  );
}

/** A view's sizes as strict mode counts them, read from the view itself. */
export function sizesOf(schema: unknown) {
  let properties = 0;
  let enumValues = 0;
  let characters = 0;
  let longEnum = false;
  // Objects and lists only: a view is mostly words and types, which count for nothing here.
  const pending = [schema];
  for (let node = pending.pop(); node !== undefined; node = pending.pop()) {
    if (Array.isArray(node)) {
      for (const item of node) if (typeof item === "object" && item !== null) pending.push(item);
      continue;
    }
    if (!isPlainObject(node)) continue;
    for (const key in node) {
      const value = node[key];
      if (typeof value !== "object" || value === null || !ownKey.call(node, key)) continue;
      if (key === "properties" && isPlainObject(value)) {
        for (const name in value) {
          if (!ownKey.call(value, name)) continue;
          properties++;
          characters += name.length;
        }
      } else if (key === "enum" && Array.isArray(value)) {
        let text = 0;
        for (const item of value) text += String(item).length;
        enumValues += value.length;
        characters += text;
        const { values, characters: most } = STRICT_LIMITS.longEnum;
        if (value.length > values && text > most) longEnum = true;
      }
      pending.push(value);
    }
  }
  return { properties, enumValues, characters, longEnum };
}

function over(count: number, limit: number, what: string): string | undefined {
  return count > limit ? `${count} ${what} (at most ${limit.toLocaleString("en-US")})` : undefined;
}

const STRICT_NODES: Pass[] = [
  wellFormed,
  booleanSchemas,
  objectIntoForms,
  refsInlined,
  allOfMerged,
  oneOfAsAnyOf,
  constAsEnum,
  enumAsText,
  draft202012,
  enumOfItsType,
  enumTypes,
  typeUnionsAsAnyOf,
  describedConstraints(STRICT_FACTS),
  explicitShapes("as-text"),
  closedObjects,
  subset(STRICT_KEYWORDS),
  knownNames,
  anyOfAlone,
];

export const OPENAI_STRICT: ViewPasses = {
  root: [rootObject, rootProperties],
  nodes: STRICT_NODES,
  // A node's copy takes only what the view keeps or a pass reads: nothing is deleted after.
  copies: new Set([
    ...STRICT_KEYWORDS,
    ...READ_BEFORE_DROPPED,
    "minLength",
    "maxLength",
    "minProperties",
    "maxProperties",
    "nullable",
    "$schema",
    "additionalItems",
  ]),
  viewsDefinitions: false,
  textNull: "type",
  // The root object is level 1 at depth 0; what would be an 11th level is asked for as text.
  maxDepth: STRICT_LIMITS.nesting - 1,
  unfit: overLimits,
};
