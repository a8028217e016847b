/**
 * Structured log lines: one JSON object per line, which Workers Logs and
 * `wrangler tail` index by field. Argument values and credentials never go here.
 *
 * Fields often describe what a client or an origin sent (names, keys, paths),
 * so every line is bounded here, whatever its event: a string keeps its first
 * `MAX_CHARS` characters (a `WholeText` all of its own), a list its first
 * `MAX_ITEMS` entries, an object its first `MAX_ITEMS` keys, nesting
 * `MAX_DEPTH` levels; each cut says how much it left out. Lists inside lists multiply (a listing's 100 tools, each with
 * 100 keywords left out, was a line of 2.8 MB), so a line also keeps within
 * `MAX_LINE_CHARS`: past it, each list is cut further (`LIST_CUTS`).
 *
 * A request's lines are bounded too (`withLogBudget`): Workers Logs keeps the
 * first 256 KB of an invocation's lines and records nothing after them, and a
 * request a client shapes (a batch of calls, each repaired) could write more,
 * pushing out the lines of its last messages. Past `FULL_LINES_BYTES`, each
 * line is its event and short scalar fields alone (`compactLine`), so every
 * message still leaves its line.
 */
import { AsyncLocalStorage } from "node:async_hooks";

export const MAX_CHARS = 256;
export const MAX_ITEMS = 100;
export const MAX_DEPTH = 6;
/**
 * The longest line: Workers Logs keeps 256 KB of an invocation's lines, and
 * drops every line after them.
 */
export const MAX_LINE_CHARS = 16 * 1024;
/**
 * How many entries each list keeps, in turn, until the line fits: the same
 * for every list, so that each field keeps its first entries. An object's
 * keys are the line's own fields and records' members, which the code names.
 */
export const LIST_CUTS = [MAX_ITEMS, 10, 1];

/**
 * Text a line writes whole, past `MAX_CHARS`: a command to paste, which a
 * cut would make another (an accept command with half its pin accepts
 * nothing). The line's own bound still holds: past `MAX_LINE_CHARS`, the
 * line is its size alone.
 */
export class WholeText {
  constructor(readonly text: string) {}
}

/**
 * `cut`, a text's first units, without a last unit that is a character's
 * first half (or such a half alone) (text-cut.ts cuts so too; log.ts, of the
 * foundation, imports nothing of src/). A line holds no half of a character
 * alone: JSON.stringify writes one as `\ud83d`, which a strict JSON reader
 * (Rust's serde_json) refuses, and the whole line with it. So a cut falls
 * between characters, and one alone in what a client or an origin wrote is
 * U+FFFD (`toWellFormed`), as UTF-8 writes it.
 */
const betweenCharacters = (cut: string) => (/[\ud800-\udbff]$/.test(cut) ? cut.slice(0, -1) : cut);

function bounded(value: unknown, depth: number, items: number): unknown {
  if (value instanceof WholeText) return value.text.toWellFormed();
  if (typeof value === "string") {
    if (value.length <= MAX_CHARS) return value.toWellFormed();
    // Cut first: a string may be megabytes long.
    const kept = betweenCharacters(value.slice(0, MAX_CHARS));
    return `${kept.toWellFormed()}… (${value.length - kept.length} more characters)`;
  }
  if (typeof value !== "object" || value === null) return value;
  if (depth >= MAX_DEPTH) return "…";
  if (Array.isArray(value)) {
    const kept = value.slice(0, items).map((item) => bounded(item, depth + 1, items));
    return value.length > items ? [...kept, `… (${value.length - items} more)`] : kept;
  }
  const entries = Object.entries(value);
  const kept = entries
    .slice(0, MAX_ITEMS)
    .map(([key, item]) => [bounded(key, depth, items) as string, bounded(item, depth + 1, items)]);
  if (entries.length > MAX_ITEMS) kept.push(["…", `${entries.length - MAX_ITEMS} more keys`]);
  // fromEntries: a key named `__proto__` stays an ordinary key.
  return Object.fromEntries(kept);
}

