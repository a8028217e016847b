/**
 * A short hash that is the same in every isolate and every deploy: FNV-1a
 * (32 bit) over the UTF-8 bytes (lone surrogates as U+FFFD, as TextEncoder
 * encodes them). Not cryptographic; it only has to spread names apart and
 * never change, since names and stored schema hashes depend on it.
 *
 * The bytes are computed on the fly rather than by TextEncoder: a listing
 * hashes every tool's schema, and the allocation was most of the cost.
 */
const PRIME = 0x01000193;

export function fnv1a32(text: string): number {
  let hash = 0x811c9dc5;
  const mix = (byte: number) => {
    hash = Math.imul(hash ^ byte, PRIME);
  };
  for (let i = 0; i < text.length; i++) {
    let unit = text.charCodeAt(i);
    if (unit < 0x80) {
      mix(unit);
      continue;
    }
    if (unit < 0x800) {
      mix(0xc0 | (unit >> 6));
      mix(0x80 | (unit & 0x3f));
      continue;
    }
    const next = text.charCodeAt(i + 1);
    if (unit >= 0xd800 && unit <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
      const point = 0x10000 + ((unit - 0xd800) << 10) + (next - 0xdc00);
      i++;
      mix(0xf0 | (point >> 18));
      mix(0x80 | ((point >> 12) & 0x3f));
      mix(0x80 | ((point >> 6) & 0x3f));
      mix(0x80 | (point & 0x3f));
      continue;
    }
    if (unit >= 0xd800 && unit <= 0xdfff) unit = 0xfffd;
    mix(0xe0 | (unit >> 12));
    mix(0x80 | ((unit >> 6) & 0x3f));
    mix(0x80 | (unit & 0x3f));
  }
  return hash >>> 0;
}

/** Six base-36 characters (`[0-9a-z]{6}`), legal in every name profile. */
export function hash6(text: string): string {
  return (fnv1a32(text) % 36 ** 6).toString(36).padStart(6, "0");
}
