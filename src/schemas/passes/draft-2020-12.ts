/**
 * JSON Schema 2020-12 forms for the older drafts' keywords
 * (providers/anthropic.ts): no older `$schema`, exclusive bounds as numbers,
 * tuple `items` as `prefixItems`, OpenAPI `nullable` as a type with `null`.
 * A property so typed loses its `x-mcp-header` after this pass
 * (header-declarations.ts): a client refuses one beside a type list.
 */
import { EXCLUSIVE_BOUNDS, isOlderDraft, typesOf } from "../keywords";
import type { Pass } from "../pass";

export const draft202012: Pass = {
  phase: "enter",
  reads: ["nullable", "$schema", "exclusiveMinimum", "exclusiveMaximum", "items"],
  needed: (node) =>
    node.nullable !== undefined ||
    isOlderDraft(node.$schema) ||
    typeof node.exclusiveMinimum === "boolean" ||
    typeof node.exclusiveMaximum === "boolean" ||
    Array.isArray(node.items),
  apply: (schema, _at, view) => {
    if (schema.nullable !== undefined) {
      const types = typesOf(schema);
      if (schema.nullable === true && types && !types.includes("null")) {
        schema.type = [...types, "null"];
      }
      delete schema.nullable;
      view.applied.add("draft_2020_12");
    }
    if (isOlderDraft(schema.$schema)) {
      delete schema.$schema;
      view.applied.add("draft_2020_12");
    }
    for (const [exclusive, bound] of EXCLUSIVE_BOUNDS) {
      if (typeof schema[exclusive] !== "boolean") continue;
      if (schema[exclusive] === true && schema[bound] !== undefined) {
        schema[exclusive] = schema[bound];
        delete schema[bound];
      } else delete schema[exclusive];
      view.applied.add("draft_2020_12");
    }
    if (Array.isArray(schema.items)) {
      schema.prefixItems = schema.items;
      if (schema.additionalItems !== undefined) schema.items = schema.additionalItems;
      else delete schema.items;
      delete schema.additionalItems;
      view.applied.add("draft_2020_12");
    }
    return schema;
  },
};
