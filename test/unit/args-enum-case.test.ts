/**
 * A string that names an `enum` or `const` member in another case (`"ASC"` for
 * `["asc","desc"]`, `"High"` for `"high"`): what models often write, and what an
 * origin that checks its schema refuses. Repaired to that member where exactly
 * one string member equals it ignoring case (docs/arguments.md, step 3).
 */
import fc from "fast-check";
import { afterEach, describe, expect, it, vi } from "vitest";
import { repairArguments } from "../../src/args/repair";
import { validateArguments } from "../../src/args/validate";
import type { JsonRpcRequest } from "../../src/protocol/jsonrpc";
import { paramHeaders, paramMismatch } from "../../src/protocol/mcp-headers";
import { revisionOf } from "../../src/protocol/revision";
import { repairToolCall } from "../../src/rewrite/tools-call";
import { SCHEMA_PASSES } from "../../src/schemas/profile";
import { schemaView } from "../../src/schemas/view";
import { valuesFromText } from "../../src/schemas/way-back";
import { resolverOf } from "../../support/resolver";
import { captureLogs } from "../helpers/logs";
import { NOTHING_REPAIRED } from "../helpers/nothing-repaired";

const withEnum = (values: unknown[]) => ({
  type: "object",
  properties: { v: { type: "string", enum: values } },
});

/** `text` with each character's case set as `upper` says, where that keeps it one character. */
const recased = (text: string, upper: boolean[]) =>
  [...text]
    .map((char, index) => {
      const changed = upper[index % Math.max(upper.length, 1)]
        ? char.toUpperCase()
        : char.toLowerCase();
      return [...changed].length === 1 ? changed : char;
    })
    .join("");

// Strings of letters in both cases, some past ASCII (é, Ω), and of a digit and a separator.
const word = fc.string({
  unit: fc.constantFrom(..."aAbBzZéÉωΩ1-_ ".split("")),
  minLength: 1,
  maxLength: 8,
});
/** An enum of strings no two of which are equal ignoring case. */
const distinctEnum = fc.uniqueArray(word, {
  minLength: 1,
  maxLength: 8,
  selector: (text) => text.toLowerCase(),
});

afterEach(() => {
  vi.restoreAllMocks();
});

