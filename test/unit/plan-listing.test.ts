import { describe, expect, it } from "vitest";
import { nameRules } from "../../src/names/profiles";
import { fingerprint32, fnv1a32 } from "../../src/names/stable-hash";
import {
  type KnownTools,
  MIGRATIONS_PER_LISTING,
  planListing,
  schemaHash,
} from "../../src/toolmap/plan-listing";
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

describe("schema fingerprints", () => {
  it("never change, since KV stores them (test vectors)", () => {
    expect([fingerprint32(""), fingerprint32("a"), fingerprint32("foobar")]).toEqual([
      1548643912, 3055344805, 2373229038,
    ]);
    expect(schemaHash({ type: "object" })).toBe("2.qvqss7");
  });

  it("tell apart schemas that differ in one place, whatever its position in the text", () => {
    const base = JSON.stringify(readSchema);
    const seen = new Set([fingerprint32(base)]);
    for (let i = 0; i < base.length; i++) {
      seen.add(fingerprint32(`${base.slice(0, i)}~${base.slice(i + 1)}`));
    }
    expect(seen.size).toBe(base.length + 1);
  });
});

describe("moving from the first fingerprint", () => {
  /** What a new isolate learns from KV's metadata for tools stored before the `2.` fingerprints. */
  function storedFirst(tools: Array<{ name: string; inputSchema: unknown }>): KnownTools {
    const byName = new Map(
      tools.map((tool) => [
        tool.name,
        { original: tool.name, schemaHash: fnv1a32(JSON.stringify(tool.inputSchema)).toString(36) },
      ]),
    );
    return {
      nameOf: (original) => (byName.has(original) ? original : undefined),
      originalOf: (name) => byName.get(name)?.original,
      entryOf: (name) => byName.get(name),
    };
  }

  const tools = Array.from({ length: 120 }, (_, i) => ({
    name: `tool_${String(i).padStart(3, "0")}`,
    inputSchema: { type: "object", properties: { [`p${i}`]: { type: "string" } } },
  }));

  it("writes a few unchanged tools per listing with the new fingerprint, until none is left", () => {
    let known = storedFirst(tools);
    const written: number[] = [];
    for (let listing = 0; listing < 4; listing++) {
      const plan = planListing(structuredClone(tools), known, rules);
      const changed = plan.entries.filter((entry) => entry.changed);
      written.push(changed.length);
      for (const entry of changed) expect(entry.schemaHash).toBe(schemaHash(entry.inputSchema));
      known = knownAfter(plan, "cold");
    }
    expect(written).toEqual([MIGRATIONS_PER_LISTING, MIGRATIONS_PER_LISTING, 20, 0]);
  });

  it("still sees a changed schema among tools stored with the first fingerprint", () => {
    const changedSchema = { type: "object", properties: { other: { type: "integer" } } };
    const listing = tools.map((tool, i) =>
      i === 99 ? { ...tool, inputSchema: changedSchema } : tool,
    );
    const plan = planListing(listing, storedFirst(tools), rules);
    const changed = plan.entries.filter((entry) => entry.changed).map((entry) => entry.name);
    expect(changed).toHaveLength(MIGRATIONS_PER_LISTING + 1);
    expect(changed).toContain("tool_099");
  });
});
