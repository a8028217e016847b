/**
 * SHA-256, the one digest the proxy trusts where an adversary may choose the
 * input: definition pins (an origin could craft a changed definition to match
 * a weaker fingerprint) and the credentials of listing callers (kept only as
 * digests); also what names an origin's keys in KV. The runtime's WebCrypto
 * does the work; it is async, so callers that digest many texts start them
 * all before awaiting any.
 */
const encoder = new TextEncoder();

const BASE64URL = Array.from(
  "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_",
  (character) => character.charCodeAt(0),
);

/**
 * base64url without padding: `btoa` would take a string of the bytes first,
 * and three replacements after. The characters are made into one string at
 * the end: added one at a time, a digest made 43 strings (about 0.8 MB of
 * garbage for a first listing's 1,000 pins).
 */
export function base64url(bytes: Uint8Array): string {
  const codes: number[] = [];
  for (let i = 0; i < bytes.length; i += 3) {
    const group = ((bytes[i] ?? 0) << 16) | ((bytes[i + 1] ?? 0) << 8) | (bytes[i + 2] ?? 0);
    const characters = Math.min(4, Math.ceil(((bytes.length - i) * 8) / 6));
    for (let c = 0; c < characters; c++) codes.push(BASE64URL[(group >> (18 - 6 * c)) & 63] ?? 0);
  }
  return String.fromCharCode(...codes);
}

/**
 * Where a text's UTF-8 bytes are written to be digested, reused: WebCrypto
 * copies its input when called, and a new buffer per text (`encode`) was half
 * the cost of digesting a first listing's 1,000 definitions (an ArrayBuffer's
 * allocation costs more than its bytes). A longer text gets its own. Both
 * are zeroed once digested: the text may be a caller's credentials
 * (toolmap/callers.ts), which are kept only as digests.
 */
const scratch = new Uint8Array(64 * 1024);

/** SHA-256 of `text`'s UTF-8 bytes. */
export function sha256Bytes(text: string): Promise<ArrayBuffer> {
  const { read, written } = encoder.encodeInto(text, scratch);
  const fits = read === text.length;
  const bytes = fits ? scratch.subarray(0, written) : encoder.encode(text);
  const digest = crypto.subtle.digest("SHA-256", bytes);
  bytes.fill(0);
  // A longer text left its first bytes in the scratch too.
  if (!fits) scratch.fill(0, 0, written);
  return digest;
}

/** SHA-256 of `text`'s UTF-8 bytes, in base64url without padding (43 characters). */
export function sha256(text: string): Promise<string> {
  // No async function: a first listing digests 1,000 definitions, each a promise fewer.
  return sha256Bytes(text).then((digest) => base64url(new Uint8Array(digest)));
}

/**
 * Characters of parts joined before each encoding: in workerd a call to
 * `encodeInto` costs about a microsecond whatever it writes, and a listing
 * pin's 4,000 parts (1,000 tools) cost more encoded one by one than the
 * digest; joined whole, a 10,000-tool listing would be 8 MB of string besides
 * its bytes.
 */
const BATCH_CHARS = 32 * 1024;

/**
 * Where the parts are written, reused: a new buffer per digest is memory the
 * runtime maps afresh each time, 3–6% of a first listing of 1,000 tools in
 * workerd (its pin's parts are about 0.85 MB), and at 10,000 tools some 10 ms
 * a listing (docs/performance.md). It grows to the longest parts digested,
 * up to `MAX_SCRATCH` (a listing as long as a message may be, and its pins);
 * longer ones get their own. It holds listing texts, pins and settings,
 * never credentials.
 */
let partsScratch = new Uint8Array(1024 * 1024);
const MAX_SCRATCH = 24 * 1024 * 1024;

/**
 * SHA-256 of the UTF-8 bytes of `parts` written one after the other, in
 * base64url: for a long text made of many (a listing's tools,
 * toolmap/listing-pin.ts), encoded into one buffer a batch of parts at a
 * time rather than joined into one string first, which cost more than the digest.
 */
export async function sha256Parts(parts: readonly string[]): Promise<string> {
  let length = 0;
  for (const part of parts) length += part.length;
  // As many bytes as characters: any other character takes more, and does not fit.
  if (length > partsScratch.length && length <= MAX_SCRATCH) partsScratch = new Uint8Array(length);
  const bytes = length <= partsScratch.length ? partsScratch : new Uint8Array(length);
  let at = 0;
  let batch: string[] = [];
  let batched = 0;
  // A high surrogate that ended the text encoded last: its pair may begin the next one, and
  // encoded alone it would be the replacement character.
  let carried = "";
  const encode = (text: string, last = false): boolean => {
    let whole = carried + text;
    const end = whole.charCodeAt(whole.length - 1);
    carried = !last && end >= 0xd800 && end <= 0xdbff ? whole.slice(-1) : "";
    if (carried) whole = whole.slice(0, -1);
    const { read, written } = encoder.encodeInto(whole, bytes.subarray(at));
    at += written;
    return read === whole.length;
  };
  const encodeBatch = (last = false): boolean => {
    const text = batch.join("");
    batch = [];
    batched = 0;
    return encode(text, last);
  };
  for (const part of parts) {
    let fits = true;
    if (part.length >= BATCH_CHARS) {
      // Encoded as it is: joined into a batch, it would be copied first.
      fits = encodeBatch() && encode(part);
    } else {
      batch.push(part);
      batched += part.length;
      if (batched >= BATCH_CHARS) fits = encodeBatch();
    }
    if (!fits) return sha256(parts.join(""));
  }
  if (!encodeBatch(true)) return sha256(parts.join(""));
  return base64url(new Uint8Array(await crypto.subtle.digest("SHA-256", bytes.subarray(0, at))));
}
