/**
 * An event of the origin's with new data (event-rewrite.ts, a listing
 * renamed): `withData` replaces its `data` lines and nothing else. Every
 * other line (comments, `id`, `event`, `retry`, a field no reader knows, the
 * blank line that ends it) is the origin's bytes, where the origin wrote it,
 * its line end included: what the proxy does not mean to change reaches the
 * client byte-identical.
 *
 * A reader joins an event's data lines with LFs; the new data is split at
 * its LFs, and its lines take the places of the origin's data lines in order,
 * one for one, each spelled as the line it replaces spells its field (`data`,
 * `data:`, `data: `) and ended as it is ended. Where the new data has more
 * lines, the last data line's place takes the rest too, each ended alike (with
 * an LF where the stream ended in that line). Where it has fewer, each data
 * line left over is written as an empty comment (`:`) with its line end, which
 * every reader skips: no line comes or goes, so none is read otherwise for
 * what was taken from around it (a CR before an LF is one CRLF, and only the
 * stream's first line may begin with a BOM). A rename keeps the whitespace
 * of the JSON it does not change, LFs included: a listing written over many
 * data lines keeps them, but for those inside a value it writes anew.
 */
import { concat } from "./read-bounded";
import { forEachLine } from "./sse";

const COLON = 0x3a;
const SPACE = 0x20;
const DATA = [0x64, 0x61, 0x74, 0x61]; // "data"

/** Whether the line `start`..`end` of `bytes` is a `data` field: `data` alone or `data:` on. */
function isDataLine(bytes: Uint8Array, start: number, end: number): boolean {
  if (end - start < DATA.length || DATA.some((byte, i) => bytes[start + i] !== byte)) return false;
  return end - start === DATA.length || bytes[start + DATA.length] === COLON;
}

/** The data line whose field is spelled as `spelling` (`data`, `data:` or `data: `), reading as `value`. */
function dataLine(spelling: string, value: string): string {
  if (value === "" || spelling === "data: ") return spelling + value;
  // A reader takes one space after the colon for the separator: a value that begins with one needs one more.
  return value.startsWith(" ") ? `data: ${value}` : `data:${value}`;
}

/** How the data line `start`..`end` of `event` spells its field: `data`, `data:` or `data: `. */
function spellingOf(event: Uint8Array, start: number, end: number): string {
  if (end - start === DATA.length) return "data";
  return end - start > DATA.length + 1 && event[start + DATA.length + 1] === SPACE
    ? "data: "
    : "data:";
}

/**
 * `event` (an event's bytes, its lines from `from`: a BOM before them is kept) with its data
 * lines written to read as `data`, which holds no CR (a line end in a data line ends it).
 */
export function withData(event: Uint8Array, from: number, data: string): Uint8Array {
  /** Each data line of the origin's: its start, its text's end, and where the next line begins. */
  const places: number[] = [];
  forEachLine(event, from, (start, end, next) => {
    if (isDataLine(event, start, end)) places.push(start, end, next);
  });
  const lines = data.split("\n");
  const count = places.length / 3;
  const encoder = new TextEncoder();
  const parts: Uint8Array[] = [];
  /** The data lines written since the last of the origin's bytes kept, not yet encoded. */
  let written = "";
  /** Where the origin's bytes not yet kept begin. */
  let kept = 0;
  const keep = (to: number) => {
    if (to === kept) return;
    if (written !== "") parts.push(encoder.encode(written));
    written = "";
    parts.push(event.subarray(kept, to));
  };
  for (let place = 0; place < count; place++) {
    const start = places[3 * place] as number;
    const end = places[3 * place + 1] as number;
    const next = places[3 * place + 2] as number;
    keep(start);
    const spelling = spellingOf(event, start, end);
    const lineEnd = String.fromCharCode(...event.subarray(end, next));
    if (place >= lines.length) written += `:${lineEnd}`;
    else if (place < count - 1) written += dataLine(spelling, lines[place] as string) + lineEnd;
    else {
      const between = lineEnd === "" ? "\n" : lineEnd;
      written +=
        lines
          .slice(place)
          .map((line) => dataLine(spelling, line))
          .join(between) + lineEnd;
    }
    kept = next;
  }
  keep(event.length);
  if (written !== "") parts.push(encoder.encode(written));
  return parts.length === 1 ? (parts[0] as Uint8Array) : concat(parts);
}
