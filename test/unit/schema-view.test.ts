/**
 * Schema views against what each provider accepts (test/helpers/provider-rules.ts),
 * over a corpus of real input schemas and the edge cases that break requests.
 *
 * test/fixtures/schema-corpus.json: 51 input schemas from 26 published MCP
 * servers whose schemas appear in provider-rejection reports (zod's draft-07
 * `$schema` and `additionalProperties: false`, Notion's `$defs`, `oneOf`,
 * `const` and type arrays, Firecrawl's `propertyNames`, free-form objects
 * such as Puppeteer's `launchOptions`, …). Each entry names its npm package
 * and version; the schemas are exactly what `tools/list` answered when each
 * server was started over stdio with the official SDK client (2026-11-22),
 * all installed side by side, so servers built on the SDK 1.x met zod 3 and
 * its draft-07 output (with zod 4 the same servers omit
 * `additionalProperties: false`).
 */
import { Validator } from "@cfworker/json-schema";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { repairArguments } from "../../src/args/repair";
import { validateArguments } from "../../src/args/validate";
import { isPlainObject, parseExact, placesOnly, stringifyExact } from "../../src/json";
import { PROFILE_NAMES } from "../../src/names/profiles";
import type { JsonRpcRequest } from "../../src/protocol/jsonrpc";
import { revisionOf } from "../../src/protocol/revision";
import { rootReadsWell, shapedRoot } from "../../src/protocol/tool-shape";
import { repairToolCall } from "../../src/rewrite/tools-call";
import { describeValue } from "../../src/schemas/notes";
import { SCHEMA_PASSES } from "../../src/schemas/profile";
import { schemaView } from "../../src/schemas/view";
import { valuesFromText } from "../../src/schemas/way-back";
import { resolverOf } from "../../support/resolver";
import corpus from "../fixtures/schema-corpus.json";
import { anySchema } from "../helpers/any-schema";
import { captureLogs } from "../helpers/logs";
import { declaredNames, PROVIDER_RULES, rootRules, schemasIn } from "../helpers/provider-rules";

/** Schemas that break requests, one pattern each (the table and then some). */
const EDGE_CASES: Record<string, Record<string, unknown>> = {
  "array without items": { type: "object", properties: { tags: { type: "array" } } },
  "object without properties": { type: "object", properties: { options: { type: "object" } } },
  "root without properties": { type: "object" },
  "root property names Anthropic refuses": {
    type: "object",
    properties: {
      "filter[id]": { type: "string" },
      $filter: { type: "string" },
      "Account Number": { type: "integer" },
      ["k".repeat(65)]: { type: "boolean" },
    },
    required: ["filter[id]"],
  },
  "root without type": { properties: { a: { type: "string" } } },
  "root anyOf": {
    anyOf: [
      { type: "object", properties: { id: { type: "string" } }, required: ["id"] },
      { type: "object", properties: { email: { type: "string" } }, required: ["email"] },
    ],
  },
  "root oneOf with $refs": {
    $defs: {
      ById: { type: "object", properties: { id: { type: "integer" } }, required: ["id"] },
      ByName: { type: "object", properties: { name: { type: "string" } } },
    },
    oneOf: [{ $ref: "#/$defs/ById" }, { $ref: "#/$defs/ByName" }],
  },
  "root allOf": {
    allOf: [
      { type: "object", properties: { a: { type: "string" } }, required: ["a"] },
      { properties: { b: { type: "number" } }, required: ["b"] },
    ],
  },
  // Go's invopop/jsonschema writes every input this way; zod-to-json-schema does given a name.
  "root $ref to a named input type": {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    $ref: "#/$defs/SearchArgs",
    $defs: {
      SearchArgs: {
        type: "object",
        properties: { query: { type: "string" }, limit: { type: "integer" } },
        required: ["query"],
        additionalProperties: false,
      },
    },
  },
  // schemars 0.8 (Rust's rmcp) writes a described `$ref` as a one-branch `allOf`.
  "a described $ref as allOf (schemars 0.8)": {
    $schema: "http://json-schema.org/draft-07/schema#",
    type: "object",
    properties: { mode: { description: "How", allOf: [{ $ref: "#/definitions/Mode" }] } },
    required: ["mode"],
    definitions: { Mode: { type: "string", enum: ["fast", "slow"] } },
  },
  "draft-07 $schema and additionalProperties": {
    $schema: "http://json-schema.org/draft-07/schema#",
    type: "object",
    properties: { path: { type: "string" } },
    additionalProperties: false,
  },
  "default, propertyNames, uniqueItems, const": {
    type: "object",
    properties: {
      limit: { type: "integer", default: 10 },
      headers: {
        type: "object",
        propertyNames: { pattern: "^[a-z-]+$" },
        additionalProperties: { type: "string" },
      },
      ids: { type: "array", items: { type: "string" }, uniqueItems: true },
      kind: { const: "page" },
    },
  },
  "exclusive bounds, both drafts": {
    type: "object",
    properties: {
      ratio: { type: "number", exclusiveMinimum: 0, exclusiveMaximum: 1 },
      count: { type: "integer", minimum: 0, exclusiveMinimum: true },
    },
  },
  "string formats": {
    type: "object",
    properties: {
      email: { type: "string", format: "email" },
      site: { type: "string", format: "uri" },
      at: { type: "string", format: "date-time" },
      id: { type: "string", format: "uuid" },
    },
  },
  "type arrays with null": {
    type: "object",
    properties: {
      cursor: { type: ["string", "null"] },
      value: { type: ["string", "integer"] },
      maybe: { anyOf: [{ type: "integer" }, { type: "null" }], default: null, title: "Maybe" },
    },
  },
  "$ref and cyclic $defs": {
    type: "object",
    $defs: {
      Node: {
        type: "object",
        properties: {
          label: { type: "string" },
          children: { type: "array", items: { $ref: "#/$defs/Node" } },
        },
      },
    },
    properties: { tree: { $ref: "#/$defs/Node" } },
  },
  "numeric and boolean enums": {
    type: "object",
    properties: {
      priority: { type: "integer", enum: [1, 2, 3] },
      flag: { enum: [true, false] },
      mode: { enum: ["fast", "slow", null] },
    },
  },
  "an enum beside anyOf, no type": {
    type: "object",
    properties: {
      mode: { enum: ["fast", "slow"], anyOf: [{ type: "string" }, { type: "integer" }] },
    },
  },
  "an enum whose type says otherwise": {
    type: "object",
    properties: {
      code: { type: "integer", format: "int64", enum: [1, 2] },
      kind: { type: "integer", enum: ["k"] },
      // Hand-written: a null among a string type's values, booleans as strings, a const of another type.
      order: { type: "string", enum: ["asc", "desc", null] },
      flag: { type: "boolean", enum: ["true", "false"] },
      one: { type: "string", const: 1 },
    },
  },
  "required naming undeclared properties": {
    type: "object",
    properties: { a: { type: "string" } },
    required: ["a", "ghost"],
  },
  "OpenAPI nullable": {
    type: "object",
    properties: { note: { type: "string", nullable: true } },
  },
  // Anthropic reads every schema of the input as 2020-12, also those a map of patterns, a
  // dependent schema or the keys' schema holds.
  "older drafts' forms in patternProperties, propertyNames and dependentSchemas": {
    $schema: "http://json-schema.org/draft-04/schema#",
    type: "object",
    properties: {
      limits: {
        type: "object",
        patternProperties: { "^max_": { type: "integer", minimum: 0, exclusiveMinimum: true } },
        propertyNames: { type: "string", anyOf: [] },
      },
      range: {
        type: "object",
        properties: { from: { type: "string" } },
        dependentSchemas: { from: { properties: { to: { type: "string", nullable: true } } } },
      },
      points: {
        type: "object",
        patternProperties: {
          ".": { type: "array", items: [{ type: "number" }, { type: "number" }] },
        },
      },
    },
  },
  "draft-07 tuple items": {
    type: "object",
    properties: { point: { type: "array", items: [{ type: "number" }, { type: "number" }] } },
  },
  // Boolean schemas at a tuple's positions (draft-07): its `items` as one `anyOf` held them.
  "draft-07 tuple of boolean schemas": {
    type: "object",
    properties: {
      pair: { type: "array", items: [true, { type: "string" }] },
      none: { items: [false, { type: "string" }] },
    },
  },
  "patterns RE2 cannot run": {
    type: "object",
    properties: {
      password: { type: "string", pattern: "^(?=.*[0-9]).{8,}$" },
      slug: { type: "string", pattern: "^[a-z0-9-]+$" },
    },
  },
  "properties named like keywords": {
    type: "object",
    properties: {
      type: { type: "string" },
      title: { type: "string", format: "email" },
      format: { type: "integer", exclusiveMinimum: 0 },
      properties: { type: "object", properties: { items: { type: "array" } } },
      required: { type: "boolean" },
    },
    required: ["type", "properties"],
  },
  "keyword values JSON Schema does not allow (draft 3's required: true among them)": {
    type: "object",
    properties: {
      id: {
        type: "string",
        required: true,
        minLength: "1",
        description: ["an id"],
        examples: "INV-1",
      },
      kind: { type: "text", enum: "a,b" },
      code: { type: "string", pattern: "([a-z]" },
      count: { type: "integer", minimum: "0", exclusiveMinimum: "", multipleOf: 0 },
      tags: { type: "array", items: "string", maxItems: -1 },
      either: { anyOf: [{ type: "string" }, 3] },
      any: { type: [] },
      broken: 0,
      twice: {
        type: "object",
        properties: { x: { type: ["string", "string"] } },
        required: ["x", "x"],
      },
    },
    required: "id",
  },
  "empty lists of schemas": {
    type: "object",
    properties: {
      any: { anyOf: [] },
      text: { type: "string", oneOf: [] },
      all: { allOf: [] },
      pair: { type: "array", prefixItems: [] },
    },
  },
  "boolean schemas (true: any value, false: none)": {
    type: "object",
    properties: {
      anything: true,
      never: false,
      either: { anyOf: [{ type: "string" }, true] },
      or: { oneOf: [{ type: "integer" }, false] },
      list: { type: "array", items: true },
      pair: { type: "array", prefixItems: [{ type: "string" }, true] },
    },
  },
  "any value and x- annotations": {
    type: "object",
    properties: {
      value: { description: "Anything" },
      city: { type: "string", "x-mcp-header": "City" },
    },
  },
};

