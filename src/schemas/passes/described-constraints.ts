/**
 * What the provider's subset cannot say goes into the `description` in plain
 * words, or into a form it can (providers/gemini.ts): exclusive bounds,
 * `multipleOf`, a `format` it does not know, a `pattern` it cannot run,
 * `uniqueItems`, `default`, `deprecated`; an `enum` of other values as
 * strings; a `type` where the keywords beside it imply one. Validation
 * against the origin's schema on the way back checks what the words say.
 */
import type { Schema } from "../../args/json-schema";
import { isPlainObject } from "../../json";
import { UNTYPED } from "../gate";
import { EXCLUSIVE_BOUNDS, firstType } from "../keywords";
import { describeValue, noteOn } from "../notes";
import type { Pass } from "../pass";

export interface SubsetFacts {
  /** The keywords the provider accepts: a constraint it does not is said in words. */
  keywords: ReadonlySet<string>;
  /** The formats the subset knows, per type. */
  formats: Readonly<Record<string, ReadonlySet<string>>>;
  /** Whether the provider can run a `pattern`. */
  canRun(pattern: string): boolean;
  /** Whether an `enum` must hold strings only (its values then as text, its type `string`). */
  stringEnums: boolean;
}

/** Constraints said in words where the provider has no keyword for them. */
const LENGTHS = [
  ["minLength", (n: unknown) => `At least ${describeValue(n)} characters.`],
  ["maxLength", (n: unknown) => `At most ${describeValue(n)} characters.`],
  ["minProperties", (n: unknown) => `At least ${describeValue(n)} properties.`],
  ["maxProperties", (n: unknown) => `At most ${describeValue(n)} properties.`],
] as const;

/**
 * The one `type` the keywords beside it imply, where they imply one. An enum
 * is a string where the provider takes strings only, whatever `anyOf` stands
 * beside it: the provider wants the type said. Any other enum's types are its
 * values' (enum-types.ts, which runs before): nothing more is implied here.
 */
function impliedType(schema: Schema, stringEnums: boolean): string | undefined {
  const values = schema.enum;
  if (stringEnums && Array.isArray(values)) return "string";
  if (Array.isArray(schema.anyOf) || Array.isArray(values)) return undefined;
  if (isPlainObject(schema.properties)) return "object";
  return schema.items !== undefined ? "array" : undefined;
}

/**
 * An enum that is not one of strings only, as a provider that takes strings
 * only reads it: a value of another type, or a `type` other than `string`
 * beside it (a merged `allOf` may put `integer` beside `["k"]`).
 */
function enumNotOfStrings(schema: Schema): boolean {
  const values = schema.enum;
  if (!Array.isArray(values)) return false;
  const type = schema.type;
  return (type !== undefined && type !== "string") || values.some((v) => typeof v !== "string");
}

export function describedConstraints(facts: SubsetFacts): Pass {
  const keeps = (keyword: string) => facts.keywords.has(keyword);
  const unknownFormat = (schema: Record<string, unknown>) => {
    const format = schema.format;
    return typeof format === "string" && !facts.formats[firstType(schema) ?? ""]?.has(format);
  };
  // What the profile's subset lacks, decided once: `needed` is asked of most nodes.
  const exclusive = !keeps("exclusiveMinimum");
  const multipleOf = !keeps("multipleOf");
  const lengths = LENGTHS.map(([keyword]) => keyword).filter((keyword) => !keeps(keyword));
  const example = keeps("example");
  return {
    phase: "enter",
    // The keywords below; a node without a `type` (one may be implied); an enum that may hold
    // other values than strings.
    reads: [
      ...(exclusive ? ["exclusiveMinimum", "exclusiveMaximum"] : []),
      ...(multipleOf ? ["multipleOf"] : []),
      ...lengths,
      ...["format", "pattern", "uniqueItems", "default", "deprecated", UNTYPED],
      ...(facts.stringEnums ? ["enum"] : []),
      ...(example ? ["examples"] : []),
    ],
    needed: (node) => {
      if (exclusive && (node.exclusiveMinimum !== undefined || node.exclusiveMaximum !== undefined))
        return true;
      if (multipleOf && node.multipleOf !== undefined) return true;
      for (const keyword of lengths) if (node[keyword] !== undefined) return true;
      return (
        unknownFormat(node) ||
        (typeof node.pattern === "string" && !facts.canRun(node.pattern)) ||
        (facts.stringEnums && enumNotOfStrings(node)) ||
        (node.type === undefined && impliedType(node, facts.stringEnums) !== undefined) ||
        node.uniqueItems === true ||
        Object.hasOwn(node, "default") ||
        (example &&
          Array.isArray(node.examples) &&
          node.examples.length > 0 &&
          node.example === undefined) ||
        node.deprecated === true
      );
    },
    apply: (schema, _at, view) => {
      // Pushed where said, not through a closure: one would be made, and named, per node.
      const notes: string[] = [];
      // First: the format and constraints below are read against the type the enum leaves.
      const values = schema.enum;
      if (facts.stringEnums && Array.isArray(values) && enumNotOfStrings(schema)) {
        schema.enum = values.map((value, index) =>
          typeof value === "string" ? value : view.describe(value, values, String(index)),
        );
        schema.type = "string";
        view.applied.add("enum_as_strings");
      }
      for (const [keyword, bound, words] of exclusive ? EXCLUSIVE_BOUNDS : []) {
        const value = schema[keyword];
        if (value === undefined) continue;
        const limit = typeof value === "boolean" ? schema[bound] : value;
        if (value !== false && limit !== undefined) {
          const from = typeof value === "boolean" ? bound : keyword;
          notes.push(`Must be ${words} than ${view.describe(limit, schema, from)}.`);
          if (schema[bound] === undefined) schema[bound] = limit;
        }
        delete schema[keyword];
        view.dropped.add(keyword);
      }
      if (multipleOf && schema.multipleOf !== undefined)
        notes.push(
          `Must be a multiple of ${view.describe(schema.multipleOf, schema, "multipleOf")}.`,
        );
      for (const [keyword, words] of LENGTHS) {
        if (!keeps(keyword) && schema[keyword] !== undefined) notes.push(words(schema[keyword]));
      }
      if (unknownFormat(schema)) {
        notes.push(`Format: ${schema.format}.`);
        delete schema.format;
        view.dropped.add("format");
      }
      const pattern = schema.pattern;
      if (typeof pattern === "string" && !facts.canRun(pattern)) {
        notes.push(`Must match the regular expression ${pattern}.`);
        delete schema.pattern;
        view.dropped.add("pattern");
      }
      if (schema.type === undefined) {
        const type = impliedType(schema, facts.stringEnums);
        if (type !== undefined) {
          schema.type = type;
          view.applied.add("type_supplied");
        }
      }
      if (schema.uniqueItems === true) notes.push("Items must be unique.");
      if (Object.hasOwn(schema, "default"))
        notes.push(`Default: ${view.describe(schema.default, schema, "default")}.`);
      if (
        example &&
        Array.isArray(schema.examples) &&
        schema.examples.length > 0 &&
        schema.example === undefined
      ) {
        schema.example = schema.examples[0];
      }
      if (schema.deprecated === true) notes.push("Deprecated.");
      if (notes.length > 0) {
        schema.description = noteOn(schema.description, notes.join(" "));
        view.applied.add("constraints_described");
      }
      return schema;
    },
  };
}
