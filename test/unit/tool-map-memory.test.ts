/**
 * What an isolate keeps of the tool map in memory, and what it lets go:
 * docs/tool-map.md's "at most 16 origins and 10,000 tools each".
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { assignNames, type KnownNames } from "../../src/names/assign";
import { nameRules } from "../../src/names/profiles";
import type { SchemaView } from "../../src/schemas/view";
import { MAX_TOOL_CHARS, ToolMapMemory, toolMapScopes } from "../../src/toolmap/isolate-memory";
import {
  MAX_RELISTS,
  MAX_RELISTS_PER_SOURCE,
  MAX_UNPROVEN_RELISTS,
  type ProfileNames,
} from "../../src/toolmap/profile-names";
import { MAX_TOOLS } from "../../src/toolmap/stored-map";
import { DEMO_NAMES } from "../helpers/demo-names";

const entry = (original: string) => ({ original, schemaHash: "h" });

describe("the isolate's memory of the tool map", () => {
  it("keeps 16 origins and lets the least recently used go for a 17th", () => {
    const memory = new ToolMapMemory();
    for (let i = 0; i < 16; i++) memory.origin(`o${i}`).remember(entry(`tool of o${i}`));
    memory.origin("o0"); // used again: o1 is now the least recently used
    memory.origin("o16").remember(entry("tool of o16"));

    expect(memory.origin("o0").tools.has("tool of o0")).toBe(true);
    expect(memory.origin("o16").tools.has("tool of o16")).toBe(true);
    for (let i = 15; i >= 2; i--) {
      expect(memory.origin(`o${i}`).tools.has(`tool of o${i}`)).toBe(true);
    }
    expect(memory.origin("o1").tools.size).toBe(0);
  });

  it("holds 10,000 tools of an origin, and lets the least recently remembered go for the next", () => {
    const origin = new ToolMapMemory().origin("o");
    for (let i = 0; i < MAX_TOOLS; i++) origin.remember(entry(`t${i}`), 1);
    expect(origin.tools.size).toBe(MAX_TOOLS);

    // A known tool is remembered anew, at the bound too: now the most recent.
    origin.remember(entry("t0"), 1);
    expect(origin.tools.size).toBe(MAX_TOOLS);

    // A new one takes the place of the least recent (t1; t0 was just remembered).
    origin.remember(entry("t10000"), 1);
    expect(origin.tools.size).toBe(MAX_TOOLS);
    expect(origin.tools.has("t1")).toBe(false);
    expect(origin.tools.has("t0")).toBe(true);
    expect(origin.listed.has("t1")).toBe(false);

    const names = origin.profile("openai");
    for (let i = 0; i <= MAX_TOOLS; i++) names.remember(`n${i}`, `t${i}`);
    expect(names.byName.size).toBe(MAX_TOOLS);
    expect(names.byOriginal.has("t0")).toBe(false);
  });

  it("holds an origin's tools up to their characters together, and lets the least recently remembered go with their names and schema views", () => {
    const origin = new ToolMapMemory().origin("o");
    const names = origin.profile("openai");
    const tenth = MAX_TOOL_CHARS / 10;
    const remember = (original: string, chars: number) => {
      origin.remember({ ...entry(original), chars }, 1);
      names.remember(`n_${original}`, original);
      names.views.set(`n_${original}`, { hash: "h", schema: {}, view: {} as SchemaView });
    };
    for (let i = 0; i < 10; i++) remember(`t${i}`, tenth);
    expect(origin.tools.size).toBe(10);

    // Ten tools of a tenth fill the bound: one more lets the least recent go, however few they are.
    remember("t10", tenth);
    expect([...origin.tools.keys()]).toEqual([
      "t1",
      "t2",
      "t3",
      "t4",
      "t5",
      "t6",
      "t7",
      "t8",
      "t9",
      "t10",
    ]);
    expect(origin.listed.has("t0")).toBe(false);
    expect(names.byOriginal.has("t0") || names.byName.has("n_t0") || names.views.has("n_t0")).toBe(
      false,
    );
    expect(names.byName.get("n_t1")).toBe("t1");

    // A tool remembered anew weighs what it weighs now; one as heavy as the bound stays, alone.
    remember("t1", 1);
    remember("t11", 2 * tenth);
    expect(origin.tools.has("t1")).toBe(true);
    expect(origin.tools.has("t2")).toBe(false);
    remember("huge", MAX_TOOL_CHARS);
    expect([...origin.tools.keys()]).toEqual(["huge"]);
    expect([...names.byName.keys()]).toEqual(["n_huge"]);

    // Without a weight of its own, a tool weighs its name.
    origin.clear();
    origin.remember(entry("x".repeat(MAX_TOOL_CHARS)));
    origin.remember(entry("y"));
    expect([...origin.tools.keys()]).toEqual(["y"]);
  });

  it("keeps one name per tool and one tool per name, per profile", () => {
    const names = new ToolMapMemory().origin("o").profile("openai");
    names.remember("a_b", "a/b");
    names.remember(DEMO_NAMES["a/b"], "a/b"); // a/b renamed: its old name goes
    expect([...names.byName.keys()]).toEqual([DEMO_NAMES["a/b"]]);
    names.remember(DEMO_NAMES["a/b"], "a.b"); // the name now stands for another tool
    expect([...names.byOriginal]).toEqual([["a.b", DEMO_NAMES["a/b"]]]);
  });

  it("forgets everything of an origin, and only of that origin, on clear", () => {
    const memory = new ToolMapMemory();
    memory.origin("a").remember(entry("x"));
    memory.origin("b").remember(entry("y"));
    memory.origin("a").clear();
    expect(memory.origin("a").tools.size).toBe(0);
    expect(memory.origin("b").tools.has("y")).toBe(true);
  });

  it("keeps the names handed out on clear, the latest up to the tools' bound of characters, however often", () => {
    const origin = new ToolMapMemory().origin("o");
    const long = (i: number) => `${i}`.padEnd(MAX_TOOL_CHARS / 4, "x");
    origin.profile("openai").remember("a_b_4la3gs", "a.b");
    origin.profile("openai").keepName("a_b_4la3gs", "a_b_4la3gs_2");
    origin.clear();
    const kept = origin.profile("openai");
    expect(kept.byName.get("a_b_4la3gs")).toBe("a.b");
    expect(kept.known().nameOf("a_b_4la3gs")).toBe("a_b_4la3gs_2");
    // An origin that says its tools changed after each listing of long names holds no more of them.
    for (let i = 0; i < 12; i++) {
      origin.profile("openai").remember(`n${i}`, long(i));
      origin.clear();
    }
    const originals = [...origin.profile("openai").byName.values()];
    expect(originals).toEqual([long(8), long(9), long(10), long(11)]);
  });
});

describe("a listing's names, kept for the next listing of the same tools", () => {
  const rules = nameRules("openai");
  // Few characters: names that sanitize alike, legal names equal to fingerprinted ones.
  const crowded = fc.string({ unit: fc.constantFrom("a", "_", "/", "."), maxLength: 4 });
  const pairs = fc.array(fc.tuple(crowded, crowded), { maxLength: 8 });

  /** What the tool map's planning reads of a profile's names (tool-map.ts `known`). */
  const knownOf = (names: ProfileNames): KnownNames => ({
    nameOf: (original) => names.byOriginal.get(original) ?? names.legacyNames.get(original),
    originalOf: (name) => names.byName.get(name) ?? names.legacyOwners.get(name),
  });

  /** A listing named and remembered as tool-map.ts does it, then kept. */
  function list(names: ProfileNames, originals: string[], chosen: ReadonlyMap<string, string>) {
    const assigned = assignNames(originals, knownOf(names), rules, chosen);
    for (const { name, original } of assigned.assignments) names.remember(name, original);
    names.keepAssigned(originals, chosen, assigned);
  }

  it("are what naming the listing again gives it, whatever names were known before", () => {
    fc.assert(
      fc.property(
        fc.array(crowded, { maxLength: 12 }),
        pairs,
        pairs,
        fc.boolean(),
        (originals, legacy, earlier, choose) => {
          const names = new ToolMapMemory().origin("o").profile("p");
          names.keepLegacy(new Map(legacy));
          for (const [original, name] of earlier) names.remember(name, original);
          const chosen = new Map(choose ? originals.slice(0, 1).map((o) => [o, "chosen"]) : []);
          list(names, originals, chosen);

          const kept = names.assignedBefore([...originals], chosen);
          expect(kept).toEqual(assignNames(originals, knownOf(names), rules, chosen));
          expect(kept?.displaced).toEqual([]);
          // The same originals in another order: the same names (assignNames sorts them).
          const reversed = [...originals].reverse();
          expect(names.assignedBefore(reversed, chosen)).toEqual(
            assignNames(reversed, knownOf(names), rules, chosen),
          );
        },
      ),
      { numRuns: 500 },
    );
  });

  it("are given to the same originals in any order; not once a name changed, or to other originals, or under other chosen names", () => {
    const chosen = new Map<string, string>();
    const names = new ToolMapMemory().origin("o").profile("p");
    list(names, ["a/b", "c"], chosen);
    expect(names.assignedBefore(["a/b", "c"], chosen)).toBeDefined();

    expect(names.assignedBefore(["c", "a/b"], chosen)).toBe(
      names.assignedBefore(["a/b", "c"], chosen),
    );
    expect(names.assignedBefore(["a/b"], chosen)).toBeUndefined();
    expect(names.assignedBefore(["a/b", "a/b"], chosen)).toBeUndefined();
    expect(names.assignedBefore(["c", "c"], chosen)).toBeUndefined();
    expect(names.assignedBefore(["a/b", "c"], new Map([["c", "d"]]))).toBeUndefined();

    names.remember("c", "c"); // no change: still given
    expect(names.assignedBefore(["a/b", "c"], chosen)).toBeDefined();
    names.remember("e", "e");
    expect(names.assignedBefore(["a/b", "c"], chosen)).toBeUndefined();

    list(names, ["a/b", "c"], chosen);
    names.keepLegacy(new Map([["x/y", "x_y"]]));
    expect(names.assignedBefore(["a/b", "c"], chosen)).toBeUndefined();
  });
});

