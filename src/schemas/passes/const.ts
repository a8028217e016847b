/** `const` as a one-value `enum` (providers/gemini.ts: no `const`); lossless. */
import { writtenAsIn } from "../../json";
import type { Pass } from "../pass";

export const constAsEnum: Pass = {
  phase: "enter",
  reads: ["const"],
  needed: (node) => Object.hasOwn(node, "const"),
  apply: (schema, _at, view) => {
    // Its value written as the origin wrote it (`9007199254740993`, not the double's `…992`).
    schema.enum = writtenAsIn([schema.const], schema, () => "const");
    delete schema.const;
    view.applied.add("const_as_enum");
    return schema;
  },
};