describe("a string an enum names in another case", () => {
  it("becomes the member it names, for any enum of strings distinct ignoring case", () => {
    fc.assert(
      fc.property(
        distinctEnum,
        fc.nat(),
        fc.array(fc.boolean(), { minLength: 1 }),
        (values, pick, upper) => {
          const member = values[pick % values.length] as string;
          const sent = recased(member, upper);
          fc.pre(sent !== member);
          const schema = withEnum(values);
          const { arguments: args, report } = repairArguments({ v: sent }, schema);
          expect(args).toEqual({ v: member });
          expect(report.enumCased).toEqual(["v"]);
          expect(report.coercions).toEqual([]);
          expect(validateArguments(args, schema).kind).toBe("valid");
        },
      ),
      { numRuns: 500 },
    );
  });

  it("is left as sent where it equals two members ignoring case", () => {
    fc.assert(
      fc.property(
        distinctEnum,
        fc.nat(),
        fc.array(fc.boolean(), { minLength: 1 }),
        fc.array(fc.boolean(), { minLength: 1 }),
        (values, pick, twin, upper) => {
          const member = values[pick % values.length] as string;
          const other = recased(member, twin);
          const sent = recased(member, upper);
          fc.pre(other !== member && sent !== member && sent !== other);
          const sentArgs = { v: sent };
          const { arguments: args, report } = repairArguments(
            sentArgs,
            withEnum([...values, other]),
          );
          expect(args).toBe(sentArgs);
          expect(report.enumCased).toEqual([]);
        },
      ),
      { numRuns: 500 },
    );
  });

  it("leaves a member as it is, whatever other members equal it ignoring case", () => {
    fc.assert(
      fc.property(fc.array(word, { minLength: 1, maxLength: 8 }), fc.nat(), (values, pick) => {
        const sentArgs = { v: values[pick % values.length] };
        const { arguments: args, report } = repairArguments(sentArgs, withEnum(values));
        expect(args).toBe(sentArgs);
        expect(report).toEqual(NOTHING_REPAIRED);
      }),
    );
  });

  it.each<[string, unknown, string]>([
    ["ASC", { enum: ["asc", "desc"] }, "asc"],
    ["High", { type: "string", enum: ["low", "high"] }, "high"],
    ["get", { enum: ["GET", "POST"] }, "GET"],
    ["ASC", { const: "asc" }, "asc"],
    ["ÉTÉ", { enum: ["été", "hiver"] }, "été"],
    // Greek's final sigma: lower case writes it ς at a word's end, as the member does.
    ["ΟΔΟΣ", { enum: ["οδος"] }, "οδος"],
    // OpenAPI's nullable enum, and `["string","null"]` beside it.
    ["DESC", { type: "string", nullable: true, enum: ["asc", "desc"] }, "desc"],
    ["DESC", { type: ["string", "null"], enum: ["asc", "desc", null] }, "desc"],
    // FastMCP's `Literal["asc","desc"] | None`, and an `Enum` as consts.
    ["Asc", { anyOf: [{ enum: ["asc", "desc"] }, { type: "null" }] }, "asc"],
    ["Asc", { oneOf: [{ const: "asc" }, { const: "desc" }] }, "asc"],
    ["Desc", { allOf: [{ $ref: "#/$defs/Order" }] }, "desc"],
    // A string the enum names beside numbers: a gemini view lists them all as strings.
    ["AUTO", { enum: [1, 2, "auto"] }, "auto"],
    // A fullwidth `ａ` is no case of `a`: one member, `A`.
    ["a", { enum: ["A", "ａ", "x"] }, "A"],
  ])("%o for %o → %o", (sent, place, expected) => {
    const schema = {
      type: "object",
      properties: { v: place },
      $defs: { Order: { type: "string", enum: ["asc", "desc"] } },
    };
    const { arguments: args, report } = repairArguments({ v: sent }, schema);
    expect(args).toEqual({ v: expected });
    expect(report.enumCased).toEqual(["v"]);
    expect(validateArguments(args, schema).kind).toBe("valid");
  });

  it.each<[string, unknown, string]>([
    // Two members it names: which the model meant is not known.
    ["Asc", { enum: ["ASC", "asc"] }, "two members"],
    ["Asc", { anyOf: [{ const: "ASC" }, { const: "asc" }] }, "two forms' members"],
    // A form that takes any string takes it as it is.
    ["ASC", { anyOf: [{ enum: ["asc"] }, { type: "string" }] }, "a form takes any string"],
    // Case alone, as lower case writes it without a locale: no Turkish dotless i, no ß as ss.
    ["I", { enum: ["ı", "x"] }, "dotless i"],
    ["STRASSE", { enum: ["straße"] }, "sharp s"],
    // Spaces and separators may say something of their own (`-name`, a descending sort).
    [" asc ", { enum: ["asc", "desc"] }, "surrounding spaces"],
    ["in-progress", { enum: ["in_progress", "done"] }, "another separator"],
    ["name", { enum: ["-name", "-date"] }, "a sign left out"],
    // No string member: no case to take.
    ["TRUE", { enum: [true, false] }, "booleans"],
    ["ASC", { type: "integer", enum: [1, 2] }, "integers"],
    ["ASC", { type: "string" }, "no enum"],
  ])("%o for %o is left as sent (%s)", (sent, place) => {
    const schema = { type: "object", properties: { v: place } };
    const sentArgs = { v: sent };
    const { arguments: args, report } = repairArguments(sentArgs, schema);
    expect(args).toBe(sentArgs);
    expect(report.enumCased).toEqual([]);
  });
});

