import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import { echoTools } from "../../demo/src/tools";
import { coalesceKeys, spellingsOf } from "../../src/args/coalesce";
import { coerceValue } from "../../src/args/coerce";
import { describeInvalidCall } from "../../src/args/fix-it-text";
import { allowedTypes } from "../../src/args/json-schema";
import { recoverArguments } from "../../src/args/recover";
import { repairArguments } from "../../src/args/repair";
import { missingKey, validateArguments } from "../../src/args/validate";
import { stringifyExact } from "../../src/json";
import { paramHeaders, paramMismatch } from "../../src/protocol/mcp-headers";
import { SCHEMA_PASSES } from "../../src/schemas/profile";
import { schemaView } from "../../src/schemas/view";
import { ROOT_SHAPES, withRoot } from "../fixtures/root-shapes";
import { NOTHING_REPAIRED } from "../helpers/nothing-repaired";

const schemaOf = (name: string) => echoTools.find((tool) => tool.name === name)?.inputSchema;
const FILES_READ = schemaOf("files.read");
const INVOICE = schemaOf("catering.invoice");

const recovered = (params: Record<string, unknown>) => {
  const result = recoverArguments(params);
  if (result.kind === "refused") throw new Error(result.message);
  return { arguments: result.arguments, recovery: result.recovery, envelope: result.envelope };
};

describe("recovering the arguments (envelope)", () => {
  it.each([
    [
      "empty arguments, fields inline",
      { name: "t", arguments: {}, path: "x" },
      { path: "x" },
      "inline",
    ],
    ["no arguments key, fields inline", { name: "t", path: "x" }, { path: "x" }, "inline"],
    ["arguments authoritative", { name: "t", arguments: { a: 1 }, path: "x" }, { a: 1 }, "as_sent"],
    [
      "null arguments, fields inline",
      { name: "t", arguments: null, path: "x" },
      { path: "x" },
      "inline",
    ],
    ["args object, nothing inline", { name: "t", args: { path: "x" } }, { path: "x" }, "args"],
    [
      "args as JSON text, nothing inline",
      { name: "t", args: '{"path":"x"}' },
      { path: "x" },
      "args",
    ],
    [
      "arguments as JSON text",
      { name: "t", arguments: '{"path":"x"}' },
      { path: "x" },
      "json_string",
    ],
    ["null arguments, nothing else", { name: "t", arguments: null }, {}, "empty"],
    ["no arguments at all", { name: "t" }, undefined, "empty"],
  ])("%s", (_, params, args, recovery) => {
    expect(recovered(params)).toMatchObject({ arguments: args, recovery });
  });

  it("keeps the envelope and never leaks it into the arguments", () => {
    const meta = { progressToken: 1 };
    const result = recovered({
      name: "t",
      arguments: {},
      path: "x",
      _meta: meta,
      task: { ttl: 1 },
      inputResponses: { a: 1 },
      requestState: "s",
    });
    expect(result.arguments).toEqual({ path: "x" });
    expect(result.envelope).toEqual({
      name: "t",
      _meta: meta,
      task: { ttl: 1 },
      inputResponses: { a: 1 },
      requestState: "s",
    });
  });

  it("forwards the members beside authoritative arguments as sent, unread; inline ones are the arguments", () => {
    const beside = { "x-vendor": { trace: 1 }, hint: 2 };
    for (const [params, args, recovery] of [
      [{ name: "t", arguments: { a: 1 }, ...beside, args: { b: 2 } }, { a: 1 }, "as_sent"],
      [{ name: "t", ...beside, arguments: '{"a":1}' }, { a: 1 }, "json_string"],
      [{ name: "t", arguments: {}, ...beside }, beside, "inline"],
    ] as const) {
      const result = recoverArguments(params);
      expect(result).toMatchObject({
        arguments: args,
        recovery,
        unknown:
          recovery === "inline"
            ? {}
            : { ...beside, ...("args" in params ? { args: { b: 2 } } : {}) },
        // Arguments as sent, and members beside them as sent: the params as the client wrote them.
        changed: recovery !== "as_sent",
      });
    }
    // An `args` beside authoritative arguments is not used: one more member forwarded as sent,
    // which search mode's carried call leaves out as it does the others (search-mode.ts).
    const unused = recoverArguments({ name: "t", arguments: { a: 1 }, args: { b: 2 }, _meta: {} });
    const { envelope, unknown } = unused.kind === "recovered" ? unused : {};
    expect({ envelope, unknown }).toEqual({
      envelope: { name: "t", _meta: {} },
      unknown: { args: { b: 2 } },
    });
  });

  it("drops args from the envelope once its fields became the arguments", () => {
    expect(recovered({ name: "t", args: { a: 1 } }).envelope).toEqual({ name: "t" });
  });

  it.each([
    [
      "an array",
      { name: "t", arguments: [1, 2] },
      "`arguments` must be an object, not array",
      { member: "arguments", malformed: "array" },
    ],
    [
      "a number",
      { name: "t", arguments: 42 },
      "`arguments` must be an object, not integer",
      { member: "arguments", malformed: "integer" },
    ],
    [
      "non-JSON text",
      { name: "t", arguments: "path=x" },
      "not a string that is not a JSON object",
      { member: "arguments", malformed: "text_not_json_object" },
    ],
    [
      "JSON text of an array",
      { name: "t", arguments: "[1]" },
      "not a string that is not a JSON object",
      { member: "arguments", malformed: "text_not_json_object" },
    ],
    [
      "JSON text nested too deep",
      { name: "t", arguments: `${"[".repeat(600)}${"]".repeat(600)}` },
      "not a JSON text nested deeper than",
      { member: "arguments", malformed: "text_nested_too_deep" },
    ],
    [
      "args as text of no object, nothing inline",
      { name: "t", args: '["x"]' },
      "`args` must be an object, not a string that is not a JSON object",
      { member: "args", malformed: "text_not_json_object" },
    ],
  ])("refuses %s, saying what it is for the log", (_, params, says, malformed) => {
    const result = recoverArguments(params);
    expect(result.kind).toBe("refused");
    expect(result.kind === "refused" && result.message).toContain(says);
    expect(result.kind === "refused" && result.malformed).toEqual(malformed);
  });
});

