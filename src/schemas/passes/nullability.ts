/**
 * "May be null" in the profile's words, and one `type` per schema: a type
 * union becomes `anyOf`, a `null` type, a null branch of `anyOf`/`oneOf`, a
 * `null` in an `enum` or a `const` null becomes `nullable: true` (Gemini's OpenAPI form,
 * providers/gemini.ts) or is left unsaid (`omit`: no form every provider
 * takes, providers/portable.ts).
 */
import { isPlainObject, writtenAsIn } from "../../json";
import { TYPE_LIST, typeNamed } from "../gate";
import { isNullSchema, typesOf } from "../keywords";
import type { Pass } from "../pass";
import { typeUnionAsAnyOf } from "./type-unions";

export function nullability(form: "keyword" | "omit"): Pass {
  return {
    phase: "enter",
    reads: ["nullable", TYPE_LIST, typeNamed("null"), "anyOf", "oneOf", "enum", "const"],
    needed: (node) =>
      Object.hasOwn(node, "nullable") ||
      Array.isArray(node.type) ||
      node.type === "null" ||
      (Array.isArray(node.anyOf) && node.anyOf.some(isNullSchema)) ||
      (Array.isArray(node.oneOf) && node.oneOf.some(isNullSchema)) ||
      (Array.isArray(node.enum) && node.enum.includes(null)) ||
      (Object.hasOwn(node, "const") && node.const === null),
    apply: (schema, _at, view) => {
      let nullable = schema.nullable === true;
      // `delete` turns an object into a slow dictionary: only where there is something to delete.
      if (Object.hasOwn(schema, "nullable")) {
        delete schema.nullable;
        if (!nullable || form === "omit") view.applied.add("nullable");
      }
      const types = typesOf(schema);
      if (Array.isArray(schema.type)) view.applied.add("nullable");
      if (types) {
        nullable ||= types.includes("null");
        const others = types.filter((type) => type !== "null");
        if (others.length === 1) schema.type = others[0];
        else if (others.length > 1) {
          typeUnionAsAnyOf(schema, others);
          view.applied.add("type_union_as_any_of");
        } else delete schema.type;
      }
      for (const keyword of ["anyOf", "oneOf"]) {
        const branches = schema[keyword];
        if (!Array.isArray(branches) || !branches.some(isNullSchema)) continue;
        nullable = true;
        view.applied.add("nullable");
        const rest = branches.filter((branch) => !isNullSchema(branch));
        if (rest.length === 1 && isPlainObject(rest[0])) {
          delete schema[keyword];
          const branch = rest[0];
          Object.assign(schema, {
            ...branch,
            ...schema,
            description: schema.description ?? branch.description,
          });
          if (schema.description === undefined) delete schema.description;
          // What the branch brought keeps the texts it was read from (`Optional[int]`'s bounds).
          writtenAsIn(schema, branch);
        } else schema[keyword] = rest;
      }
      const values = schema.enum;
      if (Array.isArray(values) && values.includes(null)) {
        nullable = true;
        // Each value kept written as the origin wrote it, though it moved up the list.
        const kept = values.flatMap((value, index) => (value === null ? [] : [index]));
        schema.enum = writtenAsIn(
          kept.map((index) => values[index]),
          values,
          (at) => String(kept[Number(at)]),
        );
        view.applied.add("nullable");
      }
      // A `const` null, left to const.ts, became the string enum `["null"]`, and the model's
      // `"null"` reached the origin as that text.
      if (Object.hasOwn(schema, "const") && schema.const === null) {
        nullable = true;
        delete schema.const;
        view.applied.add("nullable");
      }
      if (nullable && form === "keyword") schema.nullable = true;
      return schema;
    },
  };
}
