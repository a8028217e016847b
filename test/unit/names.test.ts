import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { assignNames, type KnownNames } from "../../src/names/assign";
import { MAX_MATCHED_CHARS, matchName } from "../../src/names/match";
import { nameRules, PROFILE_NAMES, type ProfileName } from "../../src/names/profiles";
import { sanitizeName, withSuffix } from "../../src/names/sanitize";
import { fnv1a32, hash6 } from "../../src/names/stable-hash";
import { NAMES_HASHING_ALIKE } from "../helpers/names-hashing-alike";

const NOTHING_KNOWN: KnownNames = { nameOf: () => undefined, originalOf: () => undefined };

/** What each LLM API accepts, written out independently of the implementation. */
const ACCEPTED: Record<ProfileName, RegExp> = {
  openai: /^[A-Za-z0-9_-]{1,64}$/,
  "openai-strict": /^[A-Za-z0-9_-]{1,64}$/,
  anthropic: /^[A-Za-z0-9_-]{1,64}$/,
  bedrock: /^[A-Za-z0-9_-]{1,64}$/,
  gemini: /^[A-Za-z_][A-Za-z0-9_.:-]{0,62}$/,
  portable: /^[A-Za-z][A-Za-z0-9_]{0,62}$/,
  mcp: /^[A-Za-z0-9_.-]{1,128}$/,
};

const sanitize = (name: string, profile: ProfileName = "openai", max?: number) =>
  sanitizeName(name, nameRules(profile, max)).name;

function namesFor(originals: string[], profile: ProfileName = "openai", known = NOTHING_KNOWN) {
  const { assignments } = assignNames(originals, known, nameRules(profile));
  return Object.fromEntries(assignments.map((a) => [a.original, a.name]));
}

function knownFrom(names: Record<string, string>): KnownNames {
  const entries = Object.entries(names);
  const byOriginal = new Map(entries);
  const byName = new Map(entries.map(([original, name]) => [name, original]));
  return { nameOf: (o) => byOriginal.get(o), originalOf: (n) => byName.get(n) };
}

describe("sanitizing one name", () => {
  // Pinned: these are names clients hold, so the function behind them must never change.
  it.each([
    ["unity/health", "unity_health_9okte1"],
    ["a.b c:d", "a_b_c_d_ixsatn"],
    ["files.read", "files_read_yqgun6"],
    ["scope:action", "scope_action_rdowz5"],
    ["über", "uber_yb09u7"],
    ["Crème brûlée", "Creme_brulee_9vynde"],
    ["😀tool", "_tool_u9sfoy"],
    ["///", "____83un1g"],
    ["", "tool_ztntfp"],
    ["ﬁle", "file_mff7ei"], // NFKD splits the ligature
  ])("openai: %o → %o", (original, expected) => {
    expect(sanitize(original)).toBe(expected);
  });

  it("keeps legal names unchanged, under every profile", () => {
    expect(sanitize("get-weather")).toBe("get-weather");
    expect(sanitize("get_weather", "portable")).toBe("get_weather");
    expect(sanitize("files.read", "gemini")).toBe("files.read");
    expect(sanitize("files.read", "mcp")).toBe("files.read");
  });

  it("gives originals that sanitize alike names of their own, with no listing to compare", () => {
    expect(["a/b", "a.b", "a:b"].map((name) => sanitize(name))).toEqual([
      "a_b_g8wk3l",
      "a_b_4la3gs",
      "a_b_2fayps",
    ]);
  });

  it("fixes a digit first where the profile wants a letter", () => {
    expect(sanitize("21st_century", "openai")).toBe("21st_century");
    expect(sanitize("21st_century", "gemini")).toBe("_21st_century_gc8iis");
    expect(sanitize("21st_century", "portable")).toBe("t_21st_century_gc8iis");
    expect(sanitize("///", "portable")).toBe("t_____83un1g");
  });

  it("cuts long names to leave room for the fingerprint", () => {
    const long = "analytics_reporting_service.generate_quarterly_revenue_summary_by_region";
    expect(sanitize(long)).toBe("analytics_reporting_service_generate_quarterly_revenue_su_oshsl2");
    // Two long names that differ only past the cut still get different names.
    expect(sanitize(`${long}_v2`)).toBe(
      "analytics_reporting_service_generate_quarterly_revenue_su_7j8ecv",
    );
    expect(sanitize(`${long}_v3`)).toBe(
      "analytics_reporting_service_generate_quarterly_revenue_su_798snw",
    );
  });

  it("honours NAME_MAX_LENGTH below the profile's own cap", () => {
    // The first 13 characters, `_`, and the fingerprint: 20 in all.
    expect(sanitize("a_perfectly_legal_but_long_name", "openai", 20)).toBe("a_perfectly_l_g4pnbw");
    expect(nameRules("openai", 200).cap).toBe(64);
  });

  it("reports why a name changed", () => {
    const rules = nameRules("portable");
    expect(sanitizeName(`9/${"x".repeat(80)}`, rules).reasons).toEqual([
      "charset",
      "first_character",
      "length",
    ]);
    expect(sanitizeName("fine", rules).reasons).toEqual([]);
  });

  it("names a name read a slice at a time as the whole name decomposed at once would be, for every code point", () => {
    // Rule 2 as docs/names.md writes it, the whole original at once (sanitize.ts reads it in slices).
    const whole = (original: string, profile: ProfileName) => {
      const { profile: rules, cap } = nameRules(profile);
      let name = original.normalize("NFKD").replace(/\p{M}/gu, "").replace(rules.disallowed, "_");
      if (name === "") name = "tool";
      else if (!rules.allowedFirst.test(name[0] as string))
        name = `${rules.allowedFirst.test("_") ? "_" : "t_"}${name}`;
      return `${name.slice(0, cap - 7)}_${hash6(original)}`;
    };
    const differs: string[] = [];
    for (let point = 0; point <= 0x10ffff; point++) {
      if (point >= 0xd800 && point <= 0xdfff) continue;
      const c = String.fromCodePoint(point);
      // `c` ends the first slice of 64 code units, between combining marks of the highest classes.
      const original = `${"x".repeat(62)}\u0345${c}\u0301${c}y`;
      if (sanitize(original, "mcp") !== whole(original, "mcp")) differs.push(point.toString(16));
    }
    expect(differs).toEqual([]);
    // 1.1 million names sanitized twice: 25 s on two cores at a load of 12, past the suite's 30 s with more.
  }, 180_000);
});

