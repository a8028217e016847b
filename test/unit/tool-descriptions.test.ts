/** A tool's description as its provider takes it (src/schemas/tool-descriptions.ts). */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { profileOf } from "../../src/schemas/profile";
import {
  DESCRIPTION_RULES,
  fittedDescription,
  mayChange,
} from "../../src/schemas/tool-descriptions";
import { shownDescriptions } from "../../src/toolmap/shown-descriptions";
import { captureLogs } from "../helpers/logs";

describe("a description longer than OpenAI's 1,024 characters", () => {
  const openai = DESCRIPTION_RULES.openai;

  it("is cut to at most 1,024 code points, what was kept the origin's own beginning", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", minLength: 900, maxLength: 3_000 }), (text) => {
        const fitted = fittedDescription(text, openai) as string;
        expect([...fitted].length).toBeLessThanOrEqual(1024);
        expect(fitted.length).toBeLessThanOrEqual(1024);
        if (text.length <= 1024) expect(fitted).toBe(text);
        else {
          expect(fitted.endsWith("…")).toBe(true);
          expect(text.startsWith(fitted.slice(0, -1))).toBe(true);
          // Never half a surrogate pair: the text is well formed as the origin's was.
          expect(fitted.isWellFormed()).toBe(true);
        }
      }),
    );
  });

  it("ends where a line ends, else a sentence, else a word, in the last fifth of what is kept", () => {
    const lines = Array.from({ length: 60 }, (_, i) => `Line ${i}: one. And two.`).join("\n");
    const byLine = fittedDescription(lines, openai) as string;
    expect(lines.startsWith(byLine.slice(0, -1))).toBe(true);
    expect(lines[byLine.length - 1]).toBe("\n");

    const sentences = "A sentence that ends. ".repeat(80);
    expect(fittedDescription(sentences, openai)).toMatch(/ends\.…$/);

    const words = "word ".repeat(400);
    expect(fittedDescription(words, openai)).toMatch(/word…$/);

    // No boundary in the last fifth: cut where the room ends.
    expect(fittedDescription("x".repeat(2_000), openai)).toBe(`${"x".repeat(1023)}…`);
  });

  it("keeps the operator's paragraph at its end whole, and cuts what comes before it", () => {
    const hint = "Paths are relative to the repository root.";
    const fitted = fittedDescription(
      `${"Reads a file. ".repeat(100)}\n\n${hint}`,
      openai,
      hint.length,
    );
    expect(fitted?.length).toBeLessThanOrEqual(1024);
    expect(fitted).toMatch(
      /^Reads a file\. .*file\.…\n\nPaths are relative to the repository root\.$/s,
    );
    // One that would leave the rest too little room is cut as any text is.
    const long = "p".repeat(900);
    expect(fittedDescription(`${"x ".repeat(200)}\n\n${long}`, openai, long.length)).toMatch(/p…$/);
  });

  it("is kept whole by profiles whose providers say no such limit", () => {
    const long = "y".repeat(5_000);
    for (const profile of ["anthropic", "bedrock", "gemini", "mcp"] as const) {
      expect(fittedDescription(long, DESCRIPTION_RULES[profile])).toBe(long);
    }
  });
});

describe("an empty description", () => {
  it("is left out for Bedrock, which takes one of a character at least, and portable", () => {
    expect(fittedDescription("", DESCRIPTION_RULES.bedrock)).toBeUndefined();
    expect(fittedDescription("", DESCRIPTION_RULES.portable)).toBeUndefined();
    expect(fittedDescription("", DESCRIPTION_RULES.openai)).toBe("");
  });
});

describe("the length of a description's JSON text", () => {
  it("says when it need not be read: never for one the rules would change", () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 1_100 }),
        fc.constantFrom(...Object.values(DESCRIPTION_RULES)),
        (text, rules) => {
          if (fittedDescription(text, rules) !== text) {
            expect(mayChange(JSON.stringify(text).length, rules)).toBe(true);
          }
        },
      ),
    );
  });
});

describe("a listing's descriptions", () => {
  const entries = [
    { original: "long", tool: { name: "long", description: "Say it again. ".repeat(100) } },
    { original: "empty", tool: { name: "empty", description: "" } },
    { original: "short", tool: { name: "short", description: "Short." } },
  ];
  const noRules = { ruleFor: () => undefined };

  it("are fitted for the profile's provider, one line saying which; the rest are the origin's", () => {
    const logs = captureLogs();
    const shown = shownDescriptions(entries, noRules, profileOf("portable"), false);
    expect(shown.get("long")?.length).toBeLessThanOrEqual(1024);
    expect([...shown.keys()].sort()).toEqual(["empty", "long"]);
    expect(shown.get("empty")).toBeUndefined();
    const fitted = logs.lines().filter((line) => line.event === "tool_descriptions_fitted");
    expect(fitted).toMatchObject([
      { profile: "portable", max: 1024, cut: 1, tools: ["long"], emptied: 1 },
    ]);
  });

  it("keep the operator's appended paragraph where the origin's is cut", () => {
    const hint = "Ask before deleting.";
    const rules = { ruleFor: () => ({ appendDescription: hint }) } as unknown as Parameters<
      typeof shownDescriptions
    >[1];
    const shown = shownDescriptions(entries.slice(0, 1), rules, profileOf("openai"), false);
    expect(shown.get("long")?.endsWith(`…\n\n${hint}`)).toBe(true);
  });

  it("are the origin's in search mode, and where the provider takes them", () => {
    const logs = captureLogs();
    expect(shownDescriptions(entries, noRules, profileOf("portable"), true).size).toBe(0);
    expect(shownDescriptions(entries, noRules, profileOf("anthropic"), false).size).toBe(0);
    expect(logs.lines()).toEqual([]);
  });
});