describe("coalescing keys", () => {
  const repair = (args: Record<string, unknown>, schema: unknown = INVOICE) =>
    repairArguments(args, schema);

  it.each(["payload-json", "payloadJson", "PAYLOAD_JSON", "payload.json", "Payload Json"])(
    "%s → payload_json",
    (alias) => {
      const { arguments: args, report } = repair({ [alias]: { invoice_id: "INV-1" } });
      expect(args).toEqual({ payload_json: { invoice_id: "INV-1" } });
      expect(report.renamedKeys).toEqual([{ from: alias, to: "payload_json" }]);
    },
  );

  it("lets the declared key win over an alias, in either order", () => {
    const declaredFirst = repair({ payload_json: { a: 1 }, payloadJson: { b: 2 } }).arguments;
    const aliasFirst = repair({ payloadJson: { b: 2 }, payload_json: { a: 1 } }).arguments;
    expect(declaredFirst.payload_json).toEqual({ a: 1 });
    expect(aliasFirst.payload_json).toEqual({ a: 1 });
  });

  it("takes the alias's value when the declared key is null", () => {
    for (const args of [
      { payload_json: null, "payload-json": { b: 2 } },
      { "payload-json": { b: 2 }, payload_json: null },
    ]) {
      expect(repair(args).arguments).toEqual({ payload_json: { b: 2 } });
    }
  });

  it("takes a non-null alias's value over a null alias's, in either order", () => {
    // A model that writes the key twice, once empty: the value it wrote is not lost to the null.
    const value = { invoice_id: "INV-1", amount: "19.5" };
    const repaired = { invoice_id: "INV-1", amount: 19.5 };
    expect(repair({ "payload-json": null, payloadJson: value }).arguments).toEqual({
      "payload-json": null,
      payload_json: repaired,
    });
    expect(repair({ payloadJson: value, "payload-json": null }).arguments).toEqual({
      payload_json: repaired,
      "payload-json": null,
    });
    expect(
      repair({ payload_json: null, "payload-json": null, payloadJson: value }).arguments,
    ).toEqual({ payload_json: repaired, "payload-json": null });
    // Two aliases that both say something: the first, as before.
    expect(repair({ payloadJson: { amount: 1 }, "payload-json": { amount: 2 } }).arguments).toEqual(
      { payload_json: { amount: 1 }, "payload-json": { amount: 2 } },
    );
  });

  it("drops a losing alias only where the schema forbids additional properties", () => {
    const strict = {
      type: "object",
      properties: { max_bytes: { type: "integer" } },
      additionalProperties: false,
    };
    expect(repair({ max_bytes: 1, maxBytes: 2 }, strict).arguments).toEqual({ max_bytes: 1 });
    expect(repair({ max_bytes: 1, maxBytes: 2 }, FILES_READ).arguments).toEqual({
      max_bytes: 1,
      maxBytes: 2,
    });
  });

  it("leaves keys alone where the schema also takes keys by pattern: the key may be one of them", () => {
    // An `x-` header of the origin's own, and one the schema declares: `x-trace` is a patterned key,
    // and must neither be renamed to `x_trace` nor, as a losing alias, dropped.
    const schema = {
      type: "object",
      properties: { x_trace: { type: "string" } },
      patternProperties: { "^x-": { type: "string" } },
      additionalProperties: false,
    };
    const both = repair({ x_trace: "a", "x-trace": "b" }, schema);
    expect(both.arguments).toEqual({ x_trace: "a", "x-trace": "b" });
    expect(both.report.dropped).toEqual([]);
    const alone = repair({ "x-trace": "b" }, schema);
    expect(alone.arguments).toEqual({ "x-trace": "b" });
    expect(alone.report.renamedKeys).toEqual([]);
    // Values under declared keys are still repaired.
    expect(repair({ x_trace: 5 }, schema).arguments).toEqual({ x_trace: "5" });
  });

  it("leaves keys alone where the schema takes other keys by a schema of their own: the key may be one", () => {
    // A map with one key declared (labels, env, headers): `appName` is a label the origin takes as
    // an integer; renamed to `app_name`, it was made the string "5" the declared key wants.
    const schema = {
      type: "object",
      properties: {
        labels: {
          type: "object",
          properties: { app_name: { type: "string" } },
          additionalProperties: { type: "integer" },
        },
      },
    };
    const sent = { labels: { appName: 5 } };
    expect(validateArguments(sent, schema).kind).toBe("valid");
    const { arguments: back, report } = repair(sent, schema);
    expect(back).toEqual(sent);
    expect(report.renamedKeys).toEqual([]);
    // `true` and `{}` say nothing of the other keys: an alias is still the declared key.
    for (const additionalProperties of [true, {}]) {
      const open = { ...schema.properties.labels, additionalProperties };
      expect(repair({ appName: "x" }, open).arguments).toEqual({ app_name: "x" });
    }
  });

  describe("where a schema says it beside its $ref (2020-12 applies both)", () => {
    // The same object three ways: at the root, at the end of a chain of $refs, and in a property.
    const placed = (object: Record<string, unknown>, $defs: Record<string, unknown>) => ({
      "at the root": { ...object, $defs },
      "through a chain of $refs": {
        $ref: "#/$defs/Args",
        required: [],
        $defs: { ...$defs, Args: { $ref: "#/$defs/Via" }, Via: object },
      },
      "in a property": { type: "object", properties: { p: object }, $defs },
    });
    const inside = (at: string, args: Record<string, unknown>) =>
      at === "in a property" ? { p: args } : args;

    it.each(
      Object.entries(
        placed(
          {
            $ref: "#/$defs/Sized",
            properties: { max_bytes: { type: "integer" } },
            additionalProperties: false,
          },
          { Sized: { type: "object", minProperties: 1 } },
        ),
      ),
    )(
      "drops a losing alias where additionalProperties: false stands beside it, %s",
      (at, schema) => {
        // The origin refuses `maxBytes` (no property beside the $ref declares it): left in, the
        // call it would take fails.
        const sent = inside(at, { max_bytes: 1, maxBytes: 2 });
        expect(validateArguments(sent, schema).kind).toBe("invalid");
        const { arguments: back, report } = repair(sent, schema);
        expect(back).toEqual(inside(at, { max_bytes: 1 }));
        expect(report.dropped).toEqual([at === "in a property" ? "p.maxBytes" : "maxBytes"]);
        expect(validateArguments(back, schema).kind).toBe("valid");
      },
    );

    it.each(
      Object.entries(
        placed(
          { $ref: "#/$defs/Limits", patternProperties: { "^x-": { type: "string" } } },
          { Limits: { type: "object", properties: { x_limit: { type: "integer" } } } },
        ),
      ),
    )("renames no key where patternProperties stands beside it, %s", (at, schema) => {
      // `x-limit` is the origin's patterned key, which it takes as sent; as `x_limit`, an integer,
      // it would be refused.
      const sent = inside(at, { "x-limit": "low" });
      expect(validateArguments(sent, schema).kind).toBe("valid");
      const { arguments: back, report } = repair(sent, schema);
      expect(back).toEqual(sent);
      expect(report.renamedKeys).toEqual([]);
    });
  });

  it("leaves keys alone when two declared properties fold alike", () => {
    const schema = { type: "object", properties: { user_id: {}, userId: {} } };
    expect(repair({ "user-id": 1 }, schema).arguments).toEqual({ "user-id": 1 });
  });

  it("renames inside nested objects, and in objects that came as JSON text", () => {
    const schema = {
      type: "object",
      properties: {
        order: {
          type: "object",
          properties: {
            line_items: {
              type: "array",
              items: { type: "object", properties: { sku_code: { type: "string" } } },
            },
          },
        },
      },
    };
    const { arguments: args, report } = repair(
      { Order: '{"lineItems":[{"skuCode":"A"},{"SKU_CODE":7}]}' },
      schema,
    );
    expect(args).toEqual({ order: { line_items: [{ sku_code: "A" }, { sku_code: "7" }] } });
    expect(report.renamedKeys).toContainEqual({ from: "order.lineItems", to: "order.line_items" });
    expect(report.coercions).toContainEqual({ path: "order", from: "string", to: "object" });
  });

  it("passes unknown keys through, in their place", () => {
    expect(
      Object.keys(repair({ zeta: 1, maxBytes: "5", path: "p" }, FILES_READ).arguments),
    ).toEqual(["zeta", "max_bytes", "path"]);
  });

  it("folds each declared key once per call, however many objects its schema applies to", () => {
    // Folded again for each object, 1,000 declared keys and 9,990 objects of an 80 KB body took
    // 2.5 s of CPU. Counted by the case folds (foldedKey's toUpperCase) the repair makes.
    const width = 1_000;
    const properties = Object.fromEntries(
      Array.from({ length: width }, (_, i) => [`field_${i}`, { type: "string" }]),
    );
    const schema = {
      type: "object",
      properties: { rows: { type: "array", items: { type: "object", properties } } },
    };
    const objects = 200;
    const rows = Array.from({ length: objects }, () => ({ fieldZero: "a", field_1: 1 }));
    const folds = vi.spyOn(String.prototype, "toUpperCase");
    try {
      const { arguments: args } = repairArguments({ rows }, schema);
      // Still repaired: each object's number brought to the declared string.
      expect((args.rows as unknown[])[0]).toEqual({ fieldZero: "a", field_1: "1" });
      // The declared keys once, and each key of each object once (both its own).
      expect(folds.mock.calls.length).toBeLessThanOrEqual(width + 2 + objects * 2);
    } finally {
      folds.mockRestore();
    }
  });

  it("folds the declared keys of a schema many properties name by $ref once, and at most a bound of keys a call", () => {
    // Read again for each property that names it (by `$ref`, or through a form of its own), an
    // origin's 0.58 MB schema of 1,000 properties naming one object of 20,000 keys took 22 s of
    // CPU for one call of 1,000 small objects. Counted by the case folds the repair makes.
    const width = 5_000;
    const declared = Object.fromEntries(
      Array.from({ length: width }, (_, i) => [`field_${i}`, { type: "string" }]),
    );
    const named = 200;
    const properties: Record<string, unknown> = {};
    const args: Record<string, unknown> = {};
    for (let i = 0; i < named; i++) {
      properties[`by_ref_${i}`] = { $ref: "#/$defs/Row" };
      properties[`by_form_${i}`] = { allOf: [{ $ref: "#/$defs/Row" }] };
      args[`by_ref_${i}`] = { fieldZero: "a", field_1: 1 };
      args[`by_form_${i}`] = { field_1: 1 };
    }
    const schema = {
      type: "object",
      properties,
      $defs: { Row: { type: "object", properties: declared } },
    };
    const folds = vi.spyOn(String.prototype, "toUpperCase");
    try {
      const { arguments: repaired, report } = repairArguments(args, schema);
      // Each object by `$ref` still repaired: its number brought to the declared string.
      expect(repaired.by_ref_0).toEqual({ fieldZero: "a", field_1: "1" });
      expect(repaired[`by_ref_${named - 1}`]).toEqual({ fieldZero: "a", field_1: "1" });
      // Each one's declared keys folded again: 2 million folds for one call.
      expect(folds.mock.calls.length).toBeLessThanOrEqual(100_000 + width + 4 * named);
      // Past the bound, an object is left as it came, and the report says so.
      expect(report.limited).toBe(true);
    } finally {
      folds.mockRestore();
    }
  });

  it("keeps the order of the keys it does not touch", () => {
    const { entries } = coalesceKeys({ b: 1, a: 2 }, spellingsOf(["a", "b"]), false);
    expect(entries).toEqual([
      ["b", 1],
      ["a", 2],
    ]);
  });
});