const SCHEMAS: Array<[string, unknown]> = [
  ...corpus.map((entry): [string, unknown] => [
    `${entry.server}@${entry.version} ${entry.tool}`,
    entry.inputSchema,
  ]),
  ...Object.entries(EDGE_CASES),
];

const ADAPTING = PROFILE_NAMES.filter((profile) => profile !== "mcp");

describe("views are accepted by each profile's provider", () => {
  it("the corpus has at least 30 real schemas, each naming its server and version", () => {
    expect(corpus.length).toBeGreaterThanOrEqual(30);
    for (const entry of corpus) {
      expect(entry.server).toMatch(/^(@[\w-]+\/)?[\w.-]+$/);
      expect(entry.version).toMatch(/^\d+\.\d+\.\d+/);
    }
  });

  for (const profile of ADAPTING) {
    it.each(SCHEMAS)(`${profile}: %s`, (_, original) => {
      const before = JSON.stringify(original);
      const { schema, differs, keys } = schemaView(original, SCHEMA_PASSES[profile]);
      expect(PROVIDER_RULES[profile]?.(schema)).toEqual([]);
      // A view said not to differ is shown as the origin's schema: it must be that.
      if (!differs) expect(schema).toEqual(original);
      // Only names the original declares (under the name the view gave it, where it renamed
      // one), and the original untouched.
      const declared = declaredNames(original);
      for (const name of declaredNames(schema)) expect(declared).toContain(keys?.get(name) ?? name);
      expect(JSON.stringify(original)).toBe(before);
    });
  }

  // But a root MCP's clients refuse with the whole listing (protocol/tool-shape.ts).
  it.each(SCHEMAS)(
    "mcp: %s is passed as it is, its root as MCP's clients take it",
    (_, original) => {
      const { schema } = schemaView(original, SCHEMA_PASSES.mcp);
      if (rootReadsWell(original)) expect(schema).toBe(original);
      else expect(schema).toEqual(shapedRoot(original as Record<string, unknown>));
    },
  );
});

