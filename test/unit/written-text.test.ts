/**
 * What a value's text shows of itself as it is skipped (json-spans.ts
 * `Written`): whether it is written as `JSON.stringify` writes its parse,
 * told without a parse. A listing's schemas are then known for one reading
 * without being parsed (protocol/listing-text.ts), so the verdict must never
 * hold for a text that reads another way, or not at all.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { textAt } from "../../src/json-spans";
import { isStringified, newWritten, type Written, writtenEnd } from "../../src/json-written";
import { readListingText } from "../../src/protocol/listing-text";
import { WrittenTool } from "../../src/protocol/written-tool";

/** What `writtenEnd` shows of `text`, read whole; `undefined` where it reads no value there. */
function writtenOf(text: string): Written | undefined {
  const written = newWritten();
  return writtenEnd(text, 0, written) === text.length ? written : undefined;
}

const parsed = (text: string): { value: unknown } | undefined => {
  try {
    return { value: JSON.parse(text) };
  } catch {
    return undefined;
  }
};

/** The characters and tokens a JSON text is made of, and those that break one. */
const token = fc.constantFrom(
  "{",
  "}",
  "[",
  "]",
  ",",
  ":",
  '"a"',
  '"b"',
  '"a\\"b"',
  '"\\\\"',
  '"\\u0061"',
  '"\\x"',
  '"\\/"',
  '"tab\there"',
  '"\u0001"',
  "1",
  "-0",
  "1.5",
  "1e3",
  "true",
  "null",
  " ",
  '"',
  "\\",
);

/** A JSON text `JSON.stringify` wrote, with one token put in, taken out or written twice. */
const nearlyStringified = fc
  .tuple(fc.jsonValue({ maxDepth: 4 }), fc.nat(), fc.nat({ max: 3 }), token)
  .map(([value, at, change, inserted]) => {
    const text = JSON.stringify(value) ?? "null";
    const place = at % (text.length + 1);
    if (change === 0) return `${text.slice(0, place)}${inserted}${text.slice(place)}`;
    if (change === 1) return `${text.slice(0, place)}${text.slice(place + 1)}`;
    if (change === 2)
      return `${text.slice(0, place)}${text.slice(place, place + 6).repeat(2)}${text.slice(place + 6)}`;
    return text;
  });

/** Objects whose keys may be written twice, also with escapes. */
const objectTexts = fc
  .array(
    fc.tuple(
      fc.constantFrom('"a"', '"b"', '"a\\"b"', '"\\u0061"', '"a\\\\"'),
      fc.constantFrom("1", '"x"', "{}", "[]"),
    ),
    {
      maxLength: 5,
    },
  )
  .map((members) => `{${members.map(([key, value]) => `${key}:${value}`).join(",")}}`);

