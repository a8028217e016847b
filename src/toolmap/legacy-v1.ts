/**
 * Layout 1 of the tool map, read once per profile scope so that the names it
 * handed out keep working (docs/tool-map.md: migration). Layout 1 kept
 * one key per tool, `v1:<scope>:tool:<model-facing name>`, its metadata
 * holding the original (or, for an original too long for metadata, the value
 * does). Layout 2 never writes there.
 */

import { nameWeight } from "../names/weight";

const PAGE = 1_000;

interface LegacyMetadata {
  original?: string;
}

/**
 * original → the name layout 1 gave it, as far as `max` units of the
 * originals' weight (names/weight.ts), as the map weighs listed tools, from
 * at most `max` keys; `truncated` past either. Layout 1 kept an original too
 * long for metadata in the key's value, whatever its length: weighed by
 * number alone, two of 13 MiB made the map over KV's 25 MiB a value, so its
 * write failed at every listing and the migration never ended (while the
 * schemas were written again each time).
 */
export async function readLegacyNames(
  kv: KVNamespace,
  scope: string,
  max: number,
): Promise<{ names: Map<string, string>; truncated: boolean }> {
  const prefix = `${scope}:tool:`;
  const names = new Map<string, string>();
  let weight = 0;
  let read = 0;
  let truncated = false;
  let cursor: string | undefined;
  for (;;) {
    const page = await kv.list<LegacyMetadata>({ prefix, cursor, limit: PAGE });
    for (const key of page.keys) {
      if (read++ >= max) return { names, truncated: true };
      const name = key.name.slice(prefix.length);
      const original =
        key.metadata?.original ??
        (await kv.get<{ original?: unknown }>(key.name, "json"))?.original;
      if (typeof original !== "string") continue;
      if (!names.has(original)) {
        // One too heavy for what is left is not kept; lighter ones after it may be.
        if (weight + nameWeight(original) > max) {
          truncated = true;
          continue;
        }
        weight += nameWeight(original);
      }
      names.set(original, name);
    }
    if (page.list_complete) return { names, truncated };
    cursor = page.cursor;
  }
}