describe("the view, rule by rule (gemini)", () => {
  const gemini = (schema: unknown) => schemaView(schema, SCHEMA_PASSES.gemini);

  it("keeps property names that look like keywords as names", () => {
    const { schema } = gemini(EDGE_CASES["properties named like keywords"]);
    expect(Object.keys((schema as { properties: object }).properties)).toEqual([
      "type",
      "title",
      "format",
      "properties",
      "required",
    ]);
    expect(schema).toMatchObject({
      required: ["type", "properties"],
      properties: {
        title: { type: "string", description: "Format: email." },
        format: { type: "integer", minimum: 0, description: "Must be greater than 0." },
        properties: {
          type: "object",
          properties: { items: { type: "array", items: { type: "string" } } },
        },
      },
    });
  });

  it("says in words what it cannot keep", () => {
    const { schema, rules } = gemini(EDGE_CASES["exclusive bounds, both drafts"]);
    expect(schema).toEqual({
      type: "object",
      properties: {
        ratio: {
          type: "number",
          minimum: 0,
          maximum: 1,
          description: "Must be greater than 0. Must be less than 1.",
        },
        count: { type: "integer", minimum: 0, description: "Must be greater than 0." },
      },
    });
    expect(rules).toEqual(["constraints_described"]);
  });

  it("writes null the OpenAPI way, and a type union as anyOf", () => {
    const { schema } = gemini(EDGE_CASES["type arrays with null"]);
    expect(schema).toEqual({
      type: "object",
      properties: {
        cursor: { type: "string", nullable: true },
        value: { anyOf: [{ type: "string" }, { type: "integer" }] },
        maybe: { type: "integer", nullable: true, title: "Maybe", description: "Default: null." },
      },
    });
  });

  it("leaves nothing beside an anyOf, a description and nullable included (Vertex AI)", () => {
    // Vertex AI: "schema specified other fields alongside any_of. When using any_of, it must be
    // the only field set." As pydantic writes `bool | str | None`, described, and as the
    // sequential-thinking server of the corpus does (`{"description":…,"anyOf":[…]}`).
    const { schema, rules } = gemini({
      type: "object",
      properties: {
        flag: {
          anyOf: [{ type: "boolean" }, { type: "string" }, { type: "null" }],
          default: null,
          description: "Whether to",
          title: "Flag",
        },
        mode: { type: ["string", "integer"], enum: ["auto", 2] },
      },
    });
    expect(schema).toEqual({
      type: "object",
      properties: {
        flag: {
          anyOf: [
            {
              type: "boolean",
              nullable: true,
              title: "Flag",
              description: "Whether to. Default: null.",
            },
            {
              type: "string",
              nullable: true,
              title: "Flag",
              description: "Whether to. Default: null.",
            },
          ],
        },
        // A string enum names every value the node takes: its forms are left to validation.
        mode: { type: "string", enum: ["auto", "2"] },
      },
    });
    expect(rules).toContain("any_of_alone");
  });

  it("inlines $refs and asks for a cycle's rest as JSON text", () => {
    const { schema, rules } = gemini(EDGE_CASES["$ref and cyclic $defs"]);
    const node = (children: unknown) => ({
      type: "object",
      properties: { label: { type: "string" }, children },
    });
    expect(schema).toEqual({
      type: "object",
      properties: {
        tree: node({
          type: "array",
          items: node({
            type: "array",
            items: { type: "string", description: "A Node, as JSON text." },
          }),
        }),
      },
    });
    expect(rules).toEqual(["refs_inlined", "ref_cycle_cut"]);
  });

  it("turns numeric and boolean enums into strings, and asks for an open object as text", () => {
    expect(gemini(EDGE_CASES["numeric and boolean enums"]).schema).toEqual({
      type: "object",
      properties: {
        priority: { type: "string", enum: ["1", "2", "3"] },
        flag: { type: "string", enum: ["true", "false"] },
        mode: { type: "string", enum: ["fast", "slow"], nullable: true },
      },
    });
    expect(gemini(EDGE_CASES["object without properties"]).schema).toEqual({
      type: "object",
      properties: { options: { type: "string", description: "A JSON object, as text." } },
    });
  });

  it("merges an allOf into the type its branch names, and nothing more", () => {
    for (const profile of ["gemini", "openai-strict", "portable"] as const) {
      const { schema } = schemaView(
        EDGE_CASES["a described $ref as allOf (schemars 0.8)"],
        SCHEMA_PASSES[profile],
      );
      expect((schema as { properties: object }).properties, profile).toEqual({
        mode: { description: "How", type: "string", enum: ["fast", "slow"] },
      });
    }
  });

  it("keeps what an allOf branch says beside its $ref (2020-12 applies both)", () => {
    const base = { type: "object", properties: { id: { type: "string" } }, required: ["id"] };
    const branch = {
      $ref: "#/$defs/Base",
      properties: { extra: { type: "string" } },
      required: ["extra"],
    };
    const atRoot = { type: "object", allOf: [branch], $defs: { Base: base } };
    const nested = {
      type: "object",
      properties: { p: { allOf: [branch] } },
      $defs: { Base: base },
    };
    for (const profile of PROFILE_NAMES.filter((name) => name !== "mcp")) {
      const root = schemaView(atRoot, SCHEMA_PASSES[profile]).schema as Record<string, unknown>;
      expect(Object.keys(root.properties as object), profile).toEqual(["extra", "id"]);
      expect(root.required, profile).toEqual(expect.arrayContaining(["id", "extra"]));
      const { properties } = schemaView(nested, SCHEMA_PASSES[profile]).schema as {
        properties: { p: Record<string, unknown> };
      };
      expect(JSON.stringify(properties.p), profile).toContain('"extra"');
    }
  });

  it("keeps what a property's $ref target declares where the property declares more beside it", () => {
    // Inlined as `{...target, ...siblings}`, the sibling's properties and required replaced the
    // target's: the model could not send `id`, which the origin requires.
    const original = {
      type: "object",
      properties: {
        p: {
          $ref: "#/$defs/Base",
          description: "Base, and more.",
          properties: { extra: { type: "string" } },
          required: ["extra"],
        },
      },
      required: ["p"],
      $defs: {
        Base: { type: "object", properties: { id: { type: "string" } }, required: ["id"] },
      },
    };
    for (const profile of ["openai-strict", "gemini", "portable"] as const) {
      const { schema } = schemaView(original, SCHEMA_PASSES[profile]);
      expect(PROVIDER_RULES[profile]?.(schema), profile).toEqual([]);
      const { p } = (schema as { properties: Record<string, Record<string, unknown>> }).properties;
      expect(Object.keys(p?.properties as object).sort(), profile).toEqual(["extra", "id"]);
      expect(p?.required, profile).toEqual(expect.arrayContaining(["extra", "id"]));
      expect(p?.description, profile).toBe("Base, and more.");
    }
  });

  it("keeps what each $ref of a chain says beside it, at the root and in an allOf branch", () => {
    // `Args` says more beside its own `$ref`: merged as the chain's end alone, `a` was lost.
    const $defs = {
      Args: { $ref: "#/$defs/Base", properties: { a: { type: "string" } }, required: ["a"] },
      Base: { type: "object", properties: { b: { type: "string" } }, required: ["b"] },
    };
    const schemas = {
      "a root $ref": { $ref: "#/$defs/Args", $defs },
      "a root allOf": { type: "object", allOf: [{ $ref: "#/$defs/Args" }], $defs },
      "an allOf inside": {
        type: "object",
        properties: { p: { allOf: [{ $ref: "#/$defs/Args" }] } },
        $defs,
      },
    };
    for (const profile of ADAPTING) {
      for (const [at, original] of Object.entries(schemas)) {
        const view = schemaView(original, SCHEMA_PASSES[profile]).schema as Record<string, unknown>;
        const properties = view.properties as Record<string, Record<string, unknown>>;
        // Profiles that keep `allOf` (openai, anthropic) show the one inside as it is.
        const merged = at === "an allOf inside" ? properties.p : view;
        if (merged?.allOf !== undefined) continue;
        expect(Object.keys(merged?.properties as object).sort(), `${profile}, ${at}`).toEqual([
          "a",
          "b",
        ]);
        expect(merged?.required, `${profile}, ${at}`).toEqual(expect.arrayContaining(["a", "b"]));
      }
    }
  });

  it("requires what every form of each anyOf an allOf merges requires", () => {
    // Joined into one list of forms, no name was required of all of them: `id` was optional.
    const original = {
      allOf: [
        { anyOf: [{ properties: { id: { type: "string" } }, required: ["id"] }] },
        { anyOf: [{ properties: { a: { type: "string" } } }, { $ref: "#/$defs/B" }] },
      ],
      $defs: { B: { properties: { b: { type: "string" } }, required: ["b"] } },
    };
    for (const profile of ADAPTING) {
      const { schema } = schemaView(original, SCHEMA_PASSES[profile]);
      const { required, properties } = schema as {
        required?: string[];
        properties: Record<string, unknown>;
      };
      // Strict mode requires every property: an optional one is one that takes null.
      if (profile === "openai-strict") expect(properties.id, profile).toEqual({ type: "string" });
      else expect(required, profile).toEqual(["id"]);
      expect(Object.keys(properties), profile).toEqual(["id", "a", "b"]);
    }
  });

  it("keeps an allOf a branch has beside its $ref", () => {
    // Merged with the branch's target as if it were the merge's own list, it was left out.
    const X = { type: "object", properties: { x: { type: "string" } } };
    const branch = {
      $ref: "#/$defs/X",
      allOf: [{ properties: { y: { type: "string" } }, required: ["y"] }],
    };
    const schemas = {
      "a root allOf": { allOf: [branch], $defs: { X } },
      "an allOf inside": { type: "object", properties: { p: { allOf: [branch] } }, $defs: { X } },
    };
    for (const profile of ADAPTING) {
      for (const [at, original] of Object.entries(schemas)) {
        const view = schemaView(original, SCHEMA_PASSES[profile]).schema as Record<string, unknown>;
        const properties = view.properties as Record<string, Record<string, unknown>>;
        const merged = at === "a root allOf" ? view : properties.p;
        // Profiles that keep `allOf` (openai, anthropic) show the one inside as it is.
        if (merged?.allOf !== undefined) continue;
        expect(Object.keys(merged?.properties as object).sort(), `${profile}, ${at}`).toEqual([
          "x",
          "y",
        ]);
        expect(merged?.required, `${profile}, ${at}`).toContain("y");
      }
    }
  });

  it("keeps the forms of every anyOf an allOf merges, not the first's alone", () => {
    const anyOf = (...names: string[]) => ({
      anyOf: names.map((name) => ({ type: "object", properties: { [name]: { type: "string" } } })),
    });
    const allOf = [anyOf("a", "b"), anyOf("c", "d")];
    const atRoot = { allOf };
    const nested = { type: "object", properties: { p: { allOf } } };
    for (const profile of ADAPTING) {
      const root = schemaView(atRoot, SCHEMA_PASSES[profile]).schema as Record<string, unknown>;
      expect(Object.keys(root.properties as object), profile).toEqual(["a", "b", "c", "d"]);
      const { schema } = schemaView(nested, SCHEMA_PASSES[profile]);
      expect(PROVIDER_RULES[profile]?.(schema), profile).toEqual([]);
      for (const name of ["a", "b", "c", "d"])
        expect(JSON.stringify(schema), profile).toContain(`"${name}":{`);
    }
  });

  /** An object of one required string field, `name`: a form of the unions below. */
  const object = (name: string) => ({
    type: "object",
    properties: { [name]: { type: "string" } },
    required: [name],
  });

  it.each(["openai-strict", "gemini", "portable"] as const)(
    "%s: offers a form for each way of taking one form of each anyOf an allOf merges",
    (profile) => {
      // One of `a` and `b`, and one of `c` and `d`: offered together, the forms took `{"a": …}`,
      // which matches no form of the second `anyOf`, and the origin refuses.
      const original = {
        type: "object",
        properties: {
          p: {
            allOf: [
              { anyOf: [object("a"), object("b")] },
              { anyOf: [object("c"), object("d"), { type: "integer" }] },
            ],
          },
        },
        required: ["p"],
      };
      const view = schemaView(original, SCHEMA_PASSES[profile]);
      expect(PROVIDER_RULES[profile]?.(view.schema)).toEqual([]);
      const p = (view.schema as { properties: { p: { anyOf: Record<string, unknown>[] } } })
        .properties.p;
      // Each an object of both forms' fields, both required; an object and an integer, none.
      expect(
        p.anyOf.map((form) => [Object.keys(form.properties as object), form.required]),
      ).toEqual([
        [
          ["a", "c"],
          ["a", "c"],
        ],
        [
          ["a", "d"],
          ["a", "d"],
        ],
        [
          ["b", "c"],
          ["b", "c"],
        ],
        [
          ["b", "d"],
          ["b", "d"],
        ],
      ]);
      const takes = (value: unknown) =>
        new Validator(view.schema as object, "2020-12").validate({ p: value }).valid;
      expect(takes({ a: "x" })).toBe(false);
      expect(takes({ a: "x", d: "y" })).toBe(true);
    },
  );

  it.each(["openai-strict", "gemini", "portable"] as const)(
    "%s: offers a form for each way of taking one of a node's anyOf and one of its oneOf",
    (profile) => {
      // Both apply (JSON Schema): joined into one list, the forms took `{"a": …}` alone.
      const original = {
        type: "object",
        properties: {
          p: { anyOf: [object("a"), object("b")], oneOf: [object("c"), object("d")] },
        },
        required: ["p"],
      };
      const view = schemaView(original, SCHEMA_PASSES[profile]);
      expect(PROVIDER_RULES[profile]?.(view.schema)).toEqual([]);
      const takes = (value: unknown) =>
        new Validator(view.schema as object, "2020-12").validate({ p: value }).valid;
      expect(takes({ a: "x" })).toBe(false);
      expect(takes({ b: "x", c: "y" })).toBe(true);
    },
  );

  it.each(["openai-strict", "gemini", "portable"] as const)(
    "%s: asks for an allOf of more combinations of forms than it offers as JSON text, read back on the way",
    (profile) => {
      // Five forms and five: 25 combinations, past the 16 a view offers.
      const forms = (prefix: string) => ({
        anyOf: [1, 2, 3, 4, 5].map((i) => ({
          type: "object",
          properties: { [`${prefix}${i}`]: { type: "integer" } },
          required: [`${prefix}${i}`],
        })),
      });
      const original = {
        type: "object",
        properties: { p: { description: "Pick.", allOf: [forms("a"), forms("b")] } },
        required: ["p"],
      };
      const view = schemaView(original, SCHEMA_PASSES[profile]);
      expect(PROVIDER_RULES[profile]?.(view.schema)).toEqual([]);
      expect((view.schema as { properties: Record<string, unknown> }).properties.p).toEqual({
        type: "string",
        description: "Pick. The value, as JSON text.",
      });
      expect(view.rules).toContain("value_as_text");
      const back = valuesFromText({ p: '{"a2":1,"b5":2}' }, view).arguments;
      expect(back).toEqual({ p: { a2: 1, b5: 2 } });
      expect(validateArguments(back, original).kind).toBe("valid");
    },
  );

  it("counts the forms an allOf's combinations repeat as nodes inlined, and asks for them as text past its room", () => {
    // Combinations of combinations: each level's first form holds the next level, which the view
    // writes once for each form of the other list. Some 1,900 characters and 60 nodes, viewed as
    // about as many nodes as characters.
    let level: Record<string, unknown> = { type: "string" };
    for (let depth = 0; depth < 4; depth++) {
      const form = (name: string, inside?: unknown) => ({
        type: "object",
        properties: { [name]: inside ?? { type: "string" } },
        required: [name],
      });
      level = {
        allOf: [
          { anyOf: [form("a", level), form("b")] },
          { anyOf: [form("c"), form("d"), form("e"), form("f")] },
        ],
      };
    }
    const original = { type: "object", properties: { p: level } };
    expect(JSON.stringify(original).length).toBeLessThan(2_000);
    for (const profile of ["gemini", "portable"] as const) {
      const view = schemaView(original, SCHEMA_PASSES[profile]);
      const nodes = [...schemasIn(view.schema)].length;
      expect(nodes, profile).toBeGreaterThan(1_000);
      // Every node of the combinations counted (those of a combination inside one, once).
      expect(view.inlined, profile).toBeGreaterThanOrEqual(nodes - 60);
      // No room to inline in its listing: asked for as text, not combined.
      const roomless = schemaView(original, SCHEMA_PASSES[profile], 0);
      expect(roomless.schema, profile).toMatchObject({
        properties: { p: { type: "string" } },
      });
    }
  });

  it("merges a root-level anyOf into one object and names the forms", () => {
    expect(gemini(EDGE_CASES["root anyOf"]).schema).toEqual({
      type: "object",
      properties: { id: { type: "string" }, email: { type: "string" } },
      description: "Takes one of these sets of fields: (1) `id`; (2) `email`.",
    });
  });
});

