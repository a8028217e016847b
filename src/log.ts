/**
 * Structured log lines: one JSON object per line, which Workers Logs and
 * `wrangler tail` index by field. Argument values and credentials never go here.
 *
 * Fields often describe what a client or an origin sent (names, keys, paths),
 * so every line is bounded here, whatever its event: a string keeps its first
 * `MAX_CHARS` characters, a list its first `MAX_ITEMS` entries, an object its
 * first `MAX_ITEMS` keys, nesting `MAX_DEPTH` levels; each cut says how much
 * it left out.
 */
const MAX_CHARS = 256;
const MAX_ITEMS = 100;
const MAX_DEPTH = 6;

function bounded(value: unknown, depth: number): unknown {
  if (typeof value === "string") {
    return value.length <= MAX_CHARS
      ? value
      : `${value.slice(0, MAX_CHARS)}… (${value.length - MAX_CHARS} more characters)`;
  }
  if (typeof value !== "object" || value === null) return value;
  if (depth >= MAX_DEPTH) return "…";
  if (Array.isArray(value)) {
    const kept = value.slice(0, MAX_ITEMS).map((item) => bounded(item, depth + 1));
    return value.length > MAX_ITEMS ? [...kept, `… (${value.length - MAX_ITEMS} more)`] : kept;
  }
  const entries = Object.entries(value);
  const kept = entries
    .slice(0, MAX_ITEMS)
    .map(([key, item]) => [bounded(key, depth) as string, bounded(item, depth + 1)]);
  if (entries.length > MAX_ITEMS) kept.push(["…", `${entries.length - MAX_ITEMS} more keys`]);
  // fromEntries: a key named `__proto__` stays an ordinary key.
  return Object.fromEntries(kept);
}

/**
 * What a terminal acts on or does not show, of what JSON.stringify writes raw
 * (it escapes C0's in a string), as a character class's ranges: DEL and the
 * C1 controls, and what reorders or hides text, direction controls
 * (direction-controls.ts), zero-width characters and joiners, line and
 * paragraph separators, the byte order mark. U+202E shows a tool named
 * "\u202Eelif" as "file".
 */
export const UNSEEN =
  "\\u007f-\\u009f\\u061c\\u180e\\u200b-\\u200f\\u2028-\\u202e\\u2060-\\u2069\\ufeff";

const RAW_CONTROLS = new RegExp(`[${UNSEEN}]`, "g");

/**
 * JSON text with each character of `UNSEEN` written as a `\u` escape: it
 * reads back as the same value, and a terminal showing it (`wrangler dev`,
 * `wrangler tail`, the npm scripts) acts on none and shows each, such as
 * U+009D, OSC, which sets the clipboard, in an origin's tool name.
 */
export const escapeRawControls = (json: string) =>
  json.replace(RAW_CONTROLS, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`);

export function logEvent(event: string, fields: Record<string, unknown> = {}): void {
  console.log(
    escapeRawControls(
      JSON.stringify({ event, ...(bounded(fields, 0) as Record<string, unknown>) }),
    ),
  );
}
