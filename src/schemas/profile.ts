/**
 * A profile: everything one LLM provider (or all of them, `portable`) needs of
 * a listing, the tool names (names/profiles.ts) and the input schemas
 * (providers/*.ts: the passes of its view). One deployment serves several:
 * the default at `MCP_PATH`, any other at `MCP_PATH/<profile>`.
 */
import { type NameRules, nameRules, type ProfileName } from "../names/profiles";
import type { ViewPasses } from "./pass";
import { ANTHROPIC } from "./providers/anthropic";
import { BEDROCK } from "./providers/bedrock";
import { GEMINI } from "./providers/gemini";
import { MCP } from "./providers/mcp";
import { OPENAI } from "./providers/openai";
import { OPENAI_STRICT } from "./providers/openai-strict";
import { PORTABLE } from "./providers/portable";

export interface Profile {
  name: ProfileName;
  names: NameRules;
  schemas: ViewPasses;
  /** The most tools one listing may hand the client; past it, search mode (docs/search-mode.md). */
  toolCeiling: number | undefined;
}

/**
 * The most tools one request to the provider may carry, as its documentation
 * and its own error messages say (docs/search-mode.md, "The ceiling", has
 * the sources quoted):
 * - OpenAI: "A max of 128 functions are supported" (`tools`), and a longer
 *   array is refused with "Expected an array with maximum length 128".
 * - Gemini: the Gemini API refuses more than 512 ("At most 512 function
 *   declarations can be specified"), Vertex AI documents 128 ("The maximum
 *   number of function declarations that can be provided with the request is
 *   128"): `gemini` serves both, so 128.
 * - Anthropic's Messages API and Bedrock's Converse API document none; `mcp`
 *   passes listings on; `portable` takes the lowest.
 */
export const TOOL_CEILINGS: Readonly<Record<ProfileName, number | undefined>> = {
  openai: 128,
  "openai-strict": 128,
  anthropic: undefined,
  bedrock: undefined,
  gemini: 128,
  portable: 128,
  mcp: undefined,
};

/** The operator's settings that lower a profile's limits: `NAME_MAX_LENGTH`, `MAX_TOOLS`. */
export interface ProfileLimits {
  nameMaxLength?: number;
  maxTools?: number;
}

export const SCHEMA_PASSES: Readonly<Record<ProfileName, ViewPasses>> = {
  openai: OPENAI,
  "openai-strict": OPENAI_STRICT,
  anthropic: ANTHROPIC,
  bedrock: BEDROCK,
  gemini: GEMINI,
  portable: PORTABLE,
  mcp: MCP,
};

export function profileOf(name: ProfileName, limits: ProfileLimits = {}): Profile {
  const ceilings = [TOOL_CEILINGS[name], limits.maxTools].filter((n) => n !== undefined);
  return {
    name,
    names: nameRules(name, limits.nameMaxLength),
    schemas: SCHEMA_PASSES[name],
    toolCeiling: ceilings.length > 0 ? Math.min(...ceilings) : undefined,
  };
}
