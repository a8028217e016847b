/**
 * Just enough JSON Schema reading for argument repair: which types a schema
 * allows, its properties and required names, read through its `$ref`s and
 * composition branches as schema-reading.ts bounds them (what it says of a
 * value's parts, an array's elements and a map's values: schema-parts.ts). Schemas come
 * from origins and are untrusted: every lookup is an own-property lookup (a
 * property named `constructor` or `__proto__` is data, never the
 * prototype's).
 */
import { isPlainObject, own } from "../json";
import {
  allOfOf,
  branchesOf,
  COMPOSITIONS,
  type Reading,
  type RefTargets,
  readingOf,
  resolvedIn,
  type Schema,
} from "./schema-reading";

export type { Schema } from "./schema-reading";

export type JsonType = "string" | "number" | "integer" | "boolean" | "object" | "array" | "null";

export function jsonTypeOf(value: unknown): JsonType {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value as JsonType;
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
 * value is coerced against it. `number` includes `integer`. An `allOf`
 * narrows them to what every branch that says allows.
 */
export function allowedTypes(
  schema: unknown,
  root: Schema,
  targets?: RefTargets,
): Set<JsonType> | undefined {
  return typesIn(schema, readingOf(root, targets));
}

/** `allowedTypes` within a reading another reader shares (schema-parts.ts). */
export function typesIn(schema: unknown, reading: Reading): Set<JsonType> | undefined {
  const resolved = resolvedIn(schema, reading);
  if (!resolved) return undefined;
  let types = typesSaid(resolved, reading);
  for (const branchTypes of branchesOf(resolved, "allOf", reading, typesIn)) {
    if (!branchTypes) continue;
    types = types ? new Set([...types].filter((type) => branchTypes.has(type))) : branchTypes;
  }
  // Branches that allow no type in common: no value meets them, and none is brought to one.
  return types?.size === 0 ? undefined : types;
}

/**
 * Whether `schema` is written the OpenAPI 3.0 way, `null` allowed by `nullable: true` beside its
 * `type` (zod-to-json-schema's openApi3 target, servers made from an OpenAPI document), as every
 * view reads it (schemas/passes/draft-2020-12.ts): a model shown it may send `null`.
 */
export function isNullable(schema: Schema): boolean {
  return own(schema, "nullable") === true;
}

/**
 * Whether `schema`'s own `enum` or `const` names its values, `null` not among them: then it takes
 * no `null`, whatever its `type` says. `["string","null"]` beside `["asc","desc"]`, and OpenAPI's
 * `nullable` of an enum (3.0.3: a `null` the enum does not name is not allowed), let a model
 * shown them (Gemini's `nullable`) send a `null` the origin's schema refuses.
 */
export function valuesExcludeNull(schema: Schema): boolean {
  if (Object.hasOwn(schema, "const")) return schema.const !== null;
  const values = own(schema, "enum");
  return Array.isArray(values) && !typesOfEnum(values).has("null");
}

/**
 * The types of an `enum`'s members, each `enum` read once: an origin's schema may name one long
 * `enum` from many places (a `$ref` a property), and a reading at each place read it whole again
 * (200 properties of one 10,000 members: 2 million reads for one call's repair).
 */
const enumTypes = new WeakMap<readonly unknown[], ReadonlySet<JsonType>>();

function typesOfEnum(values: readonly unknown[]): ReadonlySet<JsonType> {
  let types = enumTypes.get(values);
  if (types === undefined) {
    types = new Set(values.map(jsonTypeOf));
    enumTypes.set(values, types);
  }
  return types;
}

/** The types `schema` itself says: its `type`, `enum` or `const`, or its `anyOf`/`oneOf` branches. */
function typesSaid(schema: Schema, reading: Reading): Set<JsonType> | undefined {
  const type = own(schema, "type");
  if (typeof type === "string" || Array.isArray(type)) {
    const types = new Set([type].flat().filter((t): t is JsonType => TYPES.has(t as JsonType)));
    if (types.size === 0) return undefined;
    if (types.has("number")) types.add("integer");
    if (isNullable(schema)) types.add("null");
    if (valuesExcludeNull(schema)) types.delete("null");
    return types.size > 0 ? types : undefined;
  }
  const values = Object.hasOwn(schema, "const") ? [schema.const] : own(schema, "enum");
  if (Array.isArray(values) && values.length > 0) return new Set(typesOfEnum(values));
  const forms = formsTogether(schema, reading, typesIn);
  return forms === NO_FORMS ? undefined : forms;
}

/** What `formsTogether` reads of a schema with no `anyOf` or `oneOf` that has branches. */
export const NO_FORMS = Symbol("no forms");

/**
 * What the branches of `schema`'s first `anyOf` or `oneOf` that has some say together, each read
 * with `of`; `undefined` where one says nothing or is left unread (it may allow anything).
 */
export function formsTogether<T>(
  schema: Schema,
  reading: Reading,
  of: (branch: unknown, reading: Reading) => ReadonlySet<T> | undefined,
): Set<T> | undefined | typeof NO_FORMS {
  for (const keyword of ["anyOf", "oneOf"]) {
    const branches = own(schema, keyword);
    if (!Array.isArray(branches) || branches.length === 0) continue;
    const together = new Set<T>();
    let read = 0;
    for (const said of branchesOf(schema, keyword, reading, of)) {
      if (!said) return undefined;
      for (const item of said) together.add(item);
      read++;
    }
    return read === branches.length ? together : undefined;
  }
  return NO_FORMS;
}

/**
 * The declared properties of an object schema (own keys only), or `undefined`:
 * its own `properties` and those its `allOf`/`anyOf`/`oneOf` branches declare
 * (a root-level `anyOf` of object forms is common). A property declared more
 * than once by `anyOf`/`oneOf` branches stands for any of its declarations, so
 * a value one of them accepts is never coerced to suit another; one declared
 * by the schema itself and its `allOf` branches stands for all of them, as a
 * value must meet each.
 */
export function propertiesOf(
  schema: unknown,
  root: Schema,
  targets?: RefTargets,
): Record<string, unknown> | undefined {
  return propertiesIn(schema, readingOf(root, targets));
}

/**
 * `propertiesOf`, and whether the reading read every branch that may declare one: where a bound
 * left one unread, a key it does not list may be declared there.
 */
export function declaredProperties(
  schema: unknown,
  root: Schema,
  targets?: RefTargets,
): { properties: Record<string, unknown>; complete: boolean } | undefined {
  const reading = readingOf(root, targets);
  const properties = propertiesIn(schema, reading);
  return properties && { properties, complete: !reading.cut };
}

function propertiesIn(schema: unknown, reading: Reading): Record<string, unknown> | undefined {
  const resolved = resolvedIn(schema, reading);
  if (!resolved) return undefined;
  const properties = own(resolved, "properties");
  const own_ = isPlainObject(properties) ? properties : undefined;
  if (!allOfOf(resolved) && !COMPOSITIONS.some((k) => Array.isArray(own(resolved, k)))) {
    return own_;
  }
  const every = new Map<string, unknown[]>();
  const some = new Map<string, unknown[]>();
  const declare = (into: Map<string, unknown[]>, from: Record<string, unknown> | undefined) => {
    for (const [name, declared] of Object.entries(from ?? {})) {
      const seen = into.get(name);
      if (seen) seen.push(declared);
      else into.set(name, [declared]);
    }
  };
  declare(every, own_);
  for (const keyword of COMPOSITIONS) {
    const into = keyword === "allOf" ? every : some;
    for (const declared of branchesOf(resolved, keyword, reading, propertiesIn)) {
      declare(into, declared);
    }
  }
  if (every.size + some.size === 0) return own_;
  const names = new Set([...every.keys(), ...some.keys()]);
  // fromEntries: a property named `__proto__` stays an ordinary key.
  return Object.fromEntries(
    [...names].map((name) => {
      const all = [...(every.get(name) ?? [])];
      const any = some.get(name);
      if (any) all.push(any.length === 1 ? any[0] : { anyOf: any });
      return [name, all.length === 1 ? all[0] : { allOf: all }];
    }),
  );
}

/**
 * The properties an object schema requires (own keys only): its own `required`, a property's own
 * `required: true` (draft 3, as every view reads it: schemas/passes/well-formed.ts), those its
 * `allOf` branches require, and those every branch of an `anyOf`/`oneOf` requires (a root
 * `anyOf` of object forms), while the reading's budget lasts.
 */
export function requiredOf(
  schema: unknown,
  root: Schema,
  targets?: RefTargets,
): ReadonlySet<string> {
  return requiredIn(schema, readingOf(root, targets));
}

function requiredIn(schema: unknown, reading: Reading): Set<string> {
  const names = new Set<string>();
  const resolved = resolvedIn(schema, reading);
  if (!resolved) return names;
  const required = own(resolved, "required");
  if (Array.isArray(required)) {
    for (const name of required) if (typeof name === "string") names.add(name);
  }
  const properties = own(resolved, "properties");
  if (isPlainObject(properties)) {
    for (const [name, property] of Object.entries(properties)) {
      if (isPlainObject(property) && own(property, "required") === true) names.add(name);
    }
  }
  for (const branch of branchesOf(resolved, "allOf", reading, requiredIn)) {
    for (const name of branch) names.add(name);
  }
  for (const keyword of ["anyOf", "oneOf"]) {
    const branches = own(resolved, keyword);
    if (!Array.isArray(branches) || branches.length === 0) continue;
    let every: Set<string> | undefined;
    let read = 0;
    for (const branch of branchesOf(resolved, keyword, reading, requiredIn)) {
      every = every ? new Set([...every].filter((name) => branch.has(name))) : branch;
      read++;
    }
    // A branch left unread may require none of them.
    if (read === branches.length) for (const name of every ?? []) names.add(name);
  }
  return names;
}

/**
 * Whether `says` holds of an object schema or of one that applies to the same keys with it: what
 * it says beside its `$ref` and what the `$ref` points at (2020-12 applies both), its `allOf`
 * branches, each along its chain of `$ref`s, while the reading's bounds last.
 */
function saidOfKeys(schema: unknown, reading: Reading, says: (schema: Schema) => boolean): boolean {
  const resolved = resolvedIn(schema, reading);
  if (!resolved) return false;
  if (says(resolved)) return true;
  const inBranch = (branch: unknown, next: Reading) => saidOfKeys(branch, next, says);
  for (const said of branchesOf(resolved, "allOf", reading, inBranch)) if (said) return true;
  return false;
}

/** Whether an object schema, or one applying with it, refuses a key it does not declare. */
export function forbidsAdditionalProperties(
  schema: unknown,
  root: Schema,
  targets?: RefTargets,
): boolean {
  const reading = readingOf(root, targets);
  return saidOfKeys(schema, reading, (s) => own(s, "additionalProperties") === false);
}

/** Whether `additionalProperties` is a schema that says something (`true` and `{}` say nothing). */
export const saysOfOtherKeys = (additional: unknown) =>
  isPlainObject(additional) && Object.keys(additional).length > 0;

/** Keywords whose schemas apply to an object only where a condition holds (draft-07's `dependencies` too). */
const CONDITIONAL = ["if", "then", "else"];
const DEPENDENT = ["dependentSchemas", "dependencies"];

/** Whether a schema that applies where a condition holds declares a property, as far as read. */
export function declaresOnCondition(schema: Schema, reading: Reading): boolean {
  const declares = (branch: unknown) => Object.keys(propertiesIn(branch, reading) ?? {}).length > 0;
  if (CONDITIONAL.some((keyword) => declares(own(schema, keyword)))) return true;
  return DEPENDENT.some((keyword) => {
    const dependent = own(schema, keyword);
    return isPlainObject(dependent) && Object.values(dependent).some(declares);
  });
}

/**
 * Whether an object schema, or one applying with it, may take as sent a key that reads as another
 * spelling of a declared one: by pattern (`patternProperties`), which only the origin's regex
 * could tell (run here, a regex is the origin's to make slow), by a schema of its own for the
 * keys it does not declare (`additionalProperties: {"type":"integer"}`: a map whose keys are
 * data, `appName` one of them as much as a misspelled `app_name`), or by a declaration that
 * applies only where a condition holds (`then`, `dependentSchemas`), which the value's reading
 * would have to decide. So may it where the reading left a branch or a `$ref` unread, which may
 * say so.
 */
export function takesKeysAsSent(schema: unknown, root: Schema, targets?: RefTargets): boolean {
  const reading = readingOf(root, targets);
  const says = (s: Schema) =>
    own(s, "patternProperties") !== undefined ||
    saysOfOtherKeys(own(s, "additionalProperties")) ||
    declaresOnCondition(s, reading);
  return saidOfKeys(schema, reading, says) || reading.cut;
}
