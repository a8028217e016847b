/**
 * Step 4 of argument repair (docs/arguments.md, step 4): the repaired arguments
 * checked against the tool's `inputSchema` with @cfworker/json-schema, which
 * needs no `eval` (Workers forbid it). Draft 2020-12 unless the schema's
 * `$schema` names another, or, without one, it writes boolean exclusive
 * bounds (draft-04). A compiled validator is kept per schema object.
 *
 * The issues name locations and keywords, never argument values, so they can
 * be logged; `describeInvalidCall` turns them into the text a model reads when
 * `ARGUMENT_VALIDATION=enforce` refuses a call.
 *
 * Bounded (docs/limits.md): the proxy checks no keyword whose cost the
 * client controls beyond a linear walk, and leaves those to the origin: a
 * `pattern` or `patternProperties` is the origin's regex run on the client's
 * text (`^(a+)+$` takes seconds on 27 characters), `uniqueItems` compares
 * every pair of a client's array, and the validator's own check of a `format`
 * such as `url` backtracks, of `regex` compiles the client's pattern
 * (`LINEAR_FORMATS`). The fix-it text names at most
 * `MAX_LISTED` issues and keys, suggests at most `MAX_SUGGESTIONS` keys, and
 * compares only keys of at most `MAX_KEY_CHARS` characters. A call whose check
 * would apply more than `MAX_CHECKS` schemas to values (a schema that branches
 * along every path, which the client's depth multiplies) is not checked.
 */
import { dereference, encodePointer, type SchemaDraft, validate } from "@cfworker/json-schema";
import { isPlainObject, own } from "../json";
import { cutBetweenCharacters } from "../text-cut";
import { foldKey } from "./coalesce";
import { isNullable, propertiesOf, type Schema } from "./json-schema";
import { checksWithin, quotedWhole, type References, referencesOf } from "./validation-cost";

export interface ValidationIssue {
  /** JSON pointer of the offending value (`#/max_bytes`), or of the object missing a key. */
  location: string;
  keyword: string;
  message: string;
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
/** Keywords whose value is data, not a schema (`dependentRequired`: property names, lists of them). */
const DATA = new Set(["const", "enum", "default", "examples", "example", "dependentRequired"]);
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
 * `schema` without the keywords (and formats) left to the origin, and with OpenAPI's
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
      if (LEFT_TO_ORIGIN.has(key)) continue;
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

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current[j] = Math.min(
        (previous[j] as number) + 1,
        (current[j - 1] as number) + 1,
        substitution,
      );
    }
    previous = current;
  }
  return previous[b.length] as number;
}

/** Issues and keys the fix-it text names at most, and keys it suggests a correction for. */
const MAX_LISTED = 20;
const MAX_SUGGESTIONS = 10;
/** Keys longer than this are named cut short and get no suggestion (edit distance is quadratic). */
const MAX_KEY_CHARS = 64;
const MAX_LINE_CHARS = 240;
/** Declared keys a suggestion is looked for among. */
const MAX_CANDIDATES = 200;

const clip = (text: string, max: number) =>
  text.length <= max ? text : `${cutBetweenCharacters(text, max)}…`;

/** `names` quoted, at most `MAX_LISTED` of them, then how many more there are. */
function quoted(names: readonly string[], what: string): string {
  const shown = names.slice(0, MAX_LISTED).map((name) => `\`${clip(name, MAX_KEY_CHARS)}\``);
  const more = names.length - shown.length;
  return more > 0 ? `${shown.join(", ")} and ${more} more ${what}` : shown.join(", ");
}