describe("coercing values", () => {
  const coerce = (value: unknown, schema: unknown) => {
    // A number's text, as a body that writes it as JSON.stringify does gives it.
    const written = typeof value === "number" ? JSON.stringify(value) : undefined;
    const result = coerceValue(value, allowedTypes(schema, {}) ?? new Set(), written);
    return result === "drop" ? "drop" : result?.value;
  };

  it.each([
    ["42", { type: "integer" }, 42],
    ["-7", { type: "integer" }, -7],
    ["4.5", { type: "number" }, 4.5],
    ["1e3", { type: "number" }, 1000],
    ["true", { type: "boolean" }, true],
    ["false", { type: "boolean" }, false],
    [3, { type: "string" }, "3"],
    [true, { type: "string" }, "true"],
    [{ a: 1 }, { type: "string" }, '{"a":1}'],
    [[1, 2], { type: "string" }, "[1,2]"],
    ['{"a":1}', { type: "object" }, { a: 1 }],
    ["[1,2]", { type: "array" }, [1, 2]],
    ["x", { type: "array" }, ["x"]],
    [3, { type: "array" }, [3]],
    [{ a: 1 }, { type: "array" }, [{ a: 1 }]],
    ["42", { type: ["integer", "null"] }, 42],
    ["42", { anyOf: [{ type: "integer" }, { type: "null" }] }, 42],
    [3, { enum: ["1", "2", "3"] }, "3"],
    // allOf: every branch that says a type must be met (schemars 0.8's described `$ref`).
    ["7", { description: "Count", allOf: [{ type: "integer" }] }, 7],
    ["7", { allOf: [{ type: ["integer", "string"] }, { type: "integer" }] }, 7],
  ])("%o for %o → %o", (value, schema, expected) => {
    expect(coerce(value, schema)).toEqual(expected);
  });

  it.each([
    ["4.5", { type: "integer" }],
    ["yes", { type: "boolean" }],
    ["12abc", { type: "integer" }],
    ["007", { type: "integer" }],
    [" 42", { type: "number" }],
    ["1e400", { type: "number" }],
    ["1", { type: "string" }],
    ["42", {}],
    ['{"a":1', { type: "object" }],
    [4.5, { type: "integer" }],
    // Branches that allow no type in common: nothing to bring the value to.
    ["7", { allOf: [{ type: "string" }, { type: "integer" }] }],
    // A list written as text (`"bug,urgent"`: two labels, or one with a comma in it?), and an
    // empty string (no value at all): made a list of one, either is valid with another meaning.
    ["bug,urgent", { type: "array", items: { type: "string" } }],
    ["a, b", { type: "array" }],
    ["", { type: "array", items: { type: "string" } }],
  ])("refuses %o for %o", (value, schema) => {
    expect(coerce(value, schema)).toBeUndefined();
  });

  it("makes a string a number written with the string's digits, which a double may round", () => {
    for (const [text, type] of [
      ["9007199254740993", "integer"],
      ["12345678901234567891", "integer"],
      ["1234567890.1234567", "number"],
      ["512", "integer"],
      // Read as 0 and as 1.2347e-320: the model meant neither.
      ["1e-400", "integer"],
      ["1.23456789e-320", "number"],
    ]) {
      const coerced = coerceValue(text, new Set(["number", "integer"]));
      expect(coerced, text).toEqual({
        value: Number(text),
        written: text,
        from: "string",
        to: type,
      });
    }
  });

  it("makes a string in an exponent's form a number for an integer where its text writes one", () => {
    // A view shows an origin's `1e+16` as it wrote it (a double past 2^53: JSON.stringify writes
    // 1e21 so); the model sends that text back.
    for (const text of ["1e+16", "1.5e1", "2.50E2", "1.0", "100e-2", "0e-7", "-3e0"]) {
      expect(coerceValue(text, new Set(["integer"])), text).toEqual({
        value: Number(text),
        written: text,
        from: "string",
        to: "integer",
      });
    }
    // Not integers as written, whatever their doubles are (`1e-400` reads as 0).
    for (const text of ["1e-400", "1.5", "1.25e1", "1e", `1.${"0".repeat(100_000)}1e3`]) {
      expect(coerceValue(text, new Set(["integer"])), text).toBeUndefined();
    }
  });

  it("makes a megabyte of digits a number written as sent, in time linear in them", () => {
    // Its significant digits were counted by a regex that backtracks over a run of zeros, once for
    // each of them: 4 s of CPU for 80,000, and a megabyte's would take some ten minutes.
    const schema = {
      type: "object",
      properties: { n: { type: "number" }, ids: { type: "array", items: { type: "integer" } } },
    };
    const fraction = `0.1${"0".repeat(1_000_000)}1`;
    const integer = "9".repeat(300);
    const { arguments: args, exact } = repairArguments({ n: fraction, ids: [integer] }, schema);
    expect(stringifyExact(args, exact)).toBe(`{"n":${fraction},"ids":[${integer}]}`);
  });

  it("drops null where the schema allows no null, and keeps it where it does", () => {
    expect(coerce(null, { type: "string" })).toBe("drop");
    expect(coerce(null, { type: ["string", "null"] })).toBeUndefined();
    const { arguments: args, report } = repairArguments({ path: "x", max_bytes: null }, FILES_READ);
    expect(args).toEqual({ path: "x" });
    expect(report.dropped).toEqual(["max_bytes"]);
  });

  it("keeps the null OpenAPI's nullable: true allows, as every view reads it, and validation takes it", () => {
    // zod-to-json-schema's openApi3 target and OpenAPI-generated servers write `nullable`.
    const schema = {
      type: "object",
      properties: {
        cursor: { type: "string", nullable: true },
        tags: { type: "array", items: { type: "string", nullable: true }, nullable: true },
        count: { type: "integer", nullable: false },
      },
      required: ["cursor"],
    };
    // A Gemini model reads `nullable`; Claude's view says `["string","null"]`: both may send null.
    for (const profile of ["gemini", "anthropic"] as const) {
      const readable = JSON.stringify(schemaView(schema, SCHEMA_PASSES[profile]).schema);
      expect(readable).toMatch(
        /"cursor":\{"type":(?:\["string","null"\]|"string","nullable":true)/,
      );
    }
    const sent = { cursor: null, tags: [null, "a"], count: null };
    const { arguments: args, report } = repairArguments(sent, schema);
    expect(args).toEqual({ cursor: null, tags: [null, "a"] });
    expect(report.dropped).toEqual(["count"]);
    expect(validateArguments(args, schema)).toEqual({ kind: "valid" });
    expect(validateArguments({ cursor: null, tags: null }, schema)).toEqual({ kind: "valid" });
  });

  it("leaves out an optional null its enum names none of, whatever its type says", () => {
    // `["string","null"]` beside `["asc","desc"]`, and OpenAPI's `nullable` of an enum
    // (zod-to-json-schema's openApi3 target): Gemini is shown `nullable`, and fills an optional
    // field with null.
    const schema = {
      type: "object",
      properties: {
        q: { type: "string" },
        sort: { type: ["string", "null"], enum: ["asc", "desc"] },
        order: { type: "string", nullable: true, enum: ["asc", "desc"] },
        kind: { type: ["string", "null"], const: "issue" },
        mode: { type: ["string", "null"], enum: ["fast", null] },
      },
      required: ["q"],
    };
    expect(schemaView(schema, SCHEMA_PASSES.gemini).schema).toMatchObject({
      properties: {
        sort: { type: "string", nullable: true, enum: ["asc", "desc"] },
        order: { type: "string", nullable: true, enum: ["asc", "desc"] },
      },
    });
    const sent = { q: "x", sort: null, order: null, kind: null, mode: null };
    const { arguments: args, report } = repairArguments(sent, schema);
    expect(args).toEqual({ q: "x", mode: null });
    expect(report.dropped).toEqual(["sort", "order", "kind"]);
    expect(validateArguments(args, schema)).toEqual({ kind: "valid" });
  });

  it.each(ROOT_SHAPES)(
    "keeps a null sent for a required property that takes none, so the origin answers it (%s root)",
    (shape) => {
      const schema = withRoot(
        {
          type: "object",
          properties: {
            q: { type: "string" },
            sort: { type: ["string", "null"], enum: ["asc", "desc"] },
            limit: { type: "integer" },
            note: { type: "string" },
          },
          required: ["q", "sort", "limit"],
        },
        shape,
      );
      const sent = { q: "x", sort: null, limit: null, note: null };
      const { arguments: args, report } = repairArguments(sent, schema);
      // Left out, they would be missing required fields the model did write.
      expect(args).toEqual({ q: "x", sort: null, limit: null });
      expect(report.dropped).toEqual(["note"]);
      const validation = validateArguments(args, schema);
      expect(validation.kind).toBe("invalid");
      if (validation.kind !== "invalid") return;
      expect(validation.issues.map((issue) => issue.keyword)).not.toContain("required");
      const text = describeInvalidCall("t", args, schema, validation.issues);
      expect(text).toContain("`sort`");
      expect(text).not.toContain("missing required field");
    },
  );

  it("reads `required: true` on the property itself (draft 3) as every view does", () => {
    const schema = {
      type: "object",
      properties: { limit: { type: "integer", required: true }, note: { type: "string" } },
    };
    expect(repairArguments({ limit: null, note: null }, schema).arguments).toEqual({ limit: null });
  });

  it('repairs the seed case: max_bytes "512" → 512', () => {
    const { arguments: args, report } = repairArguments(
      { path: "a", max_bytes: "512" },
      FILES_READ,
    );
    expect(args).toEqual({ path: "a", max_bytes: 512 });
    expect(report.coercions).toEqual([{ path: "max_bytes", from: "string", to: "integer" }]);
  });

  it("follows local $refs", () => {
    const schema = {
      type: "object",
      properties: { when: { $ref: "#/$defs/count" } },
      $defs: { count: { type: "integer" } },
    };
    expect(repairArguments({ when: "3" }, schema).arguments).toEqual({ when: 3 });
  });

  it("repairs the properties that anyOf, oneOf and allOf branches declare", () => {
    const schema = {
      anyOf: [
        { type: "object", properties: { id: { type: "integer" } }, required: ["id"] },
        { type: "object", properties: { email: { type: "string" } }, required: ["email"] },
      ],
    };
    expect(repairArguments({ id: "7" }, schema).arguments).toEqual({ id: 7 });
    expect(repairArguments({ "e-mail": "a@b.c" }, schema).arguments).toEqual({ email: "a@b.c" });
  });

  it("brings a property allOf branches declare twice to what all of them allow", () => {
    const schema = {
      type: "object",
      properties: { flag: { description: "On or off" } },
      allOf: [{ properties: { flag: { enum: [true, false] } } }],
    };
    expect(repairArguments({ flag: "true" }, schema).arguments).toEqual({ flag: true });
    const tags = {
      type: "object",
      properties: {
        ids: { description: "Ids", allOf: [{ type: "array", items: { type: "integer" } }] },
      },
    };
    expect(repairArguments({ ids: ["1", "2"] }, tags).arguments).toEqual({ ids: [1, 2] });
    // Declarations no value meets: nothing to bring a value to, and a null is not dropped.
    const never = {
      type: "object",
      properties: { v: { type: "string" } },
      allOf: [{ properties: { v: { type: "integer" } } }],
    };
    expect(repairArguments({ v: null }, never).arguments).toEqual({ v: null });
  });

  it("repairs the elements of an array one of a property's forms declares (pydantic's optional list)", () => {
    // FastMCP lists `lines: list[Line] | None = None` so: the array, or null.
    const line = {
      type: "object",
      properties: { sku: { type: "string" }, quantity: { type: "integer" } },
    };
    const optional = {
      type: "object",
      properties: {
        lines: { anyOf: [{ type: "array", items: { $ref: "#/$defs/Line" } }, { type: "null" }] },
      },
      $defs: { Line: line },
    };
    const { arguments: args, report } = repairArguments(
      {
        lines: [
          { sku: "A", quantity: "2" },
          { SKU: "B", Quantity: 1 },
        ],
      },
      optional,
    );
    expect(args).toEqual({
      lines: [
        { sku: "A", quantity: 2 },
        { sku: "B", quantity: 1 },
      ],
    });
    expect(report.coercions).toContainEqual({
      path: "lines[0].quantity",
      from: "string",
      to: "integer",
    });
    // Forms whose elements differ: each element stands for any of them, as a property declared
    // by several forms does; a form that takes no array says nothing of them.
    const either = {
      type: "object",
      properties: {
        ids: {
          oneOf: [
            { type: "array", items: { type: "integer" } },
            { type: "array", items: { type: "string", format: "uuid" } },
            { type: "string" },
          ],
        },
        any: { anyOf: [{ type: "array", items: { type: "integer" } }, { type: "array" }] },
      },
    };
    const sent = { ids: ["7"], any: ["7"] };
    expect(repairArguments(sent, either).arguments).toBe(sent);
    const numbers = {
      type: "object",
      properties: {
        n: { oneOf: [{ type: "array", items: { type: "integer" } }, { type: "integer" }] },
      },
    };
    expect(repairArguments({ n: ["1", 2] }, numbers).arguments).toEqual({ n: [1, 2] });
  });

  it("brings a map's values to the type its additionalProperties gives them (zod's record)", () => {
    const counts = { type: "object", additionalProperties: { type: "integer" } };
    const schema = {
      type: "object",
      properties: {
        counts,
        // pydantic's `dict[str, int] | None`, and a map beside declared keys.
        maybe: { anyOf: [counts, { type: "null" }] },
        mixed: {
          type: "object",
          properties: { total: { type: "string" } },
          additionalProperties: { type: "integer" },
        },
      },
    };
    const { arguments: args, report } = repairArguments(
      {
        counts: { "A-1": "2", b: 3 },
        maybe: '{"x":"4"}',
        mixed: { total: 5, "TOTAL-x": "6" },
      },
      schema,
    );
    expect(args).toEqual({
      counts: { "A-1": 2, b: 3 },
      maybe: { x: 4 },
      mixed: { total: "5", "TOTAL-x": 6 },
    });
    expect(report.coercions).toContainEqual({ path: "counts.A-1", from: "string", to: "integer" });
    // A key is data: a null under it is left for validation, never dropped; a key a pattern may
    // take, or one a form that declares properties may, is left as sent.
    const kept = { counts: { a: null } };
    expect(repairArguments(kept, schema).arguments).toBe(kept);
    const patterned = {
      type: "object",
      properties: {
        m: {
          type: "object",
          patternProperties: { "^s_": { type: "string" } },
          additionalProperties: { type: "integer" },
        },
        f: {
          anyOf: [
            { type: "object", additionalProperties: { type: "integer" } },
            { type: "object", properties: { n: { type: "string" } } },
          ],
        },
      },
    };
    const sent = { m: { s_1: "1" }, f: { n: "1" } };
    expect(repairArguments(sent, patterned).arguments).toBe(sent);
  });

  it("leaves a tuple's elements alone: items after prefixItems speaks of the elements past them", () => {
    // pydantic's `tuple[int, *tuple[str, ...]]`: an integer first, then strings.
    const schema = {
      type: "object",
      properties: {
        row: { type: "array", prefixItems: [{ type: "integer" }], items: { type: "string" } },
      },
    };
    const sent = { row: [1, "a", "b"] };
    expect(validateArguments(sent, schema)).toEqual({ kind: "valid" });
    const { arguments: args, report } = repairArguments(sent, schema);
    expect(args).toBe(sent);
    expect(report.coercions).toEqual([]);
  });

  it("brings a tuple's string to the number its place's enum names, as a gemini view asks, and no more", () => {
    // pydantic's `tuple[Priority, str]` (an IntEnum first), also `| None`, and draft-07's list.
    const priority = { type: "integer", enum: [1, 2, 3] };
    const schema = {
      type: "object",
      properties: {
        slot: { type: "array", prefixItems: [{ $ref: "#/$defs/P" }, { type: "string" }] },
        maybe: {
          anyOf: [
            { type: "array", prefixItems: [priority, { type: "integer" }] },
            { type: "null" },
          ],
        },
        old: { type: "array", items: [{ enum: [true, "auto"] }, priority] },
      },
      $defs: { P: priority },
    };
    const view = schemaView(schema, SCHEMA_PASSES.gemini).schema as {
      properties: { slot: { items: { anyOf: Array<{ enum?: unknown[] }> } } };
    };
    expect(view.properties.slot.items.anyOf[0]?.enum).toEqual(["1", "2", "3"]);
    const { arguments: args, report } = repairArguments(
      { slot: ["2", "docs"], maybe: ["3", "7"], old: ["true", "1"] },
      schema,
    );
    // A place that is no enum keeps its string ("7"), as a model may have put it in another place.
    expect(args).toEqual({ slot: [2, "docs"], maybe: [3, "7"], old: [true, 1] });
    expect(report.coercions).toContainEqual({ path: "slot[0]", from: "string", to: "integer" });
    const named = { slot: ["4", "docs"], old: ["auto", "x"] };
    expect(repairArguments(named, schema).arguments).toBe(named);
  });

  it("makes no element of an array an array: a flat row for a table may be one row or a column", () => {
    // Google Sheets' `values` (rows of cells): a model writes one row flat. Read element by
    // element, each cell became a row of its own: a column the origin writes where a row was meant.
    const schema = {
      type: "object",
      properties: {
        values: { type: "array", items: { type: "array", items: { type: "string" } } },
      },
    };
    for (const sent of [{ values: ["a", "b", "c"] }, { values: '["a","b","c"]' }]) {
      const { arguments: args } = repairArguments(sent, schema);
      // Left as the model wrote it (its text read): validation and the origin say what is wrong.
      expect(args).toEqual({ values: ["a", "b", "c"] });
      expect(validateArguments(args, schema).kind).toBe("invalid");
    }
    // Rows as sent stay rows; a lone value for a list is still made its one element.
    const rows = { values: [["a", "b"], ["c"]] };
    expect(repairArguments(rows, schema).arguments).toBe(rows);
    const list = {
      type: "object",
      properties: { paths: { type: "array", items: { type: "string" } } },
    };
    expect(repairArguments({ paths: "src/a.ts" }, list).arguments).toEqual({ paths: ["src/a.ts"] });
  });

  it("leaves a value alone that one of a property's several declarations accepts", () => {
    const schema = {
      oneOf: [
        { type: "object", properties: { at: { type: "string" } } },
        { type: "object", properties: { at: { type: "integer" } } },
      ],
    };
    expect(repairArguments({ at: 5 }, schema).arguments).toEqual({ at: 5 });
    expect(repairArguments({ at: "5" }, schema).arguments).toEqual({ at: "5" });
  });
});

describe("safety", () => {
  it("carries __proto__, constructor and prototype as data, touching no prototype", () => {
    const args = JSON.parse(
      '{"__proto__":{"polluted":true},"constructor":{"prototype":{"x":1}},"path":"p"}',
    );
    const schema = {
      type: "object",
      properties: { path: { type: "string" }, constructor: { type: "string" } },
    };
    const { arguments: repaired } = repairArguments(args, schema);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(repaired)).toBe(Object.prototype);
    expect(Object.hasOwn(repaired, "__proto__")).toBe(true);
    expect(repaired.constructor).toBe('{"prototype":{"x":1}}');
    const roundTrip = JSON.parse(JSON.stringify(repaired));
    expect(Object.getOwnPropertyDescriptor(roundTrip, "__proto__")?.value).toEqual({
      polluted: true,
    });
  });

  it("does not take an undeclared `constructor` for a declared property", () => {
    const { arguments: repaired } = repairArguments(
      { constructor: "7" },
      { type: "object", properties: {} },
    );
    expect(repaired).toEqual({ constructor: "7" });
  });

  it("reads a schema whose branches lead back to it, or branch again at every hop, within a budget", () => {
    const thrice = (ref: string) => [{ $ref: ref }, { $ref: ref }, { $ref: ref }];
    const cyclic = {
      type: "object",
      properties: { n: { $ref: "#/$defs/A" } },
      $defs: { A: { anyOf: thrice("#/$defs/A"), properties: { n: { type: "integer" } } } },
    };
    expect(repairArguments({ n: { n: "1" } }, cyclic).arguments).toEqual({ n: { n: 1 } });
    // No cycle: each of 17 hops branches three ways to the next.
    const $defs = Object.fromEntries(
      Array.from({ length: 17 }, (_, hop) => [
        `A${hop}`,
        hop === 16
          ? { type: "object", properties: { n: { type: "integer" } } }
          : { anyOf: thrice(`#/$defs/A${hop + 1}`) },
      ]),
    );
    const branching = { $ref: "#/$defs/A0", $defs };
    expect(repairArguments({ n: "1" }, branching).arguments).toEqual({ n: 1 });
  });

  it("reads what stands beside a $ref that leads back to itself, or branches at every hop, within a budget", () => {
    const thrice = (ref: string) => [{ $ref: ref }, { $ref: ref }, { $ref: ref }];
    const properties = { max_bytes: { type: "integer" } };
    const cyclic = {
      $ref: "#/$defs/A",
      $defs: { A: { $ref: "#/$defs/A", allOf: thrice("#/$defs/A"), properties } },
    };
    const sent = { max_bytes: 1, maxBytes: 2 };
    expect(repairArguments(sent, cyclic).arguments).toEqual(sent);
    // No cycle: each of 40 hops says a property beside its $ref and branches three ways to the
    // next; the last, which closes the object, is past the bound on hops (MAX_REF_HOPS) and not read.
    const $defs = Object.fromEntries(
      Array.from({ length: 40 }, (_, hop) => [
        `A${hop}`,
        hop === 39
          ? { type: "object", additionalProperties: false }
          : { $ref: `#/$defs/A${hop + 1}`, allOf: thrice(`#/$defs/A${hop + 1}`), properties },
      ]),
    );
    expect(repairArguments(sent, { $ref: "#/$defs/A0", $defs }).arguments).toEqual(sent);
  });

  it("renames no key where patternProperties may lie past what a reading follows", () => {
    // `x-limit` is the origin's patterned key, which it takes as sent; as `x_limit`, an integer,
    // it would be refused. Where the reading stops before it knows, no key is another spelling.
    const pattern = { patternProperties: { "^x-": { type: "string" } } };
    const properties = { x_limit: { type: "integer" } };
    const hops: Record<string, unknown> = { hop17: pattern };
    for (let hop = 0; hop < 17; hop++) hops[`hop${hop}`] = { $ref: `#/$defs/hop${hop + 1}` };
    let nested: Record<string, unknown> = pattern;
    for (let level = 0; level < 20; level++) nested = { allOf: [nested] };
    for (const [what, schema] of [
      ["past 64 branches", { properties, allOf: [...Array(64).fill({ type: "object" }), pattern] }],
      ["past 16 hops", { properties, allOf: [{ $ref: "#/$defs/hop0" }], $defs: hops }],
      ["past 16 levels of allOf", { properties, allOf: [nested] }],
    ] as const) {
      const sent = { "x-limit": "low" };
      const { arguments: back, report } = repairArguments(sent, schema);
      expect(back, what).toEqual(sent);
      expect(report.renamedKeys, what).toEqual([]);
    }
  });

  it("renames no key where a branch past what a reading follows may declare it", () => {
    // The 65th form declares `maxBytes`, which the origin takes as sent; as `max_bytes`, an
    // integer, it would be refused.
    const schema = {
      type: "object",
      properties: { max_bytes: { type: "integer" } },
      anyOf: [
        ...Array(64).fill({ required: [] }),
        { properties: { maxBytes: { type: "string" } } },
      ],
    };
    const sent = { maxBytes: "all" };
    expect(validateArguments(sent, schema).kind).toBe("valid");
    const { arguments: back, report } = repairArguments(sent, schema);
    expect(back).toEqual(sent);
    expect(report.renamedKeys).toEqual([]);
  });

  it("renames no key that a condition, or a $ref the reading cannot follow, may declare as sent", () => {
    // `maxBytes`, a string, is the origin's where the form declaring it applies; as `max_bytes`,
    // an integer, it would be refused.
    const declared = { properties: { maxBytes: { type: "string" } } };
    const properties = { kind: { type: "string" }, max_bytes: { type: "integer" } };
    // The branch by a computed key: lint reads a literal member named `then` as a promise's.
    const conditional = (branch: "then" | "else", form: unknown) => ({
      properties,
      if: { required: ["kind"] },
      [branch]: form,
    });
    for (const [what, schema] of [
      ["then", conditional("then", declared)],
      ["else", conditional("else", declared)],
      ["dependentSchemas", { properties, dependentSchemas: { kind: declared } }],
      ["dependencies", { properties, dependencies: { kind: declared } }],
      [
        "a $ref to an $anchor",
        { properties, allOf: [{ $ref: "#all" }], $defs: { All: { $anchor: "all", ...declared } } },
      ],
      ["a $ref to another document", { properties, allOf: [{ $ref: "all.json" }] }],
    ] as const) {
      const sent = { kind: "all", maxBytes: "all" };
      const { arguments: back, report } = repairArguments(sent, schema);
      expect(back, what).toEqual(sent);
      expect(report.renamedKeys, what).toEqual([]);
    }
    // A condition that declares no property leaves every key's spelling as it was read.
    const required = conditional("then", { required: ["max_bytes"] });
    expect(repairArguments({ kind: "all", maxBytes: "5" }, required).arguments).toEqual({
      kind: "all",
      max_bytes: 5,
    });
  });

  it("stops at its depth limit on very deep arguments, and says so", () => {
    let schema: Record<string, unknown> = { type: "integer" };
    let value: unknown = "1";
    for (let i = 0; i < 200; i++) {
      schema = { type: "object", properties: { n: schema } };
      value = { n: value };
    }
    const { report } = repairArguments(value as Record<string, unknown>, schema);
    expect(report.limited).toBe(true);
  });

  it("stops at its size limit on very large arguments", () => {
    const schema = {
      type: "object",
      properties: { list: { type: "array", items: { type: "integer" } } },
    };
    const list = Array.from({ length: 50_000 }, (_, i) => String(i));
    const { arguments: repaired, report } = repairArguments({ list }, schema);
    expect(report.limited).toBe(true);
    expect((repaired.list as unknown[])[0]).toBe(0);
    expect((repaired.list as unknown[])[49_999]).toBe("49999");
  });
});