describe("with the other repairs", () => {
  const ORDER = { type: "string", enum: ["asc", "desc"] };
  const PRIORITY = { type: "string", enum: ["low", "high"] };
  const schema = {
    type: "object",
    properties: {
      sort_order: { $ref: "#/$defs/Order" },
      priorities: { type: "array", items: PRIORITY },
      filter: {
        type: "object",
        properties: { order: ORDER, labels: { type: "array", items: { type: "string" } } },
      },
      by_label: { type: "object", additionalProperties: PRIORITY },
      slot: { type: "array", prefixItems: [PRIORITY, { type: "string" }] },
      maybe: { anyOf: [{ type: "array", items: PRIORITY }, { type: "null" }] },
    },
    $defs: { Order: ORDER },
  };

  it("repairs it in arrays, maps, tuples, nested objects and under a key in another spelling", () => {
    const { arguments: args, report } = repairArguments(
      {
        sortOrder: "DESC",
        priorities: "HIGH",
        filter: '{"Order":"Asc","labels":["Bug"]}',
        by_label: { Bug: "High", docs: "low" },
        slot: ["LOW", "Write the docs"],
        maybe: ["High", "low"],
      },
      schema,
    );
    // A tuple's other place, a map's key and a plain string keep their case.
    expect(args).toEqual({
      sort_order: "desc",
      priorities: ["high"],
      filter: { order: "asc", labels: ["Bug"] },
      by_label: { Bug: "high", docs: "low" },
      slot: ["low", "Write the docs"],
      maybe: ["high", "low"],
    });
    expect(report.renamedKeys).toEqual([
      { from: "sortOrder", to: "sort_order" },
      { from: "filter.Order", to: "filter.order" },
    ]);
    expect(report.enumCased).toEqual([
      "sort_order",
      "priorities[0]",
      "filter.order",
      "by_label.Bug",
      "slot[0]",
      "maybe[0]",
    ]);
    expect(validateArguments(args, schema).kind).toBe("valid");
  });

  it("reads the origin's enum where a gemini view listed its numbers as strings", () => {
    const original = {
      type: "object",
      properties: {
        mode: { enum: [1, 2, "auto"] },
        slot: { type: "array", prefixItems: [{ enum: [1, 2, "auto"] }, { type: "string" }] },
      },
    };
    const view = schemaView(original, SCHEMA_PASSES.gemini);
    expect(view.schema).toMatchObject({
      properties: { mode: { type: "string", enum: ["1", "2", "auto"] } },
    });
    const answered = { mode: "AUTO", slot: ["Auto", "Auto"] };
    const back = valuesFromText(answered, view, original);
    const { arguments: args, report } = repairArguments(back.arguments ?? answered, original);
    expect(args).toEqual({ mode: "auto", slot: ["auto", "Auto"] });
    expect(report.enumCased).toEqual(["mode", "slot[0]"]);
    // And the number a view's string names is still that number.
    expect(repairArguments({ mode: "2" }, original).arguments).toEqual({ mode: 2 });
  });
});

describe("an Mcp-Param header of it", () => {
  it("is written again as the member, and one the client mirrored from the model's value refused", () => {
    const schema = {
      type: "object",
      properties: { order: { type: "string", enum: ["asc", "desc"], "x-mcp-header": "Order" } },
    };
    const { arguments: args } = repairArguments({ order: "ASC" }, schema);
    const call = { name: "t", params: paramHeaders(args, schema) };
    expect(call.params).toEqual([["mcp-param-order", "asc"]]);
    const sent = (order: string) =>
      new Headers({ "mcp-method": "tools/call", "mcp-param-order": order });
    expect(paramMismatch(sent("asc"), call)).toBeUndefined();
    // A gateway before the proxy that let `ASC` through may refuse `asc`.
    expect(paramMismatch(sent("ASC"), call)).toBe("mcp-param-order");
  });
});

