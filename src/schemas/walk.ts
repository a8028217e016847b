/**
 * The walk that runs a profile's passes (pass.ts) over a schema: the root
 * passes, then at every node the `enter` passes, the children, the `leave`
 * passes, each asked only where the node has what it reads (gate.ts). A node
 * is copied at most once, when the first pass it needs runs, and only the
 * keywords the profile keeps are copied (`ViewPasses.copies`); a node no pass
 * needs is the origin's own object, and a schema no pass needs anywhere is
 * its own view.
 *
 * As it goes, it counts what its profile limits of a view (sizes.ts), so
 * that the finished view need not be read again to count it.
 *
 * Bounded: at most `MAX_NODES` nodes, `MAX_DEPTH` levels; past either, the
 * value is asked for as JSON text. Keys under `properties` (and `$defs`, …)
 * are names, carried as they are: a property called `type` is data.
 */
import type { Schema } from "../args/json-schema";
import {
  type ExactText,
  exactTextIn,
  ownKey as hasOwnKey,
  isPlainObject,
  mayBeRounded,
  numberText,
  setOwn,
  writtenAsIn,
} from "../json";
import { type Gate, gateOf, HAS_CHILDREN } from "./gate";
import { childrenIn, hasType } from "./keywords";
import { NodeSet } from "./node-set";
import { describeValue, noteOn } from "./notes";
import {
  type At,
  CHARS_PER_NODE,
  MAX_DEPTH,
  MAX_NODES,
  type Pass,
  type ViewContext,
  type ViewPasses,
} from "./pass";
import { RuleList } from "./rule-list";
import { ViewSizes } from "./sizes";

// A constant of this module, which V8 folds into the `for…in`s below (json.ts, `ownKey`).
const ownKey = hasOwnKey;

const ROOT: At = { root: true, depth: 0, refs: [], inlined: false, byProperties: false };
const NONE: ReadonlySet<object> = new Set();
const NO_NODES = new NodeSet([]);
const NO_KEYWORDS: readonly string[] = [];

/**
 * About the length of `value` as JSON text, read no further than `max`: not
 * `JSON.stringify`, as a schema the walk or the operator's rules made may
 * hold one object in several places, which JSON writes out each time
 * (5,000 levels of two, test/unit/rules-in-views.test.ts: 2^5,000
 * characters).
 */
export function textLength(value: unknown, max: number): number {
  let length = 0;
  const pending = [value];
  while (pending.length > 0 && length < max) {
    const item = pending.pop();
    if (typeof item === "string") length += item.length + 2;
    else if (Array.isArray(item)) {
      length += 2;
      for (const element of item) pending.push(element);
    } else if (isPlainObject(item)) {
      length += 2;
      for (const key in item) {
        if (!ownKey.call(item, key)) continue;
        length += key.length + 3;
        pending.push(item[key]);
      }
    } else length += String(item).length;
  }
  return Math.min(length, max);
}

export class SchemaWalk implements ViewContext {
  readonly applied = new RuleList();
  // The keywords the last copy left out (`copy`): a field, not a pair returned for every copy.
  private leftOut: readonly string[] = NO_KEYWORDS;
  private droppedSet: Set<string> | undefined;
  get dropped(): Set<string> {
    this.droppedSet ??= new Set();
    return this.droppedSet;
  }
  get droppedAny(): boolean {
    return this.droppedSet !== undefined && this.droppedSet.size > 0;
  }
  // Made when first needed: few views ask for JSON text or make a property nullable.
  private text: Set<object> | undefined;
  private nulls: object[] | undefined;
  /** The origin's name of each root property the view renamed, by the view's. */
  keys: ReadonlyMap<string, string> | undefined;
  nodes = 0;
  inlined = 0;
  /** What the view holds that its profile limits, counted as it is made (sizes.ts). */
  readonly sizes: ViewSizes | undefined;
  private readonly maxDepth: number;
  private readonly gate: Gate;
  // What this walk made and nothing else holds (`owns`): the last node it copied and returned,
  // the copies in the last map of schemas it copied, and those of the node a pass is leaving.
  private lastCopy: object | undefined;
  private eachCopied: object[] | undefined;
  private ownedMap: object | undefined;
  private ownedValues: object[] | undefined;
  private ownedSet: Set<object> | undefined;
  // Each `$ref` target's weight, read once however many times it is inlined.
  private weights: Map<object, number> | undefined;
  // How the origin's schema wrote its values (`describe`): read when first needed, `null` for none.
  private exact: ExactText | null | undefined;

  constructor(
    private readonly passes: ViewPasses,
    readonly root: Schema,
    readonly inlineRoom = Number.POSITIVE_INFINITY,
  ) {
    this.gate = gateOf(passes);
    this.sizes = passes.unfit === undefined ? undefined : new ViewSizes();
    this.maxDepth = passes.maxDepth ?? MAX_DEPTH;
  }

