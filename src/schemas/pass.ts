/**
 * A view is a profile's list of passes run over a schema (view.ts, walk.ts):
 * each pass is one rule, says when a node needs it, and does it to the
 * node's copy. A profile is data: the passes in the order they run.
 */
import type { Schema } from "../args/json-schema";
import type { RuleList } from "./rule-list";
import type { ViewSizes } from "./sizes";

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
  | "enum_as_text"
  | "one_of_as_any_of"
  | "type_supplied"
  | "enum_of_its_type"
  | "nullable"
  | "type_union_as_any_of"
  | "enum_as_strings"
  | "draft_2020_12"
  | "constraints_described"
  | "required_undeclared_dropped"
  | "objects_closed"
  | "optional_as_nullable"
  | "any_of_alone"
  | "object_into_forms"
  | "malformed_dropped"
  | "boolean_schemas"
  | "required_collected"
  | "mcp_header_dropped"
  | "property_keys_renamed"
  | "mcp_root";

/** Where in the schema a node is. */
export interface At {
  root: boolean;
  depth: number;
  /**
   * Whether the node is a property, reached from the root through `properties` alone: the
   * only place a client takes an `x-mcp-header` (SEP-2243, passes/header-declarations.ts).
   */
  byProperties: boolean;
  /** The `$ref`s being inlined around this node, innermost last. */
  refs: readonly string[];
  /**
   * Whether the node is inside what the view writes beyond the origin's schema (an inlined
   * `$ref`, an `allOf`'s combinations of forms, refs.ts `viewInlined`), whose nodes are counted
   * there as inlined.
   */
  inlined: boolean;
}

/** What a pass may read and do beside its node: the whole schema, the record, the walk. */
export interface ViewContext {
  /** The origin's schema, which local `$ref`s point into. */
  readonly root: Schema;
  readonly applied: RuleList;
  readonly dropped: Set<string>;
  /** Nodes viewed so far, against `MAX_NODES`. */
  readonly nodes: number;
  /**
   * What the view holds beyond the schema's own (refs.ts): nodes viewed inside inlined `$ref`s,
   * and a node for each `CHARS_PER_NODE` characters of what each inlined `$ref` points at.
   */
  inlined: number;
  /** What inlining `target` adds to `inlined` beside its nodes: its text's weight (`CHARS_PER_NODE`). */
  textWeight(target: Schema): number;
  /** Nodes it may inline from `$ref`s before the rest are cut (a listing's bound, toolmap/schema-views.ts). */
  readonly inlineRoom: number;
  /** Views `node` at `at`: for a pass that puts a new schema where the node was. */
  view(node: unknown, at: At): unknown;
  /** A schema asking for the value as JSON text (way-back.ts reads it back). */
  textSchema(schema: Schema, note: string): Schema;
  /** `to` stands where `from` did: if `from` asked for JSON text, so does `to`. */
  keepAsText(from: unknown, to: Schema): void;
  /** Whether `node` asks for the value as JSON text (`textSchema`, `keepAsText`). */
  asksForText(node: unknown): boolean;
  /**
   * Whether a `leave` pass may change `value` in place instead of copying it: the walk copied
   * it for this view (the node's `properties`, or one of their schemas) and nothing else holds it.
   */
  owns(value: unknown): boolean;
  /** `node` takes `null` only because the view made its property required: `null` there means "left out". */
  nullMeansAbsent(node: Schema): void;
  /** The root's properties a pass renamed, by the origin's name (passes/property-keys.ts). */
  keysRenamed(renamed: ReadonlyMap<string, string>): void;
  /** A pass put one value in several places: the walk's count of the view's sizes no longer holds (sizes.ts). */
  uncount(): void;
  /**
   * `value` as a note or a string enum writes it: JSON text, as the origin's schema wrote it
   * (`9007199254740993`, not the double's `…992`), by its place where it is `holder[key]`.
   */
  describe(value: unknown, holder?: object, key?: string): string;
}

/**
 * One rule of a view. `enter` passes run on a node before its children are
 * viewed, `leave` passes after; `needed` is read-only, and a node no pass
 * needs is not copied.
 */
export interface Pass {
  readonly phase: "enter" | "leave";
  /**
   * What `needed` reads: a node with none of it does not need the pass, and
   * is not asked (gate.ts: a node's keywords, and `type:<name>`, `type:unknown`,
   * `type:list`, `type:none` for what its `type` names). With neither this
   * nor `allows`, every node is asked.
   */
  readonly reads?: readonly string[];
  /**
   * Keywords a node may have without needing the pass: any other is a reason
   * to ask it (subset.ts), as is a feature of `reads`.
   */
  readonly allows?: ReadonlySet<string>;
  needed(node: Schema, at: At): boolean;
  /** Applies the rule to the node's copy; a value other than the copy replaces the node. */
  apply(node: Schema, at: At, view: ViewContext): unknown;
}

/** A rule that applies to the root alone, before anything else. */
export interface RootPass {
  needed(root: Schema): boolean;
  apply(root: Schema, view: ViewContext): Schema;
}

/** A profile's view of schemas: its passes, in order. */
export interface ViewPasses {
  readonly root: readonly RootPass[];
  readonly nodes: readonly Pass[];
  /**
   * Keywords the profile's view keeps (its provider's subset), with those a
   * pass reads before it drops them; a node's copy takes only these, and the
   * subset pass says which others it left out. `undefined`: every keyword.
   */
  readonly copies?: ReadonlySet<string>;
  /** Whether `$defs` and `definitions` are viewed in place (a profile that inlines `$ref`s drops them). */
  readonly viewsDefinitions: boolean;
  /**
   * How a value asked for as JSON text that may be null says so: `nullable:
   * true` (OpenAPI), a type `["string", "null"]`, or not at all (a profile
   * that says nothing of null).
   */
  readonly textNull: "nullable" | "type" | "omit";
  /** Levels a view may nest before the rest is asked for as JSON text (`MAX_DEPTH` unless lower). */
  readonly maxDepth?: number;
  /**
   * Why a finished view is beyond what the provider accepts (sizes the passes cannot bring
   * down), with what the walk counted of it as it made it (sizes.ts).
   */
  unfit?(schema: unknown, counted: ViewSizes): string | undefined;
}

/**
 * A view holds at most this many nodes; past half of it, or once it has inlined as much
 * (`ViewContext.inlined`), `$ref`s are cut instead of inlined.
 */
export const MAX_NODES = 5_000;
/**
 * Characters of what a `$ref` points at that weigh as one node inlined: each time it is
 * inlined, what the view writes of its values is written anew (a `default` or an `enum` in
 * words, a description with a note after it), whatever its nodes. A node of a view weighs
 * some 335 bytes; a character so written at most some 6 (an `enum` of numbers as strings).
 */
export const CHARS_PER_NODE = 64;
/** A node deeper than this is asked for as JSON text. */
export const MAX_DEPTH = 32;