/**
 * What a terminal acts on or does not show, of what JSON.stringify writes raw
 * (it escapes C0's in a string), as a character class's ranges for a regular
 * expression with the `u` flag: DEL and the C1 controls, and what reorders or
 * hides text, direction controls (direction-controls.ts), the soft hyphen,
 * zero-width characters and joiners, line and paragraph separators,
 * variation selectors, the byte order mark, and the tag characters, which
 * spell text no terminal shows. U+202E shows a tool named "\u202Eelif" as
 * "file".
 */
export const UNSEEN =
  "\\u007f-\\u009f\\u00ad\\u061c\\u180e\\u200b-\\u200f\\u2028-\\u202e\\u2060-\\u2069\\ufe00-\\ufe0f\\ufeff\\u{e0000}-\\u{e007f}";

const RAW_CONTROLS = new RegExp(`[${UNSEEN}]`, "gu");

const UNPRINTABLE = new RegExp(`[\\u0000-\\u001f${UNSEEN}]`, "gu");

/**
 * `text` with each control character (C0, DEL, C1) and each `UNSEEN` one
 * shown as `�`: for text that is no JSON, where an escape would read as the
 * characters it is written with (a data point's blob, a terminal's line).
 */
export const shownPlainly = (text: string) => text.replace(UNPRINTABLE, "\ufffd");

/** Each UTF-16 unit of `char` as a `\u` escape: a tag character is two. */
const unitEscapes = (char: string) => {
  let escaped = "";
  for (let i = 0; i < char.length; i++)
    escaped += `\\u${char.charCodeAt(i).toString(16).padStart(4, "0")}`;
  return escaped;
};

/**
 * JSON text with each character of `UNSEEN` written as a `\u` escape: it
 * reads back as the same value, and a terminal showing it (`wrangler dev`,
 * `wrangler tail`, the npm scripts) acts on none and shows each, such as
 * U+009D, OSC, which sets the clipboard, in an origin's tool name.
 */
export const escapeRawControls = (json: string) => json.replace(RAW_CONTROLS, unitEscapes);

/** An invocation's lines written whole, in UTF-8 bytes: half of what Workers Logs keeps of one. */
export const FULL_LINES_BYTES = 128 * 1024;
/**
 * A compact line's fields: its first `COMPACT_FIELDS` scalars, each string cut to what a line
 * writes in `COMPACT_CHARS` (`compactText`).
 */
export const COMPACT_FIELDS = 16;
export const COMPACT_CHARS = 64;

/** The characters a line writes for `text`, its escapes included (`\u0001` is six). */
const writtenChars = (text: string) => escapeRawControls(JSON.stringify(text)).length - 2;

/**
 * `text`'s first characters that a line writes in `COMPACT_CHARS`: a client
 * writes the names a call's line holds, and a control character is written
 * as six (247 calls refused for names padded so took 304 KB past the budget,
 * and Workers Logs recorded none of the last). An escape writes at most six
 * characters for one: each pass cuts a sixth of what is over, which leaves
 * it short by less than one escape.
 */
function compactText(text: string): string {
  let cut = betweenCharacters(text.slice(0, COMPACT_CHARS)).toWellFormed();
  for (let over = writtenChars(cut) - COMPACT_CHARS; over > 0; ) {
    cut = betweenCharacters(cut.slice(0, cut.length - Math.ceil(over / 6)));
    over = writtenChars(cut) - COMPACT_CHARS;
  }
  return cut;
}

/** What an invocation's lines have spent so far. */
interface LogBudget {
  bytes: number;
}

const invocation = new AsyncLocalStorage<LogBudget>();

/**
 * `run`, its lines (those of the work it starts, `waitUntil`'s included)
 * counted against one invocation's budget, the libraries' own among them
 * (`guardLibraryLines`). Lines written outside any (a Durable Object's, a
 * unit test's) are written whole.
 */
export function withLogBudget<T>(run: () => T): T {
  guardLibraryLines();
  return invocation.run({ bytes: 0 }, run);
}

/** UTF-8 bytes of `text`: what Workers Logs counts. */
function utf8Bytes(text: string): number {
  let bytes = text.length;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    // A surrogate pair is 4 bytes for 2 units; another unit past U+07FF, 3 for 1.
    if (code > 0x7f) bytes += code > 0x7ff && (code < 0xd800 || code > 0xdfff) ? 2 : 1;
  }
  return bytes;
}

