/**
 * Name profiles: which tool names an LLM API accepts. docs/names.md's table ("Tool
 * names") says which API each profile is for; `PROFILES` below is the rule.
 * A profile governs schemas too (schemas/providers/); `openai-strict`,
 * `anthropic` and `bedrock` name tools as `openai` does and differ in their
 * schema rules.
 */
export const PROFILE_NAMES = [
  "openai",
  "openai-strict",
  "anthropic",
  "bedrock",
  "gemini",
  "portable",
  "mcp",
] as const;
export type ProfileName = (typeof PROFILE_NAMES)[number];

export interface NameProfile {
  readonly name: ProfileName;
  /** Matches a character allowed to start a name. */
  readonly allowedFirst: RegExp;
  /** Matches a whole name made of allowed characters, whatever its length. */
  readonly allowedName: RegExp;
  /** Matches every character (code point) that is not allowed, globally. */
  readonly disallowed: RegExp;
  readonly maxLength: number;
}

/** A profile from its character classes, written as the inside of `[…]`. */
function profile(name: ProfileName, chars: string, first: string, maxLength: number): NameProfile {
  return {
    name,
    allowedFirst: new RegExp(`[${first}]`),
    allowedName: new RegExp(`^[${first}][${chars}]*$`),
    disallowed: new RegExp(`[^${chars}]`, "gu"),
    maxLength,
  };
}

const PROFILES: Readonly<Record<ProfileName, NameProfile>> = {
  openai: profile("openai", "A-Za-z0-9_-", "A-Za-z0-9_-", 64),
  "openai-strict": profile("openai-strict", "A-Za-z0-9_-", "A-Za-z0-9_-", 64),
  anthropic: profile("anthropic", "A-Za-z0-9_-", "A-Za-z0-9_-", 64),
  bedrock: profile("bedrock", "A-Za-z0-9_-", "A-Za-z0-9_-", 64),
  gemini: profile("gemini", "A-Za-z0-9_.:-", "A-Za-z_", 63),
  portable: profile("portable", "A-Za-z0-9_", "A-Za-z", 63),
  mcp: profile("mcp", "A-Za-z0-9_.-", "A-Za-z0-9_.-", 128),
};

/** A profile with the cap actually in force (`NAME_MAX_LENGTH` may lower it). */
export interface NameRules {
  readonly profile: NameProfile;
  readonly cap: number;
}

/**
 * The smallest cap `NAME_MAX_LENGTH` takes: room for a fingerprinted name
 * (`x_` + 6 characters), and for the longest name the proxy lists of its own,
 * search mode's `search_tools` (test/e2e/name-budget.test.ts holds it there).
 */
export const MIN_NAME_CAP = 12;

export function nameRules(profile: ProfileName, maxLength?: number): NameRules {
  const rules = PROFILES[profile];
  return { profile: rules, cap: Math.min(rules.maxLength, maxLength ?? rules.maxLength) };
}
