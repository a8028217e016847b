/**
 * Anthropic's Messages API (`tools[].input_schema`): the root is an object
 * (`input_schema does not support oneOf, allOf, or anyOf at the top level`),
 * and the schema is valid JSON Schema 2020-12 (`JSON schema is invalid. It
 * must match JSON Schema draft 2020-12`): no `$schema` naming an older
 * draft, no draft-04 boolean `exclusiveMinimum`, no draft-07 tuple `items`,
 * no OpenAPI `nullable`.
 */

import type { ViewPasses } from "../pass";
import { draft202012 } from "../passes/draft-2020-12";
import { rootObject } from "../passes/root-object";
import { wellFormed } from "../passes/well-formed";

export const ANTHROPIC: ViewPasses = {
  root: [rootObject],
  nodes: [wellFormed, draft202012],
  viewsDefinitions: true,
  textNull: "type",
};
