/**
 * What a JSON value's text shows as it is skipped (json-spans.ts
 * `valueEnd`): its members, whether it is plain, and whether it is written as
 * `JSON.stringify` writes its parse, told from the text alone; and, where the
 * text cannot tell, the same told with the parse (`isStringified`,
 * `writesEachKeyOnce`). What lets a listing's schemas be known for one
 * reading without being parsed (protocol/listing-text.ts,
 * toolmap/listed-schema.ts).
 */
import { mayRound, readsExactly } from "./json-numbers";
import {
  CLOSE_BRACE,
  CLOSE_BRACKET,
  COLON,
  COMMA,
  isSpace,
  MAX_NESTING,
  OPEN_BRACE,
  OPEN_BRACKET,
  QUOTE,
  type Span,
  scalarEnd,
  stringEnd,
} from "./json-spans";

/** What a skipped value's text showed: how to tell whether it is written as `JSON.stringify` writes it. */
export interface Written {
  /** Object members inside it (each `:` outside its strings). */
  members: number;
  /** No whitespace between its tokens, and every number written as `JSON.stringify` writes it. */
  plain: boolean;
  /**
   * Some number in it says more than the double it reads as
   * (json-numbers.ts `readsExactly`: `12345678901234567891`, `1e400`), which
   * only a parse that keeps its text reads as written (json.ts `parseExact`).
   */
  rounded: boolean;
  /**
   * Some object in it writes a key that is an array index (`"0"`, `"404"`),
   * which `JSON.stringify` writes before the others, in their order, whatever
   * order the text wrote them in: then it may not write the parse as the text.
   */
  indexed: boolean;
  /**
   * Plain, and shown by its text alone to be JSON written as `JSON.stringify`
   * writes its parse: each token where JSON's grammar has it, no key twice in
   * one object, none an array index, no control character in a string and no escape but `\"`,
   * `\\`, `\b`, `\f`, `\n`, `\r` and `\t` (in a text decoded from UTF-8, which
   * holds no lone surrogate). Where it holds, the text needs no
   * parse to be known for one reading; where it does not, a parse tells
   * (`isStringified`, `writesEachKeyOnce`): it is cautious, never wrong.
   */
  stringified: boolean;
}

/** What a value's text shows before it is read: nothing against it. */
export const newWritten = (): Written => ({
  members: 0,
  plain: true,
  rounded: false,
  indexed: false,
  stringified: true,
});

/**
 * `scalarEnd`, and `written` told where the number is one `JSON.stringify`
 * writes otherwise (`1.50`, `1e3`, `-0`, 17 digits): then it is not plain;
 * and where it says more than its double: then it is `rounded` (told by
 * `readsExactly` only of a number that `mayRound`).
 */
function plainScalarEnd(text: string, start: number, written: Written): number {
  const end = scalarEnd(text, start);
  const code = text.charCodeAt(start);
  if (end === -1 || (code !== 0x2d && (code < 0x30 || code > 0x39))) return end;
  if (written.plain) {
    const token = text.slice(start, end);
    const value = Number(token);
    if (String(value) !== token) {
      written.plain = false;
      if (mayRound(token) && !readsExactly(token, value)) written.rounded = true;
    }
  } else if (!written.rounded && mayRound(text, start, end)) {
    const token = text.slice(start, end);
    if (!readsExactly(token, Number(token))) written.rounded = true;
  }
  return end;
}

/** The closers still open while a value is read: one read at a time, never deeper than `MAX_NESTING`. */
const closers = new Uint8Array(MAX_NESTING);

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

/**
 * Whether the key at `[start, end)` (its quotes) may be an array index: up to
 * 10 digits (2^32 - 2 is the largest), no leading zero. Cautious: `"9999999999"`
 * is none, and counts.
 */
function indexKey(text: string, start: number, end: number): boolean {
  const length = end - start - 2;
  if (length < 1 || length > 10 || (length > 1 && text.charCodeAt(start + 1) === 0x30)) {
    return false;
  }
  for (let at = start + 1; at < end - 1; at++) {
    const code = text.charCodeAt(at);
    if (code < 0x30 || code > 0x39) return false;
  }
  return true;
}

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
 * json-spans.ts `valueEnd`, adding to `written` what the value's text shows: its members,
 * whether it is plain, and whether it is written as `JSON.stringify` writes
 * it (`Written.stringified`): JSON's grammar followed token by token, each
 * object's keys compared as written (with no escape but those of
 * `UNSTRINGIFIED`'s complement, one text per key), the strings' characters
 * read at once at the end.
 */
export function writtenEnd(text: string, start: number, written: Written, outer = 0): number {
  const first = text.charCodeAt(start);
  let end: number;
  if (first === QUOTE) end = stringEnd(text, start);
  else if (first !== OPEN_BRACE && first !== OPEN_BRACKET)
    end = plainScalarEnd(text, start, written);
  else end = structureEnd(text, start, written, outer);
  if (!written.plain || written.indexed) written.stringified = false;
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
        if (indexKey(text, at, end)) written.indexed = true;
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
      at = plainScalarEnd(text, at, written);
      if (at === -1) return -1;
      if (next !== VALUE && next !== VALUE_OR_CLOSE) written.stringified = false;
      next = COMMA_OR_CLOSE;
      continue;
    }
    at++;
  }
  return -1;
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
 * escape `JSON.stringify` writes otherwise (`\u00e9`, `\/`), no key that is
 * an array index (`Written.indexed`), and no key written twice. A text that is no JSON and has no member (`[1,,2]`, `["\x"]`)
 * parses to nothing with as many members as it writes: it is not one.
 */
export function isStringified(text: string, [start, end]: Span, written: Written, value: unknown) {
  if (!written.plain || written.indexed || value === undefined) return false;
  const inner = text.slice(start, end);
  if (inner.includes("\\") && /\\[u/]/.test(inner)) return false;
  return writesEachKeyOnce(written, value);
}
