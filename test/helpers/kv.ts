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

/**
 * The real KV binding, but each operation `held` picks (a get's or a put's
 * key, a list's prefix) waits until `release()`: as a request's reads and
 * writes wait for good once the runtime cancels the request (its client
 * gone, or its work after the response past the time the runtime gives it).
 * `asked` settles when the first such operation is made.
 */
export function kvHolding(
  real: KVNamespace,
  held: (operation: KvOperation, key: string) => boolean,
): { kv: KVNamespace; asked: Promise<void>; release: () => void } {
  let release = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  let ask = () => {};
  const asked = new Promise<void>((resolve) => {
    ask = resolve;
  });
  const kv = new Proxy(real, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== "function") return value;
      return async (...args: unknown[]) => {
        const key =
          property === "list"
            ? String((args[0] as KVNamespaceListOptions)?.prefix)
            : String(args[0]);
        if (held(property as KvOperation, key)) {
          ask();
          await released;
        }
        return value.apply(target, args);
      };
    },
  });
  return { kv, asked, release };
}
