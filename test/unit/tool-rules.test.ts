/**
 * Which tools the operator's `hide` and `only` lists name (docs/rules.md,
 * "Hiding tools"): globs, and `exact:` names for a tool whose name a glob
 * would read as a pattern (`[]`, `()`, `!`, `{}`, `*`).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MAX_GLOBBED_CHARS } from "../../src/rules/globs";
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

/** Names a glob's `*` and `**` may meet: line breaks among them, as an origin may write them. */
const anyName = fc
  .string({ unit: fc.constantFrom(..."ab_.:/\n\r\u2028\u2029 "), minLength: 1, maxLength: 10 })
  // A part that is `.` or `..` alone is matched by no star, as in a path (docs/limits.md).
  .filter((name) => !name.split("/").some((part) => part === "." || part === ".."));

describe("a glob in hide", () => {
  it("reads every character of a name: `**` matches any, and `!glob` exactly the names glob does not", () => {
    fc.assert(
      fc.property(anyName, (name) => {
        expect(rulesOf({ hide: ["**"] }).hides({ name }), JSON.stringify(name)).toBe(true);
        for (const glob of ["files.*", "*delete*", "admin/**", "**/b*", "a?b"]) {
          const hidden = rulesOf({ hide: [glob] }).hides({ name });
          expect(
            rulesOf({ hide: [`!${glob}`] }).hides({ name }),
            `${glob} ${JSON.stringify(name)}`,
          ).toBe(!hidden);
        }
      }),
      { numRuns: 2_000 },
    );
  });

  it("written `!glob`, hides every tool but those glob names, whatever their names hold", () => {
    // An allowlist written as `hide` (docs/rules.md): a regular expression's `.` stops at a line
    // break, so the negation's `.*` failed on such a name and the tool was listed.
    const rules = rulesOf({ hide: ["!files.*"] });
    for (const name of ["admin\ndelete", "admin\rdelete", "admin\u2028delete", "x\u2029", "\n"]) {
      expect(rules.hides({ name }), JSON.stringify(name)).toBe(true);
    }
    expect(rules.hides({ name: "files.read" })).toBe(false);
  });

  it("crosses a `/` with `**` written as a part of its own, wherever picomatch reads it so", () => {
    const cases: Array<[string, string]> = [
      ["github/**", "github/repos/delete"],
      ["**/*delete*", "github/repos/delete_repo"],
      ["github/**/delete", "github/a/b/delete"],
      ["{files.*,github/**}", "github/repos/delete"],
      ["@(**)", "a/b"],
    ];
    for (const [glob, name] of cases) {
      expect(rulesOf({ hide: [glob] }).hides({ name }), glob).toBe(true);
    }
    // Escaped, a star is a character, and in brackets one of a set: neither is refused as `**`.
    expect(rulesOf({ hide: ["\\**"] }).hides({ name: "*x" })).toBe(true);
    expect(rulesOf({ hide: ["a[**]b"] }).hides({ name: "a*b" })).toBe(true);
  });

  it(`matches no name longer than ${MAX_GLOBBED_CHARS} characters: such a name only exact: names`, () => {
    const longest = `admin.${"x".repeat(MAX_GLOBBED_CHARS - 6)}`;
    const longer = `${longest}x`;
    expect(rulesOf({ hide: ["files.*"] }).hides({ name: longest })).toBe(false);
    expect(rulesOf({ only: ["admin.*"] }).hides({ name: longest })).toBe(false);
    // A glob in hide hides it, whatever it says; one in only lists it not; exact: names it.
    expect(rulesOf({ hide: ["files.*"] }).hides({ name: longer })).toBe(true);
    expect(rulesOf({ only: ["admin.*"] }).hides({ name: longer })).toBe(true);
    expect(rulesOf({ only: ["admin.*", `exact:${longer}`] }).hides({ name: longer })).toBe(false);
    expect(rulesOf({ hide: ["exact:admin.x"] }).hides({ name: longer })).toBe(false);
    expect(rulesOf({ hide: [`exact:${longer}`] }).hides({ name: longer })).toBe(true);
    // As picomatch reads any glob: one names its own text, whatever it holds.
    expect(rulesOf({ only: ["admin.*", longer] }).hides({ name: longer })).toBe(false);
  });

  it("reads a range in braces between one letter or digit and another", () => {
    const rules = rulesOf({ hide: ["tool{3..1}", "v{a..c}"] });
    for (const name of ["tool1", "tool3", "va", "vc"])
      expect(rules.hides({ name }), name).toBe(true);
    for (const name of ["tool0", "tool4", "tool13", "vd", "v-"]) {
      expect(rules.hides({ name }), name).toBe(false);
    }
  });
});

describe("annotations a rule reads, written other than as MCP writes them", () => {
  // The listing shows the tool without such a hint (protocol/tool-shape.ts), so the model never
  // reads it: a rule the hint would decide leaves the tool out rather than guess.
  const MISSHAPEN = ["true", "false", 1, 0, [], {}, "yes"];

  it("hideAnnotated hides a tool whose named hint is no boolean, as it would a match", () => {
    const rules = rulesOf({ hideAnnotated: { destructiveHint: true } });
    for (const destructiveHint of MISSHAPEN) {
      const annotations = { destructiveHint };
      expect(rules.hides({ name: "t", annotations }), JSON.stringify(annotations)).toBe(true);
    }
    for (const annotations of ["destructive", 7, [true]]) {
      expect(rules.hides({ name: "t", annotations }), JSON.stringify(annotations)).toBe(true);
    }
  });

  it("onlyAnnotated lists no such tool", () => {
    const rules = rulesOf({ onlyAnnotated: { readOnlyHint: true } });
    for (const readOnlyHint of MISSHAPEN) {
      expect(rules.hides({ name: "t", annotations: { readOnlyHint } })).toBe(true);
    }
  });

  it("reads an absent hint, or one written null (Go's unset), as said by neither", () => {
    const hide = rulesOf({ hideAnnotated: { destructiveHint: true } });
    for (const annotations of [undefined, null, {}, { destructiveHint: null }, { other: "x" }]) {
      expect(hide.hides({ name: "t", annotations }), JSON.stringify(annotations)).toBe(false);
    }
    expect(hide.hides({ name: "t", annotations: { destructiveHint: false } })).toBe(false);
    // A rule of two hints hides a tool one of which matches and the other is misshapen.
    const both = rulesOf({ hideAnnotated: { destructiveHint: true, openWorldHint: true } });
    const mixed = { destructiveHint: true, openWorldHint: "true" };
    expect(both.hides({ name: "t", annotations: mixed })).toBe(true);
    expect(both.hides({ name: "t", annotations: { ...mixed, openWorldHint: false } })).toBe(false);
  });
});
