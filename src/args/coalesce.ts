/**
 * Step 2 of argument repair (docs/arguments.md, step 2): keys brought to the names
 * the schema declares. Two keys are aliases when they are equal after removing
 * `-`, `_`, `.` and spaces and folding case: `payload-json`, `payloadJson` and
 * `PAYLOAD_JSON` all mean `payload_json`.
 *
 * - Only a key that folds to exactly one declared property is renamed; two
 *   declared properties that fold alike make their aliases ambiguous, left alone.
 * - The declared key wins over an alias unless its value is `null`; of several
 *   aliases, the first that is not `null` (a model that wrote the key twice,
 *   once empty, meant the other). A losing alias passes through as an unknown
 *   key, or is dropped where the schema forbids additional properties (the
 *   origin would refuse it).
 * - Unknown keys pass through. Key order is kept (keys that are array indices, `"10"`, come
 *   first in any object JavaScript parses: docs/arguments.md, Lossless).
 */
import { foldedKey } from "../json";

export function foldKey(key: string): string {
  // Case folded as Go's encoding/json folds it (`ſ` as `s`): a fixed argument's name included.
  return foldedKey(key.replace(/[-_.\s]/g, ""));
}

/**
 * The declared keys of one schema, by how they fold: made once per schema a call's repair
 * reads (args/repair.ts), not for each object it applies to, which the client multiplies.
 */
export interface Spellings {
  declared: ReadonlySet<string>;
  byFold: ReadonlyMap<string, readonly string[]>;
}

export function spellingsOf(declared: readonly string[]): Spellings {
  const byFold = new Map<string, string[]>();
  for (const key of declared) {
    const folded = foldKey(key);
    const same = byFold.get(folded);
    if (same) same.push(key);
    else byFold.set(folded, [key]);
  }
  return { declared: new Set(declared), byFold };
}

export interface Coalesced {
  entries: Array<[string, unknown]>;
  renamed: Array<{ from: string; to: string }>;
  dropped: string[];
}

export function coalesceKeys(
  value: Record<string, unknown>,
  { declared: isDeclared, byFold }: Spellings,
  forbidsAdditional: boolean,
): Coalesced {
  // The declared keys each undeclared key of `value` folds to, folded once.
  const targetsOf = new Map<string, readonly string[] | undefined>();
  for (const key of Object.keys(value)) {
    if (!isDeclared.has(key) && byFold.size > 0) targetsOf.set(key, byFold.get(foldKey(key)));
  }

  // Which alias, if any, supplies each declared key's value.
  const winner = new Map<string, string>();
  for (const [key, v] of Object.entries(value)) {
    if (isDeclared.has(key)) continue;
    const targets = targetsOf.get(key);
    if (targets?.length !== 1) continue;
    const target = targets[0] as string;
    const declaredValue = Object.hasOwn(value, target) ? value[target] : undefined;
    const declaredWins = Object.hasOwn(value, target) && declaredValue !== null;
    if (declaredWins || v === undefined) continue;
    const chosen = winner.get(target);
    if (chosen === undefined || (value[chosen] === null && v !== null)) winner.set(target, key);
  }
  const aliasOf = new Map([...winner].map(([target, alias]) => [alias, target]));

  const result: Coalesced = { entries: [], renamed: [], dropped: [] };
  for (const [key, v] of Object.entries(value)) {
    if (isDeclared.has(key)) {
      const alias = winner.get(key);
      if (alias === undefined) result.entries.push([key, v]);
      else {
        // The declared key was null: the alias's value takes its place.
        result.entries.push([key, value[alias]]);
        result.renamed.push({ from: alias, to: key });
      }
      continue;
    }
    const target = aliasOf.get(key);
    if (target !== undefined) {
      if (!Object.hasOwn(value, target)) {
        result.entries.push([target, v]);
        result.renamed.push({ from: key, to: target });
      }
      continue;
    }
    const losingAlias = targetsOf.get(key)?.length === 1;
    if (losingAlias && forbidsAdditional) result.dropped.push(key);
    else result.entries.push([key, v]);
  }
  return result;
}
