/**
 * Where values are written in a JSON text, found without parsing it: what
 * lets the proxy change a few values of a large message (a `tools/list`
 * result, protocol/listing-text.ts) and copy the sender's text for the rest.
 *
 * A scan is linear: strings are jumped over with `indexOf`, nested values
 * skipped with their brackets matched (at most `MAX_NESTING` deep), numbers
 * and literals read as JSON writes them. It reads the structure only; a
 * string's escapes are not checked: whoever reads a value parses its span,
 * and text copied as it came is the sender's, mistakes included. Meant for
 * text a peer sent, so every failure is `undefined` (or -1), never a throw.
 */

/** Where a value is written: `[start, end)`. */
export type Span = readonly [start: number, end: number];

/** The text of a value written at `span` in a larger `text`. */
export const textAt = ({ text, span }: { text: string; span: Span }) =>
  text.slice(span[0], span[1]);

/** What a skipped value's text showed: how to tell whether it is written as `JSON.stringify` writes it. */
export interface Written {
  /** Object members inside it (each `:` outside its strings). */
  members: number;
  /** No whitespace between its tokens, and every number written as `JSON.stringify` writes it. */
  plain: boolean;
  /**
   * Plain, and shown by its text alone to be JSON written as `JSON.stringify`
   * writes its parse: each token where JSON's grammar has it, no key twice in
   * one object, no control character in a string and no escape but `\"`,
   * `\\`, `\b`, `\f`, `\n`, `\r` and `\t` (in a text decoded from UTF-8, which
   * holds no lone surrogate). Where it holds, the text needs no
   * parse to be known for one reading; where it does not, a parse tells
   * (`isStringified`, `writesEachKeyOnce`): it is cautious, never wrong.
   */
  stringified: boolean;
}

/** What a value's text shows before it is read: nothing against it. */
export const newWritten = (): Written => ({ members: 0, plain: true, stringified: true });

/**
 * Deeper nesting than this is not scanned (the caller parses instead), nor
 * parsed (`nestsTooDeep`): what reads a parsed value recurses (the
 * comparison of a listed schema with the one remembered, `JSON.stringify`
 * with a replacer, validation), and a value 10,000 levels deep, 20 KB of
 * text, overflows its stack.
 */
export const MAX_NESTING = 512;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

const isSpace = (code: number) => code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;

export function skipSpace(text: string, at: number): number {
  while (isSpace(text.charCodeAt(at))) at++;
  return at;
}

/** The index after the string whose opening quote is at `start`; -1 when it never closes. */
function stringEnd(text: string, start: number): number {
  let quote = text.indexOf('"', start + 1);
  while (quote !== -1 && text.charCodeAt(quote - 1) === BACKSLASH) {
    let backslashes = 1;
    while (text.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) break;
    quote = text.indexOf('"', quote + 1);
  }
  return quote === -1 ? -1 : quote + 1;
}

const SCALAR = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null/y;

/** The index after the number or literal at `start`; -1 when there is none. */
function scalarEnd(text: string, start: number, written: Written | undefined): number {
  SCALAR.lastIndex = start;
  if (!SCALAR.test(text)) return -1;
  const end = SCALAR.lastIndex;
  if (written?.plain) {
    const token = text.slice(start, end);
    const code = token.charCodeAt(0);
    // A number `JSON.stringify` writes otherwise (`1.50`, `1e3`, `-0`, 17 digits): not plain.
    if ((code === 0x2d || (code >= 0x30 && code <= 0x39)) && String(Number(token)) !== token) {
      written.plain = false;
    }
  }
  return end;
}

/** The closers still open while a value is skipped: one scan at a time, never deeper than `MAX_NESTING`. */
const closers = new Uint8Array(MAX_NESTING);

/**
 * The index after the JSON value that starts at `start` (no whitespace
 * before it); -1 when no well-bracketed value starts there, or it nests
 * deeper than `MAX_NESTING` in all, counting the `outer` levels open around
 * it (as `nestsTooDeep` counts from the text's start). `written`, when given,
 * is added what the value's text shows.
 */
