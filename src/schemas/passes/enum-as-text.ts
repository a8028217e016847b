/**
 * An `enum` (a `const` too, const.ts) that names an array or an object, as a
 * string enum of each value's JSON text, asked for as text: the model picks a
 * text, and way-back.ts parses it into the value it writes, in the origin's
 * digits. `null` stays `null`, where the profile can say "may be null".
 *
 * No provider's subset holds such values as they are. Strict mode typed
 * `{"enum": [[1, 2]]}` an `array` of items asked for as text, which no value
 * of the enum is: a model could send nothing it takes. Gemini's and
 * portable's string enums wrote `{}` beside `"a"` as `"{}"` and `"a"`, and
 * the model's `"{}"` reached the origin as the string, which its schema takes
 * for a string too.
 */
import type { Pass } from "../pass";

const isStructured = (value: unknown) => typeof value === "object" && value !== null;

export const enumAsText: Pass = {
  phase: "enter",
  reads: ["enum"],
  needed: (node) => Array.isArray(node.enum) && node.enum.some(isStructured),
  apply: (schema, _at, view) => {
    const values = schema.enum as unknown[];
    const texts: unknown[] = [];
    for (let index = 0; index < values.length; index++) {
      const value = values[index];
      if (value !== null) texts.push(view.describe(value, values, String(index)));
    }
    const nullable = values.includes(null);
    const text = view.textSchema(
      nullable ? { ...schema, nullable: true } : schema,
      "One of these values, as JSON text.",
    );
    // Where "may be null" is a type, the enum names `null` too, or it would take none.
    if (nullable && Array.isArray(text.type)) texts.push(null);
    text.enum = texts;
    // Its values, written as the walk never saw them: the view's sizes are counted again.
    view.uncount();
    view.applied.add("enum_as_text");
    return text;
  },
};
