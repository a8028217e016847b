/**
 * The model-facing view of a tool's `inputSchema` under a profile's rules
 * (rules.ts): a schema the client's LLM provider accepts, as faithful to the
 * origin's as those rules allow. Pure; never throws, never mutates its input.
 *
 * - Only schema keywords change. Keys under `properties` (and `$defs`, …) are
 *   names, carried as they are: a property called `type` or `format` is data.
 * - Lossless where possible: `const` becomes a one-value `enum`, `allOf` is
 *   merged, local `$ref`s are inlined (cycles cut after `MAX_REF_DEPTH`, the
 *   rest of the value asked for as JSON text), type arrays become the
 *   profile's nullable form, missing `items`, `properties` and root `type`
 *   are supplied.
 * - Where a keyword must go or be widened (`exclusiveMinimum`, an unsupported
 *   `format`, a `pattern` the provider cannot run, `default`, a root-level
 *   `anyOf`), the constraint moves into the `description` in plain words, so
 *   the model still sees it. Validation against the original schema on the
 *   way back (args/) catches what the view no longer enforces, and repair
 *   turns what the view asks for differently (a number as text, an object as
 *   JSON text) back into what the original wants.
 *
 * Bounded: a view holds at most `MAX_NODES` schemas; past that, `$ref`s are
 * cut instead of inlined.
 *
 * CPU: a first listing views every schema (a new isolate too), so this walk is
 * kept cheap: keywords are read as plain properties (a schema is parsed JSON or
 * a copy of it, and `Object.prototype` has no member named like a keyword;
 * `$ref` pointers, which name data, are followed with `own` by
 * args/json-schema.ts), `delete` only runs where there is something to delete (it turns an object
 * into a slow dictionary), and whether a view differs is known from the rules
 * that applied rather than from a comparison, where the builder can tell.
 */
import { dequal } from "dequal/lite";
import { refTarget, resolve, type Schema } from "../args/json-schema";
import { isPlainObject } from "../json";
import { describeValue, noteOn } from "./notes";
import type { SchemaRules } from "./rules";

/** What a view did, for the `schemas_adapted` log line. */
export type SchemaRule =
  | "root_type"
  | "root_composition"
  | "array_items"
  | "tuple_as_items"
  | "object_properties"
  | "object_as_text"
  | "value_as_text"
  | "refs_inlined"
  | "ref_cycle_cut"
  | "all_of_merged"
  | "const_as_enum"
  | "one_of_as_any_of"
  | "type_supplied"
  | "nullable"
  | "type_union_as_any_of"
  | "enum_as_strings"
  | "draft_2020_12"
  | "constraints_described"
  | "required_undeclared_dropped";

export interface SchemaView {
  schema: unknown;
  /** Whether `schema` differs from the origin's: only then does the model see it. */
  differs: boolean;
  /** The rules that changed something, in the order first applied. */
  rules: SchemaRule[];
  /** Keywords the view left out. */
  dropped: string[];
  /** The schemas inside `schema` that ask for a value as JSON text (way-back.ts reads it back). */
  asText: ReadonlySet<object>;
}

/** Gemini's `Schema`: every keyword it accepts. */
const SUBSET_KEYWORDS: ReadonlySet<string> = new Set([
  "type",
  "format",
  "title",
  "description",
  "nullable",
  "enum",
  "maxItems",
  "minItems",
  "properties",
  "required",
  "minProperties",
  "maxProperties",
  "minLength",
  "maxLength",
  "pattern",
  "example",
  "anyOf",
  "items",
  "minimum",
  "maximum",
]);

const SUBSET_FORMATS: Readonly<Record<string, ReadonlySet<string>>> = {
  string: new Set(["enum", "date-time"]),
  integer: new Set(["int32", "int64"]),
  number: new Set(["float", "double"]),
};

const EXCLUSIVE_BOUNDS = [
  ["exclusiveMinimum", "minimum", "greater"],
  ["exclusiveMaximum", "maximum", "less"],
] as const;

/** How many times one `$ref` may be inlined inside itself before the rest is asked for as text. */
const MAX_REF_DEPTH = 2;
const MAX_NODES = 5_000;
const MAX_DEPTH = 32;

