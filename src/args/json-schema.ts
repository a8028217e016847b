/**
 * Just enough JSON Schema reading for argument repair: which types a schema
 * allows, its properties and items, local `$ref`s. Schemas come from origins
 * and are untrusted: every lookup is an own-property lookup (a property named
 * `constructor` or `__proto__` is data, never the prototype's), and `$ref`
 * chains are followed a bounded number of times.
 */
import { isPlainObject, own } from "../json";

export type JsonType = "string" | "number" | "integer" | "boolean" | "object" | "array" | "null";

export type Schema = Record<string, unknown>;

const MAX_REF_HOPS = 16;

export function jsonTypeOf(value: unknown): JsonType {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value as JsonType;
}

/** The key a pointer's token names: its %-escapes read (it is a URI fragment), then `~1` and `~0`; none for a malformed escape. */
function pointerKey(token: string): string | undefined {
  let decoded: string;
  try {
    decoded = decodeURIComponent(token);
  } catch {
    return undefined;
  }
  return decoded.replaceAll("~1", "/").replaceAll("~0", "~");
}

/** What a local `$ref` (`#/$defs/X`, any JSON pointer into `root`) points at, one hop. */
export function refTarget(ref: string, root: Schema): unknown {
  let target: unknown = root;
  for (const token of ref.slice(1).split("/").filter(Boolean)) {
    const key = pointerKey(token);
    target = isPlainObject(target) && key !== undefined ? own(target, key) : undefined;
  }
  return target;
}

/** Follows local `$ref`s (`#/$defs/X`, `#/definitions/X`, any JSON pointer into the root). */
export function resolve(schema: unknown, root: Schema): Schema | undefined {
  let current = schema;
  for (let hop = 0; hop < MAX_REF_HOPS; hop++) {
    if (!isPlainObject(current)) return undefined;
    const ref = own(current, "$ref");
    if (typeof ref !== "string" || !ref.startsWith("#")) return current;
    current = refTarget(ref, root);
  }
  return undefined;
}

const TYPES = new Set<JsonType>([
  "string",
  "number",
  "integer",
  "boolean",
  "object",
  "array",
  "null",
]);

/**
 * The types a schema allows, or `undefined` when it does not say (no `type`,
 * `enum`, `const`, or an `anyOf`/`oneOf` branch that says nothing): then no
 * value is coerced against it. `number` includes `integer`.
 */
export function allowedTypes(schema: unknown, root: Schema, depth = 0): Set<JsonType> | undefined {
  const resolved = resolve(schema, root);
  if (!resolved || depth > MAX_REF_HOPS) return undefined;
  const type = own(resolved, "type");
  if (typeof type === "string" || Array.isArray(type)) {
    const types = new Set([type].flat().filter((t): t is JsonType => TYPES.has(t as JsonType)));
    if (types.has("number")) types.add("integer");
    return types.size > 0 ? types : undefined;
  }
  const values = Object.hasOwn(resolved, "const") ? [resolved.const] : own(resolved, "enum");
  if (Array.isArray(values) && values.length > 0) return new Set(values.map(jsonTypeOf));
  for (const keyword of ["anyOf", "oneOf"]) {
    const branches = own(resolved, keyword);
    if (!Array.isArray(branches) || branches.length === 0) continue;
    const types = new Set<JsonType>();
    for (const branch of branches) {
      const branchTypes = allowedTypes(branch, root, depth + 1);
      if (!branchTypes) return undefined;
      for (const t of branchTypes) types.add(t);
    }
    return types;
  }
  return undefined;
}

const COMPOSITIONS = ["allOf", "anyOf", "oneOf"] as const;

/**
 * The declared properties of an object schema (own keys only), or `undefined`:
 * its own `properties` and those its `allOf`/`anyOf`/`oneOf` branches declare
 * (a root-level `anyOf` of object forms is common). A property declared more
 * than once stands for any of its declarations, so a value one of them
 * accepts is never coerced to suit another.
 */
export function propertiesOf(
  schema: unknown,
  root: Schema,
  depth = 0,
): Record<string, unknown> | undefined {
  const resolved = resolve(schema, root);
  if (!resolved) return undefined;
  const properties = own(resolved, "properties");
  const own_ = isPlainObject(properties) ? properties : undefined;
  if (depth > MAX_REF_HOPS || !COMPOSITIONS.some((k) => Array.isArray(own(resolved, k)))) {
    return own_;
  }
  const declarations = new Map<string, unknown[]>();
  const declare = (from: Record<string, unknown> | undefined) => {
    for (const [name, declared] of Object.entries(from ?? {})) {
      const seen = declarations.get(name);
      if (seen) seen.push(declared);
      else declarations.set(name, [declared]);
    }
  };
  declare(own_);
  for (const keyword of COMPOSITIONS) {
    const branches = own(resolved, keyword);
    if (!Array.isArray(branches)) continue;
    for (const branch of branches) declare(propertiesOf(branch, root, depth + 1));
  }
  if (declarations.size === 0) return own_;
  // fromEntries: a property named `__proto__` stays an ordinary key.
  return Object.fromEntries(
    [...declarations].map(([name, all]) => [name, all.length === 1 ? all[0] : { anyOf: all }]),
  );
}

/** The schema every element of an array must match, when there is one. */
export function itemsOf(schema: unknown, root: Schema): unknown {
  const items = own(resolve(schema, root) ?? {}, "items");
  return isPlainObject(items) ? items : undefined;
}

export function forbidsAdditionalProperties(schema: unknown, root: Schema): boolean {
  return own(resolve(schema, root) ?? {}, "additionalProperties") === false;
}
