/**
 * JSON values as the proxy reads them and writes them back. Everything it
 * parses comes from a peer and is untrusted: property reads are own-property
 * reads (a key named `constructor` or `__proto__` is data, never the
 * prototype's), and a parse that fails is an answer (`undefined`; JSON never
 * parses to it), not a throw.
 *
 * Numbers and strings written back as the sender wrote them: json-exact.ts (a
 * number's text read: json-numbers.ts); and what a changed value keeps of the
 * text it came from: json-splice.ts.
 *
 * A text that nests deeper than `MAX_NESTING` (json-spans.ts) is not read:
 * whatever walks its value afterwards would run out of stack.
 */
import { parseExact, sameText } from "./json-exact";

export {
  asWritten,
  type ExactText,
  exactTextIn,
  holdsRounded,
  markMadeFrom,
  numberText,
  oneElementArray,
  PLACES_ONLY,
  parseExact,
  placesOnly,
  stringifyExact,
  stringifyUnrounded,
  stringText,
  writtenAsIn,
  writtenAsSet,
  writtenAsText,
} from "./json-exact";
export { holdsNumber, mayBeRounded, numberParts, readsExactly } from "./json-numbers";
export { keyReadTwice, MAX_NESTING, nestsTooDeep } from "./json-spans";
export { spliceExact } from "./json-splice";
export { type JsonSyntaxError, jsonSyntaxError } from "./json-syntax";

/**
 * JSON text as a file may hold it: a leading byte order mark (what editors on
 * Windows write) is no part of the JSON, and JSON.parse refuses it. For JSON
 * text an operator hands over as a setting (`wrangler secret put NAME < file`).
 */
export const withoutBom = (text: string) => (text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);

/**
 * The byte order mark UTF-8 `bytes` start with, as text (`""` where they
 * start with none). A decoder drops it with the JSON it reads; a body written
 * anew over that text puts it back, as the sender wrote it: what the proxy
 * does not mean to change reaches the other side byte-identical.
 */
export const leadingBom = (bytes: Uint8Array) =>
  bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? "\uFEFF" : "";

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

/** Names as they are written, by how a lenient reader reads them (`foldedKey`). */
export type Spellings = ReadonlyMap<string, string>;

export const spellingsOf = (names: Iterable<string>): Spellings =>
  new Map([...names].map((name) => [foldedKey(name), name]));

/** A key as written, and the name a lenient reader takes it for. */
export type Misspelling = [written: string, name: string];

/**
 * The first of `keys` that a lenient reader takes for one of `names` though
 * it is not written as it (`_Meta` for `_meta`), with that name; `undefined`
 * when none is. Such a reader reads a member the proxy read as absent.
 */
export function misspelledAs(keys: Iterable<string>, names: Spellings): Misspelling | undefined {
  for (const key of keys) {
    const name = names.get(foldedKey(key));
    if (name !== undefined && name !== key) return [key, name];
  }
  return undefined;
}

/**
 * A name a peer wrote (a key, a query parameter), as an error or log line
 * quotes it: its first 64 characters, written as JSON writes a string.
 */
export const quotedName = (name: string) => JSON.stringify(name.slice(0, 64));

/** A setting's path as an operator reads it: `TOOL_RULES.tools["catering.invoice"].name`. */
export function settingPath(keys: readonly unknown[]): string {
  return keys
    .map((key, index) => {
      if (typeof key === "number") return `[${key}]`;
      const text = String(key);
      if (/^[A-Za-z_$][\w$]*$/.test(text)) return index === 0 ? text : `.${text}`;
      return `[${JSON.stringify(text)}]`;
    })
    .join("");
}

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

const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

/** The text of UTF-8 `bytes`; `undefined` when they are not UTF-8. */
export function utf8Text(bytes: Uint8Array): string | undefined {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return undefined;
  }
}
