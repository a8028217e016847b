import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { sha256, sha256Parts } from "../../src/digest";

describe("sha256Parts", () => {
  it("is the digest of the parts joined, whatever their sizes and characters", async () => {
    // Long parts cross the batches parts are encoded in; characters past ASCII take more bytes.
    const part = fc.oneof(
      fc.string({ maxLength: 40 }),
      fc.string({ unit: "grapheme", maxLength: 40 }),
      fc.string({ unit: "binary", maxLength: 8 }),
      fc.nat({ max: 70_000 }).map((length) => "x".repeat(length)),
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
});
