/**
 * Which of a profile's passes a node may need, from one read of its keywords
 * (walk.ts). Each pass names what its `needed` reads (`Pass.reads`): a node
 * with none of it is not asked, as the answer would be `false`. Most nodes
 * of a listing are a `type` and a `description`, and a profile's passes are
 * a dozen questions each; the gate asks the few that can be yes.
 *
 * A node's features are its keywords, and what its `type` names:
 * `type:<name>` for each type it names (`type:array`, `type:null`, …),
 * `type:list` where it is a list, `type:none` where it names none (no `type`,
 * or one that is neither a string nor a list: `typesOf` is `undefined`). The
 * gate is read again after a pass changed the node; a copy that left keywords
 * out (`ViewPasses.copies`) has fewer, so the features read before still
 * hold all of them.
 */
import type { Schema } from "../args/json-schema";
import { CHILDREN } from "./keywords";
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
/** The feature of a `type` that names `name`, alone or in a list. */
export const typeNamed = (name: string) => `type:${name}`;

/** A profile's node passes in the order they run, each phase with the features it reads. */
export interface Gate {
  readonly enter: readonly Pass[];
  readonly enterReads: readonly number[];
  readonly leave: readonly Pass[];
  readonly leaveReads: readonly number[];
  /** What a node is made of, as the bits the passes' `reads` are. */
  features(node: Schema): number;
}

const gates = new WeakMap<ViewPasses, Gate>();

/** The gate of a profile's view, made once per profile. */
export function gateOf(passes: ViewPasses): Gate {
  let gate = gates.get(passes);
  if (gate === undefined) {
    gate = makeGate(passes.nodes);
    gates.set(passes, gate);
  }
  return gate;
}

function makeGate(passes: readonly Pass[]): Gate {
  const bitOf = new Map<string, number>();
  for (const feature of passes.flatMap((pass) => pass.reads ?? [])) {
    if (!bitOf.has(feature)) bitOf.set(feature, 1 << (FIRST_BIT + (bitOf.size % BITS)));
  }
  const readsOf = (pass: Pass) =>
    pass.reads === undefined
      ? ANY
      : pass.reads.reduce((bits, feature) => bits | (bitOf.get(feature) as number), 0);
  // One lookup per keyword of a node: its own bit, whether it holds schemas, whether it is `type`.
  const keywordBits = new Map<string, number>();
  for (const [feature, bit] of bitOf) keywordBits.set(feature, bit);
  for (const keyword of CHILDREN.keys())
    keywordBits.set(keyword, (keywordBits.get(keyword) ?? 0) | HAS_CHILDREN);
  keywordBits.set("type", (keywordBits.get("type") ?? 0) | TYPED);
  const typeBits = new Map<unknown, number>();
  for (const [feature, bit] of bitOf)
    if (feature.startsWith("type:")) typeBits.set(feature.slice(5), bit);
  const list = bitOf.get(TYPE_LIST) ?? 0;
  const untyped = bitOf.get(UNTYPED) ?? 0;

  const enter = passes.filter((pass) => pass.phase === "enter");
  const leave = passes.filter((pass) => pass.phase === "leave");
  return {
    enter,
    enterReads: enter.map(readsOf),
    leave,
    leaveReads: leave.map(readsOf),
    features(node) {
      let found = ANY;
      // Inherited keywords too, unlike the passes: more features only ask more.
      for (const keyword in node) found |= keywordBits.get(keyword) ?? 0;
      if ((found & TYPED) === 0) return found | untyped;
      const type = node.type;
      if (typeof type === "string") return found | (typeBits.get(type) ?? 0);
      if (!Array.isArray(type)) return found | untyped;
      found |= list;
      for (const name of type) found |= typeBits.get(name) ?? 0;
      return found;
    },
  };
}