describe("validation", () => {
  it("names the key a required issue misses, whatever characters the schema's name has", () => {
    for (const name of ["path", "two\nlines", 'say "hi"']) {
      const result = validateArguments({}, { type: "object", required: [name] });
      const issues = result.kind === "invalid" ? result.issues : [];
      expect(issues.map(missingKey), name).toEqual([name]);
    }
  });

  it("names missing and invalid fields, the keys received, and the closest declared key", () => {
    const args = { pth: "a", max_bytes: "lots" };
    const result = validateArguments(args, FILES_READ);
    expect(result.kind).toBe("invalid");
    const text = describeInvalidCall(
      "files.read",
      args,
      FILES_READ,
      result.kind === "invalid" ? result.issues : [],
    );
    expect(text).toContain("missing required field `path`");
    expect(text).toContain('`max_bytes`: Instance type "string" is invalid. Expected "integer".');
    expect(text).toContain("Keys received: `pth`, `max_bytes`.");
    expect(text).toContain("Unknown key `pth`: did you mean `path`?");
  });

  it("cuts a long key it names between characters, never inside an emoji", () => {
    // 63 letters, then an emoji: the bound (64) falls between its two UTF-16 units.
    const key = `${"k".repeat(63)}🔑 and more`;
    const args = { [key]: 1 };
    const schema = { type: "object", properties: { path: { type: "string" } } };
    const text = describeInvalidCall("t", args, schema, []);
    // What the model reads goes out as UTF-8: half an emoji has no encoding.
    expect(text.isWellFormed()).toBe(true);
    expect(text).toContain(`\`${"k".repeat(63)}…\``);
  });

  it("respects $schema", () => {
    const draft4 = {
      $schema: "http://json-schema.org/draft-04/schema#",
      type: "object",
      properties: { n: { type: "number", minimum: 0, exclusiveMinimum: true } },
    };
    expect(validateArguments({ n: 0 }, draft4).kind).toBe("invalid");
    expect(validateArguments({ n: 1 }, draft4).kind).toBe("valid");
  });

  it("reads boolean exclusive bounds the draft-04 way when no $schema says otherwise", () => {
    const bounded = {
      type: "object",
      properties: {
        n: { type: "number", minimum: 0, exclusiveMinimum: true },
        m: { type: "number", maximum: 9, exclusiveMaximum: false },
      },
    };
    expect(validateArguments({ n: 0 }, bounded).kind).toBe("invalid");
    expect(validateArguments({ n: 1, m: 9 }, bounded).kind).toBe("valid");
  });

  it("skips, and says why, arguments that would take a schema's branches along every path", () => {
    // A tree of tagged nodes: both `oneOf` branches check the children, so a chain of nodes is
    // checked once per path to it, 2^16 times at 16 deep (1.4 s of CPU) and twice that per level.
    const children = { type: "array", items: { $ref: "#/$defs/Node" } };
    const tree = {
      type: "object",
      properties: { root: { $ref: "#/$defs/Node" } },
      $defs: {
        Node: {
          oneOf: ["a", "b"].map((kind) => ({
            type: "object",
            properties: { kind: { const: kind }, children },
            required: ["kind"],
          })),
        },
      },
    };
    const chain = (depth: number): unknown =>
      depth === 0 ? { kind: "a" } : { kind: "a", children: [chain(depth - 1)] };
    expect(validateArguments({ root: chain(4) }, tree).kind).toBe("valid");
    expect(validateArguments({ root: { kind: "c" } }, tree).kind).toBe("invalid");
    expect(validateArguments({ root: chain(16) }, tree)).toEqual({
      kind: "skipped",
      reason: "more than 50000 checks",
    });
    // The same tree reached by `$id` or `$anchor`, as @cfworker/json-schema resolves them.
    const nodeReachedBy = (ref: string) => ({
      oneOf: ["a", "b"].map((kind) => ({
        type: "object",
        properties: { kind: { const: kind }, children: { type: "array", items: { $ref: ref } } },
        required: ["kind"],
      })),
    });
    const byId = {
      $id: "https://tools.example/tree",
      type: "object",
      properties: { root: { $ref: "node" } },
      $defs: { Node: { $id: "node", ...nodeReachedBy("node") } },
    };
    const byAnchor = {
      type: "object",
      properties: { root: { $ref: "#node" } },
      $defs: { Node: { $anchor: "node", ...nodeReachedBy("#node") } },
    };
    for (const schema of [byId, byAnchor]) {
      expect(validateArguments({ root: chain(4) }, schema).kind).toBe("valid");
      expect(validateArguments({ root: { kind: "c" } }, schema).kind).toBe("invalid");
      expect(validateArguments({ root: chain(16) }, schema)).toEqual({
        kind: "skipped",
        reason: "more than 50000 checks",
      });
    }
    // Repair's most, 10,000 values, each an `anyOf` of a type and null: checked.
    const rows = {
      type: "object",
      properties: {
        rows: { type: "array", items: { anyOf: [{ type: "integer" }, { type: "null" }] } },
      },
    };
    const many = Array.from({ length: 9_999 }, (_, i) => i);
    expect(validateArguments({ rows: [...many, "x"] }, rows).kind).toBe("invalid");
  });

  it("follows a schema's references as JSON Schema reads them, whatever members beside them say they resolve to", () => {
    // @cfworker/json-schema writes where each `$ref` leads on its node (`__absolute_ref__`,
    // `__absolute_recursive_ref__`, `__absolute_uri__`) and trusts the member where a node
    // has it already: one of the origin's beside `$ref` is data, not where the `$ref` leads.
    const node = "https://tools.example/tree#/$defs/Node";
    const tree = (beside: Record<string, unknown>) => {
      const ref = { $ref: node, ...beside };
      return {
        $id: "https://tools.example/tree",
        type: "object",
        properties: { root: ref },
        $defs: {
          Node: {
            oneOf: ["a", "b"].map((kind) => ({
              type: "object",
              properties: { kind: { const: kind }, children: { type: "array", items: ref } },
              required: ["kind"],
            })),
          },
          Other: { type: "string" },
        },
      };
    };
    const chain = (depth: number): unknown =>
      depth === 0 ? { kind: "a" } : { kind: "a", children: [chain(depth - 1)] };
    const skipped = { kind: "skipped", reason: "more than 50000 checks" };
    for (const beside of [
      { __absolute_ref__: "" },
      { __absolute_ref__: false },
      { __absolute_ref__: 0 },
      { __absolute_ref__: "https://tools.example/tree#/$defs/Other" },
      { __absolute_uri__: "https://tools.example/other", __absolute_recursive_ref__: "#" },
    ]) {
      expect(validateArguments({ root: chain(4) }, tree(beside)).kind).toBe("valid");
      expect(validateArguments({ root: { kind: "c" } }, tree(beside)).kind).toBe("invalid");
      // Counted as it is followed: a chain the client makes deep is not checked once per path.
      expect(validateArguments({ root: chain(16) }, tree(beside))).toEqual(skipped);
    }
  });

  it("holds each refusal of a long enum or const to a few of its values, however many values fail it", () => {
    // 600 time zones, 14 KB as JSON: written into the message of each of 4,000 values that fail
    // it, they came to 57 million characters, and 10,000 values to more than an isolate holds.
    const zones = Array.from({ length: 600 }, (_, i) => `America/Some_City_${i}`);
    const office = Object.fromEntries(zones.map((zone, i) => [`desk_${i}`, zone]));
    const schema = {
      type: "object",
      properties: {
        zones: { type: "array", items: { enum: zones } },
        office: { type: "array", items: { const: office } },
        desks: { type: "array", items: { const: zones } },
      },
    };
    const values = 4_000;
    const result = validateArguments(
      {
        zones: Array.from({ length: values }, () => "Mars/Olympus"),
        office: [{}],
        desks: [["America/Some_City_0"]],
      },
      schema,
    );
    expect(result.kind).toBe("invalid");
    const issues = result.kind === "invalid" ? result.issues : [];
    expect(issues).toHaveLength(values + 2);
    const characters = issues.reduce((sum, issue) => sum + issue.message.length, 0);
    expect(characters).toBeLessThan((values + 2) * 300);
    // Still what a model can act on: the values the enum starts with, and how many more.
    expect(issues[0]?.message).toMatch(
      /^Instance does not match any of \["America\/Some_City_0",.*"… and \d+ more"\]\.$/,
    );
    // And still the enum and the const that decide: a value of them passes.
    const passing = { zones: ["America/Some_City_599"], office: [office], desks: [zones] };
    expect(validateArguments(passing, schema)).toEqual({ kind: "valid" });
  });

  it("takes a const object with a member named toJSON as the origin does", () => {
    // A member of the origin's const, not a method: the value that holds it is the const.
    const schema = {
      type: "object",
      properties: { mode: { const: { toJSON: "raw", level: 2 } } },
      required: ["mode"],
    };
    expect(validateArguments({ mode: { toJSON: "raw", level: 2 } }, schema)).toEqual({
      kind: "valid",
    });
    expect(validateArguments({ mode: { level: 2 } }, schema).kind).toBe("invalid");
    // Written whole into each refusal, it is counted whole: 4,000 values failing a const of 600
    // members are more checks than validation makes, not 57 million characters of messages.
    const office = {
      toJSON: "raw",
      ...Object.fromEntries(
        Array.from({ length: 600 }, (_, i) => [`desk_${i}`, `America/Some_City_${i}`]),
      ),
    };
    const rows = {
      type: "object",
      properties: { rows: { type: "array", items: { const: office } } },
    };
    const many = validateArguments({ rows: Array.from({ length: 4_000 }, () => ({})) }, rows);
    const issues = many.kind === "invalid" ? many.issues : [];
    const characters = issues.reduce((sum, issue) => sum + issue.message.length, 0);
    expect(characters).toBeLessThan(4_000_000);
  });

  it("holds each refusal of a long type list to the types it names, however many values fail it", () => {
    // An origin's `type` of thousands of names (JSON Schema has seven): written into the
    // message of each value that fails it, 4,000 values came to 255 million characters.
    const junk = Array.from({ length: 5_000 }, (_, i) => `kind_${i}`);
    const schema = {
      type: "object",
      properties: { rows: { type: "array", items: { type: [...junk, "string", "string"] } } },
    };
    const values = 4_000;
    const result = validateArguments({ rows: Array.from({ length: values }, (_, i) => i) }, schema);
    expect(result.kind).toBe("invalid");
    const issues = result.kind === "invalid" ? result.issues : [];
    const characters = issues.reduce((sum, issue) => sum + issue.message.length, 0);
    expect(characters).toBeLessThan(issues.length * 300);
    // The same decision: a string passes, anything else does not.
    expect(validateArguments({ rows: ["a"] }, schema)).toEqual({ kind: "valid" });
  });

  it("counts the declared properties, required names and enum values a check walks for each value", () => {
    // @cfworker/json-schema walks every declared property for each object: 9,990 objects of a
    // schema of 1,000 properties took 2 s of CPU, from a body of 80 KB.
    const wide = (width: number) => ({
      type: "object",
      properties: {
        rows: {
          type: "array",
          items: {
            type: "object",
            properties: Object.fromEntries(
              Array.from({ length: width }, (_, i) => [`field_${i}`, { type: "string" }]),
            ),
            required: ["field_0"],
          },
        },
      },
    });
    const rows = (count: number) => ({
      rows: Array.from({ length: count }, () => ({ field_0: "a" })),
    });
    expect(validateArguments(rows(9_990), wide(1_000))).toEqual({
      kind: "skipped",
      reason: "more than 50000 checks",
    });
    expect(validateArguments(rows(100), wide(1_000))).toEqual({ kind: "valid" });
    expect(validateArguments(rows(9_990), wide(10))).toEqual({ kind: "valid" });
    // An enum is compared value by value.
    const zones = Array.from({ length: 10_000 }, (_, i) => `zone_${i}`);
    const enumSchema = {
      type: "object",
      properties: { z: { type: "array", items: { enum: zones } } },
    };
    expect(validateArguments({ z: Array(9_000).fill("zone_9999") }, enumSchema)).toEqual({
      kind: "skipped",
      reason: "more than 50000 checks",
    });
    expect(validateArguments({ z: Array(100).fill("zone_9999") }, enumSchema)).toEqual({
      kind: "valid",
    });
  });

  it("counts what a check walks of a value's place, text and keys, for each schema applied", () => {
    // The validator writes a member's key into its location (encoded, for each schema applied to
    // the object) and walks a string's characters for its length or format: a 3 MB key under a
    // union of 200 closed forms took 0.7 s of CPU, 1.3 million CJK characters (each written as
    // nine, in the location each form's issue holds) made workerd exit, and a 3 MB string under
    // 50 forms that bound its length took 0.2 s.
    const forms = (width: number, form: (i: number) => Record<string, unknown>) => ({
      anyOf: Array.from({ length: width }, (_, i) => form(i)),
    });
    const closed = forms(200, (i) => ({
      type: "object",
      properties: { kind: { const: `k${i}` } },
      required: ["kind"],
      additionalProperties: false,
    }));
    const skipped = { kind: "skipped", reason: "more than 50000 checks" };
    expect(validateArguments({ kind: "k1", ["a".repeat(3_000_000)]: 1 }, closed)).toEqual(skipped);
    expect(validateArguments({ kind: "k1", ["\u4e2d".repeat(1_300_000)]: 1 }, closed)).toEqual(
      skipped,
    );
    expect(validateArguments({ kind: "k1", ["a".repeat(300)]: 1 }, closed).kind).toBe("invalid");
    // A key is counted as long as the location writes it: 10,000 ASCII characters are checked,
    // 10,000 CJK ones (90,000 in each of 200 locations) are not.
    expect(validateArguments({ kind: "k1", ["a".repeat(10_000)]: 1 }, closed).kind).toBe("invalid");
    expect(validateArguments({ kind: "k1", ["\u4e2d".repeat(10_000)]: 1 }, closed)).toEqual(
      skipped,
    );
    // So is an ASCII character it escapes (`%` as `%25`): 30,000 of them are 90,000 characters
    // in each location, as 10,000 CJK ones are.
    expect(validateArguments({ kind: "k1", ["%".repeat(30_000)]: 1 }, closed)).toEqual(skipped);
    expect(validateArguments({ kind: "k1", ["a".repeat(30_000)]: 1 }, closed).kind).toBe("invalid");
    const bounded = forms(50, (i) => ({
      type: "object",
      properties: { s: { type: "string", maxLength: 10 + i } },
      required: ["s"],
    }));
    expect(validateArguments({ s: "a".repeat(3_000_000) }, bounded)).toEqual(skipped);
    expect(validateArguments({ s: "a".repeat(3_000) }, bounded).kind).toBe("invalid");
    // A date-time is split at each `t` and space into a list of its parts: 3 million of them
    // took 0.1 s of CPU and a list of 60 MB, for one value.
    const when = { type: "object", properties: { at: { type: "string", format: "date-time" } } };
    expect(validateArguments({ at: "t".repeat(3_000_000) }, when)).toEqual(skipped);
    expect(validateArguments({ at: "t".repeat(3_000) }, when).kind).toBe("invalid");
    expect(validateArguments({ at: "2024-05-01T12:00:00Z" }, when).kind).toBe("valid");
    // A location is written into every issue beneath it, which a log line and the fix-it text
    // read: 5,000 values failing under a key of a megabyte named 5 GB of locations, and the 100
    // a log line reads took 100 MB to write out.
    const lists = {
      type: "object",
      additionalProperties: { type: "array", items: { type: "integer" } },
    };
    const long = validateArguments({ ["k".repeat(1_000_000)]: Array(5_000).fill("x") }, lists);
    const read = long.kind === "invalid" ? long.issues : [];
    expect(read.reduce((sum, issue) => sum + issue.location.length, 0)).toBeLessThan(16_000_000);
    // The validator lists an object's keys for each schema applied to it, whether or not any
    // applies to them: 300,000 keys (3 MB) under a union of 50 tagged forms took 2.4 s of CPU.
    const tagged = forms(50, (i) => ({
      type: "object",
      properties: { kind: { const: `k${i}` } },
      required: ["kind"],
    }));
    const keys = (count: number) =>
      Object.fromEntries(Array.from({ length: count }, (_, i) => [`key_${i}`, 0]));
    expect(validateArguments({ kind: "k1", ...keys(300_000) }, tagged)).toEqual(skipped);
    expect(validateArguments({ kind: "k1", ...keys(10) }, tagged)).toEqual({ kind: "valid" });
    const short = validateArguments({ k: Array(5_000).fill("x") }, lists);
    expect(short.kind === "invalid" && short.issues.length).toBeGreaterThanOrEqual(5_000);
  });

  it("counts an issue for each name a value lacks of those its schema requires", () => {
    // The validator writes an issue (an object, its message naming the name) for each name
    // `required` lists that an object lacks, and each a `dependentRequired` (draft-07:
    // `dependencies`) list of a key it has names: at a check per 64 names walked, 48,000 empty
    // rows under 63 required names made 3 million issues (0.7 s of CPU, and a stack overflow
    // spreading them), and a list of 1,000 names beside a key, counted as one key, 9 million.
    const names = Array.from({ length: 1_000 }, (_, i) => `field_${i}`);
    const rowsOf = (row: Record<string, unknown>) => ({
      type: "object",
      properties: { rows: { type: "array", items: { type: "object", ...row } } },
    });
    const rows = (count: number, row: Record<string, unknown> = {}) => ({
      rows: Array.from({ length: count }, () => ({ ...row })),
    });
    const skipped = { kind: "skipped", reason: "more than 50000 checks" };
    const required = rowsOf({ required: names.slice(0, 63) });
    expect(validateArguments(rows(48_000), required)).toEqual(skipped);
    const few = validateArguments(rows(100), required);
    expect(few.kind === "invalid" && few.issues.length).toBe(6_300);
    for (const keyword of ["dependentRequired", "dependencies"]) {
      const dependent = rowsOf({ [keyword]: { a: names } });
      expect(validateArguments(rows(9_000, { a: 1 }), dependent)).toEqual(skipped);
      // A key the object does not have requires nothing: its list is not walked.
      expect(validateArguments(rows(9_000, { b: 1 }), dependent)).toEqual({ kind: "valid" });
      const some = validateArguments(rows(10, { a: 1 }), dependent);
      expect(some.kind === "invalid" && some.issues.length).toBe(10_000);
    }
    // A dependent issue's message writes the key too: 10 rows with a key of 100,000 characters,
    // each lacking 63 names, would write 63 MB of messages.
    const long = "k".repeat(100_000);
    const keyed = rowsOf({ dependentRequired: { [long]: names.slice(0, 63) } });
    expect(validateArguments(rows(10, { [long]: 1 }), keyed)).toEqual(skipped);
    // A row that has every name it is required to is checked as before.
    const full = Object.fromEntries(names.slice(0, 63).map((name) => [name, 1]));
    expect(validateArguments(rows(500, full), required)).toEqual({ kind: "valid" });
  });

  it("counts within its budget a node that names many subschemas leading back to it", () => {
    // Each visit of the root names 1,000 schemas, each the root again: counted as popped, the
    // stack held some 25 million pairs (2.3 GiB) before the count reached its budget.
    const schema = { type: "object", anyOf: Array.from({ length: 1_000 }, () => ({ $ref: "#" })) };
    expect(validateArguments({ a: 1 }, schema)).toEqual({
      kind: "skipped",
      reason: "more than 50000 checks",
    });
  });

  it("reads the names dependentRequired lists as names, whatever keyword they spell", () => {
    // Properties named `type`, `pattern` and `format`: what one requires beside it is data.
    const schema = {
      type: "object",
      properties: { type: {}, pattern: {}, format: {}, flags: {} },
      dependentRequired: { type: ["flags"], pattern: ["flags"], format: ["flags"] },
    };
    for (const key of ["type", "pattern", "format"]) {
      const result = validateArguments({ [key]: "x" }, schema);
      expect(result.kind === "invalid" && result.issues.map((issue) => issue.keyword)).toEqual([
        "dependentRequired",
      ]);
      expect(validateArguments({ [key]: "x", flags: "g" }, schema)).toEqual({ kind: "valid" });
    }
  });

  it("skips, rather than fails, a schema it cannot apply", () => {
    expect(validateArguments({}, { $ref: "#/nowhere" }).kind).not.toBe("invalid");
  });

  it("runs none of the origin's regexes on client text, and no quadratic uniqueness check", () => {
    // What the origin checks itself: a pattern (`^(a+)+$` takes seconds on 27 characters),
    // patternProperties (on client keys) and uniqueItems (every pair of a client array).
    const schema = {
      type: "object",
      properties: {
        code: { type: "string", pattern: "^x$" },
        pattern: { type: "integer" },
        tags: { type: "array", uniqueItems: true },
        labels: {
          type: "object",
          patternProperties: { "^l-": { type: "string" } },
          additionalProperties: false,
        },
        named: { type: "object", propertyNames: { pattern: "^[a-z]+$" } },
      },
      $defs: { Code: { type: "string", pattern: "^y$" } },
    };
    const args = { code: "y", tags: [1, 1], labels: { "l-a": "b" }, named: { "A!": 1 } };
    expect(validateArguments(args, schema)).toEqual({ kind: "valid" });
    // Everything else is still checked, a property named `pattern` included.
    const wrong = validateArguments({ ...args, pattern: "seven", code: 7 }, schema);
    expect(wrong.kind === "invalid" && wrong.issues.map((issue) => issue.location)).toEqual([
      "#/code",
      "#/pattern",
    ]);
  });

  it("leaves to the origin a format whose check costs more than a walk of the string, and checks the others", () => {
    // @cfworker/json-schema checks `url` with a regex that backtracks exponentially on a host
    // with no dot: 26 characters took 125 ms, each one more twice as long (a minute at 35).
    const schema = {
      type: "object",
      properties: {
        endpoint: { type: "string", format: "url" },
        day: { type: "string", format: "date" },
        hosts: { type: "object", propertyNames: { format: "url" } },
      },
    };
    const host = `http://${"a".repeat(28)}`;
    expect(validateArguments({ endpoint: host, hosts: { [host]: 1 } }, schema)).toEqual({
      kind: "valid",
    });
    // Its `regex` compiles the client's pattern: a Unicode property escape took 5 µs a character.
    const regex = { type: "object", properties: { pattern: { type: "string", format: "regex" } } };
    expect(validateArguments({ pattern: `${"\\p{L}".repeat(20_000)}(` }, regex)).toEqual({
      kind: "valid",
    });
    // The formats checked in linear time still are, a property named `format` is still data.
    const wrong = validateArguments({ day: "2024-02-30" }, schema);
    expect(wrong.kind === "invalid" && wrong.issues.map((issue) => issue.keyword)).toEqual([
      "format",
    ]);
  });

  it("runs none of them where a $ref leads into an example, which the validator reads as a schema", () => {
    // @cfworker/json-schema's dereference takes an object in `example` or `examples` (no
    // keyword it reads) for a schema a `$ref` may name: one kept as data kept what is left to
    // the origin, a pattern (`^(a+)+$` takes seconds on 27 characters) and uniqueItems.
    for (const key of ["example", "examples"]) {
      const schema = {
        type: "object",
        properties: {
          code: { $ref: `#/${key}` },
          tags: { $ref: `#/${key}/properties/tags` },
        },
        [key]: {
          type: "string",
          pattern: "^x$",
          properties: {
            tags: { type: "array", uniqueItems: true },
          },
        },
      };
      expect(validateArguments({ code: "y", tags: [1, 1] }, schema), key).toEqual({
        kind: "valid",
      });
      // What is no origin's to check still is, where the $ref leads.
      const wrong = validateArguments({ code: 7 }, schema);
      expect(wrong.kind === "invalid" && wrong.issues.map((issue) => issue.location), key).toEqual([
        "#/code",
      ]);
    }
  });

  it("bounds the fix-it text however many and however long the client's keys are", () => {
    const args: Record<string, unknown> = { ["k".repeat(100_000)]: 1 };
    for (let i = 0; i < 2_000; i++) args[`unknown_${i}`] = i;
    const schema = {
      type: "object",
      properties: Object.fromEntries(
        Array.from({ length: 300 }, (_, i) => [`declared_${i}`, { type: "string" }]),
      ),
      required: ["declared_0"],
      additionalProperties: false,
    };
    const result = validateArguments(args, schema);
    expect(result.kind === "invalid" && result.issues.length).toBeGreaterThan(2_000);
    const text = describeInvalidCall(
      "t",
      args,
      schema,
      result.kind === "invalid" ? result.issues : [],
    );
    expect(text.length).toBeLessThan(16 * 1024);
    expect(text.match(/^Unknown key/gm)?.length).toBeLessThanOrEqual(10);
    expect(text).toContain("more issues");
    expect(text).toContain("more keys");
    expect(text).not.toContain("k".repeat(241));
  });
});

