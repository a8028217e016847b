/** What a tool map knows, built from plans, for tests and benchmarks of the pure listing plan. */
import type { KnownTools, ListingPlan } from "../../src/toolmap/plan-listing";

export const nothingKnown: KnownTools = {
  nameOf: () => undefined,
  originalOf: () => undefined,
  entryOf: () => undefined,
};

/** A map that knows only names an earlier version handed out (original → name). */
export function knownWith(names: Record<string, string>): KnownTools {
  const byOriginal = new Map(Object.entries(names));
  const byName = new Map([...byOriginal].map(([original, name]) => [name, original]));
  return {
    nameOf: (original) => byOriginal.get(original),
    originalOf: (name) => byName.get(name),
    entryOf: () => undefined,
  };
}

/**
 * What a map that applied `plan` knows afterwards: in the same isolate, names
 * with their schemas; in a cold isolate that read KV's map, schema
 * fingerprints only.
 */
export function knownAfter(plan: ListingPlan, isolate: "warm" | "cold" = "warm"): KnownTools {
  const byOriginal = new Map(
    plan.entries.map(({ original, schemaHash, inputSchema }) => [
      original,
      isolate === "warm" ? { original, schemaHash, inputSchema } : { original, schemaHash },
    ]),
  );
  const byName = new Map(plan.entries.map(({ name, original }) => [name, original]));
  return {
    nameOf: (original) => plan.names.get(original),
    originalOf: (name) => byName.get(name),
    entryOf: (original) => byOriginal.get(original),
  };
}
