/**
 * The operator's `fixed` and `defaults` (docs/rules.md, "Arguments") in every
 * profile's view, whatever the root of the origin's schema: a plain object, a
 * `$ref` (Go's invopop/jsonschema), an `allOf`, an `anyOf`. No form of the
 * arguments a view offers lists a fixed argument or requires a defaulted one;
 * the default is said; and a call that leaves them out, as the view lets the
 * model, reaches the origin with the operator's values.
 */
import { Validator } from "@cfworker/json-schema";
import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import { refTarget } from "../../src/args/schema-reading";
import { isPlainObject } from "../../src/json";
import { PROFILE_NAMES, type ProfileName } from "../../src/names/profiles";
import type { JsonRpcRequest } from "../../src/protocol/jsonrpc";
import { revisionOf } from "../../src/protocol/revision";
import { repairToolCall } from "../../src/rewrite/tools-call";
import { presentedSchema } from "../../src/rules/apply-rules";
import type { ToolRule } from "../../src/rules/tool-rules";
import { SCHEMA_PASSES } from "../../src/schemas/profile";
import { type SchemaView, schemaView } from "../../src/schemas/view";
import { resolverOf } from "../../support/resolver";
import { ROOT_SHAPES, withRoot } from "../fixtures/root-shapes";
import corpus from "../fixtures/schema-corpus.json";
import { anySchema } from "../helpers/any-schema";
import { PROVIDER_RULES } from "../helpers/provider-rules";
import { rulesOf } from "../helpers/tool-rules";

type Schema = Record<string, unknown>;

/** The corpus's schemas with top-level properties: those a rule can name. */
const SCHEMAS = corpus
  .map((entry) => entry.inputSchema as Schema)
  .filter(
    (schema) => isPlainObject(schema.properties) && Object.keys(schema.properties).length > 0,
  );

/** Every form of the arguments a view offers: its root, and each branch of it, `$ref`s followed. */
function argumentForms(view: unknown, root = view, levels = 8): Schema[] {
  if (!isPlainObject(view) || levels < 0 || !isPlainObject(root)) return [];
  let node: Schema = view;
  if (typeof node.$ref === "string" && node.$ref.startsWith("#/")) {
    let target: unknown = root;
    for (const key of node.$ref.slice(2).split("/"))
      target = isPlainObject(target) ? target[key] : undefined;
    return [node, ...argumentForms(target, root, levels - 1)];
  }
  const branches = ["anyOf", "oneOf", "allOf"].flatMap((k) =>
    Array.isArray(node[k]) ? (node[k] as unknown[]) : [],
  );
  for (const k of ["then", "else"]) if (isPlainObject(node[k])) branches.push(node[k]);
  // What applies where a property is given is a form too.
  for (const k of ["dependentSchemas", "dependencies"]) {
    const map = node[k];
    if (isPlainObject(map)) branches.push(...Object.values(map).filter(isPlainObject));
  }
  node = view;
  return [node, ...branches.flatMap((branch) => argumentForms(branch, root, levels - 1))];
}

const takesNull = (schema: unknown) =>
  new Validator(schema as object, "2020-12").validate(null).valid;

/** The view a profile lists for a tool under `rule`, as the tool map makes it (toolmap/tool-map.ts). */
function listedView(original: Schema, rule: ToolRule, profile: ProfileName): SchemaView {
  return { ...schemaView(presentedSchema(original, rule), SCHEMA_PASSES[profile]), differs: true };
}

/** What a call reaches the origin with, sent by the listed name with `args`. */
async function forwarded(
  original: Schema,
  rule: ToolRule,
  view: SchemaView,
  args: Schema,
): Promise<Schema | undefined> {
  const entry = { original: "tool.x", schemaHash: "", inputSchema: original };
  const resolver = resolverOf(entry, { view, rule });
  const message = {
    jsonrpc: "2.0",
    id: 1,
    method: "tools/call",
    params: { name: "tool_x", arguments: args },
  } as JsonRpcRequest;
  const outcome = await repairToolCall(message, resolver, "off", revisionOf(new Headers()));
  return outcome.kind === "forward"
    ? ((outcome.message.params as { arguments?: Schema }).arguments ?? {})
    : undefined;
}

const setting = fc.nat(SCHEMAS.length - 1).chain((index) => {
  const schema = SCHEMAS[index] as Schema;
  const keys = Object.keys(schema.properties as Schema);
  // Each property fixed, defaulted or left to the model; at least one set by the rules.
  return fc.tuple(
    fc.constant(schema),
    fc
      .array(fc.constantFrom("fixed", "default", "model"), {
        minLength: keys.length,
        maxLength: keys.length,
      })
      .filter((roles) => roles.some((role) => role !== "model"))
      .map((roles) => keys.map((key, i) => [key, roles[i]] as const)),
    fc.constantFrom(...ROOT_SHAPES),
  );
});

