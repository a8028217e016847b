/**
 * Arrays name their `items`, objects their `properties` (providers/openai.ts:
 * `array schema missing items`, `object schema missing properties`). Where a
 * provider cannot describe a value at all (providers/gemini.ts: an open
 * object, a value of any type), it is asked for as JSON text (`as-text`),
 * which way-back.ts parses again on the way to the origin; an `enum` there
 * has its values said in words.
 */
import type { Schema } from "../../args/json-schema";
import { isPlainObject } from "../../json";
import { typeNamed, UNTYPED } from "../gate";
import { hasType, namesTypes, typesOf } from "../keywords";
import type { Pass, ViewContext } from "../pass";

/** What a value asked for as text is told: an `enum`'s values, said in words, or `note`. */
function withValues(schema: Schema, note: string, view: ViewContext): string {
  const values = schema.enum;
  if (!Array.isArray(values)) return note;
  const said = values.map((value, index) => view.describe(value, values, String(index)));
  return `One of ${said.join(", ")}, as JSON text.`;
}

export function explicitShapes(open: "empty" | "as-text"): Pass {
  const asText = open === "as-text";
  return {
    phase: "leave",
    // A value of any type is asked for as text (`as-text`): then also a node that names none.
    // A tuple's `prefixItems` too (`as-text`: the profiles whose subset has no `prefixItems`).
    reads: [
      "items",
      typeNamed("array"),
      typeNamed("object"),
      ...(asText ? [UNTYPED, "prefixItems"] : []),
    ],
    needed: (node, at) => {
      if (Array.isArray(node.items)) return true;
      if (asText && Array.isArray(node.prefixItems)) return true;
      if (hasType(node, "array") && !isPlainObject(node.items)) return true;
      if (at.root) return false;
      const properties = node.properties;
      if (hasType(node, "object")) {
        if (!isPlainObject(properties)) return true;
        if (asText && Object.keys(properties).length === 0) return true;
      }
      return asText && !namesTypes(node) && !Array.isArray(node.anyOf);
    },
    apply: (schema, at, view) => {
      const types = typesOf(schema);
      const prefix = asText && Array.isArray(schema.prefixItems) ? schema.prefixItems : undefined;
      // A draft-07 tuple stands for an array whether or not the node says so.
      if (
        Array.isArray(schema.items) ||
        prefix !== undefined ||
        (types?.includes("array") && !isPlainObject(schema.items))
      ) {
        // A tuple (draft-07's `items: […]`, or 2020-12's `prefixItems` where it cannot stay):
        // each position's schema allowed at every position, and the schema of the items after
        // them (draft-07's `additionalItems`, 2020-12's `items`) beside them, which alone would
        // allow no position's values; validation keeps the order.
        const child = { ...at, root: false, depth: at.depth + 1, byProperties: false };
        const rest = Array.isArray(schema.items) ? schema.additionalItems : schema.items;
        const tuple = [
          ...(Array.isArray(schema.items)
            ? schema.items.map((item) => view.view(item, child))
            : (prefix ?? [])),
          ...(!isPlainObject(rest)
            ? []
            : Array.isArray(schema.items)
              ? [view.view(rest, child)]
              : [rest]),
        ];
        if (tuple.length > 0) {
          schema.items = tuple.length === 1 ? tuple[0] : { anyOf: tuple };
          view.applied.add("tuple_as_items");
        } else {
          // As text, each item is read back as the value it writes (way-back.ts), as any text node is.
          schema.items = asText ? view.textSchema({}, "Each item, as text.") : {};
          view.applied.add("array_items");
        }
      }
      if (at.root) return schema;
      const properties = schema.properties;
      const isOpen = !isPlainObject(properties) || Object.keys(properties).length === 0;
      if (types?.includes("object") && isOpen) {
        if (asText) {
          view.applied.add("object_as_text");
          return view.textSchema(schema, withValues(schema, "A JSON object, as text.", view));
        }
        if (!isPlainObject(properties)) {
          schema.properties = {};
          view.applied.add("object_properties");
        }
      }
      if (asText && types === undefined && !Array.isArray(schema.anyOf)) {
        view.applied.add("value_as_text");
        return view.textSchema(schema, withValues(schema, "Any JSON value, as text.", view));
      }
      return schema;
    },
  };
}