describe("the view, for other profiles", () => {
  it("openai supplies items and properties, and keeps what OpenAI accepts", () => {
    const { schema } = schemaView(
      {
        $schema: "http://json-schema.org/draft-07/schema#",
        type: "object",
        properties: {
          tags: { type: "array" },
          options: { type: "object" },
          n: { type: ["integer", "null"] },
          // A draft-07 tuple, typed or not: `items` a list, which 2020-12 does not take.
          pair: { type: "array", items: [{ type: "string" }, { type: "number" }] },
          untyped: { items: [{ type: "string" }, { type: "number" }] },
        },
      },
      SCHEMA_PASSES.openai,
    );
    const eitherItem = { anyOf: [{ type: "string" }, { type: "number" }] };
    expect(schema).toEqual({
      $schema: "http://json-schema.org/draft-07/schema#",
      type: "object",
      properties: {
        tags: { type: "array", items: {} },
        options: { type: "object", properties: {} },
        n: { type: ["integer", "null"] },
        pair: { type: "array", items: eitherItem },
        untyped: { items: eitherItem },
      },
    });
  });

  it("openai-strict asks for a value that may be null as text that may be null", () => {
    // The Go SDK writes a map as `["null", "object"]` and requires it.
    const original = {
      type: "object",
      properties: {
        labels: { type: ["null", "object"], additionalProperties: { type: "string" } },
      },
      required: ["labels"],
    };
    const view = schemaView(original, SCHEMA_PASSES["openai-strict"]);
    expect(view.schema).toMatchObject({
      properties: { labels: { type: ["string", "null"], description: "A JSON object, as text." } },
      required: ["labels"],
    });
    expect(valuesFromText({ labels: null }, view).arguments).toEqual({ labels: null });
    expect(valuesFromText({ labels: '{"a":"b"}' }, view).arguments).toEqual({ labels: { a: "b" } });
  });

  it("openai-strict lets an optional enum be left out where its type takes null and its values do not", () => {
    // zod-to-json-schema's openApi3 target writes `.nullable()` of an enum so; `kind` is the same
    // enum as JSON Schema writes it.
    const original = {
      type: "object",
      properties: {
        q: { type: "string" },
        sort: { type: "string", enum: ["asc", "desc"], nullable: true },
        kind: { type: ["string", "null"], enum: ["issue", "pr"] },
      },
      required: ["q"],
    };
    const view = schemaView(original, SCHEMA_PASSES["openai-strict"]);
    expect(view.schema).toMatchObject({
      properties: {
        sort: { type: ["string", "null"], enum: ["asc", "desc", null] },
        kind: { type: ["string", "null"], enum: ["issue", "pr", null] },
      },
      required: ["q", "sort", "kind"],
    });
    // A strict model that leaves both out writes null, and the origin receives neither.
    const sent = { q: "x", sort: null, kind: null };
    expect(new Validator(view.schema as object, "2020-12").validate(sent).valid).toBe(true);
    expect(valuesFromText(sent, view)).toMatchObject({
      arguments: { q: "x" },
      leftOut: ["sort", "kind"],
    });
  });

  it.each([
    ["openai-strict", { type: ["string", "null"], enum: ['{"x":1}', '"origin"', null] }],
    ["gemini", { type: "string", nullable: true, enum: ['{"x":1}', '"origin"'] }],
    ["portable", { type: "string", enum: ['{"x":1}', '"origin"'] }],
  ] as const)(
    "%s asks for an enum of objects beside other values as one of their JSON texts",
    (profile, at) => {
      const original = {
        type: "object",
        properties: { at: { enum: [{ x: 1 }, "origin", null] } },
        required: ["at"],
      };
      const view = schemaView(original, SCHEMA_PASSES[profile]);
      expect(PROVIDER_RULES[profile]?.(view.schema)).toEqual([]);
      expect(view.schema).toMatchObject({
        properties: { at: { ...at, description: "One of these values, as JSON text." } },
      });
      // Each text is its value, a string's too (the text `"origin"`, not `origin`).
      expect(valuesFromText({ at: '{"x":1}' }, view).arguments).toEqual({ at: { x: 1 } });
      expect(valuesFromText({ at: '"origin"' }, view).arguments).toEqual({ at: "origin" });
      expect(valuesFromText({ at: null }, view).arguments).toEqual({ at: null });
    },
  );

  it("openai-strict takes into each branch of a type union only the enum values of its type", () => {
    // An enum value of another type says nothing in a branch; some providers refuse it.
    const original = {
      type: "object",
      properties: {
        v: {
          type: ["string", "integer", "boolean"],
          enum: ["a", 1, 1.5],
          minimum: 0,
          pattern: "^a",
        },
      },
      required: ["v"],
    };
    const view = schemaView(original, SCHEMA_PASSES["openai-strict"]);
    expect(view.schema).toMatchObject({
      properties: {
        v: {
          anyOf: [
            { type: "string", enum: ["a"], pattern: "^a" },
            { type: "integer", enum: [1], minimum: 0 },
          ],
        },
      },
    });
  });

  it.each(["openai-strict", "gemini", "portable"] as const)(
    "%s writes a type union as one branch per type, each with what constrains its type",
    (profile) => {
      const original = {
        type: "object",
        properties: {
          w: { type: ["string", "array"], items: { type: "integer" }, maxItems: 3 },
          x: { type: ["string", "integer"], anyOf: [{ pattern: "^a" }, { minimum: 5 }] },
        },
        required: ["w", "x"],
      };
      const view = schemaView(original, SCHEMA_PASSES[profile]);
      const { w, x } = (view.schema as { properties: Record<string, { anyOf: unknown[] }> })
        .properties;
      expect(w?.anyOf).toEqual([
        { type: "string" },
        { type: "array", items: { type: "integer" }, maxItems: 3 },
      ]);
      // One of the types, and one of the node's own branches, each typed: the origin's values.
      const accepts = (schema: unknown) => {
        const validator = new Validator(schema as object, "2020-12");
        return (value: unknown) => validator.validate(value).valid;
      };
      const values = [true, "b", "ab", 7, 3, 2.5, null];
      expect(values.map(accepts(x))).toEqual(values.map(accepts(original.properties.x)));
      expect(x?.anyOf).toHaveLength(4);
      // A union no value matches: its types alone, as an empty anyOf is no schema at all.
      const none = { type: ["string", "integer"], anyOf: [{ type: "boolean" }] };
      const unmatched = schemaView(
        { type: "object", properties: { none } },
        SCHEMA_PASSES[profile],
      );
      expect(JSON.stringify(unmatched.schema)).not.toContain('"anyOf":[]');
    },
  );

  it("anthropic makes the schema JSON Schema 2020-12", () => {
    const { schema, rules } = schemaView(
      {
        $schema: "http://json-schema.org/draft-07/schema#",
        type: "object",
        properties: {
          note: { type: "string", nullable: true },
          count: { type: "integer", minimum: 0, exclusiveMinimum: true },
          point: { type: "array", items: [{ type: "number" }, { type: "number" }] },
        },
      },
      SCHEMA_PASSES.anthropic,
    );
    expect(schema).toEqual({
      type: "object",
      properties: {
        note: { type: ["string", "null"] },
        count: { type: "integer", exclusiveMinimum: 0 },
        point: { type: "array", prefixItems: [{ type: "number" }, { type: "number" }] },
      },
    });
    expect(rules).toEqual(["draft_2020_12"]);
  });
});

