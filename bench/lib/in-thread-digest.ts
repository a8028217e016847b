/**
 * WebCrypto's SHA-256 `digest` as workerd runs it: computed in the calling
 * thread, the promise already settled. Node computes it on its thread pool,
 * so a tinybench wall time (the core section's CPU time) would count thread
 * hops and waiting instead: about 19 µs a call, five times workerd's CPU for
 * the same call. The core section installs this while it measures.
 */
import { hash } from "node:crypto";

/** Installs it; returns what puts Node's own back. */
export function digestInThread(): () => void {
  const own = crypto.subtle.digest;
  crypto.subtle.digest = async (...[algorithm, data]: Parameters<SubtleCrypto["digest"]>) => {
    const name = typeof algorithm === "string" ? algorithm : algorithm.name;
    if (name.toUpperCase() !== "SHA-256") return own.call(crypto.subtle, algorithm, data);
    const bytes = ArrayBuffer.isView(data)
      ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
      : new Uint8Array(data);
    return new Uint8Array(hash("sha256", bytes, "buffer")).buffer;
  };
  return () => {
    crypto.subtle.digest = own;
  };
}
