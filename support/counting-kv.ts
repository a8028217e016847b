/**
 * Counts the operations the proxy performs on a real KV namespace (the local
 * one wrangler and the test pool provide): the tests and the KV benchmark
 * check the cost rules with it.
 */
type KvOperation = "get" | "put" | "list" | "delete" | "getWithMetadata";

export interface CountedKv {
  kv: KVNamespace;
  counts: Record<KvOperation, number>;
  reset(): void;
}

export function countingKv(real: KVNamespace): CountedKv {
  const counts = { get: 0, put: 0, list: 0, delete: 0, getWithMetadata: 0 };
  const kv = new Proxy(real, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        if (property in counts) counts[property as KvOperation]++;
        return value.apply(target, args);
      };
    },
  });
  return {
    kv,
    counts,
    reset: () => {
      for (const key of Object.keys(counts)) counts[key as KvOperation] = 0;
    },
  };
}

/** The real namespace, each `put` noted with its key and when it was made (KV takes one a second a key). */
export function timedPuts(real: KVNamespace): {
  kv: KVNamespace;
  puts: { key: string; at: number }[];
} {
  const puts: { key: string; at: number }[] = [];
  const kv = new Proxy(real, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        if (property === "put") puts.push({ key: String(args[0]), at: Date.now() });
        return value.apply(target, args);
      };
    },
  });
  return { kv, puts };
}
