/**
 * Short hashes that are the same in every isolate and every deploy. `fnv1a32`:
 * FNV-1a (32 bit) over the UTF-8 bytes (lone surrogates as U+FFFD, as
 * TextEncoder encodes them), behind names and the first schema fingerprints;
 * `fingerprint32`, behind the current ones. Not cryptographic; they only have
 * to spread values apart and never change, since KV stores what they give.
 *
 * `fnv1a32` computes the bytes on the fly rather than by TextEncoder: the
 * allocation was most of its cost.
 */
const PRIME = 0x01000193;

const mix = (hash: number, byte: number) => Math.imul(hash ^ byte, PRIME);

export function fnv1a32(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    let unit = text.charCodeAt(i);
    if (unit < 0x80) {
      hash = mix(hash, unit);
      continue;
    }
    if (unit < 0x800) {
      hash = mix(mix(hash, 0xc0 | (unit >> 6)), 0x80 | (unit & 0x3f));
      continue;
    }
    const next = text.charCodeAt(i + 1);
    if (unit >= 0xd800 && unit <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
      const point = 0x10000 + ((unit - 0xd800) << 10) + (next - 0xdc00);
      i++;
      hash = mix(hash, 0xf0 | (point >> 18));
      hash = mix(hash, 0x80 | ((point >> 12) & 0x3f));
      hash = mix(hash, 0x80 | ((point >> 6) & 0x3f));
      hash = mix(hash, 0x80 | (point & 0x3f));
      continue;
    }
    if (unit >= 0xd800 && unit <= 0xdfff) unit = 0xfffd;
    hash = mix(hash, 0xe0 | (unit >> 12));
    hash = mix(hash, 0x80 | ((unit >> 6) & 0x3f));
    hash = mix(hash, 0x80 | (unit & 0x3f));
  }
  return hash >>> 0;
}

/** Six base-36 characters (`[0-9a-z]{6}`), legal in every name profile. */
export function hash6(text: string): string {
  return (fnv1a32(text) % 36 ** 6).toString(36).padStart(6, "0");
}

/**
 * 32 bits over a text's UTF-16 code units, four interleaved FNV-1a lanes
 * folded together: twice as fast as one lane over UTF-8 bytes, and a change
 * detector needs no more (a tool's schema changed to one of the same
 * fingerprint keeps its stored line, read by new isolates: schema-lines.ts).
 * Its output is stored: pinned by test vectors. Over `text[start, end)`: a
 * part of a large text is hashed where it is, as a slice of it is read
 * several times slower. `seed` (0 for those stored
 * before it): another fingerprint of the same text, for what one of 32 bits
 * cannot tell apart (schema-lines.ts `schemaCheck`).
 */
export function fingerprint32(text: string, start = 0, end = text.length, seed = 0): number {
  let a = 0x811c9dc5 ^ seed;
  let b = 0x9e3779b9 ^ seed;
  let c = 0x85ebca6b ^ seed;
  let d = 0xc2b2ae35 ^ seed;
  const n = end - start;
  let i = start;
  for (; i + 3 < end; i += 4) {
    a = Math.imul(a ^ text.charCodeAt(i), PRIME);
    b = Math.imul(b ^ text.charCodeAt(i + 1), PRIME);
    c = Math.imul(c ^ text.charCodeAt(i + 2), PRIME);
    d = Math.imul(d ^ text.charCodeAt(i + 3), PRIME);
  }
  for (; i < end; i++) a = Math.imul(a ^ text.charCodeAt(i), PRIME);
  let hash = Math.imul(a ^ n, PRIME);
  hash = Math.imul(hash ^ b, PRIME);
  hash = Math.imul(hash ^ c, PRIME);
  hash = Math.imul(hash ^ d, PRIME);
  // Final avalanche (MurmurHash3's fmix32), so one changed unit moves every bit.
  hash = Math.imul(hash ^ (hash >>> 16), 0x85ebca6b);
  hash = Math.imul(hash ^ (hash >>> 13), 0xc2b2ae35);
  return (hash ^ (hash >>> 16)) >>> 0;
}
