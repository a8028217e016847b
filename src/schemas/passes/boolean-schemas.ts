/**
 * `true` and `false` as schemas, where the provider takes only objects
 * (providers/gemini.ts: each schema is a `Schema` message; strict mode): `true`
 * (any value) becomes `{}`, which the view then describes as it describes any
 * value. A property or an `anyOf`/`oneOf` branch that is `false` (no value
 * fits) is left out, as the model could send nothing there, and so is an
 * `items: false` after a tuple's `prefixItems` (no item follows them);
 * anywhere else `false` becomes `{}` as well, and the origin's own checks
 * refuse what it refuses.
 */
import { isPlainObject, setOwn } from "../../json";
import { SCHEMA_LISTS } from "../keywords";
import type { Pass } from "../pass";

const isBoolean = (value: unknown) => typeof value === "boolean";
/** Lists where a `false` branch can be left out: one of the others must fit. */
const ALTERNATIVES = new Set(["anyOf", "oneOf"]);

const holdsBoolean = (list: unknown) => Array.isArray(list) && list.some(isBoolean);

function hasBooleanProperty(properties: unknown): boolean {
  if (!isPlainObject(properties)) return false;
  for (const name in properties) if (isBoolean(properties[name])) return true;
  return false;
}

export const booleanSchemas: Pass = {
  phase: "enter",
  reads: ["items", "properties", ...SCHEMA_LISTS],
  needed: (node) => {
    // `items` a list is a draft-07 tuple, which explicit-shapes.ts makes an `anyOf` of.
    if (isBoolean(node.items) || holdsBoolean(node.items) || hasBooleanProperty(node.properties))
      return true;
    // `SCHEMA_LISTS` by name, not looked up from the list in turn: each lookup by a name that
    // varies cost more than this pass's other questions together (schema-passes.test.ts holds
    // the names to the list).
    const { anyOf, oneOf, allOf, prefixItems } = node;
    return (
      holdsBoolean(anyOf) || holdsBoolean(oneOf) || holdsBoolean(allOf) || holdsBoolean(prefixItems)
    );
  },
  apply: (schema, _at, view) => {
    if (hasBooleanProperty(schema.properties)) {
      const properties: Record<string, unknown> = {};
      for (const [name, child] of Object.entries(schema.properties as Record<string, unknown>)) {
        if (child !== false) setOwn(properties, name, child === true ? {} : child);
      }
      schema.properties = properties;
    }
    for (const keyword of SCHEMA_LISTS) {
      const list = schema[keyword];
      if (!Array.isArray(list) || !list.some(isBoolean)) continue;
      const kept = ALTERNATIVES.has(keyword) ? list.filter((branch) => branch !== false) : list;
      const branches = kept.map((branch) => (isBoolean(branch) ? {} : branch));
      schema[keyword] = branches.length > 0 ? branches : [{}];
    }
    // Beside a tuple, `items: false` says no item follows its positions: there is nothing to ask for.
    if (schema.items === false && Array.isArray(schema.prefixItems)) delete schema.items;
    else if (isBoolean(schema.items)) schema.items = {};
    else if (Array.isArray(schema.items) && schema.items.some(isBoolean))
      schema.items = schema.items.map((item) => (isBoolean(item) ? {} : item));
    view.applied.add("boolean_schemas");
    return schema;
  },
};
