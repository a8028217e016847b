/**
 * JSON values as the proxy reads them and writes them back. Everything it
 * parses comes from a peer and is untrusted: property reads are own-property
 * reads (a key named `constructor` or `__proto__` is data, never the
 * prototype's), and a parse that fails is an answer (`undefined`; JSON never
 * parses to it), not a throw.
 *
 * What the proxy re-serializes is written with the sender's own text for
 * every value it did not mean to change. `JSON.parse` and `JSON.stringify`
 * round numbers through doubles (`9007199254740993` comes out
 * `9007199254740992`, `1e400` as `null`, `1.50` as `1.5`) and rewrite string
 * escapes (`\u00e9` as `é`); a 64-bit id sent to a renamed tool would select
 * another record. A text whose every number and string is already written as
 * `JSON.stringify` writes it (what `NOT_AS_STRINGIFIED` cannot find)
 * round-trips exactly and takes the native path both ways. Any other text is
 * parsed with source access (a reviver's `context.source`), and the lexemes
 * `JSON.stringify` would write differently are kept:
 *
 * - by position, for the objects and arrays of the parse (`sourceAt`, an
 *   isolate-wide WeakMap whose entries live as long as the parsed objects),
 *   so a text parsed on the way (arguments sent as a JSON string) counts too,
 *   and for the objects the proxy rebuilds from them (a renamed key, recovered
 *   inline arguments, a renamed tool), each carrying over what it keeps
 *   (`writtenAsIn`);
 * - by value, for one text (`ExactText`), for a value whose place is not
 *   known: a value the text wrote one way only is written that way again. A body and the JSON
 *   texts read out of it on the way are joined (`joinExact`): a number a text
 *   holds alone (`"12345678901234567890"` for a value of any type) is in no
 *   object of that text, and the arguments it lands in may be rebuilt.
 *
 * Written back with `JSON.rawJSON`. Keys are written as `JSON.stringify`
 * writes them, and so is the whitespace of a message the proxy changed.
 *
 * A text that nests deeper than `MAX_NESTING` (json-spans.ts) is not read:
 * whatever walks its value afterwards would run out of stack.
 */
import { nestsTooDeep } from "./json-spans";

export { MAX_NESTING, nestsTooDeep } from "./json-spans";
export { type JsonSyntaxError, jsonSyntaxError } from "./json-syntax";

/**
 * JSON text as a file may hold it: a leading byte order mark (what editors on
 * Windows write) is no part of the JSON, and JSON.parse refuses it. For JSON
 * text an operator hands over as a setting (`wrangler secret put NAME < file`).
 */
