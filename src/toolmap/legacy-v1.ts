/**
 * Layout 1 of the tool map, read once per profile scope so that the names it
 * handed out keep working (docs/tool-map.md: migration). Layout 1 kept
 * one key per tool, `v1:<scope>:tool:<model-facing name>`, its metadata
 * holding the original (or, for an original too long for metadata, the value
 * does). Layout 2 never writes there.
 */

const PAGE = 1_000;

interface LegacyMetadata {
  original?: string;
}

/** original → the name layout 1 gave it, at most `max` of them; `truncated` past that. */
export async function readLegacyNames(
  kv: KVNamespace,
  scope: string,
  max: number,
): Promise<{ names: Map<string, string>; truncated: boolean }> {
  const prefix = `${scope}:tool:`;
  const names = new Map<string, string>();
  let cursor: string | undefined;
  for (;;) {
    const page = await kv.list<LegacyMetadata>({ prefix, cursor, limit: PAGE });
    for (const key of page.keys) {
      if (names.size >= max) return { names, truncated: true };
      const name = key.name.slice(prefix.length);
      const original =
        key.metadata?.original ??
        (await kv.get<{ original?: unknown }>(key.name, "json"))?.original;
      if (typeof original === "string") names.set(original, name);
    }
    if (page.list_complete) return { names, truncated: false };
    cursor = page.cursor;
  }
}
