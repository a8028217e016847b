/**
 * The model-facing view of a tool's `inputSchema` under a profile: a schema
 * the client's LLM provider accepts, as faithful to the origin's as the
 * provider's rules allow (docs/schemas.md). Pure; never throws, never mutates
 * its input.
 *
 * A profile's view is a list of passes (providers/*.ts), each one rule
 * (passes/*.ts), run by one walk (walk.ts). Schema keywords change, and a
 * name of the root's properties only where the provider refuses it
 * (passes/property-keys.ts), the call's written back as the origin names it
 * (way-back.ts); and its root is one MCP's clients take, in every profile
 * (protocol/tool-shape.ts `shapedRoot`). Lossless where possible; where a keyword must go
 * or be widened, the constraint moves into the `description` in words, and
 * validation against the origin's schema on the way back (args/) checks it.
 */
import { isPlainObject } from "../json";
import { shapedRoot } from "../protocol/tool-shape";
import type { NodeSet } from "./node-set";
import type { SchemaRule, ViewPasses } from "./pass";
import { SchemaWalk } from "./walk";

export type { SchemaRule } from "./pass";

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
  /** The schemas inside `schema` where `null` means "left out" (way-back.ts leaves the key out). */
  absentNulls: NodeSet;
  /** The origin's name of each root property the view renamed, by the view's name; absent where none. */
  keys?: ReadonlyMap<string, string>;
  /** Why the view is still beyond what the provider accepts, when it is (a size no pass brings down). */
  unfit?: string;
  /**
   * Nodes it holds inlined from `$ref`s (and written in an `allOf`'s
   * combinations of forms, passes/all-of.ts), and one for each
   * `CHARS_PER_NODE` characters of what they point at (of each form written
   * again) (about `MAX_NODES` at most): a schema of a few hundred characters
   * may be viewed as thousands of nodes, or as a value of its own written out
   * a thousand times, which isolate memory weighs (toolmap/isolate-memory.ts).
   */
  inlined: number;
}

/** Whether a profile's passes change nothing: its view is the schema itself. */
export function changesNothing(passes: ViewPasses): boolean {
  return passes.root.length === 0 && passes.nodes.length === 0;
}

/**
 * The schema a provider whose view is `passes` accepts, for the origin's
 * `inputSchema`; inlining at most `inlineRoom` nodes from `$ref`s (about,
 * the last inlined may pass it), the rest asked for as JSON text.
 */
export function schemaView(
  original: unknown,
  passes: ViewPasses,
  inlineRoom = Number.POSITIVE_INFINITY,
): SchemaView {
  const walk = new SchemaWalk(passes, isPlainObject(original) ? original : {}, inlineRoom);
  const walked = walk.run();
  // Last, in every profile: the root as MCP's clients take a tool's input schema, which they
  // refuse with the whole listing otherwise (protocol/tool-shape.ts).
  const schema = isPlainObject(walked) ? shapedRoot(walked) : walked;
  if (schema !== walked) walk.applied.add("mcp_root");
  // No pass needed anywhere: the view is the origin's own schema (no node was copied).
  if (schema === original) {
    return {
      schema: original,
      differs: false,
      rules: [],
      dropped: [],
      asText: walk.textNodes,
      absentNulls: walk.absentNulls,
      inlined: 0,
    };
  }
  const unfit = walk.sizes === undefined ? undefined : passes.unfit?.(schema, walk.sizes);
  const view: SchemaView = {
    schema,
    // Every change is a rule applied or a keyword left out: one definition.
    differs: walk.applied.size > 0 || walk.droppedAny,
    rules: walk.applied.toList(),
    dropped: walk.droppedAny ? [...walk.dropped].sort() : [],
    asText: walk.textNodes,
    absentNulls: walk.absentNulls,
    inlined: walk.inlined,
  };
  if (unfit !== undefined) view.unfit = unfit;
  if (walk.keys !== undefined) view.keys = walk.keys;
  return view;
}
