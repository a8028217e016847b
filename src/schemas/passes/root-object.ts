/**
 * The root is one object: `type: "object"`, a root-level `anyOf`, `oneOf` or
 * `allOf` merged into it (merge-branches.ts). Every provider but plain MCP
 * needs it (providers/openai.ts, anthropic.ts, bedrock.ts, gemini.ts).
 */

import { typesOf } from "../keywords";
import { mergeBranches } from "../merge-branches";
import type { RootPass } from "../pass";

const COMPOSITIONS = ["allOf", "anyOf", "oneOf"] as const;

export const rootObject: RootPass = {
  needed: (root) => {
    const types = typesOf(root);
    if (types?.length !== 1 || types[0] !== "object") return true;
    return COMPOSITIONS.some((k) => Array.isArray(root[k]) && (root[k] as unknown[]).length > 0);
  },
  apply: (schema, view) => {
    let result = schema;
    for (const keyword of COMPOSITIONS) {
      const branches = result[keyword];
      if (!Array.isArray(branches) || branches.length === 0) continue;
      result = mergeBranches(result, keyword, branches, view.root);
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
