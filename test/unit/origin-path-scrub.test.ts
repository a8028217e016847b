/**
 * What a log line's `detail` keeps of a runtime's error message that quotes
 * the origin's URL (transport/origin.ts `withoutOriginPath`): its host, never
 * its path or query, which may hold a key.
 */
import { describe, expect, it } from "vitest";
import { withoutOriginPath } from "../../src/transport/origin";

const target = new URL("https://origin.example/t/KEY-IN-PATH/mcp?api_key=KEY-IN-QUERY");

describe("a runtime's error message, for a log line", () => {
  it("names every URL by its scheme and host, and the target's path and query nowhere", () => {
    expect(
      withoutOriginPath(
        `fetch https://origin.example/t/KEY-IN-PATH/mcp?api_key=KEY-IN-QUERY failed; path /t/KEY-IN-PATH/mcp`,
        target,
      ),
    ).toBe("fetch https://origin.example/… failed; path …");
  });

  it("reads a long message only as far as a log line keeps, leaving no part of the path at its end", () => {
    // Past the part read, the path begins: a cut through it would leave its first characters.
    for (let before = 950; before < 1030; before++) {
      const said = withoutOriginPath(
        `${"x".repeat(before)} /t/KEY-IN-PATH/mcp ${"y".repeat(1e6)}`,
        target,
      );
      expect(said.length).toBeLessThanOrEqual(1024);
      expect(said).not.toMatch(/\/t\/K|KEY/);
    }
  });
});
