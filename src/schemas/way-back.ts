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
import { joinPath, keysRespelled } from "../args/repair";
import { MAX_BRANCHES } from "../args/schema-reading";
import {
  type ExactText,
  isPlainObject,
  own,
  parseExact,
  placesOnly,
  writtenAsIn,
  writtenAsText,
} from "../json";
import type { SchemaView } from "./view";

const MAX_DEPTH = 32;
/**
 * The most keys one call's values are fitted by: each value of a long list
 * fitted to every branch would cost the list's length times the branches
 * (20,000 tagged items, 64 forms: half a second of CPU); past it, a value
 * in a union is read as it came.
 */
const MAX_FITTED_KEYS = 50_000;

/** What is left of a call's `MAX_FITTED_KEYS`. */
interface Budget {
  keys: number;
}

/** Whether a value of `type` is one `branch`'s `type` names. */
function typeFits(type: JsonType, branch: Record<string, unknown>): boolean {
  const named = branch.type;
  const types = typeof named === "string" ? [named] : Array.isArray(named) ? named : undefined;
  if (types === undefined) return true;
  return types.includes(type) || (type === "integer" && types.includes("number"));
}

/**
 * Whether `value` may be one of an `enum`'s `values`: a tag's few, looked through; a longer
 * enum's, or an object or list, taken to be (a branch that fits one more only makes a value
 * read as it came).
 */
function amongValues(value: unknown, values: unknown): boolean {
  if (!Array.isArray(values) || values.length > MAX_BRANCHES) return true;
  return typeof value === "object" || values.includes(value);
}

/**
 * Whether `value` is one a model following the view writes for `branch`: of its type
 * (JSON text where it asks for text), among its values, and, an object, with no key it does
 * not declare and each declared value among that property's values (a tagged union's tag).
 */
function fits(value: unknown, branch: unknown, view: SchemaView, budget: Budget): boolean {
  if (!isPlainObject(branch)) return false;
  if (view.asText.has(branch)) return typeof value === "string";
  if (!typeFits(jsonTypeOf(value), branch)) return false;
  if (!amongValues(value, own(branch, "enum"))) return false;
  const properties = own(branch, "properties");
  if (!isPlainObject(value) || !isPlainObject(properties)) return true;
  for (const key of Object.keys(value)) {
    if (--budget.keys < 0) return false;
    const declared = Object.hasOwn(properties, key) ? properties[key] : undefined;
    if (!isPlainObject(declared)) return false;
    if (!amongValues(value[key], own(declared, "enum"))) return false;
  }
  return true;
}

/** The one branch of `schema`'s `anyOf` that `value` fits; none where it fits none, or several. */
function branchOf(
  value: unknown,
  schema: Record<string, unknown>,
  view: SchemaView,
  budget: Budget,
): unknown {
  const branches = own(schema, "anyOf");
  // No more branches than repair reads (args/json-schema.ts).
  if (!Array.isArray(branches) || branches.length > MAX_BRANCHES) return undefined;
  let found: unknown;
  for (const branch of branches) {
    if (--budget.keys < 0) return undefined;
    if (!fits(value, branch, view, budget)) continue;
    if (found !== undefined) return undefined;
    found = branch;
  }
  // Out of budget midway, a branch left unfitted may fit too.
  return budget.keys < 0 ? undefined : found;
}

/**
 * A number or string a text wrote alone, as that text wrote it where `JSON.stringify` writes it
 * otherwise (`12345678901234567890`, `1.50`): in no object of the text to be known in by its
 * place, it is written so where it lands (json.ts `writtenAsText`).
 */
class Alone {
  constructor(
    readonly value: number | string,
    readonly text: string,
  ) {}
}

/** `text`'s value; where it is a number or string alone, an `Alone` where its text is not `JSON.stringify`'s. */
function readBack(text: string, value: unknown): unknown {
  if (typeof value !== "number" && typeof value !== "string") return value;
  // Around one number or string, JSON's space only: no lexeme starts or ends with space. One that
  // holds a lone surrogate raw is written as JSON.stringify escapes it (json-exact.ts parseExact).
  const lexeme = text.trim();
  return lexeme === JSON.stringify(value) || !lexeme.isWellFormed()
    ? value
    : new Alone(value, lexeme);
}

/** What `walk` gave for a member or element, as the value to put there and the text it is written as. */
const placed = (next: unknown): [unknown, string | undefined] =>
  next instanceof Alone ? [next.value, next.text] : [next, undefined];

/**
 * `args` with each key the view renamed (passes/property-keys.ts) written as
 * the origin names it, in its place, its value's text kept; the same object
 * where none was sent. A key sent under both names is left as sent: repair
 * keeps the origin's, and drops or forwards the other as any unknown key.
 */
