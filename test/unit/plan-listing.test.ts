import { describe, expect, it } from "vitest";
import { nameRules } from "../../src/names/profiles";
import { planListing } from "../../src/toolmap/plan-listing";
import { knownAfter, nothingKnown } from "../helpers/known-tools";

const rules = nameRules("openai");

const readSchema = { type: "object", properties: { path: { type: "string" } } };
const weather = { name: "get_weather", inputSchema: { type: "object" } };
const listing = [{ name: "files.read", inputSchema: readSchema }, weather];

describe("planning a listing", () => {
  it("stores every tool of a first listing, renamed or not, and reports the renames", () => {
    const plan = planListing(listing, nothingKnown, rules);
    expect(
      plan.entries.map(({ name, original, changed }) => ({ name, original, changed })),
    ).toEqual([
      { name: "files_read", original: "files.read", changed: true },
      { name: "get_weather", original: "get_weather", changed: true },
    ]);
    expect(plan.names).toEqual(
      new Map([
        ["files.read", "files_read"],
        ["get_weather", "get_weather"],
      ]),
    );
    expect(plan.renames).toEqual([{ from: "files.read", to: "files_read", reasons: ["charset"] }]);
  });

  it.each(["warm", "cold"] as const)(
    "stores nothing when the same listing comes again (%s isolate)",
    (isolate) => {
      const first = planListing(listing, nothingKnown, rules);
      // Parsed anew, as each answer is: equal schemas, other objects.
      const again = planListing(structuredClone(listing), knownAfter(first, isolate), rules);
      expect(again.entries.filter((entry) => entry.changed)).toEqual([]);
      expect(again.entries.map((entry) => entry.schemaHash)).toEqual(
        first.entries.map((entry) => entry.schemaHash),
      );
      expect(again.names).toEqual(first.names);
    },
  );

  it.each(["warm", "cold"] as const)(
    "stores a tool again when its inputSchema changed, and only that tool (%s isolate)",
    (isolate) => {
      const first = planListing(listing, nothingKnown, rules);
      const changedSchema = { ...readSchema, required: ["path"] };
      const again = planListing(
        [{ name: "files.read", inputSchema: changedSchema }, weather],
        knownAfter(first, isolate),
        rules,
      );
      const changed = again.entries.filter((entry) => entry.changed);
      expect(changed).toMatchObject([{ name: "files_read", inputSchema: changedSchema }]);
      expect(changed[0]?.schemaHash).not.toBe(first.entries[0]?.schemaHash);
    },
  );

  it("stores a name again when it now stands for another tool", () => {
    const first = planListing([{ name: "a/b", inputSchema: {} }], nothingKnown, rules);
    const again = planListing(
      [
        { name: "a/b", inputSchema: {} },
        { name: "a_b", inputSchema: {} },
      ],
      knownAfter(first),
      rules,
    );
    expect(again.entries.filter((entry) => entry.changed).map((entry) => entry.name)).toEqual([
      "a_b_2",
      "a_b",
    ]);
    expect(again.displaced).toEqual([{ name: "a_b", from: "a/b", to: "a_b" }]);
  });
});