export function valueEnd(text: string, start: number, written?: Written, outer = 0): number {
  if (written) return writtenEnd(text, start, written, outer);
  const first = text.charCodeAt(start);
  if (first === QUOTE) return stringEnd(text, start);
  if (first !== OPEN_BRACE && first !== OPEN_BRACKET) return scalarEnd(text, start, written);
  let depth = 0;
  for (let at = start; at < text.length; ) {
    const code = text.charCodeAt(at);
    if (code === QUOTE) {
      at = stringEnd(text, at);
      if (at === -1) return -1;
      continue;
    }
    if (code === OPEN_BRACE || code === OPEN_BRACKET) {
      if (outer + depth === MAX_NESTING) return -1;
      // `}` and `]` are two code points after `{` and `[`.
      closers[depth++] = code + 2;
    } else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
      if (closers[--depth] !== code) return -1;
      if (depth === 0) return at + 1;
    } else if (code !== COMMA && code !== COLON && !isSpace(code)) {
      at = scalarEnd(text, at, undefined);
      if (at === -1) return -1;
      continue;
    }
    at++;
  }
  return -1;
}

// What may come next in a text `JSON.stringify` writes (`writtenEnd`).
/** A value: after a `:`, or a `,` in an array. */
const VALUE = 0;
/** A value or `]`: after `[`. */
const VALUE_OR_CLOSE = 1;
/** A key: after a `,` in an object. */
const KEY = 2;
/** A key or `}`: after `{`. */
const KEY_OR_CLOSE = 3;
/** `:`: after a key. */
const COLON_NEXT = 4;
/** `,` or the closer: after a value. */
const COMMA_OR_CLOSE = 5;

/** Keys an object may write and be known for one reading without a parse: past these, one is parsed. */
const KEYS_COMPARED = 64;

/** The keys of the objects open while a value is read (`writtenEnd`): where each starts and ends. */
const keyStarts = new Int32Array(4096);
const keyEnds = new Int32Array(keyStarts.length);
/** Where each open level's keys start in `keyStarts`. */
const levelKeys = new Int32Array(MAX_NESTING);

/** Whether the key at `[start, end)` is written as none of `[from, count)` in `keyStarts`. */
function newKey(text: string, start: number, end: number, from: number, count: number): boolean {
  const length = end - start;
  for (let k = from; k < count; k++) {
    const other = keyStarts[k] as number;
    if ((keyEnds[k] as number) - other !== length) continue;
    let i = 1;
    while (i < length - 1 && text.charCodeAt(other + i) === text.charCodeAt(start + i)) i++;
    if (i >= length - 1) return false;
  }
  return true;
}

/**
 * In a string, a control character, or an escape `JSON.stringify` does not
 * write (`\\u…`, `\\/`, or one JSON has not). Read over a whole text, it may
 * also find one after an escaped `\\`: cautious, never wrong.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: what it looks for.
const UNSTRINGIFIED = /[\x00-\x1f]|\\[^"\\bfnrt]/;

/**
 * `valueEnd`, adding to `written` what the value's text shows: its members,
 * whether it is plain, and whether it is written as `JSON.stringify` writes
 * it (`Written.stringified`): JSON's grammar followed token by token, each
 * object's keys compared as written (with no escape but those of
 * `UNSTRINGIFIED`'s complement, one text per key), the strings' characters
 * read at once at the end.
 */
function writtenEnd(text: string, start: number, written: Written, outer: number): number {
  const first = text.charCodeAt(start);
  let end: number;
  if (first === QUOTE) end = stringEnd(text, start);
  else if (first !== OPEN_BRACE && first !== OPEN_BRACKET) end = scalarEnd(text, start, written);
  else end = structureEnd(text, start, written, outer);
  if (!written.plain) written.stringified = false;
  if (end !== -1 && written.stringified && UNSTRINGIFIED.test(text.slice(start, end))) {
    written.stringified = false;
  }
  return end;
}

