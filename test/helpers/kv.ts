/** A KV binding whose every operation throws on the spot, the harshest way a binding can fail. */
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

export type KvOperation = "get" | "put" | "list";

/** The real KV binding, but `failing` operations throw: a KV that fails in part. */
export function kvFailingOnly(real: KVNamespace, ...failing: KvOperation[]): KVNamespace {
  return new Proxy(real, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== "function") return value;
      if (failing.includes(property as KvOperation)) {
        return () => Promise.reject(new Error(`KV ${String(property)} unavailable (test)`));
      }
      return value.bind(target);
    },
  });
}
