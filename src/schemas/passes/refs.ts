/**
 * A local `$ref` replaced by what it points at, its siblings kept beside it,
 * then viewed in turn (providers/gemini.ts: no `$ref`). A cycle past
 * `MAX_REF_DEPTH`, a reference inlined inside `MAX_DEPTH` others, one that
 * does not resolve, or a view grown too large (or past its listing's room for
 * inlined nodes) asks for the value as JSON text instead.
 */
import { refTarget } from "../../args/json-schema";
import { isPlainObject } from "../../json";
import { MAX_DEPTH, MAX_NODES, type Pass } from "../pass";

/** How many times one `$ref` may be inlined inside itself before the rest is asked for as text. */
const MAX_REF_DEPTH = 2;

export const refsInlined: Pass = {
  phase: "enter",
  reads: ["$ref"],
  needed: (node) => typeof node.$ref === "string",
  apply: (node, at, view) => {
    const { $ref: ref, ...siblings } = node as typeof node & { $ref: string };
    const target = ref.startsWith("#") ? refTarget(ref, view.root) : undefined;
    const repeats = at.refs.filter((seen) => seen === ref).length;
    // Inlined inside `MAX_DEPTH` others (a chain of `$ref`s to `$ref`s takes no level of its
    // own, but a stack frame each): cut, however many are repeats.
    const deep = at.refs.length >= MAX_DEPTH;
    const full = view.nodes > MAX_NODES / 2 || view.inlined >= view.inlineRoom;
    if (!isPlainObject(target) || repeats >= MAX_REF_DEPTH || deep || full) {
      view.applied.add("ref_cycle_cut");
      return view.textSchema(siblings, `A ${ref.split("/").pop() || "value"}, as JSON text.`);
    }
    view.applied.add("refs_inlined");
    const before = view.nodes;
    const inlined = view.view({ ...target, ...siblings }, { ...at, refs: [...at.refs, ref] });
    // Counted once, where the outermost `$ref` is inlined: nodes inside it are among its own.
    if (at.refs.length === 0) view.inlined += view.nodes - before;
    return inlined;
  },
};
