/**
 * How a schema is read, within bounds (json-schema.ts asks it questions):
 * local `$ref`s followed a bounded number of hops, each pointer walked once
 * per reading's targets, composition branches followed while a budget
 * lasts, and a `$ref` beside other keywords read as one more `allOf` branch.
 * Schemas come from origins and are untrusted: every lookup is an
 * own-property lookup.
 */
import { isPlainObject, own } from "../json";

export type Schema = Record<string, unknown>;

/** `$ref`s followed one after another, at most: a chain may lead back to itself. */
export const MAX_REF_HOPS = 16;

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

export const COMPOSITIONS = ["allOf", "anyOf", "oneOf"] as const;

/**
 * Composition branches one reading of a schema follows (`allowedTypes`,
 * `propertiesOf`). Each branch may be a `$ref` to a schema that branches
 * again: `{"A": {"anyOf": [{"$ref": "#/$defs/A"}, {"$ref": "#/$defs/A"}]}}`
 * doubles the work at every hop, and with three branches a call ran out of
 * memory. Past the budget a reading stops adding what branches say.
 */
export const MAX_BRANCHES = 64;

/**
 * Where each local `$ref` of one root points, found once: a pointer may have hundreds of tokens,
 * walked again at each of a reading's 64 × 16 hops, and a call's readings share them
 * (args/repair.ts).
 */
export type RefTargets = Map<string, unknown>;

export interface Reading {
  root: Schema;
  targets: RefTargets;
  /** Branches left to follow. */
  branches: number;
  /** The schemas being read, outermost first: a branch back to one of them adds nothing. */
  path: Schema[];
  /** Whether a bound left a branch or a `$ref` unread: what it says is not known. */
  cut: boolean;
}

export const readingOf = (root: Schema, targets: RefTargets = new Map()): Reading => ({
  root,
  targets,
  branches: MAX_BRANCHES,
  path: [],
  cut: false,
});

/**
 * Each branch of `schema`'s `keyword`, read by `read` one step further in,
 * while the budget lasts; a branch that leads back to a schema being read is
 * skipped.
 */
export function* branchesOf<T>(
  schema: Schema,
  keyword: string,
  reading: Reading,
  read: (branch: unknown, reading: Reading) => T,
): Generator<T> {
  const branches = keyword === "allOf" ? allOfOf(schema) : own(schema, keyword);
  if (!Array.isArray(branches)) return;
  reading.path.push(schema);
  try {
    for (const branch of branches) {
      if (reading.branches-- <= 0 || reading.path.length > MAX_REF_HOPS) {
        reading.cut = true;
        return;
      }
      yield read(branch, reading);
    }
  } finally {
    reading.path.pop();
  }
}

/**
 * Keywords that constrain no value: words about it, and where a schema keeps its definitions and
 * says what it is (Go's invopop/jsonschema writes `$schema`, `$ref` and `$defs` at the root).
 */
export const NO_CONSTRAINT: ReadonlySet<string> = new Set([
  ...["description", "title", "default", "examples", "deprecated", "$comment"],
  ...["$defs", "definitions", "$schema", "$id", "$anchor", "$dynamicAnchor"],
]);

/**
 * The local `$ref` of a schema that says more beside it (`{"$ref": "#/$defs/Base",
 * "properties": {…}}`): from 2019-09 on both apply, as every view reads them
 * (schemas/merge-branches.ts), so a reading takes the `$ref` as one more `allOf` branch.
 */
function refBeside(schema: Schema): string | undefined {
  const ref = own(schema, "$ref");
  if (typeof ref !== "string" || !ref.startsWith("#")) return undefined;
  for (const keyword of Object.keys(schema)) {
    if (keyword !== "$ref" && !NO_CONSTRAINT.has(keyword)) return ref;
  }
  return undefined;
}

/** A schema's `allOf` as a reading follows it: its `$ref` first, where it says more beside it. */
export function allOfOf(schema: Schema): unknown[] | undefined {
  const allOf = own(schema, "allOf");
  const ref = refBeside(schema);
  if (ref === undefined) return Array.isArray(allOf) ? allOf : undefined;
  return [{ $ref: ref }, ...(Array.isArray(allOf) ? allOf : [])];
}

/**
 * `schema` resolved, its `$ref`s followed while they are all it says, unless it is one being read
 * already (a cycle) or it does not resolve. A `$ref` to another document, or to nothing a pointer
 * names (an `$anchor`, an `$id`, which the validator and the origin may resolve), is unread.
 */
export function resolvedIn(schema: unknown, reading: Reading): Schema | undefined {
  let current = schema;
  for (let hop = 0; hop <= MAX_REF_HOPS; hop++) {
    if (!isPlainObject(current)) return undefined;
    const ref = own(current, "$ref");
    if (typeof ref === "string" && !ref.startsWith("#")) reading.cut = true;
    if (typeof ref !== "string" || !ref.startsWith("#") || refBeside(current) !== undefined) {
      return reading.path.includes(current) ? undefined : current;
    }
    if (!reading.targets.has(ref)) reading.targets.set(ref, refTarget(ref, reading.root));
    current = reading.targets.get(ref);
    if (current === undefined) reading.cut = true;
  }
  reading.cut = true;
  return undefined;
}