/** `writtenEnd` of an object or array. */
function structureEnd(text: string, start: number, written: Written, outer: number): number {
  let depth = 0;
  let next = VALUE;
  let keys = 0;
  for (let at = start; at < text.length; ) {
    const code = text.charCodeAt(at);
    if (code === QUOTE) {
      const end = stringEnd(text, at);
      if (end === -1) return -1;
      if (next === KEY || next === KEY_OR_CLOSE) {
        const from = levelKeys[depth - 1] as number;
        if (
          keys - from >= KEYS_COMPARED ||
          keys === keyStarts.length ||
          !newKey(text, at, end, from, keys)
        ) {
          written.stringified = false;
        } else {
          keyStarts[keys] = at;
          keyEnds[keys++] = end;
        }
        next = COLON_NEXT;
      } else if (next === VALUE || next === VALUE_OR_CLOSE) next = COMMA_OR_CLOSE;
      else written.stringified = false;
      at = end;
      continue;
    }
    if (code === COLON) {
      written.members++;
      if (next === COLON_NEXT) next = VALUE;
      else written.stringified = false;
    } else if (code === OPEN_BRACE || code === OPEN_BRACKET) {
      if (outer + depth === MAX_NESTING) return -1;
      if (next !== VALUE && next !== VALUE_OR_CLOSE) written.stringified = false;
      levelKeys[depth] = keys;
      closers[depth++] = code + 2;
      next = code === OPEN_BRACE ? KEY_OR_CLOSE : VALUE_OR_CLOSE;
    } else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
      if (closers[--depth] !== code) return -1;
      const empty = code === CLOSE_BRACE ? KEY_OR_CLOSE : VALUE_OR_CLOSE;
      if (next !== COMMA_OR_CLOSE && next !== empty) written.stringified = false;
      keys = levelKeys[depth] as number;
      if (depth === 0) return at + 1;
      next = COMMA_OR_CLOSE;
    } else if (code === COMMA) {
      if (next !== COMMA_OR_CLOSE) written.stringified = false;
      next = closers[depth - 1] === CLOSE_BRACE ? KEY : VALUE;
    } else if (isSpace(code)) {
      written.plain = false;
    } else {
      at = scalarEnd(text, at, written);
      if (at === -1) return -1;
      if (next !== VALUE && next !== VALUE_OR_CLOSE) written.stringified = false;
      next = COMMA_OR_CLOSE;
      continue;
    }
    at++;
  }
  return -1;
}

/**
 * Whether a value in `text` nests deeper than `MAX_NESTING`: json.ts reads no
 * such text. One pass that counts brackets outside strings; a text too short
 * to nest that deep is not looked at.
 */
export function nestsTooDeep(text: string): boolean {
  if (text.length <= 2 * MAX_NESTING) return false;
  let depth = 0;
  for (let at = 0; at < text.length; at++) {
    const code = text.charCodeAt(at);
    if (code === QUOTE) {
      const end = stringEnd(text, at);
      if (end === -1) return false;
      at = end - 1;
    } else if (code === OPEN_BRACE || code === OPEN_BRACKET) {
      if (++depth > MAX_NESTING) return true;
    } else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
      depth--;
    }
  }
  return false;
}

/** The key whose string starts at `start` and ends before `end`; `undefined` when it is not a JSON string. */
function keyAt(text: string, start: number, end: number): string | undefined {
  const inner = text.slice(start + 1, end - 1);
  if (!inner.includes("\\")) return inner;
  try {
    return JSON.parse(text.slice(start, end)) as string;
  } catch {
    return undefined;
  }
}

/** An object's members as written: key → its value's span, and the index after the object. */
export interface ObjectText {
  members: Map<string, Span>;
  end: number;
}

/**
 * The members of the object at `start` (its `{`); `undefined` when none is
 * written there, or a key is written twice (readers disagree on which one
 * counts). `member` reads each value from its first character to the index
 * after it (-1: not a value); by default it is skipped.
 */
export function readObject(
  text: string,
  start: number,
  member: (key: string, at: number) => number = (_, at) => valueEnd(text, at),
): ObjectText | undefined {
  if (text.charCodeAt(start) !== OPEN_BRACE) return undefined;
  const members = new Map<string, Span>();
  let at = skipSpace(text, start + 1);
  if (text.charCodeAt(at) === CLOSE_BRACE) return { members, end: at + 1 };
  for (;;) {
    if (text.charCodeAt(at) !== QUOTE) return undefined;
    const keyEnd = stringEnd(text, at);
    const key = keyEnd === -1 ? undefined : keyAt(text, at, keyEnd);
    if (key === undefined || members.has(key)) return undefined;
    at = skipSpace(text, keyEnd);
    if (text.charCodeAt(at) !== COLON) return undefined;
    const valueStart = skipSpace(text, at + 1);
    const end = member(key, valueStart);
    if (end === -1) return undefined;
    members.set(key, [valueStart, end]);
    at = skipSpace(text, end);
    const next = text.charCodeAt(at);
    if (next === CLOSE_BRACE) return { members, end: at + 1 };
    if (next !== COMMA) return undefined;
    at = skipSpace(text, at + 1);
  }
}