describe("Mcp-Param-* headers (x-mcp-header)", () => {
  const schema = {
    type: "object",
    properties: {
      region: { type: "string", "x-mcp-header": "Region" },
      retries: { type: "integer", "x-mcp-header": "Retries" },
      dry_run: { type: "boolean", "x-mcp-header": "Dry-Run" },
      ratio: { type: "number", "x-mcp-header": "Ratio" },
      target: { type: "object", properties: { city: { type: "string", "x-mcp-header": "City" } } },
    },
  };

  it("derives one header per declared value, written as the SDK client writes it", () => {
    expect(
      paramHeaders(
        { region: "eu-west", retries: 3, dry_run: false, ratio: 1.5, target: { city: "Zürich" } },
        schema,
      ),
    ).toEqual([
      ["mcp-param-region", "eu-west"],
      ["mcp-param-retries", "3", 3],
      ["mcp-param-dry-run", "false"],
      ["mcp-param-ratio", "1.5", 1.5],
      ["mcp-param-city", "=?base64?WsO8cmljaA==?="],
    ]);
  });

  it("writes no header for null, absent, unsafe integers and non-primitives", () => {
    const headers = paramHeaders({ region: null, retries: 2 ** 53, target: { city: {} } }, schema);
    expect(headers.filter(([, value]) => value !== undefined)).toEqual([]);
    // Each declared parameter is still named: a client's header for it is checked against none.
    expect(headers.map(([name]) => name)).toEqual([
      "mcp-param-region",
      "mcp-param-retries",
      "mcp-param-dry-run",
      "mcp-param-ratio",
      "mcp-param-city",
    ]);
  });

  it("takes a client's header of an integer past 2^53 - 1 that says the digits the body writes", () => {
    // A view showed a 64-bit id as a string, and the client mirrored that string into a header;
    // repaired, the body writes the same digits as a number, which gets no header of its own.
    const { arguments: args } = repairArguments({ retries: "9007199254740993" }, schema);
    const call = { name: "t", params: paramHeaders(args, schema) };
    const sent = (retries: string) =>
      new Headers({ "mcp-method": "tools/call", "mcp-param-retries": retries });
    expect(paramMismatch(sent("9007199254740993"), call)).toBeUndefined();
    // One double, other digits: what a gateway before the proxy saw is not what the origin reads.
    expect(paramMismatch(sent("9007199254740992"), call)).toBe("mcp-param-retries");
  });

  it("derives none from a schema the SDK's server finds invalid, since it then checks none", () => {
    for (const invalid of [
      { properties: { note: { type: ["string", "null"], "x-mcp-header": "Note" } } },
      { properties: { a: { type: "string", "x-mcp-header": "Has Space" } } },
      {
        properties: {
          a: { type: "string", "x-mcp-header": "X" },
          b: { type: "string", "x-mcp-header": "x" },
        },
      },
      {
        properties: { list: { type: "array", items: { type: "string", "x-mcp-header": "Item" } } },
      },
    ]) {
      expect(paramHeaders({ note: "n", a: "a", b: "b", list: ["i"] }, invalid)).toEqual([]);
    }
  });
});

