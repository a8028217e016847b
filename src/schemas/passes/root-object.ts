/**
 * The root is one object: `type: "object"`, a root-level `anyOf`, `oneOf` or
 * `allOf` merged into it (merge-branches.ts). Every provider but plain MCP
 * needs it (providers/openai.ts, anthropic.ts, bedrock.ts, gemini.ts).
 *
 * A root `$ref` is one more `allOf` branch: Go's invopop/jsonschema writes
 * every input as `{"$ref": "#/$defs/Args", "$defs": …}`, zod-to-json-schema
 * does when given a name, and the model must see `Args`'s properties, not an
 * empty object. One that points at nothing, back at the root or outside the
 * schema adds nothing: what the root says beside it stays. So does nothing
 * that would let the root be other than one object (`nullable`, `enum`,
 * `const`): the arguments are checked against the origin's schema on the way
 * back.
 */

import { refTarget } from "../../args/schema-reading";
import { ownKey as hasOwnKey, isPlainObject } from "../../json";
import { INDEXED, keywordIndex } from "../keyword-index";
import { typesOf } from "../keywords";
import { MAX_MERGES, mergeBranches } from "../merge-branches";
import type { RootPass } from "../pass";

const COMPOSITIONS = ["allOf", "anyOf", "oneOf"] as const;
/** What would let the root be other than one object: a tool's arguments always are one. */
const NOT_AN_OBJECT = ["nullable", "enum", "const"] as const;
/** By index (keyword-index.ts): whether a keyword may call for the pass beside `type: "object"`. */
const RESHAPING = INDEXED.map((keyword) =>
  ["$ref", ...COMPOSITIONS, ...NOT_AN_OBJECT].includes(keyword),
);

// A constant of this module, which V8 folds into the `for…in` below (json.ts, `ownKey`).
const ownKey = hasOwnKey;

/** Whether the root's `keyword` (one of `RESHAPING`) calls for the pass. */
function reshapes(root: Record<string, unknown>, keyword: string): boolean {
  if (keyword === "$ref") return typeof root.$ref === "string";
  if ((NOT_AN_OBJECT as readonly string[]).includes(keyword)) return true;
  return Array.isArray(root[keyword]);
}

function compositionIn(root: Record<string, unknown>) {
  for (const keyword of COMPOSITIONS) if (Array.isArray(root[keyword])) return keyword;
  return undefined;
}

export const rootObject: RootPass = {
  needed: (root) => {
    if (root.type !== "object") {
      const types = typesOf(root);
      if (types?.length !== 1 || types[0] !== "object") return true;
    }
    // The root's own keywords read once, each looked up by its index, not each of the lists'
    // keywords looked up in the root in turn: every view asks it.
    for (const keyword in root) {
      if (!ownKey.call(root, keyword)) continue;
      const index = keywordIndex(keyword);
      if (index >= 0 && RESHAPING[index] && reshapes(root, keyword)) return true;
    }
    return false;
  },
  apply: (schema, view) => {
    let result = schema;
    if (typeof result.$ref === "string") {
      const { $ref, ...rest } = result;
      result = rest;
      // What it points at, one hop: a chain that leads nowhere still says what each hop says.
      const target = $ref.startsWith("#") ? refTarget($ref, view.root) : undefined;
      if (!isPlainObject(target) || target === view.root) view.dropped.add("$ref");
      else {
        result.allOf = [{ $ref }, ...(Array.isArray(rest.allOf) ? rest.allOf : [])];
        view.applied.add("refs_inlined");
      }
    }
    // A branch's own composition (a `$ref`'s target may have one) merges in the next round;
    // one still there after `MAX_MERGES` (a branch that is the root again) is left out.
    let rounds = 0;
    for (let keyword = compositionIn(result); keyword; keyword = compositionIn(result)) {
      if (rounds++ < MAX_MERGES) {
        result = mergeBranches(result, keyword, result[keyword] as unknown[], view.root);
        view.applied.add("root_composition");
      } else {
        delete result[keyword];
        view.dropped.add(keyword);
      }
    }
    for (const keyword of NOT_AN_OBJECT) {
      if (!Object.hasOwn(result, keyword)) continue;
      delete result[keyword];
      view.dropped.add(keyword);
    }
    const types = typesOf(result);
    if (types?.length !== 1 || types[0] !== "object") {
      result.type = "object";
      view.applied.add("root_type");
    }
    return result;
  },
};
