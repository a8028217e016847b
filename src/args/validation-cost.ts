/**
 * What checking arguments against a schema costs, counted before
 * @cfworker/json-schema does it (validate.ts): the pairs of a value and a
 * schema applied to it. Each is cheap, but a schema may apply to one value
 * along many paths: a tree of tagged nodes whose `oneOf` branches both check
 * the children checks a chain of nodes once per path to it, 2^16 times at 16
 * levels (1.4 s of CPU), twice that for each level more, and the client
 * chooses the depth. Counted generously (every branch, every subschema a
 * keyword may apply), from what the schema says and the arguments hold; the
 * count stops at its budget. A pair also counts what the validator walks of
 * its schema for the value (`walked`): the origin's schema chooses how long
 * that is, and the client how many values walk it; and what it walks of the
 * value itself, whose size the client chooses: its location's characters, a
 * string's, an object's keys (`PER_CHARACTERS`, `PER_KEYS`); and each issue it
 * writes for a name an object lacks (`issuesOf`).
 */
import { encodePointer } from "@cfworker/json-schema";
import { isPlainObject, own } from "../json";
import type { Schema } from "./json-schema";

/** Keywords that apply their schema to the value itself. */
const IN_PLACE = ["not", "if", "then", "else"];
const IN_PLACE_LISTS = ["allOf", "anyOf", "oneOf"];

/**
 * The schemas references lead to, as the validator finds them: `byUri` is its
 * `dereference` of the schema (JSON pointers, `$id`s and `$anchor`s by
 * absolute URI), which also wrote each `$ref`'s absolute URI on its node; a
 * `$recursiveRef` may lead to its own target or to any `$recursiveAnchor`.
 */
export interface References {
  byUri: Record<string, unknown>;
  recursiveAnchors: unknown[];
}

export function referencesOf(byUri: Record<string, unknown>): References {
  const anchors = new Set(
    Object.values(byUri).filter(
      (target) => isPlainObject(target) && target.$recursiveAnchor === true,
    ),
  );
  return { byUri, recursiveAnchors: [...anchors] };
}

/**
 * Whether a refusal writes `constant` whole: an object with a member named `toJSON` (data of
 * the origin's, which the validator compares like any other) cannot be given a `toJSON` that
 * writes a few of its values (validate.ts, `quotedShort`), so its whole text is counted instead.
 */
export const quotedWhole = (constant: unknown): boolean =>
  isPlainObject(constant) && Object.prototype.propertyIsEnumerable.call(constant, "toJSON");

/** What a pair counts for each of these its schema lists: one per this many. */
const PER_CHECK = 64;

/**
 * What a pair counts for the characters it walks of the value's own text: one per this many.
 * The validator writes a pair's location (`#/key/0`, each key encoded anew for each schema
 * applied to its object) for every value, and into every issue beneath it, which a log line
 * and the fix-it text read (copied whole for each); and it counts a string's characters for
 * `minLength` and `maxLength`, and reads them for a `format`. A 3 MB key under a union of 200
 * closed forms took 0.7 s of CPU, and 5,000 values failing beneath a key of a megabyte named
 * 5 GB of locations.
 */
const PER_CHARACTERS = 256;

/** Keywords that walk a string's characters. */
const READ_STRINGS = ["minLength", "maxLength", "format"];

/**
 * What a pair counts for a `date-time` string: a check per this many characters. The validator
 * splits it at every `t` and space into a list of its parts, 32 ns a character at worst: 3
 * million `t`s took 0.1 s of CPU and a list of 60 MB, for one value.
 */
const PER_DATE_TIME_CHARACTERS = 32;

/** What checking `value` against `node` walks of the string, in checks. */
function stringCost(value: string, node: Schema): number {
  if (own(node, "format") === "date-time")
    return Math.floor(value.length / PER_DATE_TIME_CHARACTERS);
  const reads = READ_STRINGS.some((keyword) => own(node, keyword) !== undefined);
  return reads ? Math.floor(value.length / PER_CHARACTERS) : 0;
}

/**
 * What the validator writes in a location for each ASCII character beyond the character itself
 * (`encodePointer`: `%` as `%25`, `/` as `~1`), by its code.
 */
