/**
 * A profile: everything one LLM provider (or all of them, `portable`) needs of
 * a listing, the tool names (names/profiles.ts) and the input schemas
 * (rules.ts). One deployment serves several: the default at `MCP_PATH`, any
 * other at `MCP_PATH/<profile>`.
 */
import { type NameRules, nameRules, type ProfileName } from "../names/profiles";
import { SCHEMA_RULES, type SchemaRules } from "./rules";

export interface Profile {
  name: ProfileName;
  names: NameRules;
  schemas: SchemaRules;
}

export function profileOf(name: ProfileName, nameMaxLength?: number): Profile {
  return { name, names: nameRules(name, nameMaxLength), schemas: SCHEMA_RULES[name] };
}