export const withoutBom = (text: string) => (text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * `Object.prototype.hasOwnProperty`, as `ownKey.call(object, key)` in a
 * `for…in` over `object`: V8 answers that form from the loop's own list of
 * keys, where `Object.hasOwn` is a call each time. Only where the function
 * is a constant of the calling module (`const ownKey = imported`): through
 * an import alone it is not. A schema view asks it of every keyword of every
 * node (schemas/walk.ts, passes/well-formed.ts).
 */
export const ownKey = Object.prototype.hasOwnProperty;

/** `object[key]` when it is the object's own property; `undefined` otherwise. */
export function own(object: Record<string, unknown>, key: string): unknown {
  return Object.hasOwn(object, key) ? object[key] : undefined;
}

/**
 * Sets `object[key]` as an own property, even for a key named `__proto__`
 * (which plain assignment would take for the prototype); plain assignment for
 * every other key, which is many times faster than `defineProperty`.
 */
export function setOwn(object: Record<string, unknown>, key: string, value: unknown): void {
  if (key !== "__proto__") object[key] = value;
  else
    Object.defineProperty(object, key, {
      value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
}

/**
 * A key as lenient readers read it: those that ignore case (Go's
 * `encoding/json`, which also reads `ſ` as `s` and the Kelvin sign as `k`,
 * and ASP.NET), and those that end it at a NUL (C strings; the Go SDK
 * 1.3.1–1.4.0 read `name\u0000` as `name`, GHSA-q382-vc8q-7jhj). Upper case
 * first: lower case alone leaves `ſ` as it is.
 */
export const foldedKey = (key: string) => {
  const nul = key.indexOf("\0");
  return (nul === -1 ? key : key.slice(0, nul)).toUpperCase().toLowerCase();
};

/**
 * A name a peer wrote (a key, a query parameter), as an error or log line
 * quotes it: its first 64 characters, written as JSON writes a string.
 */
export const quotedName = (name: string) => JSON.stringify(name.slice(0, 64));

/** Why a key `keyFoldedTwice` (or json-spans.ts `keyReadTwice`) found is refused, in an error's words. */
export const keyTwiceReason = (key: string) =>
  `the key ${quotedName(key)} beside another that differs at most in case; JSON readers differ on which counts`;

/**
 * The first key that a value writes in one object beside another that
 * `foldedKey` reads alike (`title` and `Title`); `undefined` when there is
 * none. Any depth: the walk keeps its own stack.
 */
export function keyFoldedTwice(value: unknown): string | undefined {
  const pending = [value];
  while (pending.length > 0) {
    const item = pending.pop();
    if (Array.isArray(item)) for (const element of item) pending.push(element);
    else if (isPlainObject(item)) {
      const seen = new Set<string>();
      for (const key of Object.keys(item)) {
        const folded = foldedKey(key);
        if (seen.has(folded)) return key;
        seen.add(folded);
        pending.push(item[key]);
      }
    }
  }
  return undefined;
}

/**
 * Whether two parsed JSON values are equal: the same members, in any order,
 * with equal values, and each number written alike where its text is known
 * (`sourceOf`: one `JSON.stringify` writes otherwise, read by `parseExact`):
 * `12345678901234567891` and `…890` are one double, and two numbers to a
 * reader of exact integers; taken for one, a schema held for one caller
 * wrote its text into another's listing. Only what `JSON.parse` makes is
 * compared, so no constructor, date or pattern is looked at: a repeated
 * listing compares every schema this way, and a general deep equality
 * (dequal) took 1.7 to 2 times as long over 1,000 of them. A member is read
 * by its key, and asked whether it is the object's own only where an
 * inherited one could stand in for it: asking for every key took three
 * times as long.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  const isArray = Array.isArray(a);
  if (isArray !== Array.isArray(b)) return false;
  if (isArray) {
    const x = a as unknown[];
    const y = b as unknown[];
    if (x.length !== y.length) return false;
    for (let index = 0; index < x.length; index++) {
      const p = x[index];
      const q = y[index];
      if (p === q ? !sameText(x, y, String(index), p) : !sameJson(p, q)) return false;
    }
    return true;
  }
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let members = 0;
  for (const key in x) {
    const p = x[key];
    const q = y[key];
    // A member `y` lacks reads as undefined, or as one it inherits: a function, or for
    // `__proto__` the prototype itself, an object that an empty one would equal.
    if ((q === undefined || key === "__proto__") && !Object.hasOwn(y, key)) return false;
    if (p === q ? !sameText(x, y, key, p) : !sameJson(p, q)) return false;
    members++;
  }
  // Counted as the loop above counts: an own member of each, and what both inherit alike.
  for (const _ in y) members--;
  return members === 0;
}

/** The value `text` holds, or `undefined` when it is not JSON. */
export function parseJson(text: string): unknown {
  return parseExact(text)?.value;
}

/** What a text parsed exactly knows of its values by value: `null` where one value was written two ways. */
export interface ExactText {
  byValue: Map<unknown, string | null>;
}

/**
 * Text that may hold a number or string `JSON.stringify` writes differently:
 * a `\u` or `\/` escape, or a number (a token after `[`, `,`, `:` or at the
 * start) with an exponent, 16 or more digits, a fraction ending in 0 or
 * starting with six zeros (below 1e-6 `JSON.stringify` uses an exponent), or
 * `-0`. It may also match inside a string (`"at:4e2"`); that only costs the
 * slower path. A UUID's `4e` does not, as no token starts there.
 */
const NOT_AS_STRINGIFIED =
  /\\[u/]|(?:^|[[,:])\s*-?(?:\d+(?:\.\d+)?[eE]|\d(?:\.?\d){15}|\d+\.\d*0(?!\d)|0\.0{6})|(?:^|[[,:])\s*-0(?![.\d])/;

interface Source {
  source: string;
  value: unknown;
}

const sourceAt = new WeakMap<object, Map<string, Source>>();

/** The text `holder[key]` was read from (or is set to be written as), while it holds that value. */
function sourceOf(holder: object, key: string, value: unknown): string | undefined {
  const at = sourceAt.get(holder)?.get(key);
  return at !== undefined && Object.is(at.value, value) ? at.source : undefined;
}

/** Whether `value`, held by both `x` and `y` at `key`, is written alike there as far as known: numbers only. */
const sameText = (x: object, y: object, key: string, value: unknown) =>
  typeof value !== "number" || sourceOf(x, key, value) === sourceOf(y, key, value);

/** `holder[key]`, now `value`, is written as `source`. */
function writeAs(holder: object, key: string, source: string, value: unknown): void {
  let sources = sourceAt.get(holder);
  if (!sources) {
    sources = new Map();
    sourceAt.set(holder, sources);
  }
  sources.set(key, { source, value });
}

type Reviver = (
  this: unknown,
  key: string,
  value: unknown,
  context?: { source?: string },
) => unknown;

const rawJSON = (JSON as unknown as { rawJSON(text: string): unknown }).rawJSON;

/** -0 as a key of its own: a `Map` or `Set` takes -0 and 0 for one key. */
const NEGATIVE_ZERO = Symbol("-0");
const valueKey = (value: unknown) => (Object.is(value, -0) ? NEGATIVE_ZERO : value);

/**
 * What a text writes of its values, by value, as they are read: `null` for a
 * value written two ways (one of them, maybe, as `JSON.stringify` writes it).
 */
class TextsByValue {
  readonly byValue = new Map<unknown, string | null>();
  private readonly asStringified = new Set<unknown>();

  /** `value` is written as `source`; as `JSON.stringify` writes it where `source` is `undefined`. */
  note(value: number | string, source: string | undefined): void {
    const slot = valueKey(value);
    const known = this.byValue.get(slot);
    if (source === undefined) {
      this.asStringified.add(slot);
      if (known !== undefined) this.byValue.set(slot, null);
    } else if (this.asStringified.has(slot) || (known !== undefined && known !== source)) {
      this.byValue.set(slot, null);
    } else this.byValue.set(slot, source);
  }
}

/**
 * `text`'s value, and what re-serializing it needs to write it as it came;
 * `undefined` when it is not JSON, or nests deeper than `MAX_NESTING`.
 */
export function parseExact(text: string): { value: unknown; exact?: ExactText } | undefined {
  if (nestsTooDeep(text)) return undefined;
  try {
    if (!NOT_AS_STRINGIFIED.test(text)) return { value: JSON.parse(text) };
    const texts = new TextsByValue();
    const reviver: Reviver = function (key, value, context) {
      const source = context?.source;
      if (source === undefined || (typeof value !== "number" && typeof value !== "string")) {
        return value;
      }
      if (source === JSON.stringify(value)) {
        texts.note(value, undefined);
        return value;
      }
      writeAs(this as object, key, source, value);
      texts.note(value, source);
      return value;
    };
    return {
      value: JSON.parse(text, reviver as Parameters<typeof JSON.parse>[1]),
      exact: { byValue: texts.byValue },
    };
  } catch {
    return undefined;
  }
}

/**
 * What `value` (parsed by `parseExact`) knows of its numbers and strings by
 * their places, as by value: for what is made from it where they have no
 * place (a schema view's `const` made an `enum`). A value it writes two ways
 * (`9007199254740993` beside `9007199254740992`, one double) is `null`, as is
 * one in an object made anew, whose text is not known. Each object is read
 * once, however many places hold it; `undefined` where no text is known.
 */
export function exactTextIn(value: unknown): ExactText | undefined {
  const texts = new TextsByValue();
  const seen = new Set<object>();
  const pending = [value];
  while (pending.length > 0) {
    const holder = pending.pop();
    if (typeof holder !== "object" || holder === null || seen.has(holder)) continue;
    seen.add(holder);
    for (const key of Object.keys(holder)) {
      const item = (holder as Record<string, unknown>)[key];
      if (typeof item === "number" || typeof item === "string") {
        texts.note(item, sourceOf(holder, key, item));
      } else pending.push(item);
    }
  }
  return texts.byValue.size > 0 ? { byValue: texts.byValue } : undefined;
}

/**
 * Whether `value` is, or holds, a number whose text may have had more digits
 * than the double it was read as keeps: an integer past 2^53, one that
 * `JSON.stringify` writes with 16 significant digits or more, or one past a
 * double's range (`1e400`). Any other is written with the value its text had
 * (`1.50` as `1.5`, `1e2` as `100`), but for a text of more digits than a
 * double keeps that reads as one of fewer (`0.10000000000000000001` as `0.1`).
 */
export function mayBeRounded(value: unknown): boolean {
  // Its own stack: a value may nest deeper than a call stack goes.
  const pending = [value];
  while (pending.length > 0) {
    const item = pending.pop();
    if (typeof item === "object" && item !== null) {
      for (const inner of Object.values(item)) pending.push(inner);
    } else if (typeof item !== "number") continue;
    else if (!Number.isFinite(item)) return true;
    else if (Number.isInteger(item) ? !Number.isSafeInteger(item) : significantDigits(item) >= 16)
      return true;
  }
  return false;
}

/** The significant digits `JSON.stringify` writes `value` with (the shortest that read back as it). */
const significantDigits = (value: number) =>
  JSON.stringify(value)
    .replace(/^-|e.*$|\./g, "")
    .replace(/^0+/, "").length;

/**
 * The JSON text number `holder[key]` was read from: by its position, else as
 * `exact` knows the value, else as `JSON.stringify` writes it (a text that
 * writes it otherwise is known by one or the other); `undefined` where the
 * texts wrote it two ways and its own is not known by position.
 */
export function numberText(
  holder: object,
  key: string,
  value: number,
  exact: ExactText | undefined,
): string | undefined {
  const at = sourceOf(holder, key, value);
  if (at !== undefined) return at;
  const known = exact?.byValue.get(valueKey(value));
  if (known !== undefined) return known ?? undefined;
  return Number.isFinite(value) ? JSON.stringify(value) : undefined;
}

/**
 * `holder[key]` as a value to put in another object: a number `JSON.stringify`
 * writes otherwise than the text it was read from (an integer past 2^53)
 * becomes that text, which any serializer of it writes as it came.
 */
export function asWritten(holder: object, key: string): unknown {
  const value = (holder as Record<string, unknown>)[key];
  const at = typeof value === "number" ? sourceOf(holder, key, value) : undefined;
  return at === undefined ? value : rawJSON(at);
}

/**
 * `[value]`, its element written by `stringifyExact` as `written` (the text a
 * number was read from): the new array is in no text, and by value alone a
 * number the body also writes otherwise (`9007199254740993` beside a
 * `9007199254740992`) would be written as the other.
 */
export function oneElementArray(value: unknown, written: string | undefined): unknown[] {
  const array = [value];
  if (written !== undefined) writeAs(array, "0", written, value);
  return array;
}

/**
 * `copy`, an object built from `original` (a spread, `Object.fromEntries`),
 * with each member that holds the value `original` holds under the same key
 * (or under `from(key)`, for a key renamed) written by `stringifyExact` as
 * `original`'s text wrote it. By value alone, a value the text writes two
 * ways would be written as `JSON.stringify` writes it: `9007199254740993`
 * beside a `9007199254740992` is one double, and an origin that reads
 * integers exactly would read the other. A member the proxy set
 * (`writtenAsSet`) keeps what it was set to be written as.
 */
export function writtenAsIn<T extends object>(
  copy: T,
  original: object,
  from?: (key: string) => string,
): T {
  const sources = sourceAt.get(original);
  if (sources === undefined || copy === original) return copy;
  const own = sourceAt.get(copy);
  for (const key of Object.keys(copy)) {
    const at = sources.get(from?.(key) ?? key);
    if (at !== undefined && !own?.has(key)) writeAs(copy, key, at.source, at.value);
  }
  return copy;
}

/**
 * `holder[key]` (and every value inside it) written by `stringifyExact` as
 * `JSON.stringify` writes it: a value the proxy sets (an operator's fixed
 * value) is not the client's to spell, and a client's text for a like value
 * (`9007199254740993` for the double 2^53) would be read so by an origin
 * that reads numbers exactly.
 */
export function writtenAsSet(holder: object, key: string): void {
  const value = (holder as Record<string, unknown>)[key];
  if (typeof value === "number" || typeof value === "string") {
    writeAs(holder, key, JSON.stringify(value), value);
  } else if (typeof value === "object" && value !== null) {
    for (const inner of Object.keys(value)) writtenAsSet(value, inner);
  }
}

/**
 * `holder[key]`, a number made from a string (args/coerce.ts), written by
 * `stringifyExact` as `text`, the digits the string spelled it with: a
 * double would round them. Written so by one handed `PLACES_ONLY` at least.
 */
export function writtenAsText(holder: object, key: string, text: string): void {
  writeAs(holder, key, text, (holder as Record<string, unknown>)[key]);
}

/**
 * What a text knows of no value by value: `stringifyExact` reads where values
 * are written by their places only when handed what a text knows, and a body
 * of plain strings knows nothing (`writtenAsText`). Never added to.
 */
export const PLACES_ONLY: ExactText = { byValue: new Map() };

/**
 * What several texts know of their values by value, as one: a value the
 * texts write differently is written as `JSON.stringify` writes it where it
 * is not known by position. For a body and the JSON text read out of it on
 * the way (arguments a view asked for as text), whose values may land in
 * objects the proxy rebuilds.
 */
export function joinExact(...texts: Array<ExactText | undefined>): ExactText | undefined {
  const known = texts.filter((text): text is ExactText => text !== undefined);
  if (known.length <= 1) return known[0];
  const byValue = new Map(known[0]?.byValue);
  for (const { byValue: other } of known.slice(1)) {
    for (const [value, source] of other) {
      if (!byValue.has(value)) byValue.set(value, source);
      else if (byValue.get(value) !== source) byValue.set(value, null);
    }
  }
  return { byValue };
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

/** The text of UTF-8 `bytes`; `undefined` when they are not UTF-8. */
export function utf8Text(bytes: Uint8Array): string | undefined {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return undefined;
  }
}

/** `value` as JSON text, each value `exact`'s text held written as it was written there. */
export function stringifyExact(value: unknown, exact: ExactText | undefined): string {
  if (!exact) return JSON.stringify(value);
  return JSON.stringify(value, function (this: unknown, key: string, item: unknown) {
    if (typeof item !== "number" && typeof item !== "string") return item;
    const source = sourceOf(this as object, key, item) ?? exact.byValue.get(valueKey(item));
    return typeof source === "string" ? rawJSON(source) : item;
  });
}
