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

export function profileOf(name: ProfileName, nameMaxLength?: number): Profile {
  return { name, names: nameRules(name, nameMaxLength), schemas: SCHEMA_PASSES[name] };
}
