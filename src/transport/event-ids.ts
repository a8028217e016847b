/**
 * An event stream with each `id` field's value rewritten, every other byte as
 * the origin wrote it: gate mode hands the client event ids bound to its user
 * (auth/session-binding.ts), which it sends back in `Last-Event-ID` to resume
 * a stream. Lines end as the format has them (CR, LF or CRLF); a line that
 * begins `id:` is held to its end, up to `MAX_ID_LINE_BYTES`, and any other
 * passes as it comes, however long (an event's data is never held here). An
 * `id` line longer than that passes as written: an id no client can resume by,
 * since the proxy takes back only ids it rewrote. So does an empty one, which
 * names no event, and one with a NUL, which readers ignore.
 */
import { concat } from "./read-bounded";
import { CR, LF } from "./sse";

/** The longest `id` line held to be rewritten: the SDK's ids are some 50 bytes. */
export const MAX_ID_LINE_BYTES = 1024;

const BOM = [0xef, 0xbb, 0xbf];
const ID = [0x69, 0x64, 0x3a]; // `id:`
const SPACE = 0x20;

const decoder = new TextDecoder();
const encoder = new TextEncoder();

/**
 * Where each line of `bytes` from a place on ends (its CR or LF), or -1 when
 * `bytes` end first; asked in order. Each of LF and CR is searched for again
 * only once passed: searched anew for each line, a chunk of many lines and
 * no CR was read to its end once per line.
 */
function lineEnds(bytes: Uint8Array): (from: number) => number {
  let lf = -2;
  let cr = -2;
  return (from) => {
    if (lf !== -1 && lf < from) lf = bytes.indexOf(LF, from);
    if (cr !== -1 && cr < from) cr = bytes.indexOf(CR, from);
    return lf === -1 ? cr : cr === -1 ? lf : Math.min(lf, cr);
  };
}

/**
 * Where the reader is: `bom`, at the stream's start (one BOM there is no part
 * of the first line); `start`, at a line's start; `prefix`, within what may
 * begin `id:`; `id`, within an `id` line; `other`, within any other line.
 */
type Place = "bom" | "start" | "prefix" | "id" | "other";

/** `body` with each event id `rewrite` gives another value for. */
export function rewriteEventIds(
  body: ReadableStream<Uint8Array>,
  rewrite: (id: string) => Promise<string>,
): ReadableStream<Uint8Array> {
  let place: Place = "bom";
  /** The bytes held: a BOM or `id:` begun, or the `id` line so far (at most `MAX_ID_LINE_BYTES`). */
  let held: number[] = [];

  /** The `id` line held, its value rewritten where it names an event. */
  const rewritten = async (): Promise<Uint8Array> => {
    const line = Uint8Array.from(held);
    const spaced = line[ID.length] === SPACE;
    const value = decoder.decode(line.subarray(ID.length + (spaced ? 1 : 0)));
    if (value === "" || value.includes("\u0000")) return line;
    return encoder.encode(`id:${spaced ? " " : ""}${await rewrite(value)}`);
  };

  const read = async (chunk: Uint8Array): Promise<Uint8Array> => {
    const out: Uint8Array[] = [];
    let bytes = chunk;
    let lineEnd = lineEnds(bytes);
    let at = 0;
    while (at < bytes.length) {
      if (place === "other" || place === "id") {
        const end = lineEnd(at);
        const stop = end === -1 ? bytes.length : end;
        if (place === "other") {
          out.push(bytes.subarray(at, stop));
        } else if (held.length + (stop - at) > MAX_ID_LINE_BYTES) {
          out.push(Uint8Array.from(held), bytes.subarray(at, stop));
          held = [];
          place = "other";
        } else {
          for (let i = at; i < stop; i++) held.push(bytes[i] as number);
          if (end !== -1) {
            out.push(await rewritten());
            held = [];
          }
        }
        if (end === -1) break;
        out.push(bytes.subarray(end, end + 1));
        place = "start";
        at = end + 1;
        continue;
      }
      const byte = bytes[at++] as number;
      held.push(byte);
      const expected = place === "bom" ? BOM : ID;
      if (byte === expected[held.length - 1]) {
        if (held.length < expected.length) {
          if (place === "start") place = "prefix";
        } else if (place === "bom") {
          out.push(Uint8Array.from(held));
          held = [];
          place = "start";
        } else {
          place = "id";
        }
        continue;
      }
      if (place === "bom") {
        // No BOM: what was held begins the first line, read again as such.
        bytes = concat([Uint8Array.from(held), bytes.subarray(at)]);
        lineEnd = lineEnds(bytes);
        at = 0;
        held = [];
        place = "start";
        continue;
      }
      out.push(Uint8Array.from(held));
      held = [];
      place = byte === CR || byte === LF ? "start" : "other";
    }
    return out.length === 1 ? (out[0] as Uint8Array) : concat(out);
  };

  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      async transform(chunk, controller) {
        const bytes = await read(chunk);
        if (bytes.byteLength > 0) controller.enqueue(bytes);
      },
      flush(controller) {
        // A line the stream cut off ends no event: it goes as it came.
        if (held.length > 0) controller.enqueue(Uint8Array.from(held));
        held = [];
      },
    }),
  );
}
