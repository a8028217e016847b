import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { sha256, sha256Parts } from "../../src/digest";

describe("sha256Parts", () => {
  it("is the digest of the parts joined, whatever their sizes and characters", async () => {
    // Long parts cross the batches parts are encoded in, or are encoded alone; characters past
    // ASCII take more bytes.
    const part = fc.oneof(
      fc.string({ maxLength: 40 }),
      fc.string({ unit: "grapheme", maxLength: 40 }),
      fc.string({ unit: "binary", maxLength: 8 }),
      // Long, and maybe with half a surrogate pair at either end.
      fc
        .tuple(
          fc.constantFrom("", "\ude00"),
          fc.nat({ max: 70_000 }),
          fc.constantFrom("", "\ud83d"),
        )
        .map(([start, length, end]) => `${start}${"x".repeat(length)}${end}`),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(part, { maxLength: 12 }), async (parts) => {
        expect(await sha256Parts(parts)).toBe(await sha256(parts.join("")));
      }),
      { numRuns: 60 },
    );
  });

  it("is the digest of the parts joined as the buffer it reuses grows, and after a longer text", async () => {
    const cases = [
      ["x".repeat(1024 * 1024), "y"],
      // As many characters as fit, twice as many bytes.
      ["é".repeat(600_000), "z".repeat(400_000)],
      ["short"],
    ];
    for (const parts of cases) expect(await sha256Parts(parts)).toBe(await sha256(parts.join("")));
  });

  it("keeps a surrogate pair split between parts as one character", async () => {
    const parts = ["a".repeat(40_000), "\ud83d", "\ude00", "b"];
    expect(await sha256Parts(parts)).toBe(await sha256(parts.join("")));
  });

  it("keeps a surrogate pair split where a batch ends, or a long part begins or ends, as one character", async () => {
    const cases = [
      ["x".repeat(32_767), "\ud83d", "\ude00"],
      ["x".repeat(40_000), "\ud83d", "\ude00"],
      [`${"x".repeat(40_000)}\ud83d`, "\ude00"],
      ["a\ud83d", `\ude00${"y".repeat(40_000)}`],
      ["a\ud83d", `\ude00${"y".repeat(40_000)}\ud83d`, "\ude00b"],
      // A lone one is the replacement character, as where joined.
      [`${"x".repeat(40_000)}\ud83d`],
      ["\ud83d", "x".repeat(40_000)],
    ];
    for (const parts of cases) expect(await sha256Parts(parts)).toBe(await sha256(parts.join("")));
  });

  it("is each one's digest when many are digested at once, of other lengths and characters", async () => {
    // Every call writes the one reused buffer: each must hand its bytes to the runtime before
    // another writes it. Some past the buffer, some of characters that take more bytes.
    const inputs = Array.from({ length: 64 }, (_, i) => {
      const character = ["a", "é", "😀", "z"][i % 4] as string;
      const length = i % 8 === 7 ? 600_000 + i : (i * 7919) % 50_000;
      return [`${i}:`, character.repeat(length), `:${i}`];
    });
    const digests = await Promise.all(inputs.map((parts) => sha256Parts(parts)));
    const expected = await Promise.all(inputs.map((parts) => sha256(parts.join(""))));
    expect(digests).toEqual(expected);
    expect(new Set(digests).size).toBe(inputs.length);
  });

  it("relies on the runtime reading the bytes when asked: written over after, the digest is of the bytes given", async () => {
    const bytes = new TextEncoder().encode("the bytes given");
    const digest = crypto.subtle.digest("SHA-256", bytes);
    bytes.fill(0);
    const given = await crypto.subtle.digest(
      "SHA-256",
      new TextEncoder().encode("the bytes given"),
    );
    expect(new Uint8Array(await digest)).toEqual(new Uint8Array(given));
  });
});