describe("assigning names to a listing", () => {
  it("gives a_b to the legal tool and a/b its own fingerprinted name", () => {
    expect(namesFor(["a/b", "a_b"])).toEqual({ a_b: "a_b", "a/b": "a_b_g8wk3l" });
  });

  it("gives a fingerprinted name to its tool, and a legal original that spells it the next one", () => {
    expect(namesFor(["files.read", "files_read_yqgun6"])).toEqual({
      files_read_yqgun6: "files_read_yqgun6_2",
      "files.read": "files_read_yqgun6",
    });
    // Whichever of the two a listing shows alone, the fingerprinted name stays its tool's.
    expect(namesFor(["files.read"])).toEqual({ "files.read": "files_read_yqgun6" });
  });

  it("names several originals that sanitize alike apart, in any listing", () => {
    expect(namesFor(["a:b", "a/b", "a.b"])).toEqual({
      "a.b": "a_b_4la3gs",
      "a/b": "a_b_g8wk3l",
      "a:b": "a_b_2fayps",
    });
    // Each alone gets the same name: two isolates seeing different tools never disagree.
    for (const original of ["a:b", "a/b", "a.b"]) {
      expect(namesFor([original])[original]).toBe(namesFor(["a:b", "a/b", "a.b"])[original]);
    }
  });

  it("keeps a 70-character name and its near twin distinct and within 64", () => {
    const base = "x".repeat(60);
    expect(namesFor([`${base}/0123456789`, `${base}/0123456780`])).toEqual({
      [`${base}/0123456780`]: `${"x".repeat(57)}_g4ey4u`,
      [`${base}/0123456789`]: `${"x".repeat(57)}_e6hqa1`,
    });
  });

  it("keeps a name an earlier version handed out (sticky)", () => {
    // Layout 1 named x/y `x_y`: it keeps that name, and x.y gets its own.
    expect(namesFor(["x.y", "x/y"], "openai", knownFrom({ "x/y": "x_y" }))).toEqual({
      "x/y": "x_y",
      "x.y": "x_y_j5w4ty",
    });
  });

  it("does not hand a remembered name to another tool, even when its tool is gone", () => {
    expect(namesFor(["x.y"], "openai", knownFrom({ "x/y": "x_y_j5w4ty" }))).toEqual({
      "x.y": "x_y_j5w4ty_2",
    });
  });

  it("keeps a name handed out pointing at its tool: a legal original of that name gets the next, and is reported", () => {
    const { assignments, displaced, taken } = assignNames(
      ["a/b", "a_b"],
      knownFrom({ "a/b": "a_b" }),
      nameRules("openai"),
    );
    expect(assignments.map((a) => [a.original, a.name])).toEqual([
      ["a/b", "a_b"],
      ["a_b", "a_b_2"],
    ]);
    expect(displaced).toEqual([]);
    expect(taken).toEqual([{ tool: "a_b", name: "a_b_2", takenBy: "a/b" }]);
  });

  it("gives the operator's chosen names first; a legal tool whose name was chosen for another is renamed", () => {
    const { assignments, displaced } = assignNames(
      ["catering.invoice", "create_invoice", "files.read"],
      knownFrom({ "catering.invoice": "catering_invoice_kb7ev1" }),
      nameRules("openai"),
      new Map([["catering.invoice", "create_invoice"]]),
    );
    expect(assignments).toEqual([
      { original: "catering.invoice", name: "create_invoice", reasons: ["rule"] },
      { original: "create_invoice", name: "create_invoice_2", reasons: ["collision"] },
      { original: "files.read", name: "files_read_yqgun6", reasons: ["charset"] },
    ]);
    expect(displaced).toEqual([]);
  });

  it("keeps a chosen name for its tool on a page (or a batch) the tool is not in", () => {
    const chosen = new Map([["catering.invoice", "create_invoice"]]);
    const rules = nameRules("openai");
    const whole = assignNames(["catering.invoice", "create_invoice"], NOTHING_KNOWN, rules, chosen);
    const page = assignNames(["create_invoice"], NOTHING_KNOWN, rules, chosen);
    expect(page.assignments).toEqual([
      { original: "create_invoice", name: "create_invoice_2", reasons: ["collision"] },
    ]);
    expect(page.assignments[0]).toEqual(whole.assignments[1]);
  });

  it("names an origin's thousands of names of one hash apart, each name handed out looked up a few times", () => {
    // A listing of 4,096 names that sanitize and hash alike, after an earlier one handed their
    // suffixed names to other tools: on the code before, each name tried every suffix the ones
    // before it had (16.8 M lookups, seconds of a listing's CPU).
    const rules = nameRules("openai");
    const base = sanitize(NAMES_HASHING_ALIKE[0] as string);
    const earlier = new Map(
      NAMES_HASHING_ALIKE.map((_, i) => [withSuffix(base, i + 2, rules.cap), `earlier-${i}`]),
    );
    let lookups = 0;
    const known: KnownNames = {
      nameOf: () => undefined,
      originalOf: (name) => {
        lookups++;
        return earlier.get(name);
      },
    };
    const { assignments } = assignNames(NAMES_HASHING_ALIKE, known, rules);
    const names = assignments.map((a) => a.name);
    expect(new Set(names).size).toBe(NAMES_HASHING_ALIKE.length);
    for (const name of names) {
      expect(name).toMatch(ACCEPTED.openai);
      expect(earlier.has(name)).toBe(false);
    }
    expect(lookups).toBeLessThan(4 * (NAMES_HASHING_ALIKE.length + earlier.size));
  });

  it("marks collisions among the reasons", () => {
    const { assignments } = assignNames(
      ["files.read", "files_read_yqgun6"],
      NOTHING_KNOWN,
      nameRules("openai"),
    );
    expect(assignments.find((a) => a.original === "files.read")?.reasons).toEqual(["charset"]);
    expect(assignments.find((a) => a.original === "files_read_yqgun6")?.reasons).toEqual([
      "collision",
    ]);
  });
});

