/**
 * A short hash that is the same in every isolate and every deploy: FNV-1a
 * (32 bit) over the UTF-8 bytes. Not cryptographic; it only has to spread
 * names apart and never change.
 */
const encoder = new TextEncoder();

export function fnv1a32(text: string): number {
  let hash = 0x811c9dc5;
  for (const byte of encoder.encode(text)) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** Six base-36 characters (`[0-9a-z]{6}`), legal in every name profile. */
export function hash6(text: string): string {
  return (fnv1a32(text) % 36 ** 6).toString(36).padStart(6, "0");
}
