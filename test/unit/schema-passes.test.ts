/**
 * Each pass of a schema view on its own (src/schemas/passes/): when a node
 * needs it, and what it does to the node. The corpus and property tests
 * (schema-view.test.ts) hold whole views to the providers' rules.
 */
import { describe, expect, it } from "vitest";
import { SCHEMA_LISTS } from "../../src/schemas/keywords";
import type { At, Pass, RootPass } from "../../src/schemas/pass";
import { allOfMerged } from "../../src/schemas/passes/all-of";
import { booleanSchemas } from "../../src/schemas/passes/boolean-schemas";
import { constAsEnum } from "../../src/schemas/passes/const";
import { describedConstraints } from "../../src/schemas/passes/described-constraints";
import { draft202012 } from "../../src/schemas/passes/draft-2020-12";
import { explicitShapes } from "../../src/schemas/passes/explicit-shapes";
import { headerDeclarations } from "../../src/schemas/passes/header-declarations";
import { nullability } from "../../src/schemas/passes/nullability";
import { oneOfAsAnyOf } from "../../src/schemas/passes/one-of";
import { refsInlined } from "../../src/schemas/passes/refs";
import { rootObject } from "../../src/schemas/passes/root-object";
import { rootProperties } from "../../src/schemas/passes/root-properties";
import { knownNames, subset } from "../../src/schemas/passes/subset";
import { wellFormed } from "../../src/schemas/passes/well-formed";
import { SCHEMA_PASSES } from "../../src/schemas/profile";
import { GEMINI_FACTS } from "../../src/schemas/providers/gemini";
import { MCP } from "../../src/schemas/providers/mcp";
import { schemaView } from "../../src/schemas/view";
import { SchemaWalk } from "../../src/schemas/walk";

const NESTED: At = { root: false, depth: 1, refs: [], inlined: false, byProperties: false };
/** A property of the root: where a client takes an `x-mcp-header`. */
const PROPERTY: At = { ...NESTED, byProperties: true };

/** A pass applied to a copy of `node`, with what it recorded. */
function run(
  pass: Pass,
  node: Record<string, unknown>,
  root: Record<string, unknown> = node,
  at = NESTED,
) {
  const walk = new SchemaWalk(MCP, root);
  return {
    needed: pass.needed(node, at),
    result: pass.apply(structuredClone(node), at, walk),
    rules: [...walk.applied],
    dropped: [...walk.dropped],
  };
}

function runRoot(pass: RootPass, root: Record<string, unknown>) {
  const walk = new SchemaWalk(MCP, root);
  return {
    needed: pass.needed(root),
    result: pass.apply(structuredClone(root), walk),
    rules: [...walk.applied],
  };
}

describe("root passes", () => {
  it("root-object: a root anyOf merged into one object, its forms in words", () => {
    const root = {
      anyOf: [
        { type: "object", properties: { id: { type: "string" } }, required: ["id"] },
        { type: "object", properties: { email: { type: "string" } }, required: ["email"] },
      ],
    };
    expect(runRoot(rootObject, root)).toEqual({
      needed: true,
      result: {
        type: "object",
        properties: { id: { type: "string" }, email: { type: "string" } },
        description: "Takes one of these sets of fields: (1) `id`; (2) `email`.",
      },
      rules: ["root_composition"],
    });
    expect(rootObject.needed({ type: "object", properties: {} })).toBe(false);
  });

  it("root-properties: the root object names its properties", () => {
    expect(runRoot(rootProperties, { type: "object" })).toEqual({
      needed: true,
      result: { type: "object", properties: {} },
      rules: ["object_properties"],
    });
    expect(rootProperties.needed({ type: "object", properties: {} })).toBe(false);
  });
});

