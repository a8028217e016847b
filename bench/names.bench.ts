/**
 * Naming a listing is on the path of every `tools/list` response. Budget: a
 * 1,000-tool listing, every name needing repair, in well under 10 ms (the CPU
 * time a Workers Free request gets in total).
 */
import { bench, describe } from "vitest";
import { assignNames, type KnownNames } from "../src/names/assign";
import { nameRules } from "../src/names/profiles";
import { sanitizeName } from "../src/names/sanitize";

const rules = nameRules("openai");
const nothingKnown: KnownNames = { nameOf: () => undefined, originalOf: () => undefined };

function listing(size: number): string[] {
  return Array.from({ length: size }, (_, i) =>
    i % 4 === 0
      ? `service.area_${i % 50}/action:${i}`
      : i % 4 === 1
        ? `a_b_${i % 10}`
        : `a/b_${i % 10}`,
  );
}

const hundred = listing(100);
const thousand = listing(1000);
const long = `${"analytics_reporting_service.".repeat(4)}generate_quarterly_revenue_summary`;

describe("sanitizeName", () => {
  bench("legal name (unchanged)", () => {
    sanitizeName("get-weather", rules);
  });
  bench("illegal name", () => {
    sanitizeName("unity/health", rules);
  });
  bench("long Unicode name", () => {
    sanitizeName(`über/${long}`, rules);
  });
});

describe("assignNames", () => {
  bench("100 tools, many collisions", () => {
    assignNames(hundred, nothingKnown, rules);
  });
  bench("1,000 tools, many collisions", () => {
    assignNames(thousand, nothingKnown, rules);
  });
});
