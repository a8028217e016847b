import { describe, expect, it } from "vitest";
import { nameRules } from "../../src/names/profiles";
import { type KnownTools, type ListingPlan, planListing } from "../../src/toolmap/plan-listing";

const rules = nameRules("openai");
const nothingKnown: KnownTools = {
  nameOf: () => undefined,
  originalOf: () => undefined,
  schemaHashOf: () => undefined,
};

/** What a map that applied `plan` knows afterwards. */
function knownAfter(plan: ListingPlan): KnownTools {
  const byName = new Map(plan.entries.map((entry) => [entry.name, entry]));
  return {
    nameOf: (original) => plan.names.get(original),
    originalOf: (name) => byName.get(name)?.original,
    schemaHashOf: (name) => byName.get(name)?.schemaHash,
  };
}

const readSchema = { type: "object", properties: { path: { type: "string" } } };
const listing = [
  { name: "files.read", inputSchema: readSchema },
  { name: "get_weather", inputSchema: { type: "object" } },
];

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

  it("stores nothing when the same listing comes again", () => {
    const first = planListing(listing, nothingKnown, rules);
    const again = planListing(listing, knownAfter(first), rules);
    expect(again.entries.filter((entry) => entry.changed)).toEqual([]);
    expect(again.names).toEqual(first.names);
  });

  it("stores a tool again when its inputSchema changed, and only that tool", () => {
    const first = planListing(listing, nothingKnown, rules);
    const changedSchema = { ...readSchema, required: ["path"] };
    const again = planListing(
      [{ name: "files.read", inputSchema: changedSchema }, listing[1]!],
      knownAfter(first),
      rules,
    );
    expect(again.entries.filter((entry) => entry.changed)).toMatchObject([
      { name: "files_read", inputSchema: changedSchema },
    ]);
  });

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