/**
 * Whether a property's description says its default: its own, or, where nothing may stand
 * beside its `anyOf` (Gemini), each branch's.
 */
function saysDefault(property: unknown): boolean {
  if (!isPlainObject(property)) return false;
  if (String(property.description).includes("Default: 7")) return true;
  const branches = property.anyOf;
  return Array.isArray(branches) && !("description" in property) && branches.every(saysDefault);
}

describe("fixed and defaulted arguments in the listed schema (property)", () => {
  it("are in no form a view lists, and defaulted ones are optional and said, whatever the root", async () => {
    vi.spyOn(console, "log").mockImplementation(() => {});
    await fc.assert(
      fc.asyncProperty(setting, async ([schema, roles, shape]) => {
        const fixed = Object.fromEntries(
          roles.filter(([, role]) => role === "fixed").map(([key]) => [key, `F-${key}`]),
        );
        const defaults = Object.fromEntries(
          roles.filter(([, role]) => role === "default").map(([key]) => [key, 7]),
        );
        const rule = rulesOf({ tools: { "tool.x": { fixed, defaults } } }).ruleFor("tool.x");
        if (!rule) throw new Error("no rule");
        const original = withRoot(schema, shape);
        for (const profile of PROFILE_NAMES) {
          const view = listedView(original, rule, profile);
          const at = `${profile}, root ${shape}`;
          if (profile !== "mcp") expect(PROVIDER_RULES[profile]?.(view.schema), at).toEqual([]);
          const forms = argumentForms(view.schema);
          const said: string[] = [];
          for (const form of forms) {
            const properties = isPlainObject(form.properties) ? form.properties : {};
            for (const key of Object.keys(fixed)) expect(properties, at).not.toHaveProperty(key);
            const required = Array.isArray(form.required) ? form.required : [];
            for (const key of Object.keys(fixed)) expect(required, at).not.toContain(key);
            for (const key of Object.keys(defaults)) {
              // Strict mode requires every property: an optional one there is one that takes null.
              if (profile !== "openai-strict") expect(required, at).not.toContain(key);
              else if (required.includes(key)) expect(takesNull(properties[key]), at).toBe(true);
            }
            for (const key of Object.keys(defaults)) {
              if (saysDefault(properties[key])) said.push(key);
            }
          }
          expect(new Set(said), at).toEqual(new Set(Object.keys(defaults)));
          // The model sends nothing for them, or (strict) null for a defaulted one.
          const args = Object.fromEntries(
            Object.keys(defaults).flatMap((key) =>
              profile === "openai-strict" ? [[key, null]] : [],
            ),
          );
          const reached = await forwarded(original, rule, view, args);
          expect(reached, at).toMatchObject({ ...fixed, ...defaults });
        }
      }),
      { numRuns: 150 },
    );
  }, 60_000);
});

describe("a root $ref (Go's invopop/jsonschema)", () => {
  const original = {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    $ref: "#/$defs/InvoiceArgs",
    $defs: {
      InvoiceArgs: {
        type: "object",
        properties: {
          org: { type: "string" },
          due: { type: "integer", description: "Days to pay." },
          amount: { type: "number" },
          lines: { type: "array", items: { $ref: "#/$defs/Line" } },
        },
        required: ["org", "due", "amount"],
        additionalProperties: false,
      },
      Line: { type: "object", properties: { sku: { type: "string" } }, required: ["sku"] },
    },
  };
  const rule = rulesOf({
    tools: { "fixed.ref": { fixed: { org: "acme" }, defaults: { due: 30 } } },
  }).ruleFor("fixed.ref") as ToolRule;

  it.each(PROFILE_NAMES)(
    "%s: lists neither the fixed org nor a required due, anywhere",
    (profile) => {
      const { schema } = listedView(original, rule, profile);
      expect(JSON.stringify(schema), profile).not.toContain('"org"');
      expect(schema, profile).toMatchObject({
        properties: {
          due: { description: "Days to pay. Default: 30 (the proxy sets it when left out)." },
        },
      });
      expect((schema as Schema).required, profile).toContain("amount");
      if (profile !== "openai-strict")
        expect((schema as Schema).required, profile).not.toContain("due");
      // What the rest still refers to stays.
      if (profile === "mcp") expect(schema).toMatchObject({ $defs: { Line: {} } });
    },
  );
});

