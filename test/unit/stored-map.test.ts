import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { findSchema, schemaCheck, schemaLine } from "../../src/toolmap/schema-lines";
import {
  answerBytes,
  answerWeight,
  decodeAnswer,
  decodeMap,
  encodeAnswer,
  encodeMap,
  MAP_FORMAT,
  type StoredMap,
} from "../../src/toolmap/stored-map";

/** Originals as origins name them, with the names that are special to JavaScript objects. */
const original = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.constantFrom("__proto__", "constructor", "toString", "0", "17", "a.b", 'q"uote', "é/🙂"),
);
const part = fc.stringMatching(/^[\w.-]{1,8}$/);
/** A pin as each version made it: fingerprints only, with a digest, with title and output schema. */
const pin = fc.oneof(
  fc.tuple(part, part, part).map((parts) => parts.join("/")),
  fc.tuple(part, part, part, part).map((parts) => parts.join("/")),
  fc.array(part, { minLength: 7, maxLength: 7 }).map((parts) => parts.join("/")),
);
const tool = fc.record(
  { schema: part, seen: fc.nat(40_000), pin },
  { requiredKeys: ["schema", "seen"] },
);
/** A map as one is written: definitions held only for tools it keeps (map-store.ts `merge`). */
const storedMap: fc.Arbitrary<StoredMap> = fc
  .record(
    {
      tools: fc
        .array(fc.tuple(original, tool), { maxLength: 30 })
        .map((entries) => new Map(entries)),
      heldPins: fc.array(fc.array(pin, { minLength: 1, maxLength: 4 }), { maxLength: 5 }),
      chunks: fc.nat(2),
      legacy: fc
        .array(fc.tuple(part, fc.array(fc.tuple(original, part), { maxLength: 5 })), {
          maxLength: 3,
        })
        .map((scopes) => new Map(scopes.map(([scope, names]) => [scope, new Map(names)]))),
      migrated: fc.array(part, { maxLength: 3 }).map((scopes) => new Set(scopes)),
      legacyRead: fc.array(fc.tuple(part, part), { maxLength: 3 }).map((read) => new Map(read)),
      listingPin: fc.stringMatching(/^[\w-]{43}$/),
    },
    { requiredKeys: ["tools", "heldPins", "chunks", "legacy", "migrated", "legacyRead"] },
  )
  .map(({ heldPins, ...map }) => {
    const originals = [...map.tools.keys()];
    return {
      ...map,
      // How far a scope was read is kept only until it is read whole.
      legacyRead: new Map([...map.legacyRead].filter(([scope]) => !map.migrated.has(scope))),
      held: new Map(
        heldPins.slice(0, originals.length).map((pins, i) => [originals[i] as string, pins]),
      ),
    };
  });

describe("the map's value in KV", () => {
  it("reads back as the map written, whatever its originals are called", () => {
    fc.assert(
      fc.property(storedMap, (map) => {
        const text = encodeMap(map);
        expect(JSON.parse(text).format).toBe(MAP_FORMAT);
        expect(decodeMap(text)).toEqual(map);
      }),
      { numRuns: 500 },
    );
  });

  it("reads what it knows of a map a later version wrote, and writes it again as it knows it", () => {
    const later = {
      format: MAP_FORMAT,
      tools: {
        // A part after the pin's and the schema's check, and a field of the map this version
        // does not know.
        a: ["2.x", 20_000, "s/e/n", "D", "-/-/-", "c", "later part"],
        b: ["2.y", 20_001],
        c: ["2.z", 20_002, null, null, null, "c2"],
      },
      chunks: 1,
      held: { a: ["D2/s/e2/n/-/-/-"] },
      legacy: { "v1:p": { a: "a_1" }, "v1:q": { b: "b_1" } },
      migrated: ["v1:p"],
      // "v1:p" is read whole: how far it was read is no longer kept.
      legacyRead: { "v1:p": "v1:p:tool:z", "v1:q": "v1:q:tool:k" },
      listingPin: "L",
      laterField: { any: "thing" },
    };
    const known: StoredMap = {
      tools: new Map([
        ["a", { schema: "2.x", seen: 20_000, pin: "D/s/e/n/-/-/-", check: "c" }],
        ["b", { schema: "2.y", seen: 20_001 }],
        ["c", { schema: "2.z", seen: 20_002, check: "c2" }],
      ]),
      held: new Map([["a", ["D2/s/e2/n/-/-/-"]]]),
      chunks: 1,
      legacy: new Map([
        ["v1:p", new Map([["a", "a_1"]])],
        ["v1:q", new Map([["b", "b_1"]])],
      ]),
      migrated: new Set(["v1:p"]),
      legacyRead: new Map([["v1:q", "v1:q:tool:k"]]),
      listingPin: "L",
    };
    const read = decodeMap(JSON.stringify(later));
    expect(read).toEqual(known);
    expect(decodeMap(encodeMap(read as StoredMap))).toEqual(known);
  });

  it("stores an original named __proto__ as a key of its own", () => {
    const map = decodeMap(
      encodeMap({
        tools: new Map([["__proto__", { schema: "2.x", seen: 1 }]]),
        held: new Map([["__proto__", ["a/b/c/d"]]]),
        chunks: 0,
        legacy: new Map(),
        migrated: new Set(),
        legacyRead: new Map(),
      }),
    );
    expect([...(map?.tools.keys() ?? [])]).toEqual(["__proto__"]);
  });

  it("keeps of an earlier version's names of layout 1 what their originals' weight allows, as of tools", () => {
    // 11 originals of 128,000 characters weigh 11,000 units: written before layout 1 was weighed.
    const heavy = Array.from({ length: 11 }, (_, i): [string, string] => [
      String(i).padStart(128_000, "x"),
      `t_${i}`,
    ]);
    const map = decodeMap(
      JSON.stringify({
        format: MAP_FORMAT,
        tools: {},
        legacy: { "v1:scope": Object.fromEntries(heavy) },
        migrated: ["v1:scope"],
      }),
    );
    expect(map?.legacy.get("v1:scope")).toEqual(new Map(heavy.slice(0, 10)));
  });
});