describe("a value's text, as it is skipped, shows whether it is written as JSON.stringify writes it", () => {
  it("holds only for JSON whose parse JSON.stringify writes as that very text (property)", () => {
    const texts = fc.oneof(
      nearlyStringified,
      objectTexts,
      fc.array(token, { maxLength: 12 }).map((tokens) => tokens.join("")),
    );
    fc.assert(
      fc.property(texts, (text) => {
        const written = writtenOf(text);
        if (!written?.stringified) return;
        const read = parsed(text);
        expect(read).toBeDefined();
        // The parse's own check agrees: no key twice, nothing written otherwise.
        expect(isStringified(text, [0, text.length], written, read?.value)).toBe(true);
        expect(JSON.stringify(read?.value)).toBe(text);
      }),
      { numRuns: 3000 },
    );
  });

  it("holds for what JSON.stringify writes, but where it escapes with \\u or a \\, or a key is an array index (property)", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 5 }), (value) => {
        const text = JSON.stringify(value) ?? "null";
        const written = writtenOf(text);
        expect(written).toBeDefined();
        // Cautious: the characters after an escaped `\` may be taken for an escape, and a key that
        // is an array index is not read for its order.
        if (!/\\u|\\\\|"\d+":/.test(text)) expect(written?.stringified).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });

  it.each([
    ['{"a":1,"a":2}', "a key twice"],
    ['{"a\\"b":1,"a\\"b":2}', "a key with an escape twice"],
    ['{"a":{"b":1},"b":{"a":1,"b":2,"b":3}}', "a key twice in a nested object"],
    ['{"a" :1}', "a space"],
    ['{"a":1,}', "a comma before }"],
    ["[1,,2]", "two commas"],
    ['["a""b"]', "two strings with nothing between"],
    ['{"a":1"b":2}', "two members with nothing between"],
    ['{"a"}', "a key without a value"],
    ["{:1}", "a value without a key"],
    ['{"a":1:2}', "two colons"],
    ["[1:2]", "a colon in an array"],
    ['["\\x"]', "an escape JSON has not"],
    ['["\\u0061"]', "an escape JSON.stringify writes otherwise"],
    ['["\t"]', "a control character in a string"],
    ["[1.50]", "a number written otherwise"],
    ['{"b":1,"0":2}', "an array index after another key, which JSON.stringify writes first"],
    ['{"a":{"10":1,"9":2}}', "array indexes out of their order"],
  ])("does not hold for %s: %s", (text) => {
    expect(writtenOf(text)?.stringified ?? false).toBe(false);
  });

  it("is not told by the parse either where an object writes an array index after another key", () => {
    // Read as JSON.stringify writes the parse, the text was pinned and fingerprinted as written,
    // and the same schema parsed elsewhere (a batch, the proxy's own listing) as JSON.stringify
    // writes it: under TOOL_CHANGES=hold an unchanged tool was held.
    const text = '{"type":"object","properties":{"status":{},"404":{}}}';
    const written = writtenOf(text) as Written;
    expect(isStringified(text, [0, text.length], written, JSON.parse(text))).toBe(false);
    expect(JSON.stringify(JSON.parse(text))).not.toBe(text);
  });

  it("does not tell, and leaves it to a parse, for an object of more than 64 keys", () => {
    const many = Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, i]));
    const text = JSON.stringify({ many });
    expect(writtenOf(text)?.stringified).toBe(false);
    const written = writtenOf(text) as Written;
    expect(isStringified(text, [0, text.length], written, JSON.parse(text))).toBe(true);
    expect(writtenOf(JSON.stringify({ many: { ...many, k64: undefined } }))?.stringified).toBe(
      true,
    );
  });

  it("compares the keys of each object alone: the same key in two objects is not twice", () => {
    expect(writtenOf('{"a":{"a":{"a":1}},"b":[{"a":1},{"a":2}]}')?.stringified).toBe(true);
  });

  /** The tool a listing's text writes with `schema` as its input schema, as the listing reads it. */
  const listedWith = (schema: string) => {
    const text = `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"t","inputSchema":${schema}}]}}`;
    const tool = readListingText(text)?.elements[0];
    return tool instanceof WrittenTool ? tool : undefined;
  };

  it("lets a listed schema be held as its text only where JSON.parse reads it (property)", () => {
    // The text is held unread and parsed when first read (toolmap/listed-schema.ts), and written
    // to KV as one line of `fingerprint\tJSON` (toolmap/stored-map.ts).
    const texts = fc.oneof(
      nearlyStringified,
      fc.array(token, { maxLength: 12 }).map((tokens) => tokens.join("")),
    );
    fc.assert(
      fc.property(texts, (schema) => {
        const json = listedWith(schema)?.schemaJson;
        if (json === undefined) return;
        expect(parsed(textAt(json))).toBeDefined();
      }),
      { numRuns: 3000 },
    );
  });

  it.each([
    ["[1,,2]", "two commas"],
    ["[1,]", "a comma before ]"],
    ['["\\x"]', "an escape JSON has not"],
    ['"\\q"', "a string with an escape JSON has not"],
    ['["a\n2.x\t{}"]', "a line break and a tab in a string"],
  ])("is no schema held as its text for %s, which JSON.parse does not read: %s", (schema) => {
    const tool = listedWith(schema);
    expect(tool).toBeDefined();
    expect(parsed(schema)).toBeUndefined();
    expect(tool?.schemaJson).toBeUndefined();
  });
});

/**
 * A JSON number's text as the decimal it writes: its significant digits and the power of ten of
 * the last, the sign aside where it is zero (`-0` is `0`), `1.50e2` and `150` alike.
 */
function decimalOf(text: string): string {
  const [, sign = "", whole = "", fraction = "", exponent = "0"] =
    /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([-+]?\d+))?$/.exec(text) ?? [];
  const digits = `${whole}${fraction}`.replace(/^0+/, "");
  const kept = digits.replace(/0+$/, "");
  if (kept === "") return "0";
  const power = Number(exponent) - fraction.length + (digits.length - kept.length);
  return `${sign}${kept}e${power}`;
}

/** Whether `text` says more than the double `JSON.parse` reads it as, whose shortest digits `JSON.stringify` writes. */
const saysMore = (text: string) => {
  const value = Number(text);
  return !Number.isFinite(value) || decimalOf(text) !== decimalOf(JSON.stringify(value));
};

/** JSON numbers: integers past 2^53, doubles as written, and digits of any length, with exponents. */
const numberTexts = fc.oneof(
  fc.bigInt({ min: -(10n ** 25n), max: 10n ** 25n }).map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((value) => JSON.stringify(value)),
  fc
    .tuple(
      fc.stringMatching(/^-?(0|[1-9]\d{0,20})$/),
      fc.stringMatching(/^\d{1,22}$/),
      fc.constantFrom("", "e", "E-", "e+"),
      fc.integer({ min: 0, max: 400 }),
    )
    .map(([whole, fraction, e, power]) => `${whole}.${fraction}${e === "" ? "" : `${e}${power}`}`),
);

describe("a value's text, as it is skipped, shows whether a number in it says more than its double", () => {
  it("holds where one does, written plainly or with spaces (property)", () => {
    fc.assert(
      fc.property(
        fc.array(numberTexts, { minLength: 1, maxLength: 6 }),
        fc.constantFrom(",", ", "),
        (numbers, between) => {
          const list = numbers.join(between);
          const text = between === "," ? `{"a":[${list}]}` : `{"a": [${list}]}`;
          expect(writtenOf(text)?.rounded).toBe(numbers.some(saysMore));
        },
      ),
      { numRuns: 3000 },
    );
  });

  it.each([
    ["[12345678901234567891]", true],
    ["[12345678901234567000]", false],
    ["[12345678901234567168]", true],
    ["[1e400]", true],
    ["[1e-400]", true],
    ["[0.10000000000000000001]", true],
    ["[1.0, 1e3, -0, 1.50, 9007199254740992]", false],
    ["[1, 9007199254740993]", true],
  ])("%s: %s", (text, rounded) => {
    expect(writtenOf(text)?.rounded).toBe(rounded);
  });
});
