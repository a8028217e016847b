/**
 * Anthropic's Messages API (`tools[].input_schema`): the root is an object
 * (`input_schema does not support oneOf, allOf, or anyOf at the top level`),
 * and the schema is valid JSON Schema 2020-12 (`JSON schema is invalid. It
 * must match JSON Schema draft 2020-12`): no `$schema` naming an older
 * draft, no draft-04 boolean `exclusiveMinimum`, no draft-07 tuple `items`,
 * no OpenAPI `nullable`; no top-level property named outside
 * `^[a-zA-Z0-9_.-]{1,64}$` (passes/property-keys.ts); and, for the MCP client
 * the listing goes to first, no `x-mcp-header` it refuses
 * (passes/header-declarations.ts).
 */

import type { ViewPasses } from "../pass";
import { draft202012 } from "../passes/draft-2020-12";
import { headerDeclarations } from "../passes/header-declarations";
import { propertyKeys } from "../passes/property-keys";
import { rootObject } from "../passes/root-object";
import { wellFormed } from "../passes/well-formed";

export const ANTHROPIC: ViewPasses = {
  root: [rootObject, propertyKeys],
  nodes: [wellFormed, draft202012, headerDeclarations],
  viewsDefinitions: true,
  textNull: "type",
};
