/**
 * Lookups the views spell out as a `switch` for speed (a first listing asks
 * them of every keyword of every node) say what keywords.ts's lists say: a
 * keyword added to a list and not to its `switch` would be read as no
 * schema at all.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { INDEXED, keywordIndex, typeIndex } from "../../src/schemas/keyword-index";
import { CHILDREN, childrenIn, SCHEMA_LISTS, TYPES } from "../../src/schemas/keywords";
import { schemasIn } from "../../src/schemas/passes/well-formed";
import { SCHEMA_PASSES } from "../../src/schemas/profile";

/** Keywords of JSON Schema and OpenAPI, and names that only look like them. */
const KEYWORDS = [
  ...["type", "properties", "patternProperties", "additionalProperties", "propertyNames"],
  ...["items", "prefixItems", "additionalItems", "contains", "unevaluatedItems"],
  ...["unevaluatedProperties", "dependentSchemas", "dependentRequired", "dependencies"],
  ...["anyOf", "oneOf", "allOf", "not", "if", "then", "else", "$ref", "$defs", "definitions"],
  ...["enum", "const", "required", "description", "title", "nullable", "contentSchema"],
  ...["Properties", "anyof", "items ", "__proto__", "constructor", "toString", ""],
];

describe("well-formed's schemasIn", () => {
  it("reads every list of schemas keywords.ts names as a list, and items", () => {
    for (const keyword of [...SCHEMA_LISTS, "items"])
      expect(schemasIn(keyword), keyword).toBe("list");
  });

  it("reads every map of schemas the walk views as a map", () => {
    for (const [keyword, kind] of CHILDREN)
      if (kind === "map") expect(schemasIn(keyword), keyword).toBe("map");
  });

  it("reads nothing else as a list", () => {
    const lists = new Set([...SCHEMA_LISTS, "items"]);
    for (const keyword of KEYWORDS)
      if (!lists.has(keyword)) expect(schemasIn(keyword), keyword).not.toBe("list");
    fc.assert(
      fc.property(fc.string(), (keyword) => {
        if (!lists.has(keyword)) expect(schemasIn(keyword)).not.toBe("list");
      }),
    );
  });
});

describe("the walk's childrenIn", () => {
  it("says what CHILDREN says of every keyword, and of any string", () => {
    for (const keyword of [...CHILDREN.keys(), ...KEYWORDS])
      expect(childrenIn(keyword), keyword).toBe(CHILDREN.get(keyword));
    fc.assert(
      fc.property(fc.string(), (keyword) => {
        expect(childrenIn(keyword)).toBe(CHILDREN.get(keyword));
      }),
    );
  });
});

describe("keyword-index.ts", () => {
  it("numbers each keyword of INDEXED as its place there, and nothing else", () => {
    expect(new Set(INDEXED).size).toBe(INDEXED.length);
    INDEXED.forEach((keyword, index) => {
      expect(keywordIndex(keyword), keyword).toBe(index);
    });
    for (const keyword of KEYWORDS)
      expect(keywordIndex(keyword), keyword).toBe(INDEXED.indexOf(keyword));
    fc.assert(
      fc.property(fc.string(), (keyword) => {
        expect(keywordIndex(keyword)).toBe(INDEXED.indexOf(keyword));
      }),
    );
  });

  it("numbers each type as its place in TYPES, and nothing else", () => {
    TYPES.forEach((type, index) => {
      expect(typeIndex(type), type).toBe(index);
    });
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.anything()), (name) => {
        expect(typeIndex(name)).toBe(TYPES.indexOf(name as string));
      }),
    );
  });

  it("numbers every keyword a profile's passes read, allow or copy (the gate's map is for none)", () => {
    for (const passes of Object.values(SCHEMA_PASSES)) {
      const named = [...CHILDREN.keys(), "type", ...(passes.copies ?? [])];
      for (const pass of passes.nodes) {
        named.push(...(pass.reads ?? []).filter((feature) => !feature.startsWith("type:")));
        named.push(...(pass.allows ?? []));
      }
      for (const keyword of named) expect(keywordIndex(keyword), keyword).toBeGreaterThanOrEqual(0);
    }
  });
});