/**
 * The elements of the array at `start` (its `[`), and the index after it;
 * `undefined` when none is written there. `element` reads each one from its
 * first character to the index after it (-1: not a value); by default it is skipped.
 */
export function readArray(
  text: string,
  start: number,
  element: (at: number) => number = (at) => valueEnd(text, at),
): { elements: Span[]; end: number } | undefined {
  if (text.charCodeAt(start) !== OPEN_BRACKET) return undefined;
  const elements: Span[] = [];
  let at = skipSpace(text, start + 1);
  if (text.charCodeAt(at) === CLOSE_BRACKET) return { elements, end: at + 1 };
  for (;;) {
    const end = element(at);
    if (end === -1) return undefined;
    elements.push([at, end]);
    at = skipSpace(text, end);
    const next = text.charCodeAt(at);
    if (next === CLOSE_BRACKET) return { elements, end: at + 1 };
    if (next !== COMMA) return undefined;
    at = skipSpace(text, at + 1);
  }
}

/**
 * The first key that the JSON value at `start` writes in one object beside
 * another it reads alike (`read(key)` equal for both: the same key twice, or
 * in another case); `undefined` when there is none; `null` when it nests
 * deeper than `MAX_NESTING` (or a string never closes). For a text
 * `JSON.parse` read, where a string followed by `:` is a key. (json.ts
 * `keyFoldedTwice` is the same check of a value, which holds no key twice.)
 */
export function keyReadTwice(
  text: string,
  start: number,
  read: (key: string) => string,
): string | null | undefined {
  // The keys of each object still open; `undefined` for an array.
  const open: Array<Set<string> | undefined> = [];
  for (let at = start; at < text.length; at++) {
    const code = text.charCodeAt(at);
    if (code === QUOTE) {
      const end = stringEnd(text, at);
      if (end === -1) return null;
      const keys = open.at(-1);
      if (keys !== undefined && text.charCodeAt(skipSpace(text, end)) === COLON) {
        const key = keyAt(text, at, end) ?? "";
        const readAs = read(key);
        if (keys.has(readAs)) return key;
        keys.add(readAs);
      }
      at = end - 1;
    } else if (code === OPEN_BRACE || code === OPEN_BRACKET) {
      if (open.length === MAX_NESTING) return null;
      open.push(code === OPEN_BRACE ? new Set() : undefined);
    } else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
      open.pop();
      if (open.length === 0) return undefined;
    }
  }
  return undefined;
}

/** Every object member inside a parsed value (what `Written.members` counts in its text). */
function membersIn(value: unknown): number {
  if (typeof value !== "object" || value === null) return 0;
  let count = 0;
  if (Array.isArray(value)) {
    for (const item of value) count += membersIn(item);
    return count;
  }
  for (const key in value) count += 1 + membersIn((value as Record<string, unknown>)[key]);
  return count;
}

/**
 * Whether a value's text, parsed to `value`, writes no key twice in any
 * object: readers differ on which of two counts (`JSON.parse` keeps the
 * last), so such a text means what its reader decides. The parse keeps one
 * of each, so it has fewer members than the text.
 */
export const writesEachKeyOnce = (written: Written, value: unknown) =>
  membersIn(value) === written.members;

/**
 * Whether the text of `span`, parsed to `value`, is what `JSON.stringify(value)`
 * writes: JSON (`value` is `undefined` where the parse failed), plain, no
 * escape `JSON.stringify` writes otherwise (`\u00e9`, `\/`), and no key
 * written twice. A text that is no JSON and has no member (`[1,,2]`, `["\x"]`)
 * parses to nothing with as many members as it writes: it is not one.
 */
export function isStringified(text: string, [start, end]: Span, written: Written, value: unknown) {
  if (!written.plain || value === undefined) return false;
  const inner = text.slice(start, end);
  if (inner.includes("\\") && /\\[u/]/.test(inner)) return false;
  return writesEachKeyOnce(written, value);
}
