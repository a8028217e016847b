import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import { sha256 } from "../../src/digest";
import { sameJson } from "../../src/json";
import { assignNames } from "../../src/names/assign";
import { nameRules } from "../../src/names/profiles";
import { fingerprint32 } from "../../src/names/stable-hash";
import type { ListedTool } from "../../src/protocol/tools-list";
import { definitionOf, joinPin, pinParts } from "../../src/toolmap/definition-pins";
import {
  type KnownTools,
  planListing,
  renamesLogged,
  schemaHash,
} from "../../src/toolmap/plan-listing";
import { DEMO_NAMES } from "../helpers/demo-names";
import { knownAfter, knownWith, nothingKnown } from "../helpers/known-tools";

const rules = nameRules("openai");

/** A listing planned with the names `assignNames` gives it, as ToolMap plans one. */
const planned = (tools: readonly ListedTool[], known: KnownTools) =>
  planListing(
    tools,
    known,
    assignNames(
      tools.map((tool) => tool.name),
      known,
      rules,
    ),
  );

const readSchema = { type: "object", properties: { path: { type: "string" } } };
const weather = { name: "get_weather", inputSchema: { type: "object" } };
const listing = [{ name: "files.read", inputSchema: readSchema }, weather];

describe("planning a listing", () => {
  it("stores every tool of a first listing, renamed or not, and reports the renames", () => {
    const plan = planned(listing, nothingKnown);
    expect(
      plan.entries.map(({ name, original, changed }) => ({ name, original, changed })),
    ).toEqual([
      { name: DEMO_NAMES["files.read"], original: "files.read", changed: true },
      { name: "get_weather", original: "get_weather", changed: true },
    ]);
    expect(plan.names).toEqual(
      new Map([
        ["files.read", DEMO_NAMES["files.read"]],
        ["get_weather", "get_weather"],
      ]),
    );
    expect(plan.renames).toEqual([
      { from: "files.read", to: DEMO_NAMES["files.read"], reasons: ["charset"] },
    ]);
  });

  it.each(["warm", "cold"] as const)(
    "stores nothing when the same listing comes again (%s isolate)",
    (isolate) => {
      const first = planned(listing, nothingKnown);
      // Parsed anew, as each answer is: equal schemas, other objects.
      const again = planned(structuredClone(listing), knownAfter(first, isolate));
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
      const first = planned(listing, nothingKnown);
      const changedSchema = { ...readSchema, required: ["path"] };
      const again = planned(
        [{ name: "files.read", inputSchema: changedSchema }, weather],
        knownAfter(first, isolate),
      );
      const changed = again.entries.filter((entry) => entry.changed);
      expect(changed).toMatchObject([
        { name: DEMO_NAMES["files.read"], inputSchema: changedSchema },
      ]);
      expect(changed[0]?.schemaHash).not.toBe(first.entries[0]?.schemaHash);
    },
  );

  it("keeps a name handed out for its tool when a legal tool of that name is listed, and reports it", () => {
    const first = planned([{ name: "a/b", inputSchema: {} }], knownWith({ "a/b": "a_b" }));
    expect(first.names.get("a/b")).toBe("a_b");
    const again = planned(
      [
        { name: "a/b", inputSchema: {} },
        { name: "a_b", inputSchema: {} },
      ],
      knownAfter(first),
    );
    expect(again.names).toEqual(
      new Map([
        ["a/b", "a_b"],
        ["a_b", "a_b_2"],
      ]),
    );
    expect(again.displaced).toEqual([]);
    expect(again.taken).toEqual([{ tool: "a_b", name: "a_b_2", takenBy: "a/b" }]);
  });
});

/** `value` with the members of every object in reverse order: the same JSON value, written otherwise. */
function reordered(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reordered);
  if (typeof value !== "object" || value === null) return value;
  const entries = Object.entries(value).reverse();
  return JSON.parse(JSON.stringify(Object.fromEntries(entries.map(([k, v]) => [k, reordered(v)]))));
}

/** One text per JSON value, whatever the order of its members. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (typeof value !== "object" || value === null) return JSON.stringify(value);
  const keys = Object.keys(value).sort();
  const members = keys.map((key) => `${JSON.stringify(key)}:${canonical(own(value, key))}`);
  return `{${members.join(",")}}`;
}

const own = (object: object, key: string) => (object as Record<string, unknown>)[key];
const parsedJson = fc.jsonValue().map((value) => JSON.parse(JSON.stringify(value)) as unknown);

/** Keys an object inherits a member by (a function, or for `__proto__` the prototype itself), beside plain ones. */
const inheritedKey = fc.constantFrom("__proto__", "constructor", "toString", "valueOf", "a", "b");
/** JSON texts of small values whose objects use those keys, as an origin may: `JSON.parse` makes each an own member. */
const awkwardText: fc.Arbitrary<string> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    fc.constantFrom("null", "true", "0", "1", '""', '"x"', "{}", "[]"),
    fc.array(tie("value"), { maxLength: 3 }).map((items) => `[${items.join(",")}]`),
    fc
      .uniqueArray(fc.tuple(inheritedKey, tie("value")), {
        maxLength: 4,
        selector: ([key]) => key,
      })
      .map(
        (members) =>
          `{${members.map(([key, value]) => `${JSON.stringify(key)}:${value}`).join(",")}}`,
      ),
  ),
})).value as fc.Arbitrary<string>;
const awkwardJson = awkwardText.map((text) => JSON.parse(text) as unknown);
const objectText = (members: ReadonlyArray<readonly [string, string]>) =>
  `{${members.map(([key, value]) => `${JSON.stringify(key)}:${value}`).join(",")}}`;

