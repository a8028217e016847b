/**
 * Layout 1 of the tool map, read so that the names it handed out keep working
 * (docs/tool-map.md: migration). Layout 1 kept one key per tool,
 * `v1:<scope>:tool:<model-facing name>`, its metadata holding the original
 * (or, for an original too long for metadata, the value does). Layout 2
 * never writes there.
 *
 * A Worker invocation may make at most 1,000 KV operations, on the Free and
 * paid plans alike (Cloudflare's KV limits, "Operations/Worker invocation");
 * past them a KV call throws. Each value holding an original is a `get`, up to
 * 10,000 of them: read at once, a scope of many long names failed at every
 * listing, and never migrated. So each listing reads a step, at most
 * `LEGACY_OPERATIONS` operations, and the map records how far it got
 * (map-store.ts), for the next listing to go on from there.
 */

import { nameWeight } from "../names/weight";
import { MAX_TOOLS } from "./stored-map";

const PAGE = 1_000;
/**
 * KV operations one listing spends on layout 1 at most, its `list` pages
 * included: a fifth of an invocation's 1,000, so the rest of the request (the
 * map, the remembered answer, a caller's pins, the writes, sign-in's reads)
 * keeps ample room. 10,000 values take at most 53 listings.
 */
export const LEGACY_OPERATIONS = 200;
/** `list` pages a step may make: `MAX_TOOLS` keys, and one more page that finds the bound passed. */
const MAX_PAGES = Math.ceil(MAX_TOOLS / PAGE) + 1;

interface LegacyMetadata {
  original?: string;
}

/** How far layout 1 was read: the last key whose value was read (keys come in order), and whether all were. */
export interface LegacyProgress {
  after?: string;
  done: boolean;
}

export interface LegacyStep extends LegacyProgress {
  /** The names found (original → name): every one a key's metadata holds, and those of the values read. */
  names: Map<string, string>;
  /** The names whose originals are in values not read yet: no other tool may have them meanwhile. */
  pending: string[];
  /** Whether names were left out past the bound (then `done`: the rest is never kept). */
  truncated: boolean;
}

/**
 * One step of reading layout 1's names from `progress` on: every key listed
 * (at most `MAX_PAGES` operations), and the values of the keys after
 * `progress.after` whose metadata lacks the original, in key order, as far
 * as `LEGACY_OPERATIONS` allows. `kept`: the names kept so far, which count
 * against the bound: `max` keys, and `max` units of the originals' weight
 * (names/weight.ts), as the map weighs listed tools. Layout 1 kept an
 * original too long for metadata in the key's value, whatever its length:
 * weighed by number alone, two of 13 MiB made the map over KV's 25 MiB a
 * value, so its write failed at every listing and the migration never ended
 * (while the schemas were written again each time).
 */
export async function readLegacyNames(
  kv: KVNamespace,
  scope: string,
  progress: LegacyProgress,
  kept: ReadonlyMap<string, string>,
  max: number,
): Promise<LegacyStep> {
  const prefix = `${scope}:tool:`;
  const names = new Map<string, string>();
  const pending: string[] = [];
  let weight = 0;
  for (const original of kept.keys()) weight += nameWeight(original);
  const keptNames = new Set(kept.values());
  let keys = 0;
  let gets = 0;
  let after = progress.after;
  let truncated = false;
  const keep = (original: string, name: string) => {
    if (!kept.has(original) && !names.has(original)) {
      // One too heavy for what is left is not kept; lighter ones after it may be.
      if (weight + nameWeight(original) > max) {
        truncated = true;
        return;
      }
      weight += nameWeight(original);
    }
    names.set(original, name);
  };
  const step = () => ({ names, pending, after, done: pending.length === 0, truncated });
  let cursor: string | undefined;
  for (;;) {
    const page = await kv.list<LegacyMetadata>({ prefix, cursor, limit: PAGE });
    for (const key of page.keys) {
      if (keys++ >= max) return { ...step(), truncated: true, done: true };
      const name = key.name.slice(prefix.length);
      const listed = key.metadata?.original;
      if (typeof listed === "string") {
        keep(listed, name);
        continue;
      }
      // Read in an earlier step (names are ASCII: KV's order is the strings' order), or one whose
      // name the map keeps: the version before drops how far a scope was read when it writes the
      // map, not the names read, and a rollout of new isolates would otherwise read from the start.
      if ((progress.after !== undefined && key.name <= progress.after) || keptNames.has(name)) {
        continue;
      }
      if (gets >= LEGACY_OPERATIONS - MAX_PAGES) {
        pending.push(name);
        continue;
      }
      gets++;
      const original = originalIn(await kv.get(key.name, "text"));
      after = key.name;
      if (typeof original === "string") keep(original, name);
    }
    if (page.list_complete) return step();
    cursor = page.cursor;
  }
}

/**
 * The original a layout-1 value holds; `undefined` for one that is not its JSON (cut short, or
 * another's): skipped as a key with none. Read as JSON by KV, it threw, the step failed, and
 * the next listing's step read it again: the map was never written again (nor pins decided).
 */
function originalIn(text: string | null): unknown {
  if (text === null) return undefined;
  try {
    return (JSON.parse(text) as { original?: unknown } | null)?.original;
  } catch {
    return undefined;
  }
}
