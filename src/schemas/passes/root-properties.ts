/** The root object names its `properties`, if only `{}` (providers/openai.ts, gemini.ts). */
import { isPlainObject } from "../../json";
import type { RootPass } from "../pass";

export const rootProperties: RootPass = {
  needed: (root) => !isPlainObject(root.properties),
  apply: (schema, view) => {
    schema.properties = {};
    view.applied.add("object_properties");
    return schema;
  },
};