describe("telling the schema the isolate holds from a changed one", () => {
  it("is another schema written in another key order, as a new isolate fingerprints it", () => {
    // A pin digests the schema as JSON.stringify writes it: taken for the one held, the isolate
    // kept its pin where a new isolate holds the reordered schema as a change.
    const schema = {
      type: "object",
      properties: { path: { type: "string", minLength: 1 }, mode: { enum: ["r", "w"] } },
      required: ["path"],
    };
    const tool = { name: "files.read", inputSchema: reordered(schema) };
    const first = planned([{ name: "files.read", inputSchema: schema }], nothingKnown);
    const again = planned([tool], knownAfter(first, "warm"));
    const fresh = planned([tool], nothingKnown);
    expect(again.entries).toMatchObject([
      { changed: true, sameSchema: false, schemaHash: fresh.entries[0]?.schemaHash },
    ]);
    expect(again.entries[0]?.schemaHash).not.toBe(first.entries[0]?.schemaHash);
  });

  it("compares parsed JSON values member by member, in any order (property)", () => {
    fc.assert(
      fc.property(parsedJson, (value) => {
        expect(sameJson(value, reordered(value))).toBe(true);
      }),
    );
    fc.assert(
      fc.property(parsedJson, parsedJson, (a, b) => {
        expect(sameJson(a, b)).toBe(canonical(a) === canonical(b));
        expect(sameJson(b, a)).toBe(canonical(a) === canonical(b));
      }),
    );
    // Members named as inherited ones: a member one side lacks is never read as the other's.
    fc.assert(
      fc.property(awkwardJson, awkwardJson, (a, b) => {
        expect(sameJson(a, b)).toBe(canonical(a) === canonical(b));
        expect(sameJson(b, a)).toBe(canonical(a) === canonical(b));
        expect(sameJson(a, reordered(a))).toBe(true);
      }),
      { numRuns: 2000 },
    );
    // The same object with one member renamed: a lone `__proto__` reads as the other's prototype.
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.tuple(inheritedKey, awkwardText), {
          minLength: 1,
          maxLength: 4,
          selector: ([key]) => key,
        }),
        inheritedKey,
        (members, to) => {
          const a = JSON.parse(objectText(members)) as unknown;
          const b = JSON.parse(
            objectText(members.map(([key, value], i) => [i === 0 ? to : key, value] as const)),
          ) as unknown;
          expect(sameJson(a, b)).toBe(canonical(a) === canonical(b));
          expect(sameJson(b, a)).toBe(canonical(a) === canonical(b));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("tells apart values that differ in one place: a member more, a value, an array for an object", () => {
    const base = { a: [1, { b: null }], c: "x" };
    expect(sameJson(base, { a: [1, { b: null }], c: "x" })).toBe(true);
    expect(sameJson(base, { a: [1, { b: null }], c: "x", d: 1 })).toBe(false);
    expect(sameJson({ ...base, d: 1 }, base)).toBe(false);
    expect(sameJson(base, { a: [1, { b: 0 }], c: "x" })).toBe(false);
    expect(sameJson(base, { a: [1, { b: null }, 2], c: "x" })).toBe(false);
    expect(sameJson({ 0: 1 }, [1])).toBe(false);
    expect(sameJson([1], { 0: 1 })).toBe(false);
    expect(sameJson({ a: undefined }, { b: undefined })).toBe(false);
    expect(sameJson(JSON.parse('{"__proto__":1}'), {})).toBe(false);
    expect(sameJson(JSON.parse('{"__proto__":1}'), JSON.parse('{"__proto__":1}'))).toBe(true);
    const proto = JSON.parse('{"__proto__":{},"a":1}');
    expect(sameJson(proto, { a: 1, b: 2 })).toBe(false);
    expect(sameJson({ a: 1, b: 2 }, proto)).toBe(false);
  });
});

describe("schema fingerprints", () => {
  it("never change, since KV stores them (test vectors)", () => {
    expect([fingerprint32(""), fingerprint32("a"), fingerprint32("foobar")]).toEqual([
      1548643912, 3055344805, 2373229038,
    ]);
    expect(schemaHash({ type: "object" }).hash).toBe("2.qvqss7");
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

describe("definition digests", () => {
  it("are SHA-256 of the UTF-8 text in base64url, as the published vectors give them", async () => {
    // `printf %s <text> | openssl dgst -sha256 -binary | base64 | tr '+/' '-_' | tr -d =`
    expect(await Promise.all(["", "a", "ab", "abc", "café 🙂"].map(sha256))).toEqual([
      "47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU",
      "ypeBEsobvcr6wjGzmiPcTaeG7_gUfE5yuYB3ha_uSLs",
      "-44g_C5MPySMYMOb1lLzwTRymLuXe4tNWQO4UFViBgM",
      "ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0",
      "tYz9Az0lP8h0_Ta6g3UpDlubRzwNrzxrOFY0fdiPMCY",
    ]);
  });

  it("digest each of many texts started at once as its own, short and long", async () => {
    const texts = [
      "a",
      "é".repeat(30_000),
      "x".repeat(70_000),
      "🙂 \ud800 lone",
      "b".repeat(65_536),
    ];
    // The runtime's own digest of each text's bytes, each in a buffer of its own.
    const own = async (text: string) =>
      btoa(
        String.fromCharCode(
          ...new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text))),
        ),
      )
        .replaceAll("+", "-")
        .replaceAll("/", "_")
        .replace(/=+$/, "");
    const started = texts.map(sha256);
    expect(await Promise.all(started)).toEqual(await Promise.all(texts.map(own)));
  });

  it("leave no byte of a text behind once digested: a caller's credentials are digested too", async () => {
    const encodeInto = vi.spyOn(TextEncoder.prototype, "encodeInto");
    try {
      await sha256("Bearer secret-token\ncookie=abc\n?key=1");
      await sha256("é".repeat(40_000));
      const buffers = encodeInto.mock.calls.map(([, into]) => into);
      expect(buffers.length).toBe(2);
      for (const bytes of buffers) expect(bytes.every((byte) => byte === 0)).toBe(true);
    } finally {
      encodeInto.mockRestore();
    }
  });

  it("pin a definition: the digest, each part's fingerprint, the digest of title and output schema (stored in KV, so it never changes)", async () => {
    const tool = { name: "t", description: "Reads.", inputSchema: { type: "object" } };
    const pinOf = (listed: ListedTool) => definitionOf(listed, "2.qvqss7", undefined).pin;
    // As 945a193^ (the release before title and output schema were pinned) wrote it, then the
    // `-/-/-` this release writes for a tool with neither.
    expect(await pinOf(tool)).toBe(
      "Ibys-fNUQQTSKCmLV1_WfpqpRw0vCTqu7GUGTVKGpsQ/2.qvqss7/f75qnd/-/-/-/-",
    );

    // As this release (since 945a193) writes it.
    const titled = { ...tool, title: "Read", outputSchema: { type: "object" } };
    expect(await pinOf(titled)).toBe(
      "Ibys-fNUQQTSKCmLV1_WfpqpRw0vCTqu7GUGTVKGpsQ/2.qvqss7/f75qnd/-/hamili/qvqss7/ZpiP33i0lfcs3ztIxjQI7RvmWQWys2yFBhG2pis1td4",
    );
  });

  it("are read back in the parts every version stored, and joined again as they were", () => {
    const part = fc.stringMatching(/^[\w.-]{0,6}$/);
    const pin = fc.oneof(
      fc.tuple(part, part, part, part).map((parts) => parts.join("/")),
      fc.array(part, { minLength: 7, maxLength: 7 }).map((parts) => parts.join("/")),
      fc.array(fc.oneof(part, fc.constant("/")), { maxLength: 12 }).map((parts) => parts.join("")),
    );
    fc.assert(
      fc.property(pin, (text) => {
        const parts = text.split("/");
        const expected =
          parts.length === 4
            ? { digest: parts[0], fingerprints: parts.slice(1).join("/") }
            : parts.length === 7
              ? {
                  digest: parts[0],
                  fingerprints: parts.slice(1, 4).join("/"),
                  extra: parts.slice(4).join("/"),
                }
              : { fingerprints: text };
        expect(pinParts(text)).toEqual(expected);
        expect(joinPin(pinParts(text))).toBe(text);
      }),
      { numRuns: 2000 },
    );
  });
});

describe("renamesLogged: a listing's renames as one bounded log line", () => {
  it("counts them all and by reason, names the first ten, and never one the rules hide", () => {
    const renames = Array.from({ length: 205 }, (_, i) => ({
      from: i % 40 === 0 ? `admin.secret_${i}` : `tools.tool_${i}`,
      to: `tool_${i}`,
      reasons: i % 2 === 0 ? (["charset", "collision"] as const) : (["charset"] as const),
    })).map((rename) => ({ ...rename, reasons: [...rename.reasons] }));
    const line = renamesLogged(renames, (original) => original.startsWith("admin."));
    expect(line.count).toBe(205);
    expect(line.hidden).toBe(6);
    expect(line.reasons).toEqual({ charset: 205, collision: 103 });
    expect(line.renames.map(({ from }) => from)).toEqual(
      [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((i) => `tools.tool_${i}`),
    );
    expect(JSON.stringify(line)).not.toContain("admin.");
    expect(JSON.stringify(line).length).toBeLessThan(1_000);
  });
});
