/**
 * Step 3 of argument repair (DESIGN, Contract 3.3): one value brought to a type
 * its schema allows, only where that loses nothing and means one thing.
 *
 * | value                        | schema wants | becomes                  |
 * |------------------------------|--------------|--------------------------|
 * | `"42"`, `"-7"`               | integer      | `42`, `-7`               |
 * | `"4.5"`, `"1e3"`             | number       | `4.5`, `1000`            |
 * | `"true"`, `"false"`          | boolean      | `true`, `false`          |
 * | `'{"a":1}'`, `'[1]'`         | object/array | the parsed JSON          |
 * | `3`, `true`                  | string       | `"3"`, `"true"`          |
 * | `{"a":1}`, `[1]`             | string       | compact JSON text        |
 * | `"x"`, `3`, `{…}`            | array        | `["x"]`, `[3]`, `[{…}]`  |
 * | `null`                       | no null      | dropped (sent as absent) |
 *
 * Refused, left as they are: `"4.5"` for an integer, `"yes"` for a boolean,
 * `"12abc"`, `"007"`, `" 42"`, integers beyond 2^53.
 */
import { isPlainObject, parseJson } from "../json";
import { type JsonType, jsonTypeOf } from "./json-schema";

export type Coercion = { value: unknown; from: JsonType; to: JsonType } | "drop" | undefined;

const INTEGER = /^-?(?:0|[1-9]\d*)$/;
const NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

function matches(type: JsonType, allowed: ReadonlySet<JsonType>): boolean {
  return allowed.has(type) || (type === "integer" && allowed.has("number"));
}

function fromString(text: string, allowed: ReadonlySet<JsonType>): unknown {
  if (allowed.has("integer") && INTEGER.test(text) && Number.isSafeInteger(Number(text))) {
    return Number(text);
  }
  if (allowed.has("number") && NUMBER.test(text) && Number.isFinite(Number(text))) {
    return Number(text);
  }
  if (allowed.has("boolean") && (text === "true" || text === "false")) return text === "true";
  if (allowed.has("object") || allowed.has("array")) {
    const parsed = parseJson(text);
    if (isPlainObject(parsed) && allowed.has("object")) return parsed;
    if (Array.isArray(parsed) && allowed.has("array")) return parsed;
  }
  return undefined;
}

export function coerceValue(value: unknown, allowed: ReadonlySet<JsonType>): Coercion {
  const from = jsonTypeOf(value);
  if (matches(from, allowed)) return undefined;
  if (value === null) return "drop";

  let coerced: unknown;
  if (typeof value === "string") {
    coerced = fromString(value, allowed);
  } else if (allowed.has("string")) {
    coerced = typeof value === "object" ? JSON.stringify(value) : String(value);
  }
  if (coerced === undefined && allowed.has("array")) coerced = [value];
  return coerced === undefined ? undefined : { value: coerced, from, to: jsonTypeOf(coerced) };
}