  /** The view of the whole schema. */
  run(): unknown {
    let root: Schema = this.root;
    for (const pass of this.passes.root) {
      if (!pass.needed(root)) continue;
      if (root === this.root) root = writtenAsIn({ ...root }, root);
      root = pass.apply(root, this);
    }
    return this.view(root, ROOT);
  }

  view(input: unknown, at: At): unknown {
    if (!isPlainObject(input)) return input;
    if (++this.nodes > MAX_NODES || at.depth > this.maxDepth) {
      this.applied.add("value_as_text");
      return this.textSchema(input, "The value, as JSON text.");
    }
    // The node is copied the first time something changes it (`node === input` until then).
    // Written out at each place, not as a closure: one would be made, and named, for every node.
    const { enter, enterReads, enterLater, leave, leaveReads, leaveLater } = this.gate;
    let node = input;
    let left: readonly string[] = NO_KEYWORDS;
    // The node's `properties`, when the walk copied them, and the copies among their schemas.
    let ownedMap: object | undefined;
    let ownedValues: object[] | undefined;
    let features = this.gate.features(input);
    for (let i = 0; i < enter.length; i++) {
      if (((enterLater[i] as number) & features) === 0) break;
      const pass = enter[i] as Pass;
      if (((enterReads[i] as number) & features) === 0 || !pass.needed(node, at)) continue;
      if (node === input) {
        node = this.copy(input);
        left = this.leftOut;
      }
      this.ownedMap = undefined;
      this.ownedValues = undefined;
      this.ownedSet = undefined;
      const result = pass.apply(node, at, this);
      if (result !== node) return result;
      features = this.gate.features(node);
    }
    const values = this.sizes === undefined ? undefined : node.enum;
    if (Array.isArray(values)) this.sizes?.enum(values);
    // Viewing the children changes what they are, not which keywords the node has.
    if ((features & HAS_CHILDREN) !== 0) {
      const child: At = {
        root: false,
        depth: at.depth + 1,
        refs: at.refs,
        inlined: at.inlined,
        byProperties: false,
      };
      // A property of the root, or of a property of it: a `properties` chain (`At.byProperties`).
      const property: At = at.root || at.byProperties ? { ...child, byProperties: true } : child;
      for (const keyword in node) {
        const kind = childrenIn(keyword);
        if (kind === undefined || !ownKey.call(node, keyword)) continue;
        const value = node[keyword];
        let viewed: unknown = value;
        if (kind === "one") viewed = isPlainObject(value) ? this.view(value, child) : value;
        else if (kind === "list")
          viewed = Array.isArray(value) ? this.viewList(value, child) : value;
        else if (
          isPlainObject(value) &&
          (this.passes.viewsDefinitions || (keyword !== "$defs" && keyword !== "definitions"))
        ) {
          viewed =
            keyword === "properties"
              ? this.viewEach(value, property, this.sizes)
              : this.viewEach(value, child, undefined);
          if (keyword === "properties" && viewed !== value) {
            ownedMap = viewed as object;
            ownedValues = this.eachCopied;
          }
        }
        if (viewed === value) continue;
        if (node === input) {
          node = this.copy(input);
          left = this.leftOut;
        }
        node[keyword] = viewed;
      }
    }
    for (let i = 0; i < leave.length; i++) {
      if (((leaveLater[i] as number) & features) === 0) break;
      const pass = leave[i] as Pass;
      if (((leaveReads[i] as number) & features) === 0 || !pass.needed(node, at)) continue;
      if (node === input) {
        node = this.copy(input);
        left = this.leftOut;
      }
      this.ownedMap = ownedMap;
      this.ownedValues = ownedValues;
      this.ownedSet = undefined;
      const result = pass.apply(node, at, this);
      if (result !== node) return result;
      features = this.gate.features(node);
    }
    if (left.length > 0) for (const keyword of left) this.dropped.add(keyword);
    if (node !== input) this.lastCopy = node;
    return node;
  }

  /**
   * A node's copy, with the keywords the profile keeps; those it left out are `leftOut`. Its
   * numbers keep the texts they were read from (json.ts `writtenAsIn`): by value alone, a double
   * the schema also writes another way (`0.0` beside `0`) would be written as `JSON.stringify` does.
   */
  private copy(node: Schema): Schema {
    const keeps = this.passes.copies;
    this.leftOut = NO_KEYWORDS;
    if (keeps === undefined) return writtenAsIn({ ...node }, node);
    const copy: Schema = {};
    let left: string[] | undefined;
    for (const keyword in node) {
      if (!ownKey.call(node, keyword)) continue;
      if (this.gate.keeps(keyword)) copy[keyword] = node[keyword];
      else {
        left ??= [];
        left.push(keyword);
      }
    }
    if (left !== undefined) this.leftOut = left;
    return writtenAsIn(copy, node);
  }

