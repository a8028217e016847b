/**
 * A KV namespace answered from this process's memory, for timing the proxy's
 * own CPU on the listing path: Workers KV's I/O is not the proxy's CPU, and
 * the KV section measures KV itself on the real local binding. Implements
 * what the tool map uses: `get(key, "json")`, `put` with metadata, and `list`
 * by prefix in pages of 1,000 keys, sorted, as KV lists them; and
 * `getWithMetadata`, by which the settings tell a KV namespace from the
 * other bindings that have a `get` (config/values.ts `isKvNamespace`).
 */
const PAGE = 1000;

interface Stored {
  /**
   * As written: text, or UTF-8 bytes decoded when first read. Workers KV
   * takes bytes as they are; decoding them on `put` would time this stand-in's
   * work as the proxy's.
   */
  value: string | Uint8Array;
  metadata: unknown;
}

const textOf = (stored: Stored): string => {
  if (typeof stored.value !== "string") stored.value = new TextDecoder().decode(stored.value);
  return stored.value;
};

export function memoryKv(): KVNamespace {
  const entries = new Map<string, Stored>();
  const kv = {
    /** One key or many (a bulk get), as text or as JSON, as Workers KV reads them. */
    async get(key: string | string[], type?: "text" | "json") {
      const read = (one: string) => {
        const stored = entries.get(one);
        if (stored === undefined) return null;
        return type === "text" ? textOf(stored) : JSON.parse(textOf(stored));
      };
      return Array.isArray(key) ? new Map(key.map((one) => [one, read(one)])) : read(key);
    },
    async getWithMetadata(key: string, type?: "text" | "json") {
      const stored = entries.get(key);
      if (stored === undefined) return { value: null, metadata: null };
      const text = textOf(stored);
      return { value: type === "json" ? JSON.parse(text) : text, metadata: stored.metadata };
    },
    /** Text, or its UTF-8 bytes (read back as the text). */
    async put(key: string, value: string | Uint8Array, options?: { metadata?: unknown }) {
      entries.set(key, { value, metadata: options?.metadata ?? null });
    },
    async list({ prefix = "", cursor }: { prefix?: string; cursor?: string } = {}) {
      const names = [...entries.keys()].filter((name) => name.startsWith(prefix)).sort();
      const start = cursor === undefined ? 0 : Number(cursor);
      const keys = names
        .slice(start, start + PAGE)
        .map((name) => ({ name, metadata: entries.get(name)?.metadata }));
      const complete = start + PAGE >= names.length;
      return complete
        ? { keys, list_complete: true }
        : { keys, list_complete: false, cursor: String(start + PAGE) };
    },
  };
  return kv as unknown as KVNamespace;
}

/** `kv` whose writes are dropped: a state timed many times over stays the state it was. */
export function readOnly(kv: KVNamespace): KVNamespace {
  return new Proxy(kv, {
    get: (target, property) =>
      property === "put" ? async () => {} : Reflect.get(target, property, target),
  });
}
