/**
 * A local `$ref` replaced by what it points at, its siblings kept beside it,
 * then viewed in turn (providers/gemini.ts: no `$ref`). A cycle past
 * `MAX_REF_DEPTH`, a reference inlined inside `MAX_DEPTH` others, one that
 * does not resolve, or a view grown too large (or past its listing's room for
 * inlined nodes, its text's weight counted among them) asks for the value as
 * JSON text instead. An `allOf`'s `$ref` branches are inlined within the same
 * bounds, and counted alike (all-of.ts).
 */
import { NO_CONSTRAINT, refTarget, type Schema } from "../../args/schema-reading";
import { isPlainObject, writtenAsIn } from "../../json";
import { type At, MAX_DEPTH, MAX_NODES, type Pass, type ViewContext } from "../pass";

/** How many times one `$ref` may be inlined inside itself before the rest is asked for as text. */
const MAX_REF_DEPTH = 2;

/**
 * Whether the view may still write what the origin's schema does not hold (a `$ref`'s target
 * once more, an `allOf`'s forms in each of their combinations, all-of.ts): a view's room is its
 * listing's, and `MAX_NODES` however much room its listing has (a call's).
 */
export const hasRoom = (view: ViewContext) =>
  view.nodes <= MAX_NODES / 2 && view.inlined < Math.min(view.inlineRoom, MAX_NODES);

/** Whether `ref`, which points at `target`, may be inlined at `at`; if not, it is cut. */
export function inlines(ref: string, target: unknown, at: At, view: ViewContext): target is Schema {
  const repeats = at.refs.filter((seen) => seen === ref).length;
  // Inlined inside `MAX_DEPTH` others (a chain of `$ref`s to `$ref`s takes no level of its
  // own, but a stack frame each): cut, however many are repeats.
  const deep = at.refs.length >= MAX_DEPTH;
  return isPlainObject(target) && repeats < MAX_REF_DEPTH && !deep && hasRoom(view);
}

/**
 * Counts `target`'s text, about to be inlined (at any depth: its text holds none of what its
 * own `$ref`s point at): what the view writes of it, anew each time, weighs as its text does,
 * however few its nodes. One tool of 51 KB whose `$ref`s pointed at a `default` of 50 KB was
 * viewed as 48 MiB, of 25 KB at an `enum` of 5,000 numbers as 153 MiB
 * (test/node/schema-views-memory.test.ts).
 */
export function countText(target: Schema, view: ViewContext): void {
  view.inlined += view.textWeight(target);
}

/**
 * `node`, made of what `refs` point at (or of forms written more than once, all-of.ts), viewed
 * inside them; its nodes counted as inlined.
 */
export function viewInlined(node: Schema, refs: readonly string[], at: At, view: ViewContext) {
  const before = view.nodes;
  const inlined = view.view(node, { ...at, refs: [...at.refs, ...refs], inlined: true });
  // Counted once, where the outermost is inlined: nodes inside it are among its own.
  if (!at.inlined) view.inlined += view.nodes - before;
  return inlined;
}

/** The schema a `$ref` that is cut stands as, with what `node` says beside it. */
export function refCut(ref: string, node: Schema, view: ViewContext): Schema {
  view.applied.add("ref_cycle_cut");
  return view.textSchema(node, `A ${ref.split("/").pop() || "value"}, as JSON text.`);
}

export const refsInlined: Pass = {
  phase: "enter",
  reads: ["$ref"],
  needed: (node) => typeof node.$ref === "string",
  apply: (node, at, view) => {
    const { $ref: ref, ...siblings } = node as typeof node & { $ref: string };
    const target = ref.startsWith("#") ? refTarget(ref, view.root) : undefined;
    // A keyword both say applies twice (2020-12): the sibling's `properties` taken for the
    // target's lost what the target declared. Both are merged as an `allOf`'s (all-of.ts);
    // words beside a `$ref` (`NO_CONSTRAINT`) are the node's own.
    if (
      isPlainObject(target) &&
      Object.keys(siblings).some((k) => !NO_CONSTRAINT.has(k) && Object.hasOwn(target, k))
    ) {
      const allOf = [{ $ref: ref }, ...(Array.isArray(siblings.allOf) ? siblings.allOf : [])];
      return view.view(writtenAsIn({ ...siblings, allOf }, node), at);
    }
    if (!inlines(ref, target, at, view)) return refCut(ref, siblings, view);
    countText(target, view);
    view.applied.add("refs_inlined");
    // The target's numbers and the node's keep the texts they were read from.
    const inlined = writtenAsIn(writtenAsIn({ ...target, ...siblings }, node), target);
    return viewInlined(inlined, [ref], at, view);
  },
};
