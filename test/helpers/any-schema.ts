/** Schemas as an origin may write them, for property tests of what reads them (views, rules). */
import fc from "fast-check";

export interface SchemaWords {
  /** The keywords a schema is made of. */
  keywords: readonly string[];
  /** `$ref` values. */
  refs: fc.Arbitrary<string>;
  /** The keys of a map of schemas (`properties`, `$defs`). */
  names: readonly string[];
  /** Values a keyword may take that are no schema: types, names, lists of them. */
  leaves: readonly unknown[];
}

/**
 * Any JSON value, read as a schema: nested objects of `keywords`, `$ref`s,
 * lists and maps of schemas, other values, as the origin's JSON reads (a
 * `__proto__` key an own one, no object without a prototype).
 */
export function anySchema({ keywords, refs, names, leaves }: SchemaWords): fc.Arbitrary<unknown> {
  const keyword = fc.constantFrom(...keywords);
  const { schema } = fc.letrec((tie) => ({
    schema: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      fc.jsonValue({ maxDepth: 1 }),
      fc.dictionary(keyword, tie("value"), { maxKeys: 5 }),
      refs.map(($ref) => ({ $ref })),
    ),
    value: fc.oneof(
      { depthSize: "small" },
      tie("schema"),
      fc.array(tie("schema"), { maxLength: 3 }),
      fc.dictionary(fc.constantFrom(...names), tie("schema"), { maxKeys: 3 }),
      refs,
      fc.constantFrom(...leaves),
    ),
  }));
  return schema.map((value) => JSON.parse(JSON.stringify(value)) as unknown);
}
