/**
 * Step 3 of argument repair: one value brought to a type its schema allows,
 * only where that loses nothing and means one thing. The table of what becomes
 * what, and what is left alone, is docs/arguments.md's (step 3).
 */
import {
  type ExactText,
  isPlainObject,
  numberParts,
  oneElementArray,
  parseExact,
  stringifyExact,
} from "../json";
import { type JsonType, jsonTypeOf } from "./json-schema";

export type Coercion =
  | {
      value: unknown;
      from: JsonType;
      to: JsonType;
      /** How the JSON text an object or array was read from wrote its values (json.ts). */
      exact?: ExactText;
      /** The text a number made from a string is written as: the string's, which a double may round. */
      written?: string;
    }
  | "drop"
  | undefined;

const INTEGER = /^-?(?:0|[1-9]\d*)$/;
const NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

function matches(type: JsonType, allowed: ReadonlySet<JsonType>): boolean {
  return allowed.has(type) || (type === "integer" && allowed.has("number"));
}

/** What a string an enum does not name may be read as: a number or boolean, as a view writes one. */
const SCALARS: readonly JsonType[] = ["integer", "number", "boolean"];

/**
 * `text`, which `values` (an `enum` or `const`) does not name, as the number or boolean it writes
 * where `values` names that (`"2"` for `[1, 2, "auto"]`): a view of string enums offers every
 * value as a string (gemini, portable), and the schema taking strings too, its type alone would
 * leave the model's `"2"` a string the origin refuses.
 */
function namedIn(text: string, allowed: ReadonlySet<JsonType>, values: ReadonlySet<unknown>) {
  const scalars = new Set(SCALARS.filter((type) => allowed.has(type)));
  const coerced = scalars.size > 0 ? fromString(text, scalars) : undefined;
  if (coerced === undefined || !values.has(coerced.value)) return undefined;
  return { ...coerced, from: "string" as const, to: jsonTypeOf(coerced.value) };
}

/**
 * `text`, a JSON number, as a number written with `text`'s own digits where it goes: a double may
 * round them (`"9007199254740993"`, a 64-bit id a view showed as a string, reaches the origin as
 * `9007199254740993`, not `…992`; `"1e-400"` is not `0`), and written by value, one of few digits
 * would take the text the body writes its double with elsewhere (`"5"` beside a `5.0`). None past
 * a double's range.
 */
function numberOf(text: string): { value: number; written: string } | undefined {
  const value = Number(text);
  return Number.isFinite(value) ? { value, written: text } : undefined;
}

/**
 * Whether a JSON number's text writes an integer (`1e+16`, `2.50e2`, `1.0`, `100e-2`): its
 * digits times ten to its exponent less its fraction's length (json.ts `numberParts`). Zeros
 * counted by a loop: a regex backtracks over a run.
 */
function writesInteger(text: string): boolean {
  if (!NUMBER.test(text)) return false;
  const { digits, fraction, exponent } = numberParts(text);
  let zeros = 0;
  while (zeros < digits.length && digits.charCodeAt(digits.length - 1 - zeros) === 0x30) zeros++;
  return zeros === digits.length || exponent - fraction + zeros >= 0;
}

/** A string's JSON reading (json-exact.ts `parseExact`); `undefined` where it is no JSON text. */
type JsonReading = ReturnType<typeof parseExact>;

/** `text` as a type of `allowed`; `json`, its JSON reading, where an object or array is allowed. */
function fromString(
  text: string,
  allowed: ReadonlySet<JsonType>,
  json?: JsonReading,
): { value: unknown; exact?: ExactText; written?: string } | undefined {
  const numeric =
    (allowed.has("integer") && (INTEGER.test(text) || writesInteger(text))) ||
    (allowed.has("number") && NUMBER.test(text));
  const number = numeric ? numberOf(text) : undefined;
  if (number) return number;
  if (allowed.has("boolean") && (text === "true" || text === "false")) {
    return { value: text === "true" };
  }
  const value = json?.value;
  if (
    (isPlainObject(value) && allowed.has("object")) ||
    (Array.isArray(value) && allowed.has("array"))
  )
    return { value, ...(json?.exact ? { exact: json.exact } : {}) };
  return undefined;
}

/**
 * Whether `value` is a string no list of one stands for: empty (no value at all), or with a
 * comma outside JSON text, which may write a list (`"bug,urgent"`, two labels) as much as one
 * value with a comma in it; either way a list of one is valid with another meaning than the
 * model's. An object's text (`{"a":1,"b":2}`) is one element, read as such by its `items`.
 */
const listOrNothing = (value: string, json: JsonReading) =>
  value === "" || (value.includes(",") && json === undefined);

/**
 * `value` brought to a type of `allowed`. A number becomes the string of its
 * text as the client wrote it (`written`: `1234567890123456789`, `1.50`,
 * `1e400`, not a double's `1234567890123456800`, `1.5`, `Infinity`), and is
 * left alone where that text is not known; an object, the text of its values
 * as `exact` knows them. A string becomes a number written with its digits
 * (`written`), also where strings are allowed but `values`, the schema's
 * `enum` or `const`, names the number and not the string. A lone value becomes
 * a one-element array, its element written as `written` (a string's text where
 * its escapes are its own), but not a string `listOrNothing`, and never an array's
 * `element`: in an array of arrays, `["a","b"]` may be one row (`[["a","b"]]`)
 * as much as two (`[["a"],["b"]]`).
 */
export function coerceValue(
  value: unknown,
  allowed: ReadonlySet<JsonType>,
  written?: string,
  exact?: ExactText,
  values?: ReadonlySet<unknown>,
  element = false,
): Coercion {
  const from = jsonTypeOf(value);
  if (matches(from, allowed)) {
    if (typeof value !== "string" || values === undefined || values.has(value)) return undefined;
    return namedIn(value, allowed, values);
  }
  if (value === null) return "drop";

  let coerced: { value: unknown; exact?: ExactText; written?: string } | undefined;
  // A string's JSON reading, read once: for the object or array it writes, and whether a comma
  // list is JSON text (`listOrNothing`).
  let json: JsonReading;
  if (typeof value === "string") {
    if (allowed.has("object") || allowed.has("array")) json = parseExact(value);
    coerced = fromString(value, allowed, json);
  } else if (typeof value === "number" && allowed.has("string")) {
    if (written === undefined) return undefined;
    coerced = { value: written };
  } else if (allowed.has("string")) {
    coerced = { value: typeof value === "object" ? stringifyExact(value, exact) : String(value) };
  }
  const lone = !element && !(typeof value === "string" && listOrNothing(value, json));
  if (coerced === undefined && allowed.has("array") && lone) {
    coerced = { value: oneElementArray(value, written) };
  }
  return coerced === undefined ? undefined : { ...coerced, from, to: jsonTypeOf(coerced.value) };
}
