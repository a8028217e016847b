/**
 * A value the proxy changed, written over the text it was parsed from
 * (json.ts re-exports it): what it kept as it was is the sender's text.
 *
 * `stringifyExact` keeps each number's and string's text, but writes the
 * rest as `JSON.stringify` does: a message the proxy left alone beside one
 * it changed (a batch), and every member around what it changed (a call's
 * `_meta`, the arguments it did not repair), lost their spacing and their
 * keys' escapes, a key written twice all but its last (which readers that
 * take the first read otherwise), and an object's array-index keys (`"10"`,
 * `"2"`) came out in ascending order before the others, as a JavaScript
 * object holds them. Written over the text instead (`spliceExact`):
 *
 * - an object or array the value still holds as parsed is the text that
 *   wrote it, as long as that text reads one way (no key written twice in
 *   it: a tool's schema the proxy read one way is written so); a JSON-RPC
 *   message kept as it was, beside one changed in its payload, is its text
 *   whatever it writes, as the payload is where nothing in it changed;
 * - an object or array built from one of the text (`markMadeFrom` says from
 *   which; else the one at the same key, or place in an array as long) is
 *   that text with each member's value written again by these rules, where
 *   it has the same keys, in the same order; else member by member, each
 *   key the text wrote as it wrote it, the keys both have in the text's
 *   order where the built one holds an array-index key (the only keys
 *   JavaScript reorders);
 * - anything else, and every number and string, as `stringifyExact` writes it.
 *
 * It costs a scan of the text, in JavaScript, for each level of what
 * changed: for a 760 KB listing in a batch some 8 to 20 ms, against 1.5 to 3
 * for `stringifyExact`. An answer parsed whole (a batch of listings, or one
 * beside the proxy's own answers) is written so too: written message by
 * message alone, a renamed listing lost the spacing and key escapes of the
 * tools and members it did not change, which a single listing's splice
 * (rewrite/listing-splice.ts) keeps. Batches are rare (2025-06-18 dropped
 * them), and `READS_OF_TEXT` bounds the cost of any one.
 */
import { type ExactText, madeFrom, stringifyExact, writtenSource } from "./json-exact";
import { isSpace, keyReadTwice, readArray, readObject, type Span, skipSpace } from "./json-spans";

const isRawJSON = (JSON as unknown as { isRawJSON(value: unknown): boolean }).isRawJSON;

/** An object or array, not `JSON.rawJSON`'s text of a number or string. */
const isContainer = (value: unknown): value is object =>
  typeof value === "object" && value !== null && !isRawJSON(value);

const isObject = (value: unknown): value is Record<string, unknown> =>
  isContainer(value) && !Array.isArray(value);

/** What `JSON.stringify` leaves out of an object, and writes `null` for in an array. */
const unwritten = (value: unknown) =>
  value === undefined || typeof value === "function" || typeof value === "symbol";

/** A key JavaScript orders before the others, ascending: an array index. */
const isIndex = (key: string) => /^(?:0|[1-9]\d{0,9})$/.test(key) && Number(key) < 2 ** 32 - 1;

const sameKey = (key: string) => key;

/**
 * How many times over a splice may read its text: each level of what changed
 * reads its container's text again, so a change deep in a large value (a
 * client's 500 levels of arrays around a megabyte, one value coerced at the
 * bottom) would read it once a level. Past it, the value is written as
 * `stringifyExact` writes it.
 */
const READS_OF_TEXT = 8;
/** And this much more, so that a small text nested a few levels is never written otherwise. */
const READ_SLACK = 64 * 1024;

/** A splice past `READS_OF_TEXT`. */
class OverRead extends Error {}

class Splice {
  /** What the splice may still read of the text, in characters. */
  private left: number;

  constructor(
    private readonly text: string,
    private readonly exact: ExactText | undefined,
  ) {
    this.left = READS_OF_TEXT * text.length + READ_SLACK;
  }

  /** Counts `[start, end)` read, and stops the splice past what it may read. */
  private read(start: number, end: number): void {
    this.left -= end - start;
    if (this.left < 0) throw new OverRead();
  }

  /**
   * `value` over `original`, written at `span`; `payload`: its text is a
   * whole JSON-RPC payload's, whose messages are copied as they came even
   * where they write a key twice.
   */
  value(value: unknown, original: unknown, span: Span, payload = false): string {
    if (value === original && isContainer(value) && (payload || this.readsOneWay(span))) {
      return this.text.slice(span[0], span[1]);
    }
    if (Array.isArray(value) && Array.isArray(original)) {
      return this.array(value, original, span, payload) ?? this.written(value);
    }
    if (isObject(value) && isObject(original)) {
      return this.object(value, original, span) ?? this.written(value);
    }
    return this.written(value);
  }

  private readsOneWay([start, end]: Span): boolean {
    this.read(start, end);
    return keyReadTwice(this.text, start, sameKey) === undefined;
  }

  private written(value: unknown): string {
    return stringifyExact(value, this.exact);
  }

  /** A number, string or literal, `holder[key]`. */
  private leaf(holder: object, key: string, item: unknown): string {
    if (this.exact && (typeof item === "number" || typeof item === "string")) {
      const source = writtenSource(holder, key, item, this.exact);
      if (source !== undefined) return source;
    }
    return JSON.stringify(item);
  }