describe("properties over arbitrary Unicode names", () => {
  const anyName = fc.string({ unit: "binary", maxLength: 150 });
  const profile = fc.constantFrom(...PROFILE_NAMES);
  const cap = fc.option(fc.integer({ min: 8, max: 128 }), { nil: undefined });

  it("every output is accepted by its profile's API and within the cap", () => {
    fc.assert(
      fc.property(anyName, profile, cap, (name, p, max) => {
        const out = sanitize(name, p, max);
        expect(out).toMatch(ACCEPTED[p]);
        expect(out.length).toBeLessThanOrEqual(nameRules(p, max).cap);
      }),
      { numRuns: 2000 },
    );
  });

  it("is deterministic", () => {
    fc.assert(
      fc.property(anyName, profile, (name, p) => {
        expect(sanitize(name, p)).toBe(sanitize(name, p));
      }),
    );
  });

  it("leaves names that are already legal unchanged", () => {
    const legal = fc.stringMatching(/^[A-Za-z][A-Za-z0-9_]{0,40}$/);
    fc.assert(
      fc.property(legal, profile, (name, p) => {
        expect(sanitize(name, p)).toBe(name);
      }),
    );
  });

  it("within a listing, every tool gets a distinct, accepted name", () => {
    // Names built from few characters collide often after sanitizing.
    const crowded = fc.string({
      unit: fc.constantFrom("a", "b", "_", "/", ".", "ü", "😀"),
      maxLength: 6,
    });
    fc.assert(
      fc.property(
        fc.array(fc.oneof(crowded, anyName), { maxLength: 40 }),
        profile,
        (originals, p) => {
          const { assignments } = assignNames(originals, NOTHING_KNOWN, nameRules(p));
          const names = assignments.map((a) => a.name);
          expect(new Set(names).size).toBe(new Set(originals).size);
          for (const name of names) expect(name).toMatch(ACCEPTED[p]);
        },
      ),
      { numRuns: 500 },
    );
  });

  it("gives a chosen name to its tool alone, whichever of the tools are named together", () => {
    const crowded = fc.string({ unit: fc.constantFrom("a", "b", "_", "/"), maxLength: 4 });
    fc.assert(
      fc.property(
        fc.uniqueArray(crowded, { minLength: 2, maxLength: 12 }),
        fc.nat(),
        fc.stringMatching(/^[a-z][a-z_]{0,3}$/),
        fc.array(fc.boolean(), { maxLength: 12 }),
        (originals, pick, name, named) => {
          // The operator's name for one tool, often another tool's own name.
          const chooser = originals[pick % originals.length] as string;
          const chosen = new Map([
            [chooser, originals.find((o) => /^[a-z][a-z_]*$/.test(o) && o !== chooser) ?? name],
          ]);
          const subset = originals.filter((_, i) => named[i] ?? true);
          const { assignments } = assignNames(subset, NOTHING_KNOWN, nameRules("openai"), chosen);
          for (const { original, name: given } of assignments) {
            expect(given === chosen.get(chooser)).toBe(original === chooser);
          }
        },
      ),
      { numRuns: 1000 },
    );
  });

  it("does not depend on the order of the listing", () => {
    const crowded = fc.string({ unit: fc.constantFrom("a", "_", "/", "."), maxLength: 4 });
    fc.assert(
      fc.property(
        fc
          .array(crowded, { maxLength: 20 })
          .chain((list) =>
            fc.tuple(fc.constant(list), fc.shuffledSubarray(list, { minLength: list.length })),
          ),
        profile,
        ([list, shuffled], p) => {
          expect(assignNames(shuffled, NOTHING_KNOWN, nameRules(p))).toEqual(
            assignNames(list, NOTHING_KNOWN, nameRules(p)),
          );
        },
      ),
    );
  });

  it("names a tool the same whatever else is listed beside it, so isolates never disagree", () => {
    const crowded = fc.string({ unit: fc.constantFrom("a", "_", "/", ".", ":"), maxLength: 4 });
    fc.assert(
      fc.property(
        fc.array(crowded, { maxLength: 12 }),
        fc.array(crowded, { maxLength: 12 }),
        profile,
        (one, other, p) => {
          const named = (list: string[]) =>
            new Map(
              assignNames(list, NOTHING_KNOWN, nameRules(p)).assignments.map((a) => [
                a.original,
                a.name,
              ]),
            );
          const [a, b] = [named(one), named(other)];
          for (const [original, name] of a) if (b.has(original)) expect(b.get(original)).toBe(name);
        },
      ),
      { numRuns: 500 },
    );
  });

  it("keeps every earlier name when the listing grows (sticky)", () => {
    const crowded = fc.string({ unit: fc.constantFrom("a", "_", "/", ".", ":"), maxLength: 4 });
    fc.assert(
      fc.property(
        fc.array(crowded, { maxLength: 12 }),
        fc.array(crowded, { maxLength: 12 }),
        (before, added) => {
          const rules = nameRules("openai");
          const first = assignNames(before, NOTHING_KNOWN, rules).assignments;
          const known = knownFrom(Object.fromEntries(first.map((a) => [a.original, a.name])));
          const second = new Map(
            assignNames([...before, ...added], known, rules).assignments.map((a) => [
              a.original,
              a.name,
            ]),
          );
          const legalNewcomers = new Set(added.filter((name) => sanitize(name) === name));
          for (const { original, name } of first) {
            // Only a legal newcomer with exactly that name can take it over.
            if (!legalNewcomers.has(name)) expect(second.get(original)).toBe(name);
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe("a name matched against a caller's listing", () => {
  const shown = [
    { original: "files.read", listed: "files_read_yqgun6" },
    { original: "files.write", listed: "files_write_k2m9qa" },
  ];

  it("finds the one tool a name stands for, and names alike to one that stands for none", () => {
    expect(matchName("Files_Read", shown)).toEqual({ kind: "one", original: "files.read" });
    expect(matchName("files_delete", shown)).toEqual({
      kind: "none",
      closest: ["files_read_yqgun6", "files_write_k2m9qa"],
    });
  });

  // A client's name may be megabytes long: read whole against each of 1,000 tools, a name of
  // 100 KB took 7.5 s of CPU and one of 1 MB 45 s.
  it(`matches a name of at most ${MAX_MATCHED_CHARS} characters, and finds none alike to a longer one`, () => {
    const at = (length: number) => `files_${"x".repeat(length - "files_".length)}`;
    expect(matchName(at(MAX_MATCHED_CHARS), shown)).toEqual({
      kind: "none",
      closest: ["files_read_yqgun6", "files_write_k2m9qa"],
    });
    expect(matchName(at(MAX_MATCHED_CHARS + 1), shown)).toEqual({ kind: "none", closest: [] });
    expect(matchName(`FILES.READ${" ".repeat(MAX_MATCHED_CHARS)}`, shown)).toEqual({
      kind: "none",
      closest: [],
    });
  });

  it("reads snake_case, camelCase and PascalCase spellings of a name as one", () => {
    const cased = [
      { original: "GetWeather", listed: "GetWeather" },
      { original: "files.read", listed: "files_read_yqgun6" },
    ];
    for (const name of ["get_weather", "getWeather", "GET-WEATHER", "getweather"]) {
      expect(matchName(name, cased), name).toEqual({ kind: "one", original: "GetWeather" });
    }
    for (const name of ["filesRead", "FilesRead", "filesReadYqgun6"]) {
      expect(matchName(name, cased), name).toEqual({ kind: "one", original: "files.read" });
    }
    // Two tools that answer to one spelling: neither is the call's, but for its own name.
    const both = [...cased, { original: "get_weather", listed: "get_weather" }];
    expect(matchName("getWeather", both)).toEqual({
      kind: "many",
      closest: ["GetWeather", "get_weather"],
    });
    expect(matchName("get_weather", both)).toEqual({ kind: "one", original: "get_weather" });
  });

  it("keeps a separator between two numbers: tool_1_0 is no spelling of tool_10", () => {
    const numbered = [
      { original: "tool_10", listed: "tool_10" },
      { original: "api.v1.2", listed: sanitize("api.v1.2") },
    ];
    expect(matchName("tool_1_0", numbered)).toMatchObject({ kind: "none" });
    expect(matchName("api_v12", numbered)).toMatchObject({ kind: "none" });
    expect(matchName("Tool10", numbered)).toEqual({ kind: "one", original: "tool_10" });
    expect(matchName("apiV1_2", numbered)).toEqual({ kind: "one", original: "api.v1.2" });
  });

  it("reads the words of camelCase and PascalCase names for the closest names", () => {
    const cased = [
      { original: "GetWeather", listed: "GetWeather" },
      { original: "getForecastHTTPData", listed: "getForecastHTTPData" },
      { original: "files.read", listed: "files_read_yqgun6" },
    ];
    // A word misspelt: the other word still says which tools are alike.
    expect(matchName("get_weathr", cased)).toEqual({
      kind: "none",
      closest: ["GetWeather", "getForecastHTTPData"],
    });
    // Words in another order: the tool with more of them first.
    expect(matchName("weatherGet", cased)).toEqual({
      kind: "none",
      closest: ["GetWeather", "getForecastHTTPData"],
    });
    expect(matchName("forecast_http", cased)).toEqual({
      kind: "none",
      closest: ["getForecastHTTPData"],
    });
  });

  it("gives a call by a tool's own name that tool, where other tools answer to the name's spelling too", () => {
    // `a/b`, `a.b` and `a:b` sanitize alike: each answers to `a_b`, and `a.b` is only `a.b`'s own name.
    const alike = ["a/b", "a.b", "a:b"].map((original) => ({
      original,
      listed: sanitize(original),
    }));
    expect(matchName("a.b", alike)).toEqual({ kind: "one", original: "a.b" });
    expect(matchName("A.B", alike)).toMatchObject({ kind: "many" });
    // A tool's own name another tool is listed under is not the first tool's: where the listed one
    // cannot be resolved (its schema lost from KV, the origin not listed again), neither is reached.
    const taken = [
      { original: "files.write", listed: "files_write_g6n43p" },
      { original: "files_write_g6n43p", listed: "files_write_g6n43p_2" },
    ];
    expect(matchName("files_write_g6n43p", taken)).toMatchObject({ kind: "many" });
  });

  it("reads a name without its fingerprint only where the listed name ends in one", () => {
    // A name the operator chose, or one an earlier version handed out, may end in a word of six
    // letters: `search_issues` is no fingerprinted `search`, and `search` reached it.
    const chosen = [
      { original: "github.search_issues", listed: "search_issues" },
      { original: "unity/health", listed: "unity_health" },
    ];
    expect(matchName("search", chosen)).toEqual({ kind: "none", closest: ["search_issues"] });
    expect(matchName("unity", chosen)).toEqual({ kind: "none", closest: ["unity_health"] });
    expect(matchName("Search-Issues", chosen)).toEqual({
      kind: "one",
      original: "github.search_issues",
    });
    // A fingerprint is the original's: `uber` is `über`, listed as `uber_yb09u7`, and no tool
    // whose listed name only ends like a fingerprint answers to it without.
    const fingerprinted = { original: "über", listed: sanitize("über") };
    expect(fingerprinted.listed).toBe("uber_yb09u7");
    expect(matchName("UBER", [fingerprinted])).toEqual({ kind: "one", original: "über" });
    const unlike = { original: "ueber", listed: "uber_yb09u7" };
    expect(matchName("uber", [unlike])).toMatchObject({ kind: "none" });
  });

  // An origin's name may be megabytes long too: read whole at every call, a tool named 15 MB of
  // `ab.` made each call by another spelling of any tool of the listing cost 0.5 s of CPU.
  it(`reads a shown tool's original only where it has at most ${MAX_MATCHED_CHARS} characters`, () => {
    const dotted = (length: number) => `files${".".repeat(length - 9)}read`;
    const within = { original: dotted(MAX_MATCHED_CHARS), listed: "files_9x8k2a" };
    const long = { ...within, original: dotted(MAX_MATCHED_CHARS + 1) };
    expect(matchName("files.read", [within])).toEqual({ kind: "one", original: within.original });
    expect(matchName("files.read", [long])).toEqual({ kind: "none", closest: ["files_9x8k2a"] });
  });
});

describe("the stable hash behind fingerprinted names", () => {
  /** FNV-1a over TextEncoder's bytes, written the plain way: what stored names and hashes were made with. */
  function reference(text: string): number {
    let hash = 0x811c9dc5;
    for (const byte of new TextEncoder().encode(text)) hash = Math.imul(hash ^ byte, 0x01000193);
    return hash >>> 0;
  }

  it("matches the published FNV-1a test vectors", () => {
    expect(fnv1a32("")).toBe(0x811c9dc5);
    expect(fnv1a32("a")).toBe(0xe40c292c);
    expect(fnv1a32("foobar")).toBe(0xbf9cf968);
  });

  it("hashes the UTF-8 bytes of any string, lone surrogates as U+FFFD", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 200 }), (text) => {
        expect(fnv1a32(text)).toBe(reference(text));
      }),
      { numRuns: 5000 },
    );
    for (const text of ["über", "日本語", "😀", "a\ud800", "\udc00b", "\ud800\ud800\udc00"]) {
      expect(fnv1a32(text)).toBe(reference(text));
    }
  });
});
