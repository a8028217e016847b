/**
 * The walk that runs a profile's passes (pass.ts) over a schema: the root
 * passes, then at every node the `enter` passes, the children, the `leave`
 * passes. A node is copied at most once, when the first pass it needs runs,
 * and only the keywords the profile keeps are copied (`ViewPasses.copies`);
 * a node no pass needs is the origin's own object. `conforms` is the same walk
 * read-only: no pass needed anywhere.
 *
 * Bounded: at most `MAX_NODES` nodes, `MAX_DEPTH` levels; past either, the
 * value is asked for as JSON text. Keys under `properties` (and `$defs`, …)
 * are names, carried as they are: a property called `type` is data.
 */
import type { Schema } from "../args/json-schema";
import { isPlainObject, setOwn } from "../json";
import { CHILDREN, hasType } from "./keywords";
import { noteOn } from "./notes";
import {
  type At,
  MAX_DEPTH,
  MAX_NODES,
  type Pass,
  type SchemaRule,
  type ViewContext,
  type ViewPasses,
} from "./pass";

const ROOT: At = { root: true, depth: 0, refs: [] };

export class SchemaWalk implements ViewContext {
  readonly applied = new Set<SchemaRule>();
  readonly dropped = new Set<string>();
  readonly textNodes = new Set<object>();
  readonly absentNulls = new Set<object>();
  nodes = 0;
  private readonly enter: readonly Pass[];
  private readonly leave: readonly Pass[];

  constructor(
    private readonly passes: ViewPasses,
    readonly root: Schema,
  ) {
    this.enter = passes.nodes.filter((pass) => pass.phase === "enter");
    this.leave = passes.nodes.filter((pass) => pass.phase === "leave");
  }

  /** The view of the whole schema. */
  run(): unknown {
    let root: Schema = this.root;
    for (const pass of this.passes.root) {
      if (!pass.needed(root)) continue;
      if (root === this.root) root = { ...root };
      root = pass.apply(root, this);
    }
    return this.view(root, ROOT);
  }

  view(input: unknown, at: At): unknown {
    if (!isPlainObject(input)) return input;
    if (++this.nodes > MAX_NODES || at.depth > (this.passes.maxDepth ?? MAX_DEPTH)) {
      this.applied.add("value_as_text");
      return this.textSchema(input, "The value, as JSON text.");
    }
    // The node is copied the first time something changes it (`node === input` until then).
    // Written out at each place, not as a closure: one would be made, and named, for every node.
    let node = input;
    let left: string[] = [];
    for (const pass of this.enter) {
      if (!pass.needed(node, at)) continue;
      if (node === input) [node, left] = this.copy(input);
      const result = pass.apply(node, at, this);
      if (result !== node) return result;
    }
    const child: At = { root: false, depth: at.depth + 1, refs: at.refs };
    for (const keyword in node) {
      const kind = CHILDREN.get(keyword);
      if (kind === undefined || !Object.hasOwn(node, keyword)) continue;
      const value = node[keyword];
      let viewed: unknown = value;
      if (kind === "one") viewed = isPlainObject(value) ? this.view(value, child) : value;
      else if (kind === "list") viewed = Array.isArray(value) ? this.viewList(value, child) : value;
      else if (isPlainObject(value) && (keyword === "properties" || this.passes.viewsDefinitions)) {
        viewed = this.viewEach(value, child);
      }
      if (viewed === value) continue;
      if (node === input) [node, left] = this.copy(input);
      node[keyword] = viewed;
    }
    for (const pass of this.leave) {
      if (!pass.needed(node, at)) continue;
      if (node === input) [node, left] = this.copy(input);
      const result = pass.apply(node, at, this);
      if (result !== node) return result;
    }
    for (const keyword of left) this.dropped.add(keyword);
    return node;
  }

