/**
 * Step 4 of argument repair (docs/arguments.md, step 4): the repaired arguments
 * checked against the tool's `inputSchema` with @cfworker/json-schema, which
 * needs no `eval` (Workers forbid it). Draft 2020-12 unless the schema's
 * `$schema` names another, or, without one, it writes boolean exclusive
 * bounds (draft-04). A compiled validator is kept per schema object.
 *
 * The issues name locations and keywords, never argument values, so they can
 * be logged; fix-it-text.ts turns them into the text a model reads when
 * `ARGUMENT_VALIDATION=enforce` refuses a call.
 *
 * Bounded (docs/limits.md): the proxy checks no keyword whose cost the
 * client controls beyond a linear walk, and leaves those to the origin: a
 * `pattern` or `patternProperties` is the origin's regex run on the client's
 * text (`^(a+)+$` takes seconds on 27 characters), `uniqueItems` compares
 * every pair of a client's array, and the validator's own check of a `format`
 * such as `url` backtracks, of `regex` compiles the client's pattern
 * (`LINEAR_FORMATS`). A call whose check
 * would apply more than `MAX_CHECKS` schemas to values (a schema that branches
 * along every path, which the client's depth multiplies) is not checked.
 */
import { dereference, type SchemaDraft, validate } from "@cfworker/json-schema";
import { isPlainObject, own } from "../json";
import { isNullable, type Schema } from "./json-schema";
import { checksWithin, quotedWhole, type References, referencesOf } from "./validation-cost";

export interface ValidationIssue {
  /** JSON pointer of the offending value (`#/max_bytes`), or of the object missing a key. */
  location: string;
  keyword: string;
  message: string;
}

/**
 * The key a `required` issue says the object lacks: a name the schema's
 * `required` lists (never a value of the arguments), which the issue's
 * location, the object's, does not say.
 */
export function missingKey(issue: ValidationIssue): string | undefined {
  if (issue.keyword !== "required") return undefined;
  // `s`: a name with a line break in it is a name too.
  return /required property "(.*)"/s.exec(issue.message)?.[1];
}

export type Validation =
  | { kind: "valid" }
  | { kind: "invalid"; issues: ValidationIssue[] }
  /** The schema could not be compiled or applied; the call is not judged. */
  | { kind: "skipped"; reason: string };

/** Keywords that only say "something inside failed"; the leaves say what. */
const WRAPPERS = new Set([
  "properties",
  "items",
  "prefixItems",
  "allOf",
  "$ref",
  "$dynamicRef",
  "if",
  "then",
  "else",
  "dependentSchemas",
  "patternProperties",
  "contains",
]);

/** A draft-04 bound: `exclusiveMinimum: true` beside `minimum`, which later drafts read as a number. */
const DRAFT_04_BOUND = /"exclusive(?:Minimum|Maximum)":(?:true|false)/;

function draftOf(schema: Schema): SchemaDraft {
  const declared = own(schema, "$schema");
  // Schemas without `$schema` that still write bounds the draft-04 way (common in OpenAPI 3.0 exports).
  if (typeof declared !== "string")
    return DRAFT_04_BOUND.test(JSON.stringify(schema)) ? "4" : "2020-12";
  if (declared.includes("draft-04")) return "4";
  if (declared.includes("draft-06") || declared.includes("draft-07")) return "7";
  if (declared.includes("2019-09")) return "2019-09";
  return "2020-12";
}

/** Keywords left to the origin: their cost grows faster than the client's input. */
const LEFT_TO_ORIGIN = new Set(["pattern", "patternProperties", "uniqueItems"]);
/**
 * The formats @cfworker/json-schema checks in time linear in the string, at a few nanoseconds a
 * character (each timed on megabytes; `date-time` counted apart, validation-cost.ts). Any other
 * is left to the origin: its `url` is a regex that backtracks exponentially on a host without a
 * dot (`http://` and 26 letters took 125 ms, each letter more twice as long), its `regex`
 * compiles the client's pattern (`\p{L}` took 5 µs a character: 500 KB, 2.8 s), and a release
 * may add more.
 */