/** Constructs RE2 (Gemini's regular expressions) cannot run: lookaround and backreferences. */
const NOT_RE2 = /\(\?<?[=!]|\\[1-9]|\\k</;

const TYPES = ["string", "number", "integer", "boolean", "object", "array", "null"];

function typesOf(schema: Schema): string[] | undefined {
  const type = schema.type;
  if (typeof type === "string") return [type];
  if (Array.isArray(type)) return type.filter((t): t is string => typeof t === "string");
  return undefined;
}

function isNullSchema(schema: unknown): boolean {
  return isPlainObject(schema) && schema.type === "null" && Object.keys(schema).length <= 2;
}

function isOlderDraft(value: unknown): boolean {
  return typeof value === "string" && !value.includes("2020-12");
}

interface At {
  root: boolean;
  depth: number;
  /** The `$ref`s being inlined around this schema, innermost last. */
  refs: readonly string[];
}

class ViewBuilder {
  readonly applied = new Set<SchemaRule>();
  readonly dropped = new Set<string>();
  readonly textNodes = new Set<object>();
  private nodes = 0;

  constructor(
    private readonly rules: SchemaRules,
    private readonly root: Schema,
  ) {}

  view(): unknown {
    let schema: Schema = { ...this.root };
    if (this.rules.objectRoot) schema = this.rootObject(schema);
    if (this.rules.explicitShapes && !isPlainObject(schema.properties)) {
      schema.properties = {};
      this.applied.add("object_properties");
    }
    return this.node(schema, { root: true, depth: 0, refs: [] });
  }

  /** The root as one object: `type: "object"`, root-level compositions merged into it. */
  private rootObject(schema: Schema): Schema {
    let result = schema;
    for (const keyword of ["allOf", "anyOf", "oneOf"] as const) {
      const branches = result[keyword];
      if (!Array.isArray(branches) || branches.length === 0) continue;
      result = this.mergeBranches(result, keyword, branches);
      this.applied.add("root_composition");
    }
    const types = typesOf(result);
    if (types?.length !== 1 || types[0] !== "object") {
      result.type = "object";
      this.applied.add("root_type");
    }
    return result;
  }

  /**
   * One object schema from the branches of a composition: the union of their
   * properties; for `allOf` every branch's required fields, for `anyOf` and
   * `oneOf` those every branch requires, the forms spelled out in words.
   */
  private mergeBranches(schema: Schema, keyword: string, branches: unknown[]): Schema {
    const result: Schema = { ...schema };
    delete result[keyword];
    const properties: Schema = { ...(isPlainObject(result.properties) ? result.properties : {}) };
    const own_ = Array.isArray(result.required) ? result.required : [];
    // A property the schema itself does not declare, as each branch declares it.
    const declarations = new Map<string, unknown[]>();
    const requiredSets: string[][] = [];
    const forms: string[] = [];
    for (const branch of branches) {
      const resolved = resolve(branch, this.root);
      if (!resolved || isNullSchema(resolved)) continue;
      const branchProperties = resolved.properties;
      if (isPlainObject(branchProperties)) {
        for (const [name, property] of Object.entries(branchProperties)) {
          if (Object.hasOwn(properties, name)) continue;
          const seen = declarations.get(name);
          if (!seen) declarations.set(name, [property]);
          else if (!seen.some((other) => dequal(other, property))) seen.push(property);
        }
        forms.push(
          Object.keys(branchProperties)
            .map((name) => `\`${name}\``)
            .join(", "),
        );
      }
      const required = resolved.required;
      requiredSets.push(
        Array.isArray(required) ? required.filter((r) => typeof r === "string") : [],
      );
      for (const [name, value] of Object.entries(resolved)) {
        if (name !== "properties" && name !== "required" && !Object.hasOwn(result, name)) {
          result[name] = value;
        }
      }
      // `allOf`: a value must have every branch's type, so the types are those all branches allow.
      const branchTypes = typesOf(resolved);
      const types = typesOf(result);
      if (keyword === "allOf" && branchTypes && types) {
        const common = types.filter((type) => branchTypes.includes(type));
        if (common.length > 0) result.type = common.length === 1 ? common[0] : common;
      }
    }
    const required =
      keyword === "allOf"
        ? [...new Set([...own_, ...requiredSets.flat()])]
        : [
            ...new Set([
              ...own_,
              ...(requiredSets[0] ?? []).filter((name) =>
                requiredSets.every((set) => set.includes(name)),
              ),
            ]),
          ];
    // Declared differently by several branches: any of them (`allOf`: all of them).
    const combined = keyword === "allOf" ? "allOf" : "anyOf";
    for (const [name, all] of declarations) {
      properties[name] = all.length === 1 ? all[0] : { [combined]: all };
    }
    result.properties = properties;
    if (required.length > 0) result.required = required;
    else delete result.required;
    if (keyword !== "allOf" && forms.length > 1) {
      const list = forms.map((form, i) => `(${i + 1}) ${form || "no fields"}`).join("; ");
      result.description = noteOn(
        result.description,
        `Takes one of these sets of fields: ${list}.`,
      );
    }
    return result;
  }

  private node(input: unknown, at: At): unknown {
    if (!isPlainObject(input)) return input;
    if (++this.nodes > MAX_NODES || at.depth > MAX_DEPTH) {
      this.applied.add("value_as_text");
      return this.textSchema(input, "The value, as JSON text.");
    }
    let schema = this.nullability({ ...input });
    if (this.rules.openApiSubset && typeof schema.$ref === "string") return this.inline(schema, at);
    if (this.rules.openApiSubset && Array.isArray(schema.allOf)) {
      this.applied.add("all_of_merged");
      return this.node(this.mergeBranches(schema, "allOf", schema.allOf), at);
    }
    if (this.rules.openApiSubset && Array.isArray(schema.oneOf)) {
      // "Exactly one of" widens to "one of": validation against the original keeps the rest.
      schema.anyOf = [...(Array.isArray(schema.anyOf) ? schema.anyOf : []), ...schema.oneOf];
      delete schema.oneOf;
      this.applied.add("one_of_as_any_of");
    }
    if (this.rules.openApiSubset && Object.hasOwn(schema, "const")) {
      schema.enum = [schema.const];
      delete schema.const;
      this.applied.add("const_as_enum");
    }
    if (this.rules.draft202012) schema = this.draft202012(schema);
    if (this.rules.openApiSubset) schema = this.describeWhatGoes(schema);

    const child: At = { root: false, depth: at.depth + 1, refs: at.refs };
    for (const keyword in schema) {
      const kind = CHILDREN.get(keyword);
      if (kind === undefined || !Object.hasOwn(schema, keyword)) continue;
      const value = schema[keyword];
      if (kind === "one") {
        if (isPlainObject(value)) schema[keyword] = this.node(value, child);
      } else if (kind === "list") {
        if (Array.isArray(value)) schema[keyword] = value.map((branch) => this.node(branch, child));
      } else if (isPlainObject(value) && (keyword === "properties" || !this.rules.openApiSubset)) {
        // Referenced schemas stay where they are (only Gemini's subset inlines them): viewed in place.
        schema[keyword] = this.viewEach(value, child);
      }
    }
    if (this.rules.explicitShapes) {
      const shaped = this.explicitShape(schema, at);
      if (shaped !== schema) return shaped;
    }
    return this.rules.openApiSubset ? this.onlySubset(schema) : schema;
  }

  /** Each schema of a map (`properties`, `$defs`) viewed; a key named `__proto__` stays a key. */
  private viewEach(map: Schema, at: At): Schema {
    const result: Schema = {};
    for (const key in map) {
      if (!Object.hasOwn(map, key)) continue;
      const value = this.node(map[key], at);
      if (key === "__proto__") {
        Object.defineProperty(result, key, {
          value,
          enumerable: true,
          writable: true,
          configurable: true,
        });
      } else result[key] = value;
    }
    return result;
  }

  /**
   * A local `$ref` replaced by what it points at (its siblings kept beside it),
   * then viewed in turn; a cycle past `MAX_REF_DEPTH`, a reference that does
   * not resolve, or a view grown too large asks for the value as JSON text.
   */
  private inline(schema: Schema, at: At): unknown {
    const { $ref: ref, ...siblings } = schema as Schema & { $ref: string };
    const target = ref.startsWith("#") ? refTarget(ref, this.root) : undefined;
    const repeats = at.refs.filter((seen) => seen === ref).length;
    if (!isPlainObject(target) || repeats >= MAX_REF_DEPTH || this.nodes > MAX_NODES / 2) {
      this.applied.add("ref_cycle_cut");
      return this.textSchema(siblings, `A ${ref.split("/").pop() || "value"}, as JSON text.`);
    }
    this.applied.add("refs_inlined");
    return this.node({ ...target, ...siblings }, { ...at, refs: [...at.refs, ref] });
  }

  /** A value asked for as JSON text: what Gemini cannot describe (an open object, any value, a cut cycle). */
  private textSchema(schema: Schema, note: string): Schema {
    const text: Schema = { type: "string", description: noteOn(schema.description, note) };
    if (typeof schema.title === "string") text.title = schema.title;
    if (schema.nullable === true && this.rules.nullable === "keyword") text.nullable = true;
    this.textNodes.add(text);
    return text;
  }

  /** "May be null" in the profile's words: a type array, `nullable: true`, or left unsaid. */
  private nullability(schema: Schema): Schema {
    const form = this.rules.nullable;
    if (form === "type-array") {
      if (this.rules.draft202012 && schema.nullable !== undefined) {
        const types = typesOf(schema);
        if (schema.nullable === true && types && !types.includes("null"))
          schema.type = [...types, "null"];
        delete schema.nullable;
        this.applied.add("draft_2020_12");
      }
      return schema;
    }
    let nullable = schema.nullable === true;
    // `delete` turns an object into a slow dictionary: only where there is something to delete.
    if (Object.hasOwn(schema, "nullable")) {
      delete schema.nullable;
      if (!nullable || form === "omit") this.applied.add("nullable");
    }
    const types = typesOf(schema);
    if (Array.isArray(schema.type)) this.applied.add("nullable");
    if (types) {
      nullable ||= types.includes("null");
      const others = types.filter((type) => type !== "null");
      if (others.length === 1) schema.type = others[0];
      else if (others.length > 1) {
        delete schema.type;
        schema.anyOf = others.map((type) => ({ type }));
        this.applied.add("type_union_as_any_of");
      } else delete schema.type;
    }
    for (const keyword of ["anyOf", "oneOf"]) {
      const branches = schema[keyword];
      if (!Array.isArray(branches) || !branches.some(isNullSchema)) continue;
      nullable = true;
      this.applied.add("nullable");
      const rest = branches.filter((branch) => !isNullSchema(branch));
      if (rest.length === 1 && isPlainObject(rest[0])) {
        delete schema[keyword];
        const branch = rest[0];
        Object.assign(schema, {
          ...branch,
          ...schema,
          description: schema.description ?? branch.description,
        });
        if (schema.description === undefined) delete schema.description;
      } else schema[keyword] = rest;
    }
    const values = schema.enum;
    if (Array.isArray(values) && values.includes(null)) {
      nullable = true;
      schema.enum = values.filter((value) => value !== null);
      this.applied.add("nullable");
    }
    if (nullable && form === "keyword") schema.nullable = true;
    return schema;
  }

  /** JSON Schema 2020-12 forms for the older drafts' keywords. */
  private draft202012(schema: Schema): Schema {
    if (isOlderDraft(schema.$schema)) {
      delete schema.$schema;
      this.applied.add("draft_2020_12");
    }
    for (const [exclusive, bound] of EXCLUSIVE_BOUNDS) {
      if (typeof schema[exclusive] !== "boolean") continue;
      if (schema[exclusive] === true && schema[bound] !== undefined) {
        schema[exclusive] = schema[bound];
        delete schema[bound];
      } else delete schema[exclusive];
      this.applied.add("draft_2020_12");
    }
    if (Array.isArray(schema.items)) {
      schema.prefixItems = schema.items;
      if (schema.additionalItems !== undefined) schema.items = schema.additionalItems;
      else delete schema.items;
      delete schema.additionalItems;
      this.applied.add("draft_2020_12");
    }
    return schema;
  }

  /** Gemini's subset: what it cannot say goes into the description in words, or into a form it can. */
  private describeWhatGoes(schema: Schema): Schema {
    const notes: string[] = [];
    const note = (text: string) => notes.push(text);
    const type = typesOf(schema)?.[0];

    for (const [exclusive, bound, words] of EXCLUSIVE_BOUNDS) {
      const value = schema[exclusive];
      if (value === undefined) continue;
      const limit = typeof value === "boolean" ? schema[bound] : value;
      if (value !== false && limit !== undefined) {
        note(`Must be ${words} than ${describeValue(limit)}.`);
        if (schema[bound] === undefined) schema[bound] = limit;
      }
      delete schema[exclusive];
      this.dropped.add(exclusive);
    }
    if (schema.multipleOf !== undefined)
      note(`Must be a multiple of ${describeValue(schema.multipleOf)}.`);
    const format = schema.format;
    if (typeof format === "string" && !SUBSET_FORMATS[type ?? ""]?.has(format)) {
      note(`Format: ${format}.`);
      delete schema.format;
      this.dropped.add("format");
    }
    const pattern = schema.pattern;
    if (typeof pattern === "string" && NOT_RE2.test(pattern)) {
      note(`Must match the regular expression ${pattern}.`);
      delete schema.pattern;
      this.dropped.add("pattern");
    }
    const values = schema.enum;
    if (Array.isArray(values) && values.some((value) => typeof value !== "string")) {
      schema.enum = values.map((value) =>
        typeof value === "string" ? value : describeValue(value),
      );
      schema.type = "string";
      this.applied.add("enum_as_strings");
    }
    // One `type` says what the keywords beside it imply.
    if (schema.type === undefined && !Array.isArray(schema.anyOf)) {
      if (Array.isArray(schema.enum)) schema.type = "string";
      else if (isPlainObject(schema.properties)) schema.type = "object";
      else if (schema.items !== undefined) schema.type = "array";
      if (schema.type !== undefined) this.applied.add("type_supplied");
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
      this.applied.add("constraints_described");
    }
    return schema;
  }

  /** Arrays name their items; objects their properties, or are asked for as JSON text. */
  private explicitShape(schema: Schema, at: At): Schema {
    const types = typesOf(schema);
    if (types?.includes("array") && !isPlainObject(schema.items)) {
      // A tuple (draft-07's `items: […]`, or 2020-12's `prefixItems` where it cannot stay):
      // each position's schema allowed at every position; validation keeps the order.
      const child: At = { ...at, root: false, depth: at.depth + 1 };
      const tuple = Array.isArray(schema.items)
        ? schema.items.map((item) => this.node(item, child))
        : this.rules.openApiSubset && Array.isArray(schema.prefixItems)
          ? schema.prefixItems
          : [];
      if (tuple.length > 0) {
        schema.items = tuple.length === 1 ? tuple[0] : { anyOf: tuple };
        this.applied.add("tuple_as_items");
      } else {
        schema.items = this.rules.openApiSubset
          ? { type: "string", description: "Each item, as text." }
          : {};
        this.applied.add("array_items");
      }
    }
    if (at.root) return schema;
    const properties = schema.properties;
    const open = !isPlainObject(properties) || Object.keys(properties).length === 0;
    if (types?.includes("object") && open) {
      if (this.rules.openApiSubset) {
        this.applied.add("object_as_text");
        return this.textSchema(schema, "A JSON object, as text.");
      }
      if (!isPlainObject(properties)) {
        schema.properties = {};
        this.applied.add("object_properties");
      }
    }
    if (this.rules.openApiSubset && types === undefined && !Array.isArray(schema.anyOf)) {
      this.applied.add("value_as_text");
      return this.textSchema(schema, "Any JSON value, as text.");
    }
    return schema;
  }

  /** Only the keywords Gemini knows; `required` names declared properties only. */
  private onlySubset(schema: Schema): Schema {
    const result: Schema = {};
    for (const keyword in schema) {
      if (!Object.hasOwn(schema, keyword)) continue;
      if (SUBSET_KEYWORDS.has(keyword)) result[keyword] = schema[keyword];
      else this.dropped.add(keyword);
    }
    if (Array.isArray(result.required)) {
      const declared = isPlainObject(result.properties) ? result.properties : {};
      const required = result.required.filter(
        (name): name is string => typeof name === "string" && Object.hasOwn(declared, name),
      );
      if (required.length < result.required.length) {
        this.applied.add("required_undeclared_dropped");
        if (required.length > 0) result.required = required;
        else delete result.required;
      }
    }
    const types = typesOf(result);
    if (types && !TYPES.includes(types[0] ?? "")) {
      delete result.type;
      this.dropped.add("type");
    }
    return result;
  }
}

/** Keywords whose value is one schema, a list of them, or a map of names to them, as the builder walks them. */
const ONE_SCHEMA = ["items", "additionalProperties", "not", "if", "then", "else", "contains"];
const SCHEMA_LISTS = ["anyOf", "oneOf", "allOf", "prefixItems"];
const CHILDREN: ReadonlyMap<string, "one" | "list" | "map"> = new Map([
  ...ONE_SCHEMA.map((keyword) => [keyword, "one"] as const),
  ...SCHEMA_LISTS.map((keyword) => [keyword, "list"] as const),
  ...["properties", "$defs", "definitions"].map((keyword) => [keyword, "map"] as const),
]);

/**
 * Whether the builder would hand back `schema` unchanged under rules without
 * Gemini's subset: read-only, so most listings under `openai` or `anthropic`
 * (whose schemas already conform) cost one walk over each schema's keys, not
 * a copy and a comparison. It checks what the builder changes, node by node,
 * in the places it walks; false whenever in doubt, and then the builder decides.
 */
function conforms(root: unknown, rules: SchemaRules): boolean {
  if (rules.openApiSubset || !isPlainObject(root)) return false;
  if (rules.objectRoot) {
    const types = typesOf(root);
    if (types?.length !== 1 || types[0] !== "object") return false;
    for (const keyword of ["allOf", "anyOf", "oneOf"]) {
      const branches = root[keyword];
      if (Array.isArray(branches) && branches.length > 0) return false;
    }
  }
  if (rules.explicitShapes && !isPlainObject(root.properties)) return false;
  let nodes = 0;
  const check = (schema: unknown, depth: number): boolean => {
    if (!isPlainObject(schema)) return true;
    if (++nodes > MAX_NODES || depth > MAX_DEPTH) return false;
    if (rules.draft202012) {
      if (schema.nullable !== undefined || isOlderDraft(schema.$schema)) return false;
      if (typeof schema.exclusiveMinimum === "boolean") return false;
      if (typeof schema.exclusiveMaximum === "boolean") return false;
      if (Array.isArray(schema.items)) return false;
    }
    if (rules.explicitShapes) {
      const types = typesOf(schema);
      if (types?.includes("array") && !isPlainObject(schema.items)) return false;
      if (depth > 0 && types?.includes("object") && !isPlainObject(schema.properties)) return false;
    }
    for (const keyword in schema) {
      const kind = CHILDREN.get(keyword);
      if (kind === undefined || !Object.hasOwn(schema, keyword)) continue;
      const value = schema[keyword];
      if (kind === "one") {
        if (isPlainObject(value) && !check(value, depth + 1)) return false;
      } else if (kind === "list") {
        if (Array.isArray(value) && !value.every((branch) => check(branch, depth + 1)))
          return false;
      } else if (isPlainObject(value)) {
        for (const key in value) {
          if (Object.hasOwn(value, key) && !check(value[key], depth + 1)) return false;
        }
      }
    }
    return true;
  };
  return check(root, 0);
}

const NO_TEXT: ReadonlySet<object> = new Set();

/** The schema a provider under `rules` accepts, for the origin's `inputSchema`. */
export function schemaView(original: unknown, rules: SchemaRules): SchemaView {
  if (conforms(original, rules)) {
    return { schema: original, differs: false, rules: [], dropped: [], asText: NO_TEXT };
  }
  const builder = new ViewBuilder(rules, isPlainObject(original) ? original : {});
  const schema = builder.view();
  return {
    schema,
    // Every change under Gemini's subset is a rule or a dropped keyword; elsewhere a comparison tells.
    differs:
      builder.applied.size > 0 ||
      builder.dropped.size > 0 ||
      (!rules.openApiSubset && !dequal(schema, original)),
    rules: [...builder.applied],
    dropped: [...builder.dropped].sort(),
    asText: builder.textNodes,
  };
}
