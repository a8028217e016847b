/**
 * Which rules a whole listing settles as naming no tool (docs/rules.md, "A
 * rule that names no tool"): counted by distinct listings, whatever their
 * order or how often they come; settled rules cost a listing nothing.
 */
import { describe, expect, it } from "vitest";
import {
  type JudgedListing,
  LISTINGS_JUDGED,
  RuleJudgements,
  unmatchedRules,
} from "../../src/rules/unmatched-rules";
import { rulesOf } from "../helpers/tool-rules";

/** A listing of `originals`, each model-facing as itself but where `renamed` says. */
const listing = (
  originals: readonly string[],
  { anonymous = false, renamed = {} as Record<string, string>, profile = "openai" } = {},
): JudgedListing => ({
  names: new Map(originals.map((original) => [original, renamed[original] ?? original])),
  anonymous,
  profile,
});

/** A listing whose tools throw when read: what a listing is where every rule is settled. */
const unread = (): JudgedListing => {
  const names = new Map([["x", "x"]]);
  const refuse = () => {
    throw new Error("the listing's tools were read");
  };
  return {
    names: Object.assign(names, { keys: refuse, entries: refuse, [Symbol.iterator]: refuse }),
    anonymous: false,
    profile: "openai",
  };
};

describe("unmatchedRules", () => {
  it(`counts a listing once, in any order, and logs a rule at the ${LISTINGS_JUDGED}rd distinct one it names no tool of`, () => {
    const { document } = rulesOf({ hide: ["amdin.*"] });
    const judged = new RuleJudgements();
    expect(unmatchedRules(document, listing(["a", "b"]), judged)).toEqual([]);
    expect(unmatchedRules(document, listing(["b", "a"]), judged)).toEqual([]);
    expect(unmatchedRules(document, listing(["a"]), judged)).toEqual([]);
    expect(unmatchedRules(document, listing(["a", "b"]), judged)).toEqual([]);
    expect(unmatchedRules(document, listing(["a", "c"]), judged)).toEqual([
      { rule: "TOOL_RULES.hide[0]", listings: 3 },
    ]);
    // Logged once.
    expect(unmatchedRules(document, listing(["d"]), judged)).toEqual([]);
  });

  it("never logs a rule once a listing names a tool of it, whatever listings come after", () => {
    const { document } = rulesOf({ hide: ["admin.*"] });
    const judged = new RuleJudgements();
    expect(unmatchedRules(document, listing(["a"]), judged)).toEqual([]);
    expect(unmatchedRules(document, listing(["a", "admin.users"]), judged)).toEqual([]);
    for (const tools of [["b"], ["c"], ["d"]]) {
      expect(unmatchedRules(document, listing(tools, { anonymous: true }), judged)).toEqual([]);
    }
  });

  it("logs at once a rule that names a model-facing name, with the distinct listings it missed", () => {
    const { document } = rulesOf({ hide: ["files_read_*"] });
    const judged = new RuleJudgements();
    expect(unmatchedRules(document, listing(["a"]), judged)).toEqual([]);
    const renamed = { "files.read": "files_read_yqgun6" };
    expect(unmatchedRules(document, listing(["a", "files.read"], { renamed }), judged)).toEqual([
      { rule: "TOOL_RULES.hide[0]", listings: 2, modelFacingOf: ["files.read"] },
    ]);
  });

  it("logs at once a model-facing copy where the same tools were listed first under a profile that names them otherwise", () => {
    // A client chooses the profile URL it lists at first: under one whose names are the
    // originals' own, a copy from another profile's listing names nothing there; the same tools
    // listed under that other profile then count as no new listing, but show the copy.
    const { document } = rulesOf({ hide: ["files_read_yqgun6"] });
    const judged = new RuleJudgements();
    const tools = ["a", "files.read"];
    expect(unmatchedRules(document, listing(tools, { profile: "gemini" }), judged)).toEqual([]);
    const renamed = { "files.read": "files_read_yqgun6" };
    expect(unmatchedRules(document, listing(tools, { renamed }), judged)).toEqual([
      { rule: "TOOL_RULES.hide[0]", listings: 1, modelFacingOf: ["files.read"] },
    ]);
  });

  it("tests a listing's model-facing names once per profile", () => {
    const { document } = rulesOf({ hide: ["amdin.*"] });
    const judged = new RuleJudgements();
    for (const profile of ["openai", "gemini", "openai", "gemini"]) {
      expect(unmatchedRules(document, listing(["a"], { profile }), judged)).toEqual([]);
    }
    // One listing it named no tool of; two namings of it tested, each once.
    expect([...judged.missed.values()]).toEqual([[expect.any(String)]]);
    expect([...judged.faced.values()].map((faced) => faced.length)).toEqual([2]);
  });

  it("logs at an anonymous request's listing every rule it lacks, one it lacked before too", () => {
    const { document } = rulesOf({ hide: ["amdin.*", "a"] });
    const judged = new RuleJudgements();
    expect(unmatchedRules(document, listing(["b"]), judged)).toEqual([]);
    expect(unmatchedRules(document, listing(["b"], { anonymous: true }), judged)).toEqual([
      { rule: "TOOL_RULES.hide[0]", listings: 1 },
      { rule: "TOOL_RULES.hide[1]", listings: 1 },
    ]);
  });

  it("judges nothing by a listing of no tools", () => {
    const { document } = rulesOf({ hide: ["amdin.*"] });
    const judged = new RuleJudgements();
    expect(unmatchedRules(document, listing([], { anonymous: true }), judged)).toEqual([]);
    expect(judged.missed.size + judged.settled.size).toBe(0);
  });

  it("reads no tool of a listing where there are no rules, or every rule is settled", () => {
    const judged = new RuleJudgements();
    expect(unmatchedRules(rulesOf({}).document, unread(), judged)).toEqual([]);
    const { document } = rulesOf({ hide: ["x"], tools: { y: { description: "Y." } } });
    expect(unmatchedRules(document, listing(["x"], { anonymous: true }), judged)).toEqual([
      { rule: "TOOL_RULES.tools.y", listings: 1 },
    ]);
    expect(unmatchedRules(document, unread(), judged)).toEqual([]);
  });
});
