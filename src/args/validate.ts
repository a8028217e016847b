/**
 * Step 4 of argument repair (README, "Arguments", step 4): the repaired arguments
 * checked against the tool's `inputSchema` with @cfworker/json-schema, which
 * needs no `eval` (Workers forbid it). Draft 2020-12 unless the schema's
 * `$schema` names another, or, without one, it writes boolean exclusive
 * bounds (draft-04). A compiled validator is kept per schema object.
 *
 * The issues name locations and keywords, never argument values, so they can
 * be logged; `describeInvalidCall` turns them into the text a model reads when
 * `ARGUMENT_VALIDATION=enforce` refuses a call.
 */
import { type SchemaDraft, Validator } from "@cfworker/json-schema";
import { isPlainObject, own } from "../json";
import { foldKey } from "./coalesce";
import { propertiesOf, type Schema } from "./json-schema";

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

const validators = new WeakMap<object, Validator>();

function validatorFor(schema: Schema): Validator {
  let validator = validators.get(schema);
  if (!validator) {
    validator = new Validator(schema, draftOf(schema), false);
    validators.set(schema, validator);
  }
  return validator;
}

export function validateArguments(args: unknown, inputSchema: unknown): Validation {
  if (!isPlainObject(inputSchema)) return { kind: "skipped", reason: "no object schema" };
  try {
    const { valid, errors } = validatorFor(inputSchema).validate(args);
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

/** The declared key closest to `key`, comparing folded names. */
function closestKey(key: string, declared: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of declared) {
    const distance = editDistance(foldKey(key), foldKey(candidate));
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

const field = (location: string) =>
  location === "#" ? "the arguments" : `\`${location.slice(2).replaceAll("/", ".")}\``;

export function describeInvalidCall(
  tool: string,
  args: Record<string, unknown>,
  inputSchema: unknown,
  issues: readonly ValidationIssue[],
): string {
  const lines = [
    `Invalid arguments for tool \`${tool}\`; the tool was not called. Fix these and call it again:`,
  ];
  for (const issue of issues) {
    const missing = issue.keyword === "required" && /required property "(.*)"/.exec(issue.message);
    if (missing) {
      const parent = issue.location === "#" ? "" : ` in ${field(issue.location)}`;
      lines.push(`- missing required field \`${missing[1]}\`${parent}`);
    } else {
      lines.push(`- ${field(issue.location)}: ${issue.message}`);
    }
  }
  const received = Object.keys(args);
  lines.push(
    received.length > 0
      ? `Keys received: ${received.map((key) => `\`${key}\``).join(", ")}.`
      : "No arguments were received.",
  );
  const properties = isPlainObject(inputSchema)
    ? propertiesOf(inputSchema, inputSchema)
    : undefined;
  const declared = Object.keys(properties ?? {});
  for (const key of received.filter((key) => !Object.hasOwn(properties ?? {}, key))) {
    const suggestion = closestKey(key, declared);
    lines.push(
      suggestion === undefined
        ? `Unknown key \`${key}\`: this tool declares no arguments.`
        : `Unknown key \`${key}\`: did you mean \`${suggestion}\`?`,
    );
  }
  if (declared.length > 0) {
    lines.push(`Declared arguments: ${declared.map((key) => `\`${key}\``).join(", ")}.`);
  }
  return lines.join("\n");
}