const ASCII_EXTRA = Uint8Array.from(
  { length: 0x80 },
  (_, code) => encodePointer(String.fromCharCode(code)).length - 1,
);

/**
 * How many characters the validator writes `key` with in a location, near enough: escaped as a
 * URI, an ASCII character as it does, one past ASCII as up to three `%XX`.
 */
function writtenLength(key: string): number {
  let length = key.length;
  for (let i = 0; i < key.length; i++) {
    const code = key.charCodeAt(i);
    length += code < 0x80 ? (ASCII_EXTRA[code] as number) : 8;
  }
  return length;
}

/**
 * What a pair counts for an object's keys: a check per this many. The validator lists them for
 * each schema applied to the object, whether or not a schema applies to them, and a long list
 * costs more a key (2 ns at 10 keys, 180 at 300,000): 300,000 keys (3 MB) under a union of 50
 * tagged forms took 5 s of CPU.
 */
const PER_KEYS = 8;

/** What a pair counts for the characters of its location: one per `PER_CHARACTERS`. */
const placeCost = (at: number) => Math.floor(at / PER_CHARACTERS);

/**
 * What checking one value against `node` walks of it beyond the pair itself, in checks: the
 * validator compares the value with every `enum` value (and writes a `const` string, or one
 * `quotedWhole`, into the message of each value it refuses), and for an object, walks every declared property and every
 * required name (9,990 objects of a schema of 1,000 properties took 2 s of CPU).
 */
function walkedBy(value: unknown, node: Schema): number {
  let walked = 0;
  const values = own(node, "enum");
  if (Array.isArray(values)) walked += values.length;
  const constant = own(node, "const");
  if (typeof constant === "string") walked += constant.length;
  else if (quotedWhole(constant)) walked += JSON.stringify(constant).length;
  if (isPlainObject(value)) {
    const properties = own(node, "properties");
    if (isPlainObject(properties)) walked += Object.keys(properties).length;
    const required = own(node, "required");
    if (Array.isArray(required)) walked += required.length;
    const dependent = own(node, "dependentRequired");
    if (isPlainObject(dependent)) walked += Object.keys(dependent).length;
  }
  return Math.floor(walked / PER_CHECK);
}

/**
 * What checking `value`, an object, against `node` writes for the names it lacks, in checks: an
 * issue (an object whose message writes the name) for each name `required` lists, and each name a
 * `dependentRequired` (draft-07: `dependencies`) list of a key it has lists, and the walk of
 * those lists. Counted as names walked alone, a check per 64, 48,000 empty rows under 63 required
 * names made 3 million issues (0.7 s of CPU, and a stack overflow spreading them).
 */
function issuesOf(value: Record<string, unknown>, node: Schema): number {
  let issues = 0;
  let walked = 0;
  // Each issue's message writes the name, and a dependent one the key it depends on too.
  const lacked = (names: unknown, besides = 0) => {
    if (!Array.isArray(names)) return;
    for (const name of names) {
      const key = String(name);
      if (!Object.hasOwn(value, key)) {
        issues += 1 + Math.floor((key.length + besides) / PER_CHARACTERS);
      }
    }
  };
  lacked(own(node, "required"));
  for (const keyword of ["dependentRequired", "dependencies"]) {
    const lists = own(node, keyword);
    if (!isPlainObject(lists)) continue;
    for (const key in lists) {
      const names = own(lists, key);
      if (!Array.isArray(names) || !Object.hasOwn(value, key)) continue;
      walked += names.length;
      lacked(names, key.length);
    }
  }
  return issues + Math.floor(walked / PER_CHECK);
}

/** Applies to `value` each schema `node`'s references lead to. */
function checkReferences(
  value: unknown,
  node: Schema,
  references: References,
  check: Check,
  at: number,
): void {
  const ref = own(node, "$ref");
  if (typeof ref === "string") {
    check(value, references.byUri[String(own(node, "__absolute_ref__") ?? ref)], at);
  }
  if (own(node, "$recursiveRef") === undefined) return;
  check(value, references.byUri[String(own(node, "__absolute_recursive_ref__"))], at);
  for (const anchor of references.recursiveAnchors) check(value, anchor, at);
}