describe("an empty list of schemas", () => {
  it.each(ADAPTING)("%s: says nothing, and is left out", (profile) => {
    const { schema } = schemaView(EDGE_CASES["empty lists of schemas"], SCHEMA_PASSES[profile]);
    const { text } = (schema as { properties: Record<string, Record<string, unknown>> }).properties;
    expect([text?.type].flat()).toContain("string");
    expect(JSON.stringify(schema)).not.toMatch(/"(anyOf|oneOf|allOf|prefixItems)":\[\]/);
  });
});

describe("the root", () => {
  const named = EDGE_CASES["root $ref to a named input type"];

  it.each(ADAPTING)("%s: a $ref is the root, its properties the model's to fill", (profile) => {
    const { schema } = schemaView(named, SCHEMA_PASSES[profile]);
    expect(PROVIDER_RULES[profile]?.(schema)).toEqual([]);
    expect(schema).toMatchObject({ type: "object", required: expect.arrayContaining(["query"]) });
    expect(Object.keys((schema as { properties: object }).properties)).toEqual(["query", "limit"]);
    expect(schema).not.toHaveProperty("$ref");
  });

  it.each(ADAPTING)("%s: stays one object whatever the root says beside it", (profile) => {
    const a = { a: { type: "string" } };
    const roots = [
      { type: "object", nullable: true, properties: a },
      { type: "object", const: { a: "x" }, properties: a },
      { type: "object", enum: [{ a: "x" }, { a: "y" }], properties: a },
      { oneOf: [{ $ref: "https://example.com/args.json" }, { type: "object", properties: a }] },
      { type: "object", oneOf: [{ $ref: "#" }], properties: a },
    ];
    for (const original of roots) {
      const { schema } = schemaView(original, SCHEMA_PASSES[profile]);
      const root = JSON.stringify(original);
      expect(PROVIDER_RULES[profile]?.(schema), root).toEqual([]);
      expect(schema, root).toMatchObject({ type: "object", properties: { a: {} } });
    }
  });

  it.each(ADAPTING)(
    "%s: a $ref to a definition whose own $ref leads nowhere, or back to it, says what it says",
    (profile) => {
      for (const $ref of ["#/$defs/Missing", "#/$defs/Args", "https://example.com/args.json"]) {
        const Args = {
          $ref,
          type: "object",
          properties: { q: { type: "string" } },
          required: ["q"],
        };
        const original = { $ref: "#/$defs/Args", $defs: { Args } };
        const { schema } = schemaView(original, SCHEMA_PASSES[profile]);
        expect(PROVIDER_RULES[profile]?.(schema), $ref).toEqual([]);
        expect(schema, $ref).toMatchObject({ properties: { q: {} }, required: ["q"] });
      }
    },
  );

  it.each(ADAPTING)(
    "%s: a $ref to nothing, to the root itself or outside the schema is left out",
    (profile) => {
      for (const $ref of ["#/$defs/Missing", "#", "", "https://example.com/args.json"]) {
        const original = { type: "object", $ref, properties: { a: { type: "string" } } };
        const { schema } = schemaView(original, SCHEMA_PASSES[profile]);
        expect(PROVIDER_RULES[profile]?.(schema), $ref).toEqual([]);
        expect(Object.keys((schema as { properties: object }).properties), $ref).toEqual(["a"]);
        expect(schema, $ref).not.toHaveProperty("$ref");
      }
    },
  );
});