describe("a call through the proxy's repair", () => {
  const original = {
    type: "object",
    properties: { q: { type: "string" }, sort: { type: "string", enum: ["asc", "desc"] } },
    required: ["q"],
    additionalProperties: false,
  };

  async function outcomeOf(args: Record<string, unknown>) {
    const resolver = resolverOf({ original: "t", schemaHash: "", inputSchema: original });
    const message: JsonRpcRequest = {
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "t", arguments: args },
    };
    return repairToolCall(message, resolver, "enforce", revisionOf(new Headers()));
  }

  it("forwards the member under enforce, counted and logged as a repair, never its value", async () => {
    const logs = captureLogs();
    const outcome = await outcomeOf({ q: "Secret Query", sort: "DESC" });
    if (outcome.kind !== "forward") throw new Error(`not forwarded: ${outcome.kind}`);
    expect(outcome.message.params).toEqual({
      name: "t",
      arguments: { q: "Secret Query", sort: "desc" },
    });
    expect(outcome.report).toMatchObject({ validation: "valid", repairs: { enum_cased: 1 } });
    expect(logs.events("tool_call_repaired")).toMatchObject([
      { enumCased: ["sort"], coercions: [], validation: "valid" },
    ]);
    const written = JSON.stringify(logs.lines());
    for (const value of ["DESC", "desc", "Secret Query"]) expect(written).not.toContain(value);
    logs.restore();
  });

  it("still answers a call left invalid with its fix-it text, the member no issue of it", async () => {
    const outcome = await outcomeOf({ sort: "Desc" });
    if (outcome.kind !== "answer") throw new Error(`not answered: ${outcome.kind}`);
    const { result } = outcome.response as { result: { content: Array<{ text: string }> } };
    const text = result.content.map((part) => part.text).join("\n");
    // One issue, the missing `q`: none of `sort`, which the model wrote in another case.
    expect(text.split("\n").filter((line) => line.startsWith("- "))).toEqual([
      "- missing required field `q`",
    ]);
    expect(outcome.report).toMatchObject({ validation: "invalid", repairs: { enum_cased: 1 } });
  });
});

/**
 * `members` as an `enum` that counts how many of its members are read, as an origin's schema
 * would be read: by index, or whole by its iterator.
 */
function countedEnum(members: readonly string[], reads: { count: number }): string[] {
  return new Proxy([...members], {
    get(target, key, receiver) {
      if (typeof key === "string" && /^\d+$/.test(key)) reads.count++;
      return Reflect.get(target, key, receiver);
    },
  });
}

describe("an origin's schema of many or long enums (bounded work)", () => {
  const members = (size: number, tag: string) =>
    Array.from({ length: size }, (_, i) => `${tag}${i}`);

  it("reads an enum that many properties name by $ref once, and repairs each of them", () => {
    const reads = { count: 0 };
    const properties: Record<string, unknown> = {};
    const args: Record<string, unknown> = {};
    for (let i = 0; i < 200; i++) {
      properties[`p${i}`] = { $ref: "#/$defs/Sort" };
      args[`p${i}`] = `M${i}`;
    }
    const schema = {
      type: "object",
      properties,
      $defs: { Sort: { type: "string", enum: countedEnum(members(10_000, "m"), reads) } },
    };
    const { arguments: repaired, report } = repairArguments(args, schema);
    expect(repaired.p0).toBe("m0");
    expect(repaired.p199).toBe("m199");
    expect(report.enumCased).toHaveLength(200);
    // Each property read the whole enum again (and folded each member's case): 2 million reads
    // for one call, 200 × an enum of 10,000.
    expect(reads.count).toBeLessThanOrEqual(2 * 10_000);
  });

  it("folds no more than a bound of enum members in one call, whatever the schema's forms", () => {
    const properties: Record<string, unknown> = {};
    const args: Record<string, unknown> = {};
    for (let i = 0; i < 200; i++) {
      // A form of its own each: the values of each property's forms are gathered anew.
      properties[`p${i}`] = { anyOf: [{ $ref: "#/$defs/Sort" }] };
      args[`p${i}`] = "M1";
    }
    const schema = {
      type: "object",
      properties,
      $defs: { Sort: { type: "string", enum: members(10_000, "m") } },
    };
    const folds = vi.spyOn(String.prototype, "toLowerCase");
    const { arguments: repaired, report } = repairArguments(args, schema);
    const folded = folds.mock.calls.length;
    folds.mockRestore();
    // Each property's forms gathered and folded the 10,000 members again: 2 million for one call.
    expect(folded).toBeLessThanOrEqual(100_000 + 10_000 + 200);
    // What it read, it repaired; past the bound the rest goes as sent, and the report says so.
    expect(repaired.p0).toBe("m1");
    expect(repaired.p199).toBe("M1");
    expect(report.limited).toBe(true);
  });
});