  private viewList(list: unknown[], at: At): unknown[] {
    let result = list;
    for (let index = 0; index < list.length; index++) {
      const item = list[index];
      const viewed = this.view(item, at);
      if (viewed === item) continue;
      if (result === list) result = [...list];
      result[index] = viewed;
    }
    return result;
  }

  /** Each schema of a map (`properties`, `$defs`), its names counted in `sizes`; a key named `__proto__` stays a key. */
  private viewEach(map: Schema, at: At, sizes: ViewSizes | undefined): Schema {
    let result: Schema | undefined;
    let copied: object[] | undefined;
    for (const key in map) {
      if (!ownKey.call(map, key)) continue;
      sizes?.property(key);
      const value = map[key];
      const viewed = this.view(value, at);
      if (viewed === value && result === undefined) continue;
      result ??= copyMap(map, key);
      setOwn(result, key, viewed);
      if (viewed === value || viewed !== this.lastCopy) continue;
      copied ??= [];
      copied.push(viewed as object);
    }
    this.eachCopied = copied;
    return result ?? map;
  }

  /**
   * Whether a `leave` pass may change `value` in place: it is the node's `properties` as the
   * walk copied them, or the walk's copy of one of their schemas, held nowhere else.
   */
  owns(value: unknown): boolean {
    if (value === undefined) return false;
    if (value === this.ownedMap) return true;
    const values = this.ownedValues;
    if (values === undefined) return false;
    // A pass asks once per property: past a few, a set, not a scan of every copy each time (an
    // origin's object of thousands of properties would cost their square).
    if (values.length <= 16) return values.includes(value as object);
    this.ownedSet ??= new Set(values);
    return this.ownedSet.has(value as object);
  }

  textWeight(target: Schema): number {
    this.weights ??= new Map();
    let weight = this.weights.get(target);
    if (weight === undefined) {
      weight = Math.floor(textLength(target, MAX_NODES * CHARS_PER_NODE) / CHARS_PER_NODE);
      this.weights.set(target, weight);
    }
    return weight;
  }

  /** The nodes of the view that ask for JSON text. */
  get textNodes(): ReadonlySet<object> {
    return this.text ?? NONE;
  }

  /** The nodes of the view where `null` means "left out". */
  get absentNulls(): NodeSet {
    return this.nulls === undefined ? NO_NODES : new NodeSet(this.nulls);
  }

  describe(value: unknown, holder?: object, key?: string): string {
    // Most values are written as they were read: only one a double may have rounded is looked up.
    if (!mayBeRounded(value)) return describeValue(value);
    this.exact ??= exactTextIn(this.root) ?? null;
    const exact = this.exact ?? undefined;
    const placed =
      typeof value === "number" && holder !== undefined && key !== undefined
        ? numberText(holder, key, value, exact)
        : undefined;
    return placed ?? describeValue(value, exact);
  }

  uncount(): void {
    if (this.sizes !== undefined) this.sizes.uncounted = true;
  }

  keysRenamed(renamed: ReadonlyMap<string, string>): void {
    this.keys = new Map([...renamed].map(([original, key]) => [key, original]));
  }

  nullMeansAbsent(node: Schema): void {
    this.nulls ??= [];
    this.nulls.push(node);
  }

  keepAsText(from: unknown, to: Schema): void {
    if (typeof from === "object" && from !== null && this.text?.has(from)) this.text.add(to);
  }

  asksForText(node: unknown): boolean {
    return typeof node === "object" && node !== null && this.text?.has(node) === true;
  }

  textSchema(schema: Schema, note: string): Schema {
    const text: Schema = { type: "string", description: noteOn(schema.description, note) };
    if (typeof schema.title === "string") text.title = schema.title;
    // A value that may be null stays one that may be null (the Go SDK's maps: `["null", "object"]`).
    if (schema.nullable === true || hasType(schema, "null")) {
      if (this.passes.textNull === "nullable") text.nullable = true;
      else if (this.passes.textNull === "type") text.type = ["string", "null"];
    }
    this.text ??= new Set();
    this.text.add(text);
    return text;
  }
}

/** `map`'s entries before `upTo`, as a new map (a key named `__proto__` stays a key). */
function copyMap(map: Schema, upTo: string): Schema {
  const result: Schema = {};
  for (const key in map) {
    if (key === upTo) break;
    if (!ownKey.call(map, key)) continue;
    setOwn(result, key, map[key]);
  }
  return result;
}