describe("schema lines in KV", () => {
  it("are found by fingerprint and check, each of one fingerprint's; without a check, the first", () => {
    const schemas = ['{"type":"string"}', '{"type":"integer"}', '{"type":"object"}'];
    const [first, second, other] = schemas;
    const text = [
      schemaLine("2.a", first as string),
      schemaLine("2.b", other as string),
      schemaLine("2.a", second as string),
    ].join("");
    for (const json of [first, second] as string[]) {
      expect(findSchema(text, "2.a", schemaCheck(json))).toEqual({
        schema: JSON.parse(json),
        chars: json.length,
      });
    }
    expect(findSchema(text, "2.a")?.schema).toEqual({ type: "string" });
    expect(findSchema(text, "2.b", schemaCheck(first as string))).toBeUndefined();
    expect(findSchema(text, "2.c")).toBeUndefined();
  });
});

describe("a remembered answer in isolate memory", () => {
  it("weighs its characters and, once made, its bytes, each held once where it was sent as it came", () => {
    const halves: [string, string] = ['{"id":', ',"é":1}'];
    const once = { received: halves, sent: halves };
    const renamed = { received: halves, sent: ["<", ">"] as [string, string] };
    expect(answerWeight(once)).toBe(13);
    expect(answerWeight(renamed)).toBe(15);
    // "é" is two bytes of UTF-8.
    expect(answerWeight({ ...once, bytes: answerBytes(once) })).toBe(13 + 14);
    expect(answerWeight({ ...renamed, bytes: answerBytes(renamed) })).toBe(15 + 14 + 2);
    expect(new TextDecoder().decode(answerBytes(renamed).sent[1])).toBe(">");
  });
});

describe("a remembered answer's value in KV", () => {
  const [head, renamed, named] = [
    '{"jsonrpc":"2.0","id":',
    ',"result":{"tools":[{"name":"a.b"}]}}',
    ',"result":{"tools":[{"name":"a_b"}]}}',
  ];
  const empty = ',"result":{"tools":[]}}';

  it("is written as this release writes it: four parts, or two for an answer sent as it came", () => {
    const text = (answer: Parameters<typeof encodeAnswer>[0]) =>
      new TextDecoder().decode(encodeAnswer(answer));
    // A renamed answer as every release since d29bbf2 writes it; one sent as it came, since dcca97c.
    expect(text({ received: [head, renamed], sent: [head, named] })).toBe(
      `1\n22,37,22\n${head}${renamed}${head}${named}`,
    );
    const once: [string, string] = [head, empty];
    expect(text({ received: once, sent: once })).toBe(`1\n22\n${head}${empty}`);
  });

  it("reads what d29bbf2 wrote for an answer sent as it came, its halves twice", () => {
    expect(decodeAnswer(`1\n22,23,22\n${head}${empty}${head}${empty}`)).toEqual({
      received: [head, empty],
      sent: [head, empty],
    });
    // Another format, or lengths past the text: none.
    expect(decodeAnswer(`2\n22\n${head}${empty}`)).toBeUndefined();
    expect(decodeAnswer(`1\n99,1,1\n${head}`)).toBeUndefined();
  });
});
