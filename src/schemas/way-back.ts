/**
 * The one step back from a view that argument repair (args/) cannot take on
 * its own: a value the view asked for as JSON text (an open object, a value
 * of any type, the rest of a cut `$ref` cycle) is parsed back into the value
 * the text stands for. Repair knows only the origin's schema, and where that
 * schema accepts a string too (a value of any type), it could not tell the
 * text `"42"` from the string the model meant; the view says which it asked for.
 *
 * Everything else about the way back is repair against the origin's schema:
 * a numeric enum sent as a string, a `null` the origin does not allow, a
 * widened constraint (validation). Pure and bounded like repair; a string
 * that is not JSON stays the string it is, and a text read back keeps its
 * spelling of every number and string (json.ts, `parseExact`).
 */
import { type JsonType, jsonTypeOf } from "../args/json-schema";
import { joinPath } from "../args/repair";
import { type ExactText, isPlainObject, joinExact, own, parseExact } from "../json";
import type { SchemaView } from "./view";

const MAX_DEPTH = 32;

export interface ParsedText {
  path: string;
  from: "string";
  to: JsonType;
}

/**
 * `args` with every value the view asked for as JSON text parsed back, and
 * every `null` that means "left out" (a property the view made nullable)
 * left out; the same object when there was none. Paths are written as repair
 * writes them.
 */
export function valuesFromText(
  args: Record<string, unknown>,
  view: SchemaView,
): {
  arguments: Record<string, unknown>;
  parsed: ParsedText[];
  leftOut: string[];
  /** How the texts read back wrote their values, for writing them so again (json.ts). */
  exact?: ExactText;
} {
  const parsed: ParsedText[] = [];
  const leftOut: string[] = [];
  if (view.asText.size === 0 && view.absentNulls.size === 0) {
    return { arguments: args, parsed, leftOut };
  }
  let exact: ExactText | undefined;

  const walk = (value: unknown, schema: unknown, path: string, depth: number): unknown => {
    if (!isPlainObject(schema) || depth > MAX_DEPTH) return value;
    if (view.asText.has(schema)) {
      const text = typeof value === "string" ? parseExact(value) : undefined;
      if (text === undefined) return value;
      // By value too: a number alone (`12345678901234567890`) has no object of the text to be
      // known in by position, and the arguments it lands in may be rebuilt on the way.
      exact = joinExact(exact, text.exact);
      parsed.push({ path, from: "string", to: jsonTypeOf(text.value) });
      return text.value;
    }
    const properties = own(schema, "properties");
    if (isPlainObject(value) && isPlainObject(properties)) {
      let changed = false;
      const entries: Array<[string, unknown]> = [];
      for (const [key, child] of Object.entries(value)) {
        const declared = Object.hasOwn(properties, key) ? properties[key] : undefined;
        if (child === null && isPlainObject(declared) && view.absentNulls.has(declared)) {
          leftOut.push(joinPath(path, key));
          changed = true;
          continue;
        }
        const next =
          declared === undefined ? child : walk(child, declared, joinPath(path, key), depth + 1);
        changed ||= next !== child;
        entries.push([key, next]);
      }
      // fromEntries: a key named `__proto__` stays an ordinary key.
      return changed ? Object.fromEntries(entries) : value;
    }
    const items = own(schema, "items");
    if (Array.isArray(value) && isPlainObject(items)) {
      let changed = false;
      const elements = value.map((element, index) => {
        const next = walk(element, items, `${path}[${index}]`, depth + 1);
        changed ||= next !== element;
        return next;
      });
      return changed ? elements : value;
    }
    return value;
  };

  const result = walk(args, view.schema, "", 0);
  return {
    arguments: isPlainObject(result) ? result : args,
    parsed,
    leftOut,
    ...(exact ? { exact } : {}),
  };
}