/** Whether checking `args` against `schema` applies at most `budget` schemas to values. */
export function checksWithin(
  args: unknown,
  schema: Schema,
  references: References,
  budget: number,
): boolean {
  // A stack, not recursion: arguments and schemas may both be deep. Each pair is counted as it
  // is pushed (every pushed pair is popped and counted once), so the stack never holds more
  // than the budget however many subschemas one node names.
  // Each with the length of its location as the validator writes it, `#` for the arguments.
  const pending: Array<[value: unknown, schema: unknown, at: number]> = [[args, schema, 1]];
  let checks = 1;
  const check: Check = (value, subschema, at) => {
    if (subschema === undefined || checks > budget) return;
    checks += 1 + placeCost(at);
    pending.push([value, subschema, at]);
  };
  // What a node walks for a value of each kind, read once per node: an object, or any other.
  const walked = new Map<Schema, [object: number, other: number]>();
  // What an object's keys count, for each schema applied to it: listed once per object.
  const listed = new Map<object, number>();
  const keysCost = (value: object) => {
    let cost = listed.get(value);
    if (cost === undefined) {
      cost = Math.floor(Object.keys(value).length / PER_KEYS);
      listed.set(value, cost);
    }
    return cost;
  };
  for (let next = pending.pop(); next && checks <= budget; next = pending.pop()) {
    const [value, node, at] = next;
    if (!isPlainObject(node)) continue;
    let counts = walked.get(node);
    if (counts === undefined) {
      counts = [walkedBy({}, node), walkedBy(undefined, node)];
      walked.set(node, counts);
    }
    if (isPlainObject(value)) checks += counts[0] + keysCost(value) + issuesOf(value, node);
    else checks += counts[1] + (typeof value === "string" ? stringCost(value, node) : 0);
    // Past the budget, what the value holds is not walked.
    if (checks > budget) break;
    checkReferences(value, node, references, check, at);
    for (const keyword of IN_PLACE) check(value, own(node, keyword), at);
    for (const keyword of IN_PLACE_LISTS) {
      const branches = own(node, keyword);
      if (Array.isArray(branches)) for (const branch of branches) check(value, branch, at);
    }
    if (isPlainObject(value)) checkMembers(value, node, check, at);
    else if (Array.isArray(value)) checkItems(value, node, check, at);
  }
  return checks <= budget;
}

type Check = (value: unknown, schema: unknown, at: number) => void;

function checkMembers(
  value: Record<string, unknown>,
  node: Schema,
  check: Check,
  at: number,
): void {
  const properties = own(node, "properties");
  for (const keyword of ["dependentSchemas", "dependencies"]) {
    const dependent = own(node, keyword);
    if (isPlainObject(dependent))
      for (const name in dependent) check(value, own(dependent, name), at);
  }
  const additional = own(node, "additionalProperties");
  const unevaluated = own(node, "unevaluatedProperties");
  const names = own(node, "propertyNames");
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    const member = value[key];
    const declared = isPlainObject(properties) ? own(properties, key) : undefined;
    const subschema = declared === undefined ? additional : declared;
    // A key no schema applies to is not written: its length is not read either.
    if (subschema === undefined && unevaluated === undefined && names === undefined) continue;
    const place = at + 1 + writtenLength(key);
    check(member, subschema, place);
    check(member, unevaluated, place);
    check(key, names, place);
  }
}

function checkItems(value: unknown[], node: Schema, check: Check, at: number): void {
  const items = own(node, "items");
  const prefix = own(node, "prefixItems");
  // Draft 7's tuple is `items: […]`; 2020-12's is `prefixItems`, with `items` for the rest.
  const tuple = Array.isArray(items) ? items : Array.isArray(prefix) ? prefix : [];
  const rest = Array.isArray(items) ? undefined : items;
  const additional = own(node, "additionalItems");
  const unevaluated = own(node, "unevaluatedItems");
  const contains = own(node, "contains");
  for (const [index, element] of value.entries()) {
    const place = at + 1 + String(index).length;
    if (index < tuple.length) check(element, tuple[index], place);
    else {
      check(element, rest, place);
      check(element, additional, place);
    }
    check(element, unevaluated, place);
    check(element, contains, place);
  }
}
