/**
 * Only the provider's keywords (providers/gemini.ts: `Invalid JSON payload
 * received. Unknown name "…"`): a node's copy took only those and the ones
 * other passes read (walk.ts); `subset` leaves those out too and names every
 * keyword left out, `knownNames` keeps `required` to declared properties
 * (`property is not defined`) and a `type` to the ones the provider knows.
 *
 * Two passes, the first asked only of a node with a keyword the provider
 * does not take (the gate's `allows`): nearly every object has a `required`,
 * and reading all its keywords again for it was a twentieth of
 * `openai-strict`'s views.
 */
import { ownKey as hasOwnKey, isPlainObject } from "../../json";
import { TYPE_LIST, UNKNOWN_TYPE } from "../gate";
import { typeIndex } from "../keyword-index";
import { firstType, namesTypes, typesOf } from "../keywords";
import type { Pass } from "../pass";

// A constant of this module, which V8 folds into the `for…in` below (json.ts, `ownKey`).
const ownKey = hasOwnKey;

export function subset(keywords: ReadonlySet<string>): Pass {
  return {
    phase: "leave",
    allows: keywords,
    needed: (node) => {
      for (const keyword in node) if (!keywords.has(keyword)) return true;
      return false;
    },
    apply: (schema, _at, view) => {
      for (const keyword in schema) {
        if (keywords.has(keyword) || !Object.hasOwn(schema, keyword)) continue;
        delete schema[keyword];
        view.dropped.add(keyword);
      }
      return schema;
    },
  };
}

/**
 * Whether `required` is `properties`' own names in their order, as every object
 * openai-strict closed has it (closed-objects.ts): then each is declared, and
 * none is looked up in turn.
 */
function namesEach(required: unknown[], properties: unknown): boolean {
  if (!isPlainObject(properties)) return false;
  let index = 0;
  for (const name in properties) {
    if (!ownKey.call(properties, name)) continue;
    if (required[index] !== name) return false;
    index++;
  }
  return index === required.length;
}

/** After `subset`: `required` names only declared properties, a `type` only a known type first. */
export const knownNames: Pass = {
  phase: "leave",
  reads: ["required", UNKNOWN_TYPE, TYPE_LIST],
  needed: (node) => {
    const { required, properties } = node;
    if (Array.isArray(required) && !namesEach(required, properties)) {
      for (const name of required) {
        if (typeof name !== "string" || !isPlainObject(properties)) return true;
        if (!Object.hasOwn(properties, name)) return true;
      }
    }
    return namesTypes(node) && typeIndex(firstType(node)) < 0;
  },
  apply: (schema, _at, view) => {
    if (Array.isArray(schema.required)) {
      const declared = isPlainObject(schema.properties) ? schema.properties : {};
      const required = schema.required.filter(
        (name): name is string => typeof name === "string" && Object.hasOwn(declared, name),
      );
      if (required.length < schema.required.length) {
        view.applied.add("required_undeclared_dropped");
        if (required.length > 0) schema.required = required;
        else delete schema.required;
      }
    }
    const types = typesOf(schema);
    if (types && typeIndex(types[0]) < 0) {
      delete schema.type;
      view.dropped.add("type");
    }
    return schema;
  },
};
