/** `const` as a one-value `enum` (providers/gemini.ts: no `const`); lossless. */
import type { Pass } from "../pass";

export const constAsEnum: Pass = {
  phase: "enter",
  reads: ["const"],
  needed: (node) => Object.hasOwn(node, "const"),
  apply: (schema, _at, view) => {
    schema.enum = [schema.const];
    delete schema.const;
    view.applied.add("const_as_enum");
    return schema;
  },
};
