/**
 * The root is one object: `type: "object"`, a root-level `anyOf`, `oneOf` or
 * `allOf` merged into it (merge-branches.ts). Every provider but plain MCP
 * needs it (providers/openai.ts, anthropic.ts, bedrock.ts, gemini.ts).
 *
 * A root `$ref` is one more `allOf` branch: Go's invopop/jsonschema writes
 * every input as `{"$ref": "#/$defs/Args", "$defs": …}`, zod-to-json-schema
 * does when given a name, and the model must see `Args`'s properties, not an
 * empty object. One that points at nothing, back at the root or outside the
 * schema adds nothing: what the root says beside it stays.
 */

import { resolve } from "../../args/json-schema";
import { typesOf } from "../keywords";
import { MAX_MERGES, mergeBranches } from "../merge-branches";
import type { RootPass } from "../pass";

const COMPOSITIONS = ["allOf", "anyOf", "oneOf"] as const;

const compositionIn = (root: Record<string, unknown>) =>
  COMPOSITIONS.find((keyword) => Array.isArray(root[keyword]));

export const rootObject: RootPass = {
  needed: (root) => {
    const types = typesOf(root);
    if (types?.length !== 1 || types[0] !== "object") return true;
    return typeof root.$ref === "string" || compositionIn(root) !== undefined;
  },
  apply: (schema, view) => {
    let result = schema;
    if (typeof result.$ref === "string") {
      const { $ref, ...rest } = result;
      result = rest;
      if (!$ref.startsWith("#") || !resolve({ $ref }, view.root)) view.dropped.add("$ref");
      else {
        result.allOf = [{ $ref }, ...(Array.isArray(rest.allOf) ? rest.allOf : [])];
        view.applied.add("refs_inlined");
      }
    }
    // A branch's own composition (a `$ref`'s target may have one) merges in the next round.
    for (let round = 0; round < MAX_MERGES; round++) {
      const keyword = compositionIn(result);
      if (keyword === undefined) break;
      result = mergeBranches(result, keyword, result[keyword] as unknown[], view.root);
      view.applied.add("root_composition");
    }
    const types = typesOf(result);
    if (types?.length !== 1 || types[0] !== "object") {
      result.type = "object";
      view.applied.add("root_type");
    }
    return result;
  },
};