describe("properties", () => {
  /** Arguments that satisfy a schema, using only its declared keys. */
  const validFilesRead = fc.record(
    { path: fc.string(), max_bytes: fc.integer({ min: 1 }) },
    { requiredKeys: ["path"] },
  );
  const validInvoice = fc.record(
    {
      payload_json: fc.record(
        { invoice_id: fc.string(), amount: fc.double({ noNaN: true, noDefaultInfinity: true }) },
        { requiredKeys: [] },
      ),
      invoice_id: fc.string(),
    },
    { requiredKeys: ["payload_json"] },
  );

  it("changes nothing in arguments that already satisfy the schema", () => {
    for (const [schema, arbitrary] of [
      [FILES_READ, validFilesRead],
      [INVOICE, validInvoice],
    ] as const) {
      fc.assert(
        fc.property(arbitrary, (args) => {
          expect(validateArguments(args, schema).kind).toBe("valid");
          const { arguments: repaired, report } = repairArguments(args, schema);
          expect(repaired).toBe(args);
          expect(report).toEqual(NOTHING_REPAIRED);
        }),
      );
    }
  });

  it("is idempotent: repairing repaired arguments changes nothing more", () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.string(), fc.jsonValue()),
        fc.constantFrom(FILES_READ, INVOICE),
        (args, schema) => {
          const once = repairArguments(args, schema).arguments;
          const twice = repairArguments(once, schema);
          expect(twice.arguments).toEqual(once);
        },
      ),
      { numRuns: 500 },
    );
  });

  it("never throws on arbitrary JSON arguments and arbitrary JSON schemas", () => {
    // A `$ref` is a URI fragment: its escapes may be malformed.
    const ref = fc
      .array(fc.constantFrom("#", "/", "$defs", "a", "%", "%61", "%E0%A4%A", "~0", "~1"), {
        maxLength: 5,
      })
      .map((parts) => ({
        type: "object",
        properties: { a: { $ref: parts.join("") } },
        $defs: { a: { type: "integer" } },
      }));
    const schemas = fc.oneof(fc.jsonValue(), ref);
    fc.assert(
      fc.property(
        fc.dictionary(fc.oneof(fc.string(), fc.constant("a")), fc.jsonValue()),
        schemas,
        (args, schema) => {
          repairArguments(args, schema);
          validateArguments(args, schema);
          recoverArguments({ name: "t", ...args });
        },
      ),
      { numRuns: 1000 },
    );
  });
});
