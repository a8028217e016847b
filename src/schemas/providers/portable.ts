/**
 * Every provider at once (providers/openai.ts, anthropic.ts, bedrock.ts,
 * gemini.ts), Bedrock Agents included: Gemini's subset, written as valid
 * JSON Schema 2020-12, with no way to say "may be null" that all of them
 * accept (Gemini refuses type arrays, Anthropic `nullable`): left unsaid.
 */

import { READ_BEFORE_DROPPED } from "../keywords";
import type { ViewPasses } from "../pass";
import { booleanSchemas } from "../passes/boolean-schemas";
import { draft202012 } from "../passes/draft-2020-12";
import { nullability } from "../passes/nullability";
import { objectIntoForms } from "../passes/object-into-forms";
import { propertyKeys } from "../passes/property-keys";
import { rootObject } from "../passes/root-object";
import { rootProperties } from "../passes/root-properties";
import { wellFormed } from "../passes/well-formed";
import { GEMINI_KEYWORDS, openApiPasses } from "./gemini";

export const PORTABLE: ViewPasses = {
  root: [rootObject, rootProperties, propertyKeys],
  nodes: [
    wellFormed,
    booleanSchemas,
    objectIntoForms,
    nullability("omit"),
    ...openApiPasses([draft202012]),
  ],
  copies: new Set([...GEMINI_KEYWORDS, ...READ_BEFORE_DROPPED, "$schema", "additionalItems"]),
  viewsDefinitions: false,
  textNull: "omit",
};
