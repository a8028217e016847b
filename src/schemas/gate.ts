/**
 * Which of a profile's passes a node may need, from one read of its keywords
 * (walk.ts). Each pass says what its `needed` reads (`Pass.reads`, and
 * `Pass.allows` for a pass that any other keyword calls for): a node with
 * none of it is not asked, as the answer would be `false`. Most nodes of a
 * listing are a `type` and a `description`, and a profile's passes are a
 * dozen questions each; the gate asks the few that can be yes.
 *
 * A node's features are its keywords, and what its `type` names:
 * `type:<name>` for each of the seven types it names (`type:array`,
 * `type:null`, …), `type:unknown` for any other name, `type:list` where it is
 * a list, `type:none` where it names none (no `type`, or one that is neither a
 * string nor a list: `typesOf` is `undefined`). The gate is read again after
 * a pass changed the node; a copy that left keywords out
 * (`ViewPasses.copies`) has fewer, so the features read before still hold all
 * of them.
 */
import type { Schema } from "../args/json-schema";
import { INDEXED, keywordIndex, typeIndex } from "./keyword-index";
import { CHILDREN, TYPES } from "./keywords";
import type { Pass, ViewPasses } from "./pass";

/** Every node has it: a pass that names nothing to read is asked of every node. */
const ANY = 1;
/** The node has a keyword whose value is a schema, a list or a map of them (`CHILDREN`). */
export const HAS_CHILDREN = 2;
/** The node has a `type`: what it names is read apart. */
const TYPED = 4;
const FIRST_BIT = 3;
/** Features past 31 bits share one (a collision only asks a pass that need not be asked). */
const BITS = 31 - FIRST_BIT;

export const TYPE_LIST = "type:list";
export const UNTYPED = "type:none";
export const UNKNOWN_TYPE = "type:unknown";
/** The feature of a `type` that names `name` (one of `TYPES`), alone or in a list. */
export const typeNamed = (name: string) => `type:${name}`;

/**
 * A profile's node passes in the order they run, each phase with the features it reads. One
 * class for every profile, not a closure each: the walk's call of `features` stays one function
 * whichever profiles an isolate views with.
 */
export class Gate {
  readonly enter: readonly Pass[];
  readonly enterReads: readonly number[];
  readonly leave: readonly Pass[];
  readonly leaveReads: readonly number[];
  /**
   * What the passes from each one on read, together: where a node has none of it, no pass left
   * in the phase is asked (a node of a `type` and a `description` is asked one pass, not a dozen).
   */
  readonly enterLater: readonly number[];
  readonly leaveLater: readonly number[];
  // What each keyword says (by its index, keyword-index.ts; one a pass names that has none, from
  // a map), what each type names, and what a node is without a type, with an unknown one, a list.
  private readonly indexedBits: readonly number[];
  private readonly otherBits: ReadonlyMap<string, number>;
  private readonly everywhereOutside: number;
  private readonly typeBits: readonly number[];
  private readonly list: number;
  private readonly untyped: number;
  private readonly unknown: number;

  // By index, whether a node's copy takes the keyword (`ViewPasses.copies`); `undefined`: all.
  private readonly kept: readonly boolean[] | undefined;
  private readonly copies: ReadonlySet<string> | undefined;

