/** What a tool map knows, built from plans, for tests and benchmarks of the pure listing plan. */
import type { KnownTools, ListingPlan } from "../../src/toolmap/plan-listing";

export const nothingKnown: KnownTools = {
  nameOf: () => undefined,
  originalOf: () => undefined,
  entryOf: () => undefined,
};

/**
 * What a map that applied `plan` knows afterwards: in the same isolate, names
 * with their schemas; in a cold isolate that read KV's key list, names and
 * schema hashes only.
 */
export function knownAfter(plan: ListingPlan, isolate: "warm" | "cold" = "warm"): KnownTools {
  const byName = new Map(
    plan.entries.map(({ name, original, schemaHash, inputSchema }) => [
      name,
      isolate === "warm" ? { original, schemaHash, inputSchema } : { original, schemaHash },
    ]),
  );
  return {
    nameOf: (original) => plan.names.get(original),
    originalOf: (name) => byName.get(name)?.original,
    entryOf: (name) => byName.get(name),
  };
}
