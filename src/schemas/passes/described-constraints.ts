/**
 * What the provider's subset cannot say goes into the `description` in plain
 * words, or into a form it can (providers/gemini.ts): exclusive bounds,
 * `multipleOf`, a `format` it does not know, a `pattern` it cannot run,
 * `uniqueItems`, `default`, `deprecated`; an `enum` of other values as
 * strings; a `type` where the keywords beside it imply one. Validation
 * against the origin's schema on the way back checks what the words say.
 */
import { isPlainObject } from "../../json";
import { EXCLUSIVE_BOUNDS, typesOf } from "../keywords";
import { describeValue, noteOn } from "../notes";
import type { Pass } from "../pass";

export interface SubsetFacts {
  /** The formats the subset knows, per type. */
  formats: Readonly<Record<string, ReadonlySet<string>>>;
  /** Whether the provider can run a `pattern`. */
  canRun(pattern: string): boolean;
}

export function describedConstraints(facts: SubsetFacts): Pass {
  const unknownFormat = (schema: Record<string, unknown>) => {
    const format = schema.format;
    return typeof format === "string" && !facts.formats[typesOf(schema)?.[0] ?? ""]?.has(format);
  };
  return {
    phase: "enter",
    needed: (node) =>
      node.exclusiveMinimum !== undefined ||
      node.exclusiveMaximum !== undefined ||
      node.multipleOf !== undefined ||
      unknownFormat(node) ||
      (typeof node.pattern === "string" && !facts.canRun(node.pattern)) ||
      (Array.isArray(node.enum) && node.enum.some((value) => typeof value !== "string")) ||
      (node.type === undefined &&
        !Array.isArray(node.anyOf) &&
        (Array.isArray(node.enum) || isPlainObject(node.properties) || node.items !== undefined)) ||
      node.uniqueItems === true ||
      Object.hasOwn(node, "default") ||
      (Array.isArray(node.examples) && node.examples.length > 0 && node.example === undefined) ||
      node.deprecated === true,
    apply: (schema, _at, view) => {
      const notes: string[] = [];
      const note = (text: string) => notes.push(text);
      for (const [exclusive, bound, words] of EXCLUSIVE_BOUNDS) {
        const value = schema[exclusive];
        if (value === undefined) continue;
        const limit = typeof value === "boolean" ? schema[bound] : value;
        if (value !== false && limit !== undefined) {
          note(`Must be ${words} than ${describeValue(limit)}.`);
          if (schema[bound] === undefined) schema[bound] = limit;
        }
        delete schema[exclusive];
        view.dropped.add(exclusive);
      }
      if (schema.multipleOf !== undefined)
        note(`Must be a multiple of ${describeValue(schema.multipleOf)}.`);
      if (unknownFormat(schema)) {
        note(`Format: ${schema.format}.`);
        delete schema.format;
        view.dropped.add("format");
      }
      const pattern = schema.pattern;
      if (typeof pattern === "string" && !facts.canRun(pattern)) {
        note(`Must match the regular expression ${pattern}.`);
        delete schema.pattern;
        view.dropped.add("pattern");
      }
      const values = schema.enum;
      if (Array.isArray(values) && values.some((value) => typeof value !== "string")) {
        schema.enum = values.map((value) =>
          typeof value === "string" ? value : describeValue(value),
        );
        schema.type = "string";
        view.applied.add("enum_as_strings");
      }
      // One `type` says what the keywords beside it imply.
      if (schema.type === undefined && !Array.isArray(schema.anyOf)) {
        if (Array.isArray(schema.enum)) schema.type = "string";
        else if (isPlainObject(schema.properties)) schema.type = "object";
        else if (schema.items !== undefined) schema.type = "array";
        if (schema.type !== undefined) view.applied.add("type_supplied");
      }
      if (schema.uniqueItems === true) note("Items must be unique.");
      if (Object.hasOwn(schema, "default")) note(`Default: ${describeValue(schema.default)}.`);
      if (
        Array.isArray(schema.examples) &&
        schema.examples.length > 0 &&
        schema.example === undefined
      ) {
        schema.example = schema.examples[0];
      }
      if (schema.deprecated === true) note("Deprecated.");
      if (notes.length > 0) {
        schema.description = noteOn(schema.description, notes.join(" "));
        view.applied.add("constraints_described");
      }
      return schema;
    },
  };
}
