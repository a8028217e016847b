/**
 * Name profiles: which tool names an LLM API accepts (DESIGN, Contract 1).
 *
 * | profile  | characters         | first character | max | accepted by                                   |
 * |----------|--------------------|-----------------|-----|-----------------------------------------------|
 * | openai   | A-Z a-z 0-9 _ -    | any allowed     | 64  | OpenAI, Azure, DeepSeek, Mistral, Bedrock     |
 * |          |                    |                 |     | Converse, Anthropic                           |
 * | gemini   | A-Z a-z 0-9 _ . : -| letter or _     | 63  | Gemini, Vertex AI                             |
 * | portable | A-Z a-z 0-9 _      | letter          | 63  | every provider at once, Bedrock Agents too    |
 * | mcp      | A-Z a-z 0-9 _ . -  | any allowed     | 128 | the MCP spec's own guidance (SEP-986)         |
 */
export const PROFILE_NAMES = ["openai", "gemini", "portable", "mcp"] as const;
export type ProfileName = (typeof PROFILE_NAMES)[number];

export interface NameProfile {
  readonly name: ProfileName;
  /** Matches one allowed character. */
  readonly allowed: RegExp;
  /** Matches a character allowed to start a name. */
  readonly allowedFirst: RegExp;
  readonly maxLength: number;
}

const PROFILES: Readonly<Record<ProfileName, NameProfile>> = {
  openai: {
    name: "openai",
    allowed: /[A-Za-z0-9_-]/,
    allowedFirst: /[A-Za-z0-9_-]/,
    maxLength: 64,
  },
  gemini: { name: "gemini", allowed: /[A-Za-z0-9_.:-]/, allowedFirst: /[A-Za-z_]/, maxLength: 63 },
  portable: { name: "portable", allowed: /[A-Za-z0-9_]/, allowedFirst: /[A-Za-z]/, maxLength: 63 },
  mcp: { name: "mcp", allowed: /[A-Za-z0-9_.-]/, allowedFirst: /[A-Za-z0-9_.-]/, maxLength: 128 },
};

/** A profile with the cap actually in force (`NAME_MAX_LENGTH` may lower it). */
export interface NameRules {
  readonly profile: NameProfile;
  readonly cap: number;
}

/** The smallest cap that still leaves room for a hash suffix (`x_` + 6 characters). */
export const MIN_NAME_CAP = 8;

export function nameRules(profile: ProfileName, maxLength?: number): NameRules {
  const rules = PROFILES[profile];
  return { profile: rules, cap: Math.min(rules.maxLength, maxLength ?? rules.maxLength) };
}