describe("openai-strict's size limits", () => {
  const strict = (schema: unknown) => schemaView(schema, SCHEMA_PASSES["openai-strict"]);
  const withProperties = (count: number) => ({
    type: "object",
    properties: Object.fromEntries(
      Array.from({ length: count }, (_, i) => [`p${i}`, { type: "string" }]),
    ),
  });
  const withEnum = (values: string[]) => ({
    type: "object",
    properties: { pick: { type: "string", enum: values } },
    required: ["pick"],
  });

  it("names the limit a view is still over, and nothing when it is within them", () => {
    expect(strict(withProperties(5_000)).unfit).toBeUndefined();
    expect(strict(withProperties(5_001)).unfit).toBe("5001 object properties (at most 5,000)");
    const values = (count: number, length = 4) =>
      Array.from({ length: count }, (_, i) => String(i).padStart(length, "0"));
    expect(strict(withEnum(values(1_000))).unfit).toBeUndefined();
    expect(strict(withEnum(values(1_001))).unfit).toBe("1001 enum values (at most 1,000)");
    expect(strict(withEnum(values(251, 60))).unfit).toBe(
      "an enum of more than 250 values over 15,000 characters",
    );
    expect(strict(withEnum(values(250, 60))).unfit).toBeUndefined();
  });

  it("asks for what lies deeper than 10 levels as JSON text", () => {
    let schema: Record<string, unknown> = { type: "string" };
    for (let level = 0; level < 12; level++)
      schema = { type: "object", properties: { next: schema }, required: ["next"] };
    const { schema: view, rules, unfit } = strict(schema);
    expect(PROVIDER_RULES["openai-strict"]?.(view)).toEqual([]);
    expect(rules).toContain("value_as_text");
    expect(unfit).toBeUndefined();
  });
});