/** The declared key closest to `key`, comparing folded names. */
function closestKey(key: string, declared: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  const folded = foldKey(key);
  for (const candidate of declared.slice(0, MAX_CANDIDATES)) {
    if (candidate.length > MAX_KEY_CHARS) continue;
    const distance = editDistance(folded, foldKey(candidate));
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

const field = (location: string) =>
  location === "#" ? "the arguments" : `\`${location.slice(2).replaceAll("/", ".")}\``;

/**
 * An issue of what an argument the model is not shown requires where it is given, as the schema
 * it sees says it (docs/rules.md, `fixed`): a name, required; a schema, by its own issues alone
 * (`undefined`). Written `Instance has "<key>" but does not have "<name>".` (or `match …`).
 */
function asShown(
  issue: ValidationIssue,
  unshown: ReadonlySet<string>,
): ValidationIssue | undefined {
  const dependent = issue.keyword === "dependentRequired" || issue.keyword === "dependencies";
  // A fixed argument is one of the arguments', not of an object inside them.
  if (!dependent || issue.location !== "#") return issue;
  for (const key of unshown) {
    const start = `Instance has "${key}" but does not `;
    if (!issue.message.startsWith(start)) continue;
    const rest = issue.message.slice(start.length);
    if (rest === "match dependant schema.") return undefined;
    if (!rest.startsWith('have "') || !rest.endsWith('".')) continue;
    const message = `Instance does not have required property "${rest.slice(6, -2)}".`;
    return { ...issue, keyword: "required", message };
  }
  return issue;
}

/**
 * `issues` told the model: none about an argument it is not shown (an
 * operator's fixed one), at its location or below, or required by name; what
 * one requires beside it, as required.
 */
function issuesShown(all: readonly ValidationIssue[], unshown: ReadonlySet<string>) {
  if (unshown.size === 0) return all;
  const at = [...unshown].map((key) => `#/${encodePointer(key)}`);
  const issues = all.flatMap((issue) => asShown(issue, unshown) ?? []);
  return issues.filter((issue) => {
    const missing = issue.keyword === "required" && /required property "(.*)"/.exec(issue.message);
    if (missing && issue.location === "#" && unshown.has(missing[1] ?? "")) return false;
    return !at.some((place) => issue.location === place || issue.location.startsWith(`${place}/`));
  });
}

/**
 * The fix-it text for a call its schema refuses. `unshown`: arguments the
 * operator's rules set and leave out of the schema the model sees (`fixed`,
 * docs/rules.md), which it names nowhere: not as received (the proxy set
 * them), declared, suggested for a key the model got wrong, or at fault.
 */
export function describeInvalidCall(
  tool: string,
  args: Record<string, unknown>,
  inputSchema: unknown,
  allIssues: readonly ValidationIssue[],
  unshown: ReadonlySet<string> = new Set(),
): string {
  const lines = [
    `Invalid arguments for tool \`${tool}\`; the tool was not called. Fix these and call it again:`,
  ];
  const issues = issuesShown(allIssues, unshown);
  for (const issue of issues.slice(0, MAX_LISTED)) {
    const missing = issue.keyword === "required" && /required property "(.*)"/.exec(issue.message);
    if (missing) {
      const parent = issue.location === "#" ? "" : ` in ${field(issue.location)}`;
      lines.push(clip(`- missing required field \`${missing[1]}\`${parent}`, MAX_LINE_CHARS));
    } else {
      lines.push(clip(`- ${field(issue.location)}: ${issue.message}`, MAX_LINE_CHARS));
    }
  }
  if (issues.length > MAX_LISTED) lines.push(`- … and ${issues.length - MAX_LISTED} more issues`);
  const received = Object.keys(args).filter((key) => !unshown.has(key));
  lines.push(
    received.length > 0
      ? `Keys received: ${quoted(received, "keys")}.`
      : "No arguments were received.",
  );
  const properties = isPlainObject(inputSchema)
    ? propertiesOf(inputSchema, inputSchema)
    : undefined;
  const declared = Object.keys(properties ?? {}).filter((key) => !unshown.has(key));
  const unknown = received.filter((key) => !Object.hasOwn(properties ?? {}, key));
  for (const key of unknown.slice(0, MAX_SUGGESTIONS)) {
    const name = clip(key, MAX_KEY_CHARS);
    const suggestion = key.length <= MAX_KEY_CHARS ? closestKey(key, declared) : undefined;
    lines.push(
      declared.length === 0
        ? `Unknown key \`${name}\`: this tool declares no arguments.`
        : suggestion === undefined
          ? `Unknown key \`${name}\`.`
          : `Unknown key \`${name}\`: did you mean \`${suggestion}\`?`,
    );
  }
  if (unknown.length > MAX_SUGGESTIONS) {
    lines.push(`… and ${unknown.length - MAX_SUGGESTIONS} more unknown keys.`);
  }
  if (declared.length > 0) lines.push(`Declared arguments: ${quoted(declared, "arguments")}.`);
  return lines.join("\n");
}
