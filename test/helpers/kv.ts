/**
 * Instruments the real local KV namespace for tests: counts the operations the
 * proxy performs, or makes every operation fail the way an outage would.
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

/** Every operation throws on the spot, the harshest way a binding can fail. */
export function failingKv(): KVNamespace {
  const fail = () => {
    throw new Error("KV unavailable (test)");
  };
  return {
    get: fail,
    put: fail,
    list: fail,
    delete: fail,
    getWithMetadata: fail,
  } as unknown as KVNamespace;
}