describe("an origin's KV scopes", () => {
  it("name its keys as every earlier version did: SHA-256 of the origin URL (and profile, for layout 1), first 8 bytes in hex", async () => {
    // `printf 'https://origin.example/mcp\nopenai\n64' | openssl dgst -sha256`, first 16 hex digits.
    expect(await toolMapScopes(new URL("https://origin.example/mcp"), nameRules("openai"))).toEqual(
      { origin: "v2:80f1dc6c3ea2d928", legacy: "v1:7a801470ec00e423" },
    );
  });
});

describe("the re-lists of a profile, across the origin's tools/list_changed", () => {
  it("keeps the minute's unproven, per-source and isolate windows: a notification gives none back", () => {
    const origin = new ToolMapMemory().origin("o");
    let names = origin.profile("openai");
    // Sources the origin never listed here: together they spend the unproven share.
    for (let i = 0; i < MAX_UNPROVEN_RELISTS; i++) {
      expect(names.takeRelist(`made-up-${i}`, false)).toBeUndefined();
    }
    // One proven source spends its own share.
    for (let i = 0; i < MAX_RELISTS_PER_SOURCE; i++) {
      expect(names.takeRelist("alice", true)).toBeUndefined();
    }
    origin.clear();
    names = origin.profile("openai");
    expect(names.takeRelist("made-up-new", false)).toBe("unproven");
    expect(names.takeRelist("alice", true)).toBe("source");
    // The rest of the isolate's minute is what is left for another proven source.
    const left = MAX_RELISTS - MAX_UNPROVEN_RELISTS - MAX_RELISTS_PER_SOURCE;
    for (let i = 0; i < left; i++) expect(names.takeRelist(`bob-${i}`, true)).toBeUndefined();
    expect(names.takeRelist("carol", true)).toBe("isolate");
  });
});
