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