export function keysBack(
  args: Record<string, unknown>,
  { keys }: SchemaView,
): Record<string, unknown> {
  if (keys === undefined) return args;
  const sentAs = new Map<string, string>();
  for (const key of Object.keys(args)) {
    const original = keys.get(key);
    if (original !== undefined && !Object.hasOwn(args, original)) sentAs.set(original, key);
  }
  if (sentAs.size === 0) return args;
  const back = new Map([...sentAs].map(([original, key]) => [key, original]));
  // fromEntries: a key named `__proto__` stays an ordinary key.
  const entries = Object.entries(args).map(([key, value]) => [back.get(key) ?? key, value]);
  return writtenAsIn(Object.fromEntries(entries), args, (key) => sentAs.get(key) ?? key);
}

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
  /** The origin's schema, which says which other spellings of a key repair reads as it. */
  original?: unknown,
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
    return { arguments: keysBack(args, view), parsed, leftOut };
  }
  let exact: ExactText | undefined;
  const budget: Budget = { keys: MAX_FITTED_KEYS };
  // Read once, where a key the view does not declare is first met.
  let respelled: ((value: object) => ReadonlyMap<string, string> | undefined) | undefined;
  /** The declared key repair reads `key` of `value` as: itself, or the one it coalesces it to. */
  const declaredAs = (value: Record<string, unknown>, key: string, properties: object) => {
    if (Object.hasOwn(properties, key) || original === undefined) return key;
    respelled ??= keysRespelled(args, original);
    return respelled(value)?.get(key) ?? key;
  };

  const walk = (value: unknown, schema: unknown, path: string, depth: number): unknown => {
    if (!isPlainObject(schema) || depth > MAX_DEPTH) return value;
    if (view.asText.has(schema)) {
      const text = typeof value === "string" ? parseExact(value) : undefined;
      if (text === undefined) return value;
      // By value too: a number alone (`12345678901234567890`) has no object of the text to be
      // known in by position, and the arguments it lands in may be rebuilt on the way.
      exact = placesOnly(exact, text.exact);
      parsed.push({ path, from: "string", to: jsonTypeOf(text.value) });
      return readBack(value as string, text.value);
    }
    // A union's branch (a tagged form, a value of any type beside others) is read as its own.
    const branch = branchOf(value, schema, view, budget);
    if (branch !== undefined) return walk(value, branch, path, depth + 1);
    const properties = own(schema, "properties");
    if (isPlainObject(value) && isPlainObject(properties)) {
      let changed = false;
      const entries: Array<[string, unknown]> = [];
      const alone: Array<[string, string]> = [];
      for (const [key, child] of Object.entries(value)) {
        // Under another spelling, as under the key repair renames it to; the key stays as sent
        // (repair renames it, reading its value's text there).
        const name = declaredAs(value, key, properties);
        const declared = Object.hasOwn(properties, name) ? properties[name] : undefined;
        // Written in paths as the origin names it, as repair writes them.
        const at = joinPath(path, (depth === 0 && view.keys?.get(name)) || name);
        if (child === null && isPlainObject(declared) && view.absentNulls.has(declared)) {
          leftOut.push(at);
          changed = true;
          continue;
        }
        const [next, text] = placed(
          declared === undefined ? child : walk(child, declared, at, depth + 1),
        );
        if (text !== undefined) alone.push([key, text]);
        changed ||= next !== child;
        entries.push([key, next]);
      }
      if (!changed) return value;
      // fromEntries: a key named `__proto__` stays an ordinary key.
      const copy = writtenAsIn(Object.fromEntries(entries), value);
      for (const [key, text] of alone) writtenAsText(copy, key, text);
      return copy;
    }
    const items = own(schema, "items");
    if (Array.isArray(value) && isPlainObject(items)) {
      let changed = false;
      const alone: Array<[string, string]> = [];
      const elements = value.map((element, index) => {
        const [next, text] = placed(walk(element, items, `${path}[${index}]`, depth + 1));
        if (text !== undefined) alone.push([String(index), text]);
        changed ||= next !== element;
        return next;
      });
      if (!changed) return value;
      const copy = writtenAsIn(elements, value);
      for (const [index, text] of alone) writtenAsText(copy, index, text);
      return copy;
    }
    return value;
  };

  const result = walk(args, view.schema, "", 0);
  return {
    arguments: keysBack(isPlainObject(result) ? result : args, view),
    parsed,
    leftOut,
    ...(exact ? { exact } : {}),
  };
}