  /**
   * `child`, an object or array of a value built from one of the text whose
   * members' objects and arrays are at `spans`: over the one it was built
   * from, else over `at` (the member of its place) at `atSpan`.
   */
  private member(child: object, spans: Map<unknown, Span>, at: unknown, atSpan?: Span): string {
    const same = spans.get(child);
    if (same) return this.value(child, child, same);
    const from = madeFrom(child);
    const fromSpan = from && spans.get(from);
    if (fromSpan) return this.value(child, from, fromSpan);
    return atSpan ? this.value(child, at, atSpan) : this.written(child);
  }

  /** `text[start, end)` with each span of `spans` (in order) written as the text at its index in `parts`. */
  private over([start, end]: Span, spans: readonly Span[], parts: readonly string[]): string {
    let out = "";
    let at = start;
    for (const [index, [from, to]] of spans.entries()) {
      out += this.text.slice(at, from) + parts[index];
      at = to;
    }
    return out + this.text.slice(at, end);
  }

  private array(
    value: unknown[],
    original: unknown[],
    [start]: Span,
    payload: boolean,
  ): string | undefined {
    const read = readArray(this.text, start);
    if (!read || read.elements.length !== original.length) return undefined;
    this.read(start, read.end);
    const spans = new Map<unknown, Span>();
    for (const [index, element] of original.entries()) {
      if (isContainer(element)) spans.set(element, read.elements[index] as Span);
    }
    const sameLength = value.length === original.length;
    const parts = value.map((child, index) => {
      if (unwritten(child)) return "null";
      if (!isContainer(child)) return this.leaf(value, String(index), child);
      // A message of a batch kept as it came, whatever it writes.
      const kept = payload ? spans.get(child) : undefined;
      if (kept) return this.value(child, child, kept, true);
      return sameLength
        ? this.member(child, spans, original[index], read.elements[index])
        : this.member(child, spans, undefined);
    });
    // As many elements: each written where the text wrote its own, the spacing between kept.
    return sameLength ? this.over([start, read.end], read.elements, parts) : `[${parts.join(",")}]`;
  }

  private object(
    value: Record<string, unknown>,
    original: Record<string, unknown>,
    [start]: Span,
  ): string | undefined {
    const keySpans = new Map<string, Span>();
    const read = readObject(this.text, start, undefined, keySpans);
    if (!read) return undefined;
    this.read(start, read.end);
    const spans = new Map<unknown, Span>();
    for (const [key, span] of read.members) {
      const item = Object.hasOwn(original, key) ? original[key] : undefined;
      if (isContainer(item)) spans.set(item, span);
    }
    const keys = this.keysOf(value, read.members).filter((key) => !unwritten(value[key]));
    const parts = keys.map((key) => {
      const child = value[key];
      const at = read.members.get(key);
      return isContainer(child)
        ? this.member(child, spans, at && original[key], at)
        : this.leaf(value, key, child);
    });
    // The same keys in the same order: each value written where the text wrote its own, the
    // keys and the spacing between kept.
    const written = [...read.members.keys()];
    if (keys.length === written.length && keys.every((key, index) => key === written[index])) {
      return this.over([start, read.end], [...read.members.values()], parts);
    }
    const members = keys.map((key, index) => {
      const keySpan = keySpans.get(key);
      const keyText = keySpan ? this.text.slice(keySpan[0], keySpan[1]) : JSON.stringify(key);
      return `${keyText}:${parts[index]}`;
    });
    return `{${members.join(",")}}`;
  }

  /**
   * `value`'s keys in its order, but those `written` (the text's members, in
   * order) also has in the text's order where `value` holds an array index:
   * JavaScript moves those first, in ascending order, wherever they were put.
   */
  private keysOf(value: object, written: Map<string, Span>): string[] {
    const keys = Object.keys(value);
    if (!keys.some(isIndex)) return keys;
    const inText = [...written.keys()].filter((key) => Object.hasOwn(value, key));
    let next = 0;
    return keys.map((key) => (written.has(key) ? (inText[next++] as string) : key));
  }
}

/** `value` over `original` (what `parseExact` read from all of `text`), the space around it as it came. */
function over(
  text: string,
  original: unknown,
  value: unknown,
  exact: ExactText | undefined,
  payload: boolean,
): string {
  // The text parsed: its value is all of it but the space around.
  const start = skipSpace(text, 0);
  let end = text.length;
  while (end > start && isSpace(text.charCodeAt(end - 1))) end--;
  try {
    const written = new Splice(text, exact).value(value, original, [start, end], payload);
    return text.slice(0, start) + written + text.slice(end);
  } catch (error) {
    if (!(error instanceof OverRead)) throw error;
    return stringifyExact(value, exact);
  }
}

/**
 * `value`, made from `original` (the value `parseExact` read from `text`,
 * with `exact`), written over `text`: the text around the value as it came,
 * and within it what `value` keeps of `original` as `text` wrote it.
 * `messages`: `text` is a JSON-RPC payload, a message or a batch of them.
 */
export const spliceExact = (
  text: string,
  original: unknown,
  value: unknown,
  exact: ExactText | undefined,
  { messages = false } = {},
): string => over(text, original, value, exact, messages);