describe("any schema an origin may write (property)", () => {
  // Pointers as an origin may write them: escapes well- and ill-formed, `~` escapes, other roots.
  const refs = fc
    .array(
      fc.constantFrom(
        "#",
        "/",
        "$defs",
        "definitions",
        "A",
        "%",
        "%41",
        "%E0%A4%A",
        "~0",
        "~1",
        "~2",
      ),
      { maxLength: 6 },
    )
    .map((parts) => parts.join(""));
  const schema = anySchema({
    keywords: [
      ...["type", "properties", "items", "prefixItems", "additionalProperties", "required"],
      ...["anyOf", "oneOf", "allOf", "not", "if", "then", "$ref", "$defs", "definitions"],
      ...["enum", "const", "format", "pattern", "minimum", "exclusiveMinimum", "minLength"],
      ...["default", "nullable", "description", "title", "$schema", "__proto__"],
    ],
    refs,
    names: ["a", "b", "type", "__proto__"],
    leaves: ["object", "string", "null", ["string", "null"], "2020-12", 3, true],
  });

  it("views a schema that refers to itself or nests thousands deep, within the stack", () => {
    let allOf: unknown = { type: "string" };
    for (let i = 0; i < 5_000; i++) allOf = { allOf: [allOf] };
    const $defs: Record<string, unknown> = { d5000: { type: "string" } };
    for (let i = 0; i < 5_000; i++) $defs[`d${i}`] = { $ref: `#/$defs/d${i + 1}` };
    const schemas = [
      { type: "object", allOf: [{ $ref: "#" }] },
      // A branch's `allOf` beside its `$ref`, each back to the root: each hop begins anew.
      { allOf: [{ $ref: "#" }], $ref: "#" },
      { $ref: "#/$defs/A", $defs: { A: { allOf: [{ $ref: "#" }], $ref: "#" } } },
      { oneOf: [{ $ref: "#" }], $ref: "#" },
      { anyOf: [{ anyOf: [{ $ref: "#" }], $ref: "#" }] },
      { type: "object", properties: { a: { allOf } } },
      { type: "object", properties: { a: { $ref: "#/$defs/d0" } }, $defs },
    ];
    for (const original of schemas) {
      for (const profile of PROFILE_NAMES) {
        expect(() => schemaView(original, SCHEMA_PASSES[profile]), profile).not.toThrow();
      }
    }
  });

  it("merges a root anyOf of many $refs to one large definition into a view of about its size", () => {
    // 31 KB of schema: each branch read whole made 1,000,000 names read and a view of 8 MB
    // (its forms in words), and 3,000 of 3,000 properties a view of 78 MB.
    const properties = Object.fromEntries(Array.from({ length: 1_000 }, (_, i) => [`p${i}`, {}]));
    const original = {
      anyOf: Array.from({ length: 1_000 }, () => ({ $ref: "#/$defs/Args" })),
      $defs: { Args: { type: "object", properties, required: ["p0"] } },
    };
    for (const profile of ADAPTING) {
      const { schema } = schemaView(original, SCHEMA_PASSES[profile]);
      expect(JSON.stringify(schema).length, profile).toBeLessThan(256 * 1024);
      expect(PROVIDER_RULES[profile]?.(schema), profile).toEqual([]);
      expect(Object.keys((schema as { properties: object }).properties), profile).toHaveLength(
        1_000,
      );
    }
  });

  it("merges branches that require, or name as types, 50,000 names each", () => {
    // Each name was looked up in a list of them: their square, 23.6 s for these four views, 71 ms
    // now (timing is npm run bench's, not a test's: this holds what the views say).
    const names = Array.from({ length: 50_000 }, (_, i) => `n${i}`);
    const requiring = { anyOf: [{ type: "object", required: names }] };
    const typing = { allOf: [{ type: ["object", ...names] }, { type: ["object", ...names] }] };
    for (const profile of ["openai", "anthropic"] as const) {
      const { schema } = schemaView(requiring, SCHEMA_PASSES[profile]);
      const { required } = schema as { required?: string[] };
      expect(required, profile).toHaveLength(50_000);
      expect(schemaView(typing, SCHEMA_PASSES[profile]).schema, profile).toMatchObject({
        type: "object",
      });
    }
  });

  it("keeps a property named __proto__ as it keeps any other, in branches it merges too", () => {
    const text = JSON.stringify({
      type: "object",
      allOf: [
        { properties: { NAME: { type: "string" }, a: { type: "integer" } } },
        { properties: { NAME: { type: "string", format: "email" } }, required: ["NAME"] },
      ],
    });
    for (const profile of PROFILE_NAMES) {
      const view = (name: string) =>
        JSON.stringify(
          schemaView(JSON.parse(text.replaceAll("NAME", name)), SCHEMA_PASSES[profile]),
        );
      expect(view("__proto__"), profile).toBe(view("b").replaceAll('"b"', '"__proto__"'));
    }
  });

  it("is a view under every profile, one object at its root, and leaves the origin's schema as it was", () => {
    fc.assert(
      fc.property(schema, (original) => {
        const before = structuredClone(original);
        for (const profile of PROFILE_NAMES) {
          const view = schemaView(original, SCHEMA_PASSES[profile]);
          if (profile !== "mcp") expect(rootRules(view.schema), profile).toEqual([]);
        }
        expect(original).toEqual(before);
      }),
      { numRuns: 2_000 },
    );
  });
});