  /** A node's copy, with the keywords the profile keeps; and those it left out. */
  private copy(node: Schema): [Schema, string[]] {
    const keeps = this.passes.copies;
    if (keeps === undefined) return [{ ...node }, []];
    const copy: Schema = {};
    const left: string[] = [];
    for (const keyword in node) {
      if (!Object.hasOwn(node, keyword)) continue;
      if (keeps.has(keyword)) copy[keyword] = node[keyword];
      else left.push(keyword);
    }
    return [copy, left];
  }

  private viewList(list: unknown[], at: At): unknown[] {
    let result = list;
    for (const [index, item] of list.entries()) {
      const viewed = this.view(item, at);
      if (viewed === item) continue;
      if (result === list) result = [...list];
      result[index] = viewed;
    }
    return result;
  }

  /** Each schema of a map (`properties`, `$defs`); a key named `__proto__` stays a key. */
  private viewEach(map: Schema, at: At): Schema {
    let result: Schema | undefined;
    for (const key in map) {
      if (!Object.hasOwn(map, key)) continue;
      const value = map[key];
      const viewed = this.view(value, at);
      if (viewed === value && result === undefined) continue;
      result ??= copyMap(map, key);
      setOwn(result, key, viewed);
    }
    return result ?? map;
  }

  nullMeansAbsent(node: Schema): void {
    this.absentNulls.add(node);
  }

  keepAsText(from: unknown, to: Schema): void {
    if (typeof from === "object" && from !== null && this.textNodes.has(from))
      this.textNodes.add(to);
  }

  textSchema(schema: Schema, note: string): Schema {
    const text: Schema = { type: "string", description: noteOn(schema.description, note) };
    if (typeof schema.title === "string") text.title = schema.title;
    // A value that may be null stays one that may be null (the Go SDK's maps: `["null", "object"]`).
    if (schema.nullable === true || hasType(schema, "null")) {
      if (this.passes.textNull === "nullable") text.nullable = true;
      else if (this.passes.textNull === "type") text.type = ["string", "null"];
    }
    this.textNodes.add(text);
    return text;
  }
}

/** `map`'s entries before `upTo`, as a new map (a key named `__proto__` stays a key). */
function copyMap(map: Schema, upTo: string): Schema {
  const result: Schema = {};
  for (const key in map) {
    if (key === upTo) break;
    if (!Object.hasOwn(map, key)) continue;
    setOwn(result, key, map[key]);
  }
  return result;
}

/** Where a node at each depth is, for the read-only walk (no `$ref` is followed there). */
const DEPTHS: readonly At[] = Array.from({ length: MAX_DEPTH + 2 }, (_, depth) => ({
  root: depth === 0,
  depth,
  refs: [],
}));

/** Whether no pass is needed anywhere in `root`: its view is `root` itself. */
export function conforms(root: Schema, passes: ViewPasses): boolean {
  for (const pass of passes.root) if (pass.needed(root)) return false;
  return conformsAt(root, ROOT, passes, { nodes: 0 });
}

function conformsAt(node: unknown, at: At, passes: ViewPasses, seen: { nodes: number }): boolean {
  if (!isPlainObject(node)) return true;
  if (++seen.nodes > MAX_NODES || at.depth > (passes.maxDepth ?? MAX_DEPTH)) return false;
  for (const pass of passes.nodes) if (pass.needed(node, at)) return false;
  const child = DEPTHS[at.depth + 1] as At;
  for (const keyword in node) {
    const kind = CHILDREN.get(keyword);
    if (kind === undefined || !Object.hasOwn(node, keyword)) continue;
    const value = node[keyword];
    if (kind === "one") {
      if (!conformsAt(value, child, passes, seen)) return false;
    } else if (kind === "list") {
      if (!Array.isArray(value)) continue;
      for (const item of value) if (!conformsAt(item, child, passes, seen)) return false;
    } else if (isPlainObject(value) && (keyword === "properties" || passes.viewsDefinitions)) {
      for (const key in value)
        if (Object.hasOwn(value, key) && !conformsAt(value[key], child, passes, seen)) return false;
    }
  }
  return true;
}