describe("a root $ref's definition, merged", () => {
  const rule = rulesOf({ tools: { x: { fixed: { org: "acme" } } } }).ruleFor("x") as ToolRule;
  const Args = { type: "object", properties: { org: { type: "string" }, a: { type: "string" } } };
  const elsewhere = {
    dependentSchemas: { a: { $ref: "#/$defs/Args" } },
    propertyNames: { $ref: "#/$defs/Args" },
    unevaluatedProperties: { $ref: "#/$defs/Args" },
    "x-later-draft": { $ref: "#/$defs/Args" },
  };

  it.each(Object.entries(elsewhere))(
    "stays where the schema still refers to it, from %s",
    (keyword, value) => {
      const original = { $ref: "#/$defs/Args", $defs: { Args }, [keyword]: value };
      for (const profile of PROFILE_NAMES) {
        const { schema } = listedView(original, rule, profile);
        // Every `$ref` the view keeps points at something: a provider or client resolves it.
        const refs = JSON.stringify(schema).match(/"\$ref":"[^"]*"/g) ?? [];
        for (const ref of refs) {
          const pointer = (JSON.parse(`{${ref}}`) as { $ref: string }).$ref;
          expect(refTarget(pointer, schema as Schema), `${profile}, ${pointer}`).toBeDefined();
        }
      }
    },
  );
});