describe("node passes", () => {
  it("refs: a $ref inlined, a cycle past two rounds asked for as text", () => {
    const root = {
      $defs: { Tag: { type: "string" } },
      properties: { tag: { $ref: "#/$defs/Tag" } },
    };
    const inlined = run(refsInlined, { $ref: "#/$defs/Tag", description: "A tag." }, root);
    expect(inlined).toMatchObject({
      needed: true,
      result: { type: "string", description: "A tag." },
    });
    expect(inlined.rules).toEqual(["refs_inlined"]);
    const cut = run(refsInlined, { $ref: "#/$defs/Tag" }, root, {
      root: false,
      depth: 3,
      refs: ["#/$defs/Tag", "#/$defs/Tag"],
      inlined: true,
      byProperties: false,
    });
    expect(cut).toMatchObject({ result: { type: "string", description: "A Tag, as JSON text." } });
    expect(cut.rules).toEqual(["ref_cycle_cut"]);
  });

  it("all-of: branches merged, every branch's required fields kept", () => {
    const node = {
      allOf: [
        { type: "object", properties: { a: { type: "string" } } },
        { properties: { b: { type: "integer" } }, required: ["b"] },
      ],
    };
    expect(run(allOfMerged, node)).toMatchObject({
      needed: true,
      result: {
        type: "object",
        properties: { a: { type: "string" }, b: { type: "integer" } },
        required: ["b"],
      },
      rules: ["all_of_merged"],
    });
  });

  it("nullability: null said as nullable: true, or left unsaid; unions as anyOf", () => {
    const node = { type: ["string", "null"] };
    expect(run(nullability("keyword"), node).result).toEqual({ type: "string", nullable: true });
    expect(run(nullability("omit"), node).result).toEqual({ type: "string" });
    expect(run(nullability("keyword"), { type: ["string", "integer"] }).result).toEqual({
      anyOf: [{ type: "string" }, { type: "integer" }],
    });
    expect(nullability("keyword").needed({ type: "string" }, NESTED)).toBe(false);
  });

  it("one-of and const: widened to anyOf, narrowed to a one-value enum", () => {
    expect(run(oneOfAsAnyOf, { oneOf: [{ type: "string" }] }).result).toEqual({
      anyOf: [{ type: "string" }],
    });
    expect(run(constAsEnum, { const: "page" }).result).toEqual({ enum: ["page"] });
    expect(constAsEnum.needed({ enum: ["page"] }, NESTED)).toBe(false);
  });

  it("draft-2020-12: older drafts' keywords in their 2020-12 forms", () => {
    const node = {
      $schema: "http://json-schema.org/draft-07/schema#",
      minimum: 0,
      exclusiveMinimum: true,
      items: [{ type: "number" }],
      nullable: true,
      type: "array",
    };
    expect(run(draft202012, node)).toMatchObject({
      needed: true,
      result: { exclusiveMinimum: 0, prefixItems: [{ type: "number" }], type: ["array", "null"] },
      rules: ["draft_2020_12"],
    });
    expect(draft202012.needed({ type: "integer", exclusiveMinimum: 0 }, NESTED)).toBe(false);
  });

  it("header-declarations: an x-mcp-header a 2026-07-28 client refuses left out, another kept", () => {
    const ratio = { type: "number", "x-mcp-header": "Ratio" };
    expect(run(headerDeclarations, ratio, ratio, PROPERTY)).toEqual({
      needed: true,
      result: { type: "number" },
      rules: ["mcp_header_dropped"],
      dropped: ["x-mcp-header"],
    });
    for (const refused of [
      { type: ["string", "null"], "x-mcp-header": "Zone" },
      { anyOf: [{ type: "string" }, { type: "null" }], "x-mcp-header": "Region" },
      { type: "string", "x-mcp-header": "Has Space" },
      { type: "string", "x-mcp-header": 7 },
    ]) {
      const { result } = run(headerDeclarations, refused, refused, PROPERTY);
      expect(result, JSON.stringify(refused)).not.toHaveProperty("x-mcp-header");
    }
    for (const type of ["string", "integer", "boolean"]) {
      const taken = { type, "x-mcp-header": "X" };
      expect(run(headerDeclarations, taken, taken, PROPERTY).result).toEqual(taken);
    }
  });

  it("header-declarations: an x-mcp-header a client refuses for where it is, or a name declared before, left out", () => {
    // The SDK 2.x client takes a declaration on a property reached through `properties` alone,
    // each name once (case-insensitively), and leaves the whole tool out of its listing otherwise.
    const declared = (header: string) => ({ type: "string", "x-mcp-header": header });
    const original = {
      type: "object",
      "x-mcp-header": "Root",
      properties: {
        zone: declared("Zone"),
        target: {
          type: "object",
          properties: { region: declared("Region"), again: declared("zone") },
        },
        tags: { type: "array", items: declared("Tag") },
        pick: { anyOf: [declared("Pick"), { type: "integer" }] },
        ref: { $ref: "#/$defs/Name" },
        more: { type: "array", items: { type: "integer" }, unevaluatedItems: declared("More") },
      },
      unevaluatedProperties: declared("Rest"),
      $defs: { Name: declared("Name") },
      definitions: { Old: declared("Old") },
    };
    for (const profile of ["openai", "anthropic", "bedrock"] as const) {
      const view = schemaView(original, SCHEMA_PASSES[profile]);
      expect(view.schema, profile).toEqual({
        type: "object",
        properties: {
          zone: declared("Zone"),
          target: {
            type: "object",
            properties: { region: declared("Region"), again: { type: "string" } },
          },
          tags: { type: "array", items: { type: "string" } },
          pick: { anyOf: [{ type: "string" }, { type: "integer" }] },
          ref: { $ref: "#/$defs/Name" },
          more: { type: "array", items: { type: "integer" }, unevaluatedItems: { type: "string" } },
        },
        unevaluatedProperties: { type: "string" },
        $defs: { Name: { type: "string" } },
        definitions: { Old: { type: "string" } },
      });
      expect(view.rules, profile).toContain("mcp_header_dropped");
      expect(view.dropped, profile).toContain("x-mcp-header");
    }
    // Where the view made a declaration reachable, as a root anyOf merged into the root's properties, it stays.
    const merged = schemaView(
      { anyOf: [{ type: "object", properties: { id: declared("Id") } }] },
      SCHEMA_PASSES.openai,
    );
    expect(merged.schema).toMatchObject({ properties: { id: declared("Id") } });
    expect(merged.rules).not.toContain("mcp_header_dropped");
  });

  it("described-constraints: what the subset cannot say, in words", () => {
    const node = { type: "number", exclusiveMinimum: 0, multipleOf: 0.5, default: 1 };
    expect(run(describedConstraints(GEMINI_FACTS), node)).toEqual({
      needed: true,
      result: {
        type: "number",
        minimum: 0,
        multipleOf: 0.5,
        default: 1,
        description: "Must be greater than 0. Must be a multiple of 0.5. Default: 1.",
      },
      rules: ["constraints_described"],
      dropped: ["exclusiveMinimum"],
    });
    expect(
      describedConstraints(GEMINI_FACTS).needed({ type: "string", format: "date-time" }, NESTED),
    ).toBe(false);
  });

  it("explicit-shapes: items and properties named, or the value asked for as text", () => {
    expect(run(explicitShapes("empty"), { type: "array" }).result).toEqual({
      type: "array",
      items: {},
    });
    expect(run(explicitShapes("empty"), { type: "object" }).result).toEqual({
      type: "object",
      properties: {},
    });
    expect(
      run(explicitShapes("as-text"), { type: "object", description: "Labels" }).result,
    ).toEqual({
      type: "string",
      description: "Labels. A JSON object, as text.",
    });
    expect(explicitShapes("empty").needed({ type: "object", properties: {} }, NESTED)).toBe(false);
  });

  it("well-formed: values JSON Schema does not allow left out, and draft 3's required: true collected", () => {
    const node = {
      type: "object",
      properties: { a: { type: "string", required: true }, b: 0, c: { type: "integer" } },
      required: ["c"],
      minProperties: "1",
      anyOf: [{ required: ["a"] }, "b"],
    };
    expect(run(wellFormed, node)).toEqual({
      needed: true,
      result: {
        type: "object",
        properties: { a: { type: "string", required: true }, b: {}, c: { type: "integer" } },
        required: ["c", "a"],
        anyOf: [{ required: ["a"] }, {}],
      },
      rules: ["malformed_dropped", "required_collected"],
      dropped: ["minProperties"],
    });
    // The property's own `required: true` goes when the walk reaches it.
    expect(run(wellFormed, { type: "string", required: true }).result).toEqual({ type: "string" });
    expect(wellFormed.needed({ type: ["string", "null"], minimum: 0, items: [{}] }, NESTED)).toBe(
      false,
    );
  });

  it("boolean-schemas: true as any value, a false property or alternative left out", () => {
    const node = {
      type: "object",
      properties: { any: true, none: false, a: { type: "string" } },
      anyOf: [false, { required: ["a"] }, true],
      allOf: [false],
    };
    expect(run(booleanSchemas, node)).toEqual({
      needed: true,
      result: {
        type: "object",
        properties: { any: {}, a: { type: "string" } },
        anyOf: [{ required: ["a"] }, {}],
        allOf: [{}],
      },
      rules: ["boolean_schemas"],
      dropped: [],
    });
    expect(run(booleanSchemas, { type: "array", items: false }).result).toEqual({
      type: "array",
      items: {},
    });
    expect(booleanSchemas.needed({ additionalProperties: false, items: {} }, NESTED)).toBe(false);
    // Every list of schemas keywords.ts names, which needed reads by name.
    for (const keyword of SCHEMA_LISTS) {
      expect(booleanSchemas.needed({ [keyword]: [{}, true] }, NESTED), keyword).toBe(true);
      expect(booleanSchemas.needed({ [keyword]: [{}] }, NESTED), keyword).toBe(false);
    }
  });

  it("subset: only the provider's keywords, and required naming declared properties", () => {
    const keep = new Set(["type", "properties", "required"]);
    const node = {
      type: "object",
      properties: { a: { type: "string" } },
      required: ["a", "ghost"],
      additionalProperties: false,
    };
    expect(run(subset(keep), node)).toEqual({
      needed: true,
      result: { type: "object", properties: { a: { type: "string" } }, required: ["a", "ghost"] },
      rules: [],
      dropped: ["additionalProperties"],
    });
    expect(run(knownNames, node)).toEqual({
      needed: true,
      result: { ...node, required: ["a"] },
      rules: ["required_undeclared_dropped"],
      dropped: [],
    });
    expect(subset(keep).needed({ type: "string" }, NESTED)).toBe(false);
    expect(knownNames.needed({ type: "string" }, NESTED)).toBe(false);
    // Names each declared, in their order or another; one more, or one not declared, is not.
    const declared = { type: "object", properties: { a: {}, b: {} } };
    for (const [required, needed] of [
      [["a", "b"], false],
      [["b", "a"], false],
      [["a"], false],
      [["a", "b", "c"], true],
      [["a", "c"], true],
      [["a", "b", "a"], false],
      [[1], true],
    ] as const)
      expect(knownNames.needed({ ...declared, required }, NESTED), String(required)).toBe(needed);
    expect(run(knownNames, { type: ["integer", "quantity"] })).toMatchObject({
      needed: false,
    });
    expect(run(knownNames, { type: ["quantity", "integer"] })).toEqual({
      needed: true,
      result: {},
      rules: [],
      dropped: ["type"],
    });
  });
});