  constructor(passes: readonly Pass[], copies?: ReadonlySet<string>) {
    this.copies = copies;
    this.kept = copies === undefined ? undefined : INDEXED.map((keyword) => copies.has(keyword));
    let bits = 0;
    const nextBit = () => 1 << (FIRST_BIT + (bits++ % BITS));
    const bitOf = new Map<string, number>();
    for (const feature of passes.flatMap((pass) => pass.reads ?? [])) {
      if (!bitOf.has(feature)) bitOf.set(feature, nextBit());
    }
    // Each set of allowed keywords: a bit for a node with a keyword outside it.
    const outside = new Map<ReadonlySet<string>, number>();
    for (const pass of passes)
      if (pass.allows !== undefined && !outside.has(pass.allows))
        outside.set(pass.allows, nextBit());
    const readsOf = (pass: Pass) => {
      if (pass.reads === undefined && pass.allows === undefined) return ANY;
      const read = (pass.reads ?? []).reduce((all, feature) => all | (bitOf.get(feature) ?? 0), 0);
      return read | (pass.allows === undefined ? 0 : (outside.get(pass.allows) ?? 0));
    };

    // One lookup per keyword of a node: its own bit, the sets it is outside of, whether it holds
    // schemas, whether it is `type`. A keyword in no table is outside every set.
    let everywhereOutside = 0;
    for (const bit of outside.values()) everywhereOutside |= bit;
    const indexedBits = INDEXED.map(() => everywhereOutside);
    const otherBits = new Map<string, number>();
    const known = new Set([...bitOf.keys(), ...CHILDREN.keys(), "type"]);
    for (const allowed of outside.keys()) for (const keyword of allowed) known.add(keyword);
    for (const keyword of known) {
      let entry = bitOf.get(keyword) ?? 0;
      for (const [allowed, bit] of outside) if (!allowed.has(keyword)) entry |= bit;
      if (CHILDREN.has(keyword)) entry |= HAS_CHILDREN;
      if (keyword === "type") entry |= TYPED;
      const index = keywordIndex(keyword);
      if (index >= 0) indexedBits[index] = entry;
      else otherBits.set(keyword, entry);
    }
    this.indexedBits = indexedBits;
    this.otherBits = otherBits;
    this.everywhereOutside = everywhereOutside;
    this.typeBits = TYPES.map((name) => bitOf.get(typeNamed(name)) ?? 0);
    this.list = bitOf.get(TYPE_LIST) ?? 0;
    this.untyped = bitOf.get(UNTYPED) ?? 0;
    this.unknown = bitOf.get(UNKNOWN_TYPE) ?? 0;

    this.enter = passes.filter((pass) => pass.phase === "enter");
    this.leave = passes.filter((pass) => pass.phase === "leave");
    this.enterReads = this.enter.map(readsOf);
    this.leaveReads = this.leave.map(readsOf);
    this.enterLater = fromEachOn(this.enterReads);
    this.leaveLater = fromEachOn(this.leaveReads);
  }

  /** What a node is made of, as the bits the passes' `reads` are. */
  features(node: Schema): number {
    let found = ANY;
    // Inherited keywords too, unlike the passes: more features only ask more.
    for (const keyword in node) {
      const index = keywordIndex(keyword);
      found |=
        index >= 0
          ? (this.indexedBits[index] as number)
          : (this.otherBits.get(keyword) ?? this.everywhereOutside);
    }
    if ((found & TYPED) === 0) return found | this.untyped;
    const type = node.type;
    if (typeof type === "string") return found | this.typeFeatures(type);
    if (!Array.isArray(type)) return found | this.untyped;
    found |= this.list;
    for (const name of type) found |= this.typeFeatures(name);
    return found;
  }

  /** Whether a node's copy takes `keyword` (`ViewPasses.copies`). */
  keeps(keyword: string): boolean {
    if (this.kept === undefined || this.copies === undefined) return true;
    const index = keywordIndex(keyword);
    return index >= 0 ? (this.kept[index] as boolean) : this.copies.has(keyword);
  }

  private typeFeatures(name: unknown): number {
    const index = typeIndex(name);
    return index >= 0 ? (this.typeBits[index] as number) : this.unknown;
  }
}

const gates = new WeakMap<ViewPasses, Gate>();

/** The gate of a profile's view, made once per profile. */
export function gateOf(passes: ViewPasses): Gate {
  let gate = gates.get(passes);
  if (gate === undefined) {
    gate = new Gate(passes.nodes, passes.copies);
    gates.set(passes, gate);
  }
  return gate;
}

/** For each of `reads`, it and all after it, together. */
function fromEachOn(reads: readonly number[]): number[] {
  const later = [...reads];
  for (let i = later.length - 2; i >= 0; i--)
    later[i] = (later[i] as number) | (later[i + 1] as number);
  return later;
}
