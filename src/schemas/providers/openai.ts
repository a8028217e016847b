/**
 * OpenAI function calling (`tools[].function.parameters`), also Azure
 * OpenAI, DeepSeek and Mistral: the root is an object schema with no `anyOf`,
 * `oneOf` or `allOf` beside it (`Invalid schema for function: got 'type:
 * "None"'`); arrays name `items` (`array schema missing items`), objects
 * `properties` (`object schema missing properties`). Everything else JSON
 * Schema says is accepted as written. The listing goes to an MCP client
 * first, which leaves out a tool whose `x-mcp-header` it refuses
 * (passes/header-declarations.ts).
 */

import type { ViewPasses } from "../pass";
import { explicitShapes } from "../passes/explicit-shapes";
import { headerDeclarations } from "../passes/header-declarations";
import { rootObject } from "../passes/root-object";
import { rootProperties } from "../passes/root-properties";
import { wellFormed } from "../passes/well-formed";

export const OPENAI: ViewPasses = {
  root: [rootObject, rootProperties],
  nodes: [wellFormed, explicitShapes("empty"), headerDeclarations],
  viewsDefinitions: true,
  textNull: "type",
};