const LINEAR_FORMATS: ReadonlySet<unknown> = new Set([
  ...["date", "time", "date-time", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"],
  ...["uri", "uri-reference", "uri-template"],
  ...["json-pointer", "json-pointer-uri-fragment", "relative-json-pointer"],
]);
/** Keywords whose members are named subschemas: the names are data, never keywords. */
const SCHEMA_MAPS = new Set([
  "properties",
  "patternProperties",
  "$defs",
  "definitions",
  "dependentSchemas",
  "dependencies",
]);
/**
 * What @cfworker/json-schema's `dereference` writes on a schema node itself: where its `$ref`
 * and `$recursiveRef` lead, and its own URI. Where a node has one already, the validator takes
 * it for its own and follows it: one the origin writes is data, no keyword, and left out of
 * what the validator is given, or a `$ref` led where JSON Schema does not read it, and past
 * the count of checks, which follows the same member (validation-cost.ts).
 */
const VALIDATOR_MEMBERS = new Set([
  "__absolute_ref__",
  "__absolute_recursive_ref__",
  "__absolute_uri__",
]);
/**
 * Keywords whose value is data, not a schema (`dependentRequired`: property names, lists of
 * them), and which @cfworker/json-schema's `dereference` never walks. `example` and `examples`
 * are data too, but it walks them: an object in one is a schema a `$ref` may name
 * (`#/example`), so it is copied as any schema is, or the keywords left to the origin in it
 * (a `pattern`) would run on the client's text.
 */
const DATA = new Set(["const", "enum", "default", "dependentRequired"]);
const MAX_SCHEMA_DEPTH = 64;

/** The characters of an `enum` or `const` a refusal's message writes, at most. */
const MAX_QUOTED_CHARS = 200;

/**
 * An `enum` or `const` (an array or object: a string or number says itself in its own length)
 * for the validator, written in its refusals as a few of its values: @cfworker/json-schema
 * writes the whole of it into the message of every value that fails it, and 600 time zones
 * failed by 10,000 values of an 80 KB body were more than an isolate holds. Compared as the
 * origin's (a copy; `toJSON` is not enumerable, which no comparison reads), and quoted only
 * when a message is written.
 */
function quotedShort(value: unknown): unknown {
  // A member named `toJSON` would be replaced, and the value that holds it refused.
  if (typeof value !== "object" || value === null || quotedWhole(value)) return value;
  const entries = Object.entries(value);
  let quoted: unknown;
  const toJSON = () => {
    if (quoted !== undefined) return quoted;
    const shown: Array<[string, unknown]> = [];
    let chars = 0;
    for (const [key, item] of entries) {
      chars += key.length + (JSON.stringify(item)?.length ?? 0);
      if (chars > MAX_QUOTED_CHARS) break;
      shown.push([key, item]);
    }
    const more = entries.length - shown.length;
    if (Array.isArray(value)) {
      const items = shown.map(([, item]) => item);
      quoted = more > 0 ? [...items, `… and ${more} more`] : items;
    } else {
      // fromEntries: a key named `__proto__` stays an ordinary key.
      quoted = Object.fromEntries(more > 0 ? [...shown, ["…", `and ${more} more`]] : shown);
    }
    return quoted;
  };
  const copy = Array.isArray(value) ? [...value] : Object.fromEntries(entries);
  Object.defineProperty(copy, "toJSON", { value: toJSON, enumerable: false });
  return copy;
}

const TYPE_NAMES = new Set(["array", "boolean", "integer", "null", "number", "object", "string"]);

/**
 * A `type` list as the validator decides it: each of JSON Schema's seven names it holds, once
 * (a name of no type matches no value, written or not). The validator writes the whole list
 * into the message of each value that fails it, and an origin's list of 5,000 names failed by
 * 4,000 values of a small body came to 255 million characters.
 */
const namedTypes = (type: unknown): unknown =>
  Array.isArray(type) ? [...new Set(type)].filter((name) => TYPE_NAMES.has(name)) : type;

/** A `type` that also takes `null`: OpenAPI's `nullable: true` read as every view reads it. */
function withNull(type: unknown): unknown {
  if (typeof type === "string") return type === "null" ? type : [type, "null"];
  return Array.isArray(type) && !type.includes("null") ? [...type, "null"] : type;
}

/**
 * `schema` without the keywords (and formats) left to the origin, nor members the validator
 * keeps for itself (`VALIDATOR_MEMBERS`), and with OpenAPI's
 * `nullable: true` as a `type` with `null` (repair keeps that `null`);
 * `undefined` when it is nested deeper than `MAX_SCHEMA_DEPTH`. Where
 * `patternProperties` goes, the node's `additionalProperties` goes too:
 * without the patterns it would refuse the keys they matched.
 */
function withoutCostlyKeywords(schema: Schema): Schema | undefined {
  let tooDeep = false;
  const copy = (node: unknown, depth: number): unknown => {
    if (depth > MAX_SCHEMA_DEPTH) tooDeep = true;
    if (tooDeep || typeof node !== "object" || node === null) return node;
    if (Array.isArray(node)) return node.map((item) => copy(item, depth + 1));
    const patterned = Object.hasOwn(node, "patternProperties");
    const entries: Array<[string, unknown]> = [];
    for (const [key, value] of Object.entries(node)) {
      if (LEFT_TO_ORIGIN.has(key) || VALIDATOR_MEMBERS.has(key)) continue;
      if (key === "format" && !LINEAR_FORMATS.has(value)) continue;
      if (patterned && (key === "additionalProperties" || key === "unevaluatedProperties"))
        continue;
      if (key === "enum" || key === "const") entries.push([key, quotedShort(value)]);
      else if (DATA.has(key)) entries.push([key, value]);
      else if (key === "type") {
        const named = namedTypes(value);
        entries.push([key, isNullable(node as Schema) ? withNull(named) : named]);
      } else if (SCHEMA_MAPS.has(key) && isPlainObject(value)) {
        const members = Object.entries(value).map(([name, member]) => [
          name,
          copy(member, depth + 1),
        ]);
        entries.push([key, Object.fromEntries(members)]);
      } else entries.push([key, copy(value, depth + 1)]);
    }
    // fromEntries: a property named `__proto__` stays an ordinary key.
    return Object.fromEntries(entries);
  };
  const bounded = copy(schema, 0);
  return tooDeep || !isPlainObject(bounded) ? undefined : bounded;
}

/** A schema's linear part, its draft, and where its references lead, as the validator reads them. */
interface Compiled {
  schema: Schema;
  draft: SchemaDraft;
  references: References;
}

const compiled = new WeakMap<object, Compiled | undefined>();

/** `schema`'s linear part, compiled; `undefined` for a schema too deep to walk. */
function compiledFor(schema: Schema): Compiled | undefined {
  if (compiled.has(schema)) return compiled.get(schema);
  const bounded = withoutCostlyKeywords(schema);
  const result = bounded && {
    schema: bounded,
    draft: draftOf(schema),
    references: referencesOf(dereference(bounded)),
  };
  compiled.set(schema, result);
  return result;
}

/**
 * Schemas applied to values in one call's check, at most (validation-cost.ts):
 * one per value and one per branch that applies to it, so 30,000 for repair's
 * most, 10,000 values, each an `anyOf` of a type and `null`. A schema that
 * branches along every path passes it within a few levels.
 */
const MAX_CHECKS = 50_000;

export function validateArguments(args: unknown, inputSchema: unknown): Validation {
  if (!isPlainObject(inputSchema)) return { kind: "skipped", reason: "no object schema" };
  try {
    const schema = compiledFor(inputSchema);
    if (!schema) return { kind: "skipped", reason: "schema nested too deep" };
    if (!checksWithin(args, schema.schema, schema.references, MAX_CHECKS))
      return { kind: "skipped", reason: `more than ${MAX_CHECKS} checks` };
    const lookup = schema.references.byUri as Parameters<typeof validate>[3];
    const { valid, errors } = validate(args, schema.schema, schema.draft, lookup, false);
    if (valid) return { kind: "valid" };
    const leaves = errors.filter((error) => !WRAPPERS.has(error.keyword));
    const issues = (leaves.length > 0 ? leaves : errors).map((error) => ({
      location: error.instanceLocation,
      keyword: error.keyword,
      message: error.error,
    }));
    return { kind: "invalid", issues };
  } catch (error) {
    return { kind: "skipped", reason: String(error) };
  }
}