/** A field as a compact line writes it: a string cut, a `WholeText` whole or left out. */
function compactValue(value: unknown, whole: boolean): unknown {
  if (value instanceof WholeText) return whole ? value.text.toWellFormed() : undefined;
  return typeof value === "string" ? compactText(value) : value;
}

/**
 * The line of `event` past the invocation's budget: its scalar fields alone,
 * strings cut, which says what happened (the event, the tool, the outcome)
 * in a few hundred bytes. `log_budget` says the rest was left out. A
 * `WholeText` stays whole (`whole`), within `MAX_LINE_CHARS`: a held change
 * is logged once per isolate, and a request that spent its budget before its
 * listing showed the change left the operator its command cut out, for good.
 */
function compactLine(event: string, fields: Record<string, unknown>, whole = true): string {
  const kept: Array<[string, unknown]> = [];
  for (const [key, value] of Object.entries(fields)) {
    if (kept.length === COMPACT_FIELDS) break;
    const scalar = compactValue(value, whole);
    if (typeof scalar === "object" || scalar === undefined) continue;
    kept.push([key.slice(0, COMPACT_CHARS), scalar]);
  }
  // fromEntries: a key named `__proto__` stays an ordinary key.
  const line = escapeRawControls(
    JSON.stringify({ event, ...Object.fromEntries(kept), log_budget: "spent" }),
  );
  return whole && line.length > MAX_LINE_CHARS ? compactLine(event, fields, false) : line;
}

/** The line of `event`, its fields bounded with lists of at most `items` entries. */
const lineOf = (event: string, fields: Record<string, unknown>, items: number) =>
  escapeRawControls(
    JSON.stringify({ event, ...(bounded(fields, 0, items) as Record<string, unknown>) }),
  );

export function logEvent(event: string, fields: Record<string, unknown> = {}): void {
  let line = "";
  for (const items of LIST_CUTS) {
    line = lineOf(event, fields, items);
    if (line.length <= MAX_LINE_CHARS) break;
  }
  // Fields no cut of their lists brings within the bound (many long ones): their size alone.
  if (line.length > MAX_LINE_CHARS) line = lineOf(event, { cut: `${line.length} characters` }, 1);
  const budget = invocation.getStore();
  if (budget !== undefined) {
    let bytes = utf8Bytes(line);
    if (budget.bytes + bytes > FULL_LINES_BYTES) {
      line = compactLine(event, fields);
      bytes = utf8Bytes(line);
    }
    budget.bytes += bytes;
  }
  console.log(line);
}

/** An argument of a library's `console` call as text, an error as its name and message; never throws. */
function printed(arg: unknown): string {
  try {
    return arg instanceof Error ? `${arg.name}: ${arg.message}` : String(arg);
  } catch {
    return "(unprintable)";
  }
}

/** What a library's `console.warn` or `console.error` writes: a line of ours, `library_line`. */
const libraryLine =
  (level: "warn" | "error") =>
  (...args: unknown[]): void =>
    logEvent("library_line", { level, text: new WholeText(args.map(printed).join(" ")) });
const LIBRARY_LINES = { warn: libraryLine("warn"), error: libraryLine("error") };

/**
 * A library's own lines are written as lines of ours (`library_line`, docs/logs.md), with its
 * level as a field: workers-oauth-provider's `console.warn` quotes what a client chose (`CIMD
 * fetch failed for <client_id>: client_id "<what the document a host of the client's serves
 * holds>" …`), and written as it came, a control character in that document reached `wrangler
 * tail` raw, past every bound here. Through `console.log`, as every line of ours, never the
 * method it replaced: what replaced ours since (a test's spy) may call ours in turn. Put back
 * before each invocation, not once: whatever replaced it since is replaced again.
 */
function guardLibraryLines(): void {
  if (console.warn !== LIBRARY_LINES.warn) console.warn = LIBRARY_LINES.warn;
  if (console.error !== LIBRARY_LINES.error) console.error = LIBRARY_LINES.error;
}
