/**
 * Two input schemas that differ and give one 32-bit fingerprint
 * (src/toolmap/plan-listing.ts `schemaHash`), as a caller whose values the
 * origin writes into their schema of a tool could write them: a birthday
 * search over a short salt in each, some 65,000 tries of each on average, a
 * fraction of a second.
 */
import { schemaHash } from "../../src/toolmap/plan-listing";

/**
 * A schema of each family, `first(salt)` and `second(salt)`, that give one
 * fingerprint as JSON.stringify writes them (the origin must write them so:
 * the fingerprint is taken over a schema's text as listed).
 */
export function collidingSchemas<T>(
  first: (salt: string) => T,
  second: (salt: string) => T,
): [T, T] {
  const seen = new Map<string, string>();
  for (let i = 0; i < 2 ** 22; i++) {
    const salt = i.toString(36);
    seen.set(schemaHash(first(salt)).hash, salt);
    const match = seen.get(schemaHash(second(salt)).hash);
    if (match !== undefined) return [first(match), second(salt)];
  }
  throw new Error("no collision found");
}
