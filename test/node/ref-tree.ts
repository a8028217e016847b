/**
 * An input schema an origin may write to make views large: about 1,200
 * characters, whose three `$ref`s inline into thousands of nodes under a
 * profile that inlines them (`openai-strict`, `gemini`, `portable`), up to a
 * view's `MAX_NODES` (src/schemas/pass.ts). Tool `t`'s says `A leaf of tool t.`
 * With `viaAllOf`, each `$ref` is an `allOf`'s one branch, which a view
 * merges (passes/all-of.ts) where it would inline the `$ref` itself.
 */

/** `n` properties, each `schema`. */
const properties = (n: number, schema: unknown) =>
  Object.fromEntries(Array.from({ length: n }, (_, i) => [`p${i}`, schema]));

export const refTreeSchema = (t: number, viaAllOf = false) => {
  const ref = (to: string) => (viaAllOf ? { allOf: [{ $ref: to }] } : { $ref: to });
  return {
    type: "object",
    $defs: {
      leaf: {
        type: "object",
        description: `A leaf of tool ${t}.`,
        properties: properties(5, { type: "string", maxLength: 5 }),
        additionalProperties: false,
      },
      branch: { type: "object", properties: properties(10, ref("#/$defs/leaf")) },
      trunk: { type: "object", properties: properties(10, ref("#/$defs/branch")) },
    },
    properties: properties(10, ref("#/$defs/trunk")),
  };
};