describe("any schema an origin may write, under a rule (property)", () => {
  const schema = anySchema({
    keywords: [
      ...["type", "properties", "required", "anyOf", "oneOf", "allOf", "then", "else"],
      ...["$ref", "$defs", "definitions", "dependentRequired", "description", "__proto__"],
      ...["dependentSchemas", "dependencies"],
    ],
    refs: fc.constantFrom("#", "#/$defs/a", "#/$defs/b", "#/definitions/a", "#/$defs/%61"),
    names: ["a", "b", "org", "due", "__proto__"],
    leaves: ["org", "due", ["org", "due"], ["a"], "object"],
  });
  const rule = rulesOf({
    tools: { x: { fixed: { org: "acme" }, defaults: { due: 30 } } },
  }).ruleFor("x") as ToolRule;

  it("is shaped within the stack and a bound, however deep or self-referring", () => {
    let anyOf: unknown = { properties: { org: {} } };
    for (let i = 0; i < 5_000; i++) anyOf = { anyOf: [anyOf, { $ref: "#" }], else: anyOf };
    // Each branch a `$ref` to a definition of two branches, 40 levels: 2^40 forms, if followed.
    const $defs: Record<string, unknown> = { d40: { properties: { org: {} } } };
    for (let i = 0; i < 40; i++)
      $defs[`d${i}`] = { anyOf: [{ $ref: `#/$defs/d${i + 1}` }, { $ref: `#/$defs/d${i + 1}` }] };
    for (const original of [anyOf, { $ref: "#/$defs/d0", $defs }]) {
      for (const profile of PROFILE_NAMES) {
        expect(() =>
          schemaView(presentedSchema(original, rule), SCHEMA_PASSES[profile]),
        ).not.toThrow();
      }
    }
  });

  it("is shaped within a bound however many forms refer to one large definition, or however deep", () => {
    // 31 KB of schema: each form merged and shaped whole took 1.8 s and a million properties.
    const properties = Object.fromEntries(Array.from({ length: 1_000 }, (_, i) => [`p${i}`, {}]));
    const wide = {
      anyOf: Array.from({ length: 1_000 }, () => ({ $ref: "#/$defs/Args" })),
      $defs: { Args: { type: "object", properties: { ...properties, org: {} } } },
    };
    // 38 KB of schema, forms of no properties: each wrote the enum again, 15 MB listed at /mcp.
    const enumerated = {
      anyOf: Array.from({ length: 1_000 }, () => ({ $ref: "#/$defs/Args" })),
      $defs: {
        Args: { type: "object", enum: Array.from({ length: 1_000 }, (_, i) => ({ org: `o${i}` })) },
      },
    };
    // Past the bound on levels of forms, the forms deeper were listed as the origin wrote them.
    let deep: unknown = { type: "object", properties: { org: {}, a: {} }, required: ["org"] };
    for (let i = 0; i < 20; i++) deep = { anyOf: [deep, { properties: { b: {} } }] };
    for (const original of [wide, enumerated, deep]) {
      const presented = presentedSchema(original, rule);
      // About as much as a view of `MAX_NODES` nodes writes.
      expect(JSON.stringify(presented).length).toBeLessThan(512 * 1024);
      for (const profile of PROFILE_NAMES) {
        const { schema: view } = schemaView(presented, SCHEMA_PASSES[profile]);
        for (const form of argumentForms(view, view, 32)) {
          if (isPlainObject(form.properties))
            expect(form.properties, profile).not.toHaveProperty("org");
        }
      }
    }
  });

  it("leaves a fixed argument out of what applies where a property is given, and a default unrequired", () => {
    const given = { properties: { org: { const: "acme" } }, required: ["org", "due"] };
    const keywords = {
      dependentSchemas: { a: given },
      dependencies: { a: given, b: ["org", "due", "a"] },
    };
    for (const [keyword, map] of Object.entries(keywords)) {
      const original = {
        type: "object",
        properties: { org: {}, due: {}, a: {}, b: {} },
        [keyword]: map,
      };
      for (const profile of PROFILE_NAMES) {
        const { schema: view } = schemaView(
          presentedSchema(original, rule),
          SCHEMA_PASSES[profile],
        );
        const at = `${profile}, ${keyword}`;
        for (const form of argumentForms(view)) {
          if (isPlainObject(form.properties)) expect(form.properties, at).not.toHaveProperty("org");
          expect(form.required ?? [], at).not.toContain("org");
          if (profile !== "openai-strict") expect(form.required ?? [], at).not.toContain("due");
        }
        // A list of names: as `dependentRequired`'s, those the proxy sets left out.
        const names = (view as Schema)[keyword] as Record<string, unknown> | undefined;
        if (keyword === "dependencies" && names) expect(names.b, at).toEqual(["a"]);
      }
    }
  });

  it("requires no defaulted argument its own schema says is required, as draft 3 writes it", () => {
    const original = {
      type: "object",
      properties: { due: { type: "integer", required: true }, org: { required: true } },
    };
    for (const profile of PROFILE_NAMES) {
      const { schema: view } = schemaView(presentedSchema(original, rule), SCHEMA_PASSES[profile]);
      const due = ((view as Schema).properties as Schema).due as Schema;
      if (profile !== "openai-strict") expect((view as Schema).required ?? [], profile).toEqual([]);
      else expect(takesNull(due), profile).toBe(true);
      expect(due, profile).not.toHaveProperty("required");
    }
  });

  it("requires what a fixed argument requires where it is given: the proxy always gives it", () => {
    for (const keyword of ["dependentRequired", "dependencies"]) {
      const original = {
        type: "object",
        properties: { org: {}, b: { type: "string" } },
        [keyword]: { org: ["b", "due"] },
      };
      for (const profile of PROFILE_NAMES) {
        const { schema: view } = schemaView(
          presentedSchema(original, rule),
          SCHEMA_PASSES[profile],
        );
        const at = `${profile}, ${keyword}`;
        expect((view as Schema).required ?? [], at).toContain("b");
        expect((view as Schema).required ?? [], at).not.toContain("due");
        expect(takesNull(((view as Schema).properties as Schema).b), at).toBe(false);
      }
    }
  });

  it("leaves a fixed argument out of an allOf branch beside a $ref back to the root", () => {
    // Found by the property below in CI (seed -22910979).
    const original = { allOf: [{ $ref: "#", properties: { org: {}, amount: {} } }] };
    for (const profile of PROFILE_NAMES) {
      const { schema: view } = schemaView(presentedSchema(original, rule), SCHEMA_PASSES[profile]);
      for (const form of argumentForms(view)) {
        if (isPlainObject(form.properties))
          expect(form.properties, profile).not.toHaveProperty("org");
      }
      expect(JSON.stringify(view), profile).toContain('"amount"');
    }
  });

  it("leaves a fixed argument out of an allOf branch whose $ref leads back to the root through another", () => {
    // `A` is the root again and says more beside: kept as it was, `A` was a form listing org.
    const original = {
      allOf: [{ $ref: "#/$defs/A" }],
      $defs: { A: { $ref: "#", properties: { org: {}, amount: {} }, required: ["org"] } },
    };
    for (const profile of PROFILE_NAMES) {
      const { schema: view } = schemaView(presentedSchema(original, rule), SCHEMA_PASSES[profile]);
      for (const form of argumentForms(view)) {
        if (isPlainObject(form.properties))
          expect(form.properties, profile).not.toHaveProperty("org");
        expect(form.required ?? [], profile).not.toContain("org");
      }
      expect(Object.keys((view as Schema).properties as Schema), profile).toEqual(["amount"]);
    }
  });

  it("is shaped under every profile without a throw, the origin's schema left as it was", () => {
    fc.assert(
      fc.property(schema, (original) => {
        const before = structuredClone(original);
        for (const profile of PROFILE_NAMES) {
          const { schema: view } = schemaView(
            presentedSchema(original, rule),
            SCHEMA_PASSES[profile],
          );
          for (const form of argumentForms(view)) {
            if (isPlainObject(form.properties)) expect(form.properties).not.toHaveProperty("org");
          }
        }
        expect(original).toEqual(before);
      }),
      { numRuns: 1_000 },
    );
  });
});