describe("enums (property)", () => {
  /** The values a view's node offers, its branches' included. */
  const offered = (node: unknown): unknown[] => {
    if (!isPlainObject(node)) return [];
    const own = Array.isArray(node.enum) ? node.enum : [];
    const branches = Array.isArray(node.anyOf) ? node.anyOf.flatMap(offered) : [];
    return [...own, ...branches];
  };
  const value = fc.oneof(
    fc.string({ maxLength: 4 }),
    fc.integer({ min: -5, max: 5 }),
    fc.constantFrom(1.5, true, false, null),
  );

  it("keep their values in every view, and a null among them lets the property be null", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(value, { minLength: 1, maxLength: 5, selector: (v) => JSON.stringify(v) }),
        fc.boolean(),
        (values, required) => {
          const original = {
            type: "object",
            properties: { p: { enum: values, description: "Pick one." } },
            ...(required ? { required: ["p"] } : {}),
          };
          for (const profile of PROFILE_NAMES) {
            const view = schemaView(original, SCHEMA_PASSES[profile]);
            const at = `${profile}: ${JSON.stringify(values)}`;
            if (profile !== "mcp") expect(PROVIDER_RULES[profile]?.(view.schema), at).toEqual([]);
            const p = (view.schema as { properties: Record<string, unknown> }).properties.p;
            const kept = values.filter((v) => v !== null);
            if (profile === "gemini" || profile === "portable") {
              // Gemini takes string enums only: each value as its text, repaired on the way back.
              expect(offered(p), at).toEqual(
                expect.arrayContaining(
                  kept.map((v) => (typeof v === "string" ? v : describeValue(v))),
                ),
              );
              if (profile === "gemini" && values.includes(null))
                expect(p, at).toMatchObject({ nullable: true });
              continue;
            }
            expect(offered(p), at).toEqual(expect.arrayContaining(kept));
            const accepts = new Validator(view.schema as object, "2020-12");
            for (const v of values) expect(accepts.validate({ p: v }).valid, at).toBe(true);
            // A null the origin takes reaches it, the model's own choice.
            if (values.includes(null))
              expect(valuesFromText({ p: null }, view).arguments, at).toEqual({ p: null });
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it("a null the values name none of, where the type takes null, is left out where the property is optional, and reaches the origin where it is required", () => {
    const values = fc.oneof(
      fc.uniqueArray(fc.string({ maxLength: 4 }), { minLength: 1, maxLength: 4 }),
      fc.uniqueArray(fc.integer({ min: -5, max: 5 }), { minLength: 1, maxLength: 4 }),
    );
    fc.assert(
      fc.property(values, fc.boolean(), fc.boolean(), (values, openApi, required) => {
        const type = typeof values[0] === "string" ? "string" : "integer";
        // JSON Schema's type with null, or OpenAPI's `nullable` (zod-to-json-schema's openApi3).
        const p = openApi
          ? { type, nullable: true, enum: values }
          : { type: [type, "null"], enum: values };
        const original = {
          type: "object",
          properties: { q: { type: "string" }, p },
          required: required ? ["q", "p"] : ["q"],
        };
        for (const profile of PROFILE_NAMES) {
          const at = `${profile}: ${JSON.stringify(p)}, ${required ? "required" : "optional"}`;
          // What a model shown any view may write, on the way back as the proxy reads it.
          const view = schemaView(original, SCHEMA_PASSES[profile]);
          const read = valuesFromText({ q: "x", p: null }, view).arguments;
          const { arguments: args } = repairArguments(read, original);
          expect(args, at).toEqual(required ? { q: "x", p: null } : { q: "x" });
          expect(validateArguments(args, original).kind, at).toBe(required ? "invalid" : "valid");
        }
      }),
      { numRuns: 100 },
    );
  });
});

describe("the root's property names Anthropic and Bedrock refuse", () => {
  // `input_schema.properties: Property keys should match pattern '^[a-zA-Z0-9_.-]{1,64}$'`:
  // the whole request refused, at the top level only (passes/property-keys.ts).
  const original = {
    type: "object",
    properties: {
      "filter[id]": { type: "integer" },
      "Account Number": { type: "string" },
      filter_id_: { type: "string" },
      nested: { type: "object", properties: { "a b": { type: "string" } } },
    },
    required: ["filter[id]", "nested"],
    additionalProperties: false,
  };

  it.each(["anthropic", "bedrock", "portable"] as const)(
    "are renamed under %s, required with them, and a call's keys read back as the origin's",
    (profile) => {
      const view = schemaView(original, SCHEMA_PASSES[profile]);
      expect(PROVIDER_RULES[profile]?.(view.schema)).toEqual([]);
      expect(view.rules).toContain("property_keys_renamed");
      const properties = (view.schema as { properties: Record<string, unknown> }).properties;
      const names = Object.keys(properties);
      // Legal names stay; nested ones are not the rule's.
      expect(names).toContain("filter_id_");
      expect(properties.nested).toMatchObject({ properties: { "a b": { type: "string" } } });
      const [id = "", account = ""] = ["filter[id]", "Account Number"].map(
        (name) => [...(view.keys ?? [])].find(([, was]) => was === name)?.[0] ?? "",
      );
      expect(id).toMatch(/^filter_id__[0-9a-z]{6}$/);
      expect(account).toMatch(/^Account_Number_[0-9a-z]{6}$/);
      expect((view.schema as { required: string[] }).required).toEqual([id, "nested"]);

      const sent = { [id]: "42", [account]: "A-1", nested: { "a b": "x" } };
      const back = valuesFromText(sent, view, original).arguments;
      expect(Object.keys(back)).toEqual(["filter[id]", "Account Number", "nested"]);
      const repaired = repairArguments(back, original);
      expect(repaired.arguments).toEqual({
        "filter[id]": 42,
        "Account Number": "A-1",
        nested: { "a b": "x" },
      });
      expect(validateArguments(repaired.arguments, original).kind).toBe("valid");
    },
  );

  it("are kept under profiles whose providers take them", () => {
    for (const profile of ["mcp", "openai", "openai-strict", "gemini"] as const) {
      const view = schemaView(original, SCHEMA_PASSES[profile]);
      expect(view.keys).toBeUndefined();
      expect(Object.keys((view.schema as { properties: object }).properties)).toContain(
        "filter[id]",
      );
    }
  });

  it("are written as one name each, whatever they read alike as, and the same in every isolate", () => {
    const alike = {
      type: "object",
      properties: { "a[b]": {}, "a(b)": {}, "a]b[": {}, [`a[b]_${"x".repeat(100)}`]: {} },
    };
    const first = schemaView(alike, SCHEMA_PASSES.anthropic);
    const names = Object.keys((first.schema as { properties: object }).properties);
    expect(new Set(names).size).toBe(4);
    for (const name of names) expect(name).toMatch(/^[a-zA-Z0-9_.-]{1,64}$/);
    expect(schemaView(structuredClone(alike), SCHEMA_PASSES.anthropic).keys).toEqual(first.keys);
  });

  it("are written back on a call's way to the origin, its numbers as sent, with no line of a repair", async () => {
    const view = schemaView(original, SCHEMA_PASSES.anthropic);
    const [id] = [...(view.keys ?? [])].find(([, was]) => was === "filter[id]") ?? [];
    const text = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"${id}":12345678901234567891,"nested":{}}}}`;
    const body = parseExact(text);
    const resolver = resolverOf({ original: "t", schemaHash: "", inputSchema: original }, { view });
    const logs = captureLogs();
    const outcome = await repairToolCall(
      body?.value as JsonRpcRequest,
      resolver,
      "warn",
      revisionOf(new Headers()),
      body?.exact,
    );
    if (outcome.kind !== "forward") throw new Error("not forwarded");
    const { arguments: sent } = outcome.message.params as { arguments: object };
    expect(stringifyExact(sent, placesOnly(body?.exact, outcome.exact))).toBe(
      '{"filter[id]":12345678901234567891,"nested":{}}',
    );
    // Routine, as a restored tool name is: the listing said the names.
    expect(logs.lines().filter((line) => line.event === "tool_call_repaired")).toEqual([]);
  });

  it("leave a key sent under both names as sent: the origin's is the one repair keeps", () => {
    const view = schemaView(original, SCHEMA_PASSES.anthropic);
    const [id] = [...(view.keys ?? [])].find(([, was]) => was === "filter[id]") ?? [];
    const sent = { "filter[id]": 1, [id as string]: 2, nested: {} };
    expect(valuesFromText(sent, view, original).arguments).toEqual(sent);
  });
});
