/**
 * What an object says beside its `anyOf` or `oneOf` (`properties`,
 * `required`, …) goes into each form that may be an object, as an `allOf`
 * with it (all-of.ts merges it there, `$ref`s within its bounds): a value
 * matches `{S, anyOf: [B, …]}` where it matches `anyOf: [allOf(S, B), …]`.
 * Left beside the forms, a form that says only what it requires
 * (`{"required": ["a"]}`, "at least one of `a` and `c`") was asked for as
 * JSON text, and the object's own properties were hidden by those of a form
 * that declares some (any-of-alone.ts keeps the branch's own): a model
 * could send neither. A form of another type (`{"type": "string"}`) is left
 * as it is, which an object's keywords say nothing of, unless the node is an
 * object and nothing else: then it takes no value, and is left out (the
 * node's `type` is its forms').
 */
import { resolve } from "../../args/schema-reading";
import { setOwn } from "../../json";
import { isNullSchema, typesOf } from "../keywords";
import type { Pass } from "../pass";

/** What constrains objects alone (keywords.ts, `ONLY_FOR_TYPE`). */
const OBJECT_KEYWORDS = [
  "properties",
  "required",
  "additionalProperties",
  "patternProperties",
  "propertyNames",
  "minProperties",
  "maxProperties",
];
const FORMS = ["anyOf", "oneOf"];

/** Whether a value that matches `branch` may be an object: its type says so, or says nothing. */
function mayBeObject(branch: unknown, root: Record<string, unknown>): boolean {
  const target = resolve(branch, root);
  if (target === undefined || isNullSchema(target)) return false;
  const types = typesOf(target);
  if (types !== undefined) return types.includes("object");
  // An untyped enum or const names its values: an object's keywords are not what it says.
  return !Object.hasOwn(target, "enum") && !Object.hasOwn(target, "const");
}

const saysOfObjects = (node: Record<string, unknown>) =>
  OBJECT_KEYWORDS.some((keyword) => node[keyword] !== undefined);

export const objectIntoForms: Pass = {
  phase: "enter",
  reads: FORMS,
  needed: (node) => {
    const types = typesOf(node);
    if (types !== undefined && !types.includes("object")) return false;
    return (Array.isArray(node.anyOf) || Array.isArray(node.oneOf)) && saysOfObjects(node);
  },
  apply: (schema, _at, view) => {
    const object: Record<string, unknown> = {};
    for (const keyword of OBJECT_KEYWORDS) {
      if (schema[keyword] !== undefined) setOwn(object, keyword, schema[keyword]);
    }
    const forms = FORMS.filter((keyword) => Array.isArray(schema[keyword]));
    // Not one form an object: what the object says stays where it was, and says nothing.
    if (
      !forms.some((keyword) =>
        (schema[keyword] as unknown[]).some((form) => mayBeObject(form, view.root)),
      )
    )
      return schema;
    // A node that is an object and nothing else: its forms are objects, and one of another type
    // takes no value (left beside them, it would take its own).
    const onlyObject = typesOf(schema)?.every((type) => type === "object") === true;
    for (const keyword of forms) {
      schema[keyword] = (schema[keyword] as unknown[]).flatMap((form) => {
        if (mayBeObject(form, view.root)) return [{ allOf: [object, form] }];
        return onlyObject ? [] : [form];
      });
    }
    if (onlyObject) delete schema.type;
    for (const keyword of OBJECT_KEYWORDS) delete schema[keyword];
    view.applied.add("object_into_forms");
    return schema;
  },
};
