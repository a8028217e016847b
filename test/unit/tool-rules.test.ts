/**
 * Which tools the operator's `hide` and `only` lists name (docs/rules.md,
 * "Hiding tools"): globs, and `exact:` names for a tool whose name a glob
 * would read as a pattern (`[]`, `()`, `!`, `{}`, `*`).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { rulesOf } from "../helpers/tool-rules";

/** Names made of what globs read as patterns, and what they do not. */
const name = fc.string({
  unit: fc.constantFrom(..."ab1_-.:/[]()!{}*?+@,^$|\\ "),
  minLength: 1,
  maxLength: 8,
});

describe("an exact: name in hide or only", () => {
  it("names exactly one tool, whatever its name holds", () => {
    fc.assert(
      fc.property(name, fc.array(name, { maxLength: 6 }), (wanted, others) => {
        const hide = rulesOf({ hide: [`exact:${wanted}`] });
        const only = rulesOf({ only: [`exact:${wanted}`] });
        expect(hide.hides({ name: wanted })).toBe(true);
        expect(only.hides({ name: wanted })).toBe(false);
        for (const other of others.filter((candidate) => candidate !== wanted)) {
          expect(hide.hides({ name: other }), other).toBe(false);
          expect(only.hides({ name: other }), other).toBe(true);
        }
      }),
      { numRuns: 1_000 },
    );
  });

  it("sits beside globs, and a glob still reads such a name as a pattern", () => {
    const rules = rulesOf({ hide: ["admin.*", "exact:report[1]", "exact:exact:x"] });
    expect(rules.hides({ name: "admin.users" })).toBe(true);
    expect(rules.hides({ name: "report[1]" })).toBe(true);
    expect(rules.hides({ name: "report1" })).toBe(false);
    // A tool whose own name starts with `exact:` is named with the prefix twice.
    expect(rules.hides({ name: "exact:x" })).toBe(true);
    expect(rules.hides({ name: "x" })).toBe(false);
    // What the prefix is for: as globs, `report[1]` names `report1` too, and `!admin` every
    // tool but `admin`, so `only` lists tools the operator never meant.
    const glob = rulesOf({ hide: ["report[1]"] });
    expect([glob.hides({ name: "report1" }), glob.hides({ name: "report[1]" })]).toEqual([
      true,
      true,
    ]);
    expect(rulesOf({ only: ["!admin"] }).hides({ name: "files.delete" })).toBe(false);
    expect(rulesOf({ only: ["exact:!admin"] }).hides({ name: "files.delete" })).toBe(true);
  });
});
