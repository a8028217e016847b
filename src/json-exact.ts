/**
 * JSON values parsed and written back exactly (json.ts re-exports them).
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
 *   known: a value the text wrote one way only is written that way again.
 *   Not across texts: a call's values, from the body and the JSON texts read
 *   out of it on the way, are written by their places only (`placesOnly`),
 *   and a number or string a text holds alone (`"12345678901234567890"` for
 *   a value of any type) is given the place it lands in (schemas/way-back.ts).
 *
 * Written back with `JSON.rawJSON`. Keys are written as `JSON.stringify`
 * writes them, and so is the space between tokens: where the proxy has the
 * text a changed value was parsed from, json-splice.ts writes it over that
 * text instead.
 */
import { mayRound, readsExactly } from "./json-numbers";
import { nestsTooDeep } from "./json-spans";

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

/**
 * The objects and arrays a parse found to hold, at any depth, a number whose
 * text says more than its double (json-numbers.ts `readsExactly`:
 * `12345678901234567891` and `…890` are one double, `1e400` reads as
 * Infinity): marked as read, so `holdsRounded` asks no walk of a value.
 */
const rounding = new WeakSet<object>();

/** The text `holder[key]` was read from (or is set to be written as), while it holds that value. */
function sourceOf(holder: object, key: string, value: unknown): string | undefined {
  const at = sourceAt.get(holder)?.get(key);
  return at !== undefined && Object.is(at.value, value) ? at.source : undefined;
}

/** Whether `value`, held by both `x` and `y` at `key`, is written alike there as far as known: numbers only. */
export const sameText = (x: object, y: object, key: string, value: unknown) =>
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
    // Read inside out: only what closes after a rounded number may hold one.
    let rounded = false;
    const reviver: Reviver = function (key, value, context) {
      const source = context?.source;
      if (source === undefined || (typeof value !== "number" && typeof value !== "string")) {
        if (rounded && typeof value === "object" && value !== null && rounding.has(value)) {
          rounding.add(this as object);
        }
        return value;
      }
      // A lone surrogate the text holds raw (it was in a string, as JSON text) is no spelling to
      // keep: UTF-8 carries none, and the origin would read U+FFFD. Its escape is JSON.stringify's.
      if (source === JSON.stringify(value) || !source.isWellFormed()) {
        texts.note(value, undefined);
        return value;
      }
      writeAs(this as object, key, source, value);
      texts.note(value, source);
      if (typeof value === "number" && mayRound(source) && !readsExactly(source, value)) {
        rounding.add(this as object);
        rounded = true;
      }
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
 * The JSON text string `holder[key]` was read from, where it is not what
 * `JSON.stringify` writes (`"caf\u00e9"`): for the array a lone value is made
 * the element of (`oneElementArray`), which is in no text.
 */
export const stringText = (holder: object, key: string, value: string): string | undefined =>
  sourceOf(holder, key, value);

/**
 * `holder[key]` as a value to put in another object: a number or string
 * `JSON.stringify` writes otherwise than the text it was read from (an
 * integer past 2^53, `"\u0036"`) becomes that text, which any serializer of
 * it writes as it came.
 */
export function asWritten(holder: object, key: string): unknown {
  const value = (holder as Record<string, unknown>)[key];
  const at =
    typeof value === "number" || typeof value === "string"
      ? sourceOf(holder, key, value)
      : undefined;
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
 * What an object of a message the proxy changed was built from, where it may
 * stand elsewhere than that one did (a batch's call after one the proxy
 * answered itself, arguments under a coalesced key): json-splice.ts writes
 * it over that one's text. Marked only for what lives as long as its
 * message: a view kept in isolate memory would keep the schema it was made
 * from.
 */
const madeFromAt = new WeakMap<object, object>();

/** `copy`, marked as built from `original` (`madeFrom`). */
export function markMadeFrom<T extends object>(copy: T, original: object): T {
  if (copy !== original) madeFromAt.set(copy, original);
  return copy;
}

/** The object `copy` was built from, as `markMadeFrom` marked it. */
export const madeFrom = (copy: object): object | undefined => madeFromAt.get(copy);

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
 * double may round them, and by value it would take the text the body writes
 * that double with elsewhere. Written so by one handed `PLACES_ONLY` at least.
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
 * `PLACES_ONLY` where any of `texts` knows a value's text, else `undefined`
 * (`JSON.stringify`'s): for a call's values, which come from several texts
 * (the body, arguments sent as JSON text, a value a view asked for as text).
 * By value, one text's spelling of a double was written where another wrote
 * it (the body's id `5` as the arguments text's `5.0`, an argument's
 * `9007199254740992` as another call's `…993`), and a text that writes a
 * value as `JSON.stringify` does knows nothing of it to say so. Every value
 * a text writes otherwise is known by its place, and each object built from
 * one carries that over (`writtenAsIn`). No map is copied, so a batch's
 * calls cost no more for a body that writes many numbers otherwise (joined
 * by value, 100 calls copied the map of 300,000 such numbers 100 times:
 * 5.7 s of CPU).
 */
export const placesOnly = (...texts: Array<ExactText | undefined>): ExactText | undefined =>
  texts.some((text) => text !== undefined) ? PLACES_ONLY : undefined;

/**
 * The text `stringifyExact` writes the number or string `holder[key]` with,
 * where it is not `JSON.stringify`'s: by its place, else by value as `exact`
 * knows it.
 */
export function writtenSource(
  holder: object,
  key: string,
  item: number | string,
  exact: ExactText,
): string | undefined {
  const source = sourceOf(holder, key, item) ?? exact.byValue.get(valueKey(item));
  return typeof source === "string" ? source : undefined;
}

/** `value` as JSON text, each value `exact`'s text held written as it was written there. */
export function stringifyExact(value: unknown, exact: ExactText | undefined): string {
  if (!exact) return JSON.stringify(value);
  return JSON.stringify(value, function (this: unknown, key: string, item: unknown) {
    if (typeof item !== "number" && typeof item !== "string") return item;
    const source = writtenSource(this as object, key, item, exact);
    return source === undefined ? item : rawJSON(source);
  });
}

/**
 * Whether `value`, an object or array `parseExact` read, holds a number whose
 * text says more than the double it reads as (`12345678901234567891`, not
 * `1.0`), told from the parse, without a walk. Not of a value built anew.
 */
export const holdsRounded = (value: unknown): boolean =>
  typeof value === "object" && value !== null && rounding.has(value);

/**
 * `JSON.stringify(value)`, each number `holdsRounded` finds written as its
 * text, by its place (`12345678901234567891`, `1e400`), every other as
 * `JSON.stringify` writes it (`1.0` as `1`): what the value reads as to a
 * reader of exact numbers, one text per double where the texts say no more.
 */
export function stringifyUnrounded(value: unknown): string {
  return JSON.stringify(value, function (this: unknown, key: string, item: unknown) {
    if (typeof item !== "number") return item;
    const source = sourceOf(this as object, key, item);
    const exact = source === undefined || !mayRound(source) || readsExactly(source, item);
    return exact ? item : rawJSON(source);
  });
}
