/**
 * A tool's description as the client's provider takes it. Pure.
 *
 * - OpenAI refuses a request whose function's description is longer than
 *   1,024 characters, whatever the model meant to call (`Invalid
 *   'tools[0].function.description': string too long. Expected a string with
 *   maximum length 1024`, `string_above_max_length`): the descriptions of
 *   servers as common as sequential-thinking (2,780) and Sentry's are. Such
 *   a description is cut where a line, sentence or word ends in its last
 *   fifth, and `…` written in place of the rest.
 * - Bedrock's Converse API takes a description of at least one character
 *   (`ToolSpecification`, "Length Constraints: Minimum length of 1"): an
 *   empty one is left out.
 *
 * Anthropic's and Gemini's documents say neither. In search mode no
 * description is a function's: the found tools' are a tool result's text.
 */
import type { ProfileName } from "../names/profiles";

export interface DescriptionRules {
  /** The longest description the provider takes, in characters. */
  readonly max?: number;
  /** Whether it refuses an empty one. */
  readonly nonEmpty?: boolean;
}

const OPENAI = { max: 1024 };

export const DESCRIPTION_RULES: Readonly<Record<ProfileName, DescriptionRules>> = {
  openai: OPENAI,
  "openai-strict": OPENAI,
  anthropic: {},
  bedrock: { nonEmpty: true },
  gemini: {},
  portable: { ...OPENAI, nonEmpty: true },
  mcp: {},
};

/** What a cut description ends with, in place of the rest. */
const ELLIPSIS = "…";
/** Where a cut may end, from the end of what is kept: its last fifth. */
const BOUNDARY_SHARE = 0.2;

/**
 * Whether a description written as `chars` characters of JSON text (its
 * quotes included) may be one the rules change: a string is no longer than
 * its text, so a shorter text is not read.
 */
export const mayChange = (chars: number, { max, nonEmpty }: DescriptionRules): boolean =>
  (nonEmpty === true && chars === 2) || (max !== undefined && chars - 2 > max);

/**
 * `description` as the provider takes it: itself where it does, cut to
 * `max` characters (UTF-16 code units, never fewer than the code points a
 * provider may count), or `undefined` to leave it out. `keptEnd`: how many
 * characters at its end are the operator's paragraph (a rule's
 * `appendDescription`, docs/rules.md): the rest is cut before it, and it is
 * kept whole where it leaves the rest a quarter of the room at least.
 */
export function fittedDescription(
  description: string,
  { max, nonEmpty }: DescriptionRules,
  keptEnd = 0,
): string | undefined {
  if (nonEmpty && description.length === 0) return undefined;
  if (max === undefined || description.length <= max) return description;
  if (keptEnd > 0 && keptEnd + PARAGRAPH.length <= max * (1 - MIN_CUT_SHARE)) {
    const head = description.slice(0, description.length - keptEnd);
    const room = max - keptEnd - PARAGRAPH.length;
    return `${cutTo(head, room)}${PARAGRAPH}${description.slice(-keptEnd)}`;
  }
  return cutTo(description, max);
}

/** What stands between the cut and the operator's paragraph kept after it. */
const PARAGRAPH = "\n\n";
/** The least share of the room left to what is cut before a kept paragraph. */
const MIN_CUT_SHARE = 0.25;

/** `text`, longer than `max`, cut to `max` characters with `…` in place of the rest. */
function cutTo(text: string, max: number): string {
  let end = max - ELLIPSIS.length;
  // A surrogate pair stays whole.
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  const kept = text.slice(0, end);
  const from = Math.floor(end * (1 - BOUNDARY_SHARE));
  // A line's end first, then a sentence's (its period kept), then a word's.
  const boundary = [kept.lastIndexOf("\n"), kept.lastIndexOf(". ") + 1, kept.lastIndexOf(" ")].find(
    (at) => at >= from,
  );
  return `${kept.slice(0, boundary).trimEnd()}${ELLIPSIS}`;
}
