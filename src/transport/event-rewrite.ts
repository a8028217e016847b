/**
 * An event stream that may need rewriting (a listing in it): `rewriteEventStream`
 * finds where each event ends (a blank line, in any of the three line endings)
 * by searching the bytes, and passes every event as the origin wrote it, byte
 * for byte, unless its text `mayMatter`: only such an event is decoded and its
 * data read (eventsource-parser), and where the rewrite changes the data, its
 * data lines alone are written anew (event-data.ts `withData`): its every
 * other line is the origin's bytes, in the origin's order. Once `finished` says
 * nothing more can need rewriting, the rest of the stream passes chunk by
 * chunk without being looked at. Nothing is held back beyond the event being
 * read, so memory stays constant however long the stream runs; an event that
 * grows past `maxEventChars` (its bytes, and its lines where it is parsed:
 * sse.ts `LINE_WEIGHT`) without ending ends the stream with an error instead.
 */
import { createParser } from "eventsource-parser";
import { logEvent } from "../log";
import { withData } from "./event-data";
import { concat, type Hold, keepPart, logOverBudget } from "./read-bounded";
import {
  type ChunkRewriter,
  CR,
  endableFeed,
  forEachLine,
  LF,
  LINE_WEIGHT,
  OVERLAP_CHARS,
  readAsMessage,
  streamDecoder,
  transformStreamOf,
} from "./sse";

/**
 * New data for an event, or `undefined` to keep it as it is. `message`: whether a client reads
 * the event as a message (its type absent or `message`, as the SDKs' clients read events); any
 * other it skips, though a lenient reader may not.
 */
export type EventDataRewrite = (
  data: string,
  message: boolean,
) => Promise<string | undefined> | string | undefined;

export interface EventStreamRewrite {
  rewrite: EventDataRewrite;
  /** Whether an event's text may need the rewrite; any other passes unparsed. */
  mayMatter: (text: string) => boolean;
  /** Whether nothing after this point can need the rewrite. */
  finished?: () => boolean;
  maxEventChars: number;
  /**
   * The stream's share of the isolate's budget (read-bounded.ts): the event
   * being read takes from it, and an event it cannot take ends the stream as
   * one over `maxEventChars` does.
   */
  hold?: Hold;
}

/** A BOM's bytes in UTF-8: the stream's first event may begin with one, which is no part of it. */
const BOM_BYTES = 3;

/**
 * The data a client reads of the event `text`, and whether it reads it as a
 * message (no type, or `message`), or `undefined` where it has no data line
 * (no event to a reader); `unended`, the event the stream ended in, is read
 * as ended. eventsource-parser drops `ï»¿` where its input
 * begins (a BOM decoded as Latin-1), which no reader does past the stream's
 * start: a blank line first, which no reader takes for an event, begins it,
 * so that the data read is that of the lines `withData` finds.
 */
function eventData(text: string, unended: boolean): { data: string; message: boolean } | undefined {
  let read: { data: string; message: boolean } | undefined;
  const parser = createParser({
    onEvent: ({ data, event }) => {
      read = { data, message: readAsMessage(event) };
    },
  });
  const lines = endableFeed((part) => parser.feed(part));
  lines.feed("\n");
  lines.feed(text);
  if (unended) lines.feed("\n\n");
  lines.end();
  return read;
}

export const rewriteEventStream = (options: EventStreamRewrite) =>
  transformStreamOf(eventStreamRewriter(options));

export function eventStreamRewriter({
  rewrite,
  mayMatter,
  finished = () => false,
  maxEventChars,
  hold,
}: EventStreamRewrite): ChunkRewriter {
  const decodeChunk = streamDecoder();
  /** The bytes of the event being read, from earlier chunks. */
  let held: Uint8Array[] = [];
  let heldBytes = 0;
  /** Whether a chunk the event being read spans may matter. */
  let heldMayMatter = false;
  /** Whether the last byte seen ended a line, and whether that byte was a CR (an LF next is its own). */
  let lineEnded = false;
  let afterCr = false;
  let passing = false;
  let tail = "";
  /** Whether the event being read is the stream's first: a BOM before it is no part of it. */
  let first = true;

  const tooLarge = (): never => {
    logEvent("event_too_large", { limit: maxEventChars });
    throw new Error(`An event of the stream exceeds ${maxEventChars} characters`);
  };
  const overBudget = (): never => {
    logOverBudget("an event of the stream");
    throw new Error("An event of the stream cannot be held: the isolate's reads hold too much");
  };

  /**
   * A complete event: `undefined` where the rewrite keeps it (its bytes pass as they came), else
   * its bytes with its data lines written anew; `unended`, the event the stream ended in, is read
   * as ended, and stays without the blank line it came without.
   */
  async function rewritten(parts: Uint8Array[], unended = false): Promise<Uint8Array | undefined> {
    const decoder = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });
    let text = "";
    for (const part of parts) text += decoder.decode(part, { stream: true });
    text += decoder.decode();
    // A BOM is one only where the stream starts (`streamDecoder`): kept, as it came, before the lines.
    const from = first && text.charCodeAt(0) === 0xfeff ? BOM_BYTES : 0;
    if (from > 0) text = text.slice(1);
    if (!mayMatter(text)) return undefined;
    const bytes = parts.length === 1 ? (parts[0] as Uint8Array) : concat(parts);
    // Parsed, an event of many short lines costs far more than its bytes: its lines count too.
    // (The budget counts bytes read, not what is made of them: `LINE_WEIGHT` keeps that a few times.)
    let lines = 0;
    forEachLine(bytes, from, () => {
      lines++;
    });
    if (bytes.byteLength + lines * LINE_WEIGHT > maxEventChars) tooLarge();
    const read = eventData(text, unended);
    if (read === undefined) return undefined;
    const written = await rewrite(read.data, read.message);
    return written === undefined ? undefined : withData(bytes, from, written);
  }

  /**
   * Passes one chunk on: the events that stay as they came in one piece, each
   * rewritten event in its place, and holds back the event it ends inside.
   */
  async function read(chunk: Uint8Array, emit: (bytes: Uint8Array) => void) {
    const text = decodeChunk(chunk);
    const chunkMayMatter = mayMatter(text) || mayMatter(tail + text.slice(0, OVERLAP_CHARS));
    // The last characters seen, whichever chunks they came in: a marker may span more than two.
    tail =
      text.length >= OVERLAP_CHARS
        ? text.slice(-OVERLAP_CHARS)
        : (tail + text).slice(-OVERLAP_CHARS);
    /** Where the bytes not yet passed on begin (the held parts come before them). */
    let kept = 0;
    let start = 0;
    let at = 0;
    const passOn = (end: number) => {
      for (const part of held) emit(part);
      held = [];
      if (end > kept) emit(chunk.subarray(kept, end));
      kept = end;
    };
    // The next LF and CR at or after `at`, each searched for again only once passed:
    // searching for both from every line end would read a chunk without CRs once per line.
    let lf = -2;
    let cr = -2;
    while (at < chunk.length && !passing) {
      if (lf !== -1 && lf < at) lf = chunk.indexOf(LF, at);
      if (cr !== -1 && cr < at) cr = chunk.indexOf(CR, at);
      const next = lf === -1 ? cr : cr === -1 ? lf : Math.min(lf, cr);
      if (next === -1) {
        lineEnded = false;
        afterCr = false;
        break;
      }
      if (next > at) {
        lineEnded = false;
        afterCr = false;
      }
      const isCr = chunk[next] === CR;
      if (!isCr && afterCr) {
        // The LF of a CRLF: the line had ended at the CR. One that ends the last
        // event's blank line, cut off from it by a chunk boundary, is passed with it.
        afterCr = false;
        if (next === start && held.length === 0) start++;
        at = next + 1;
        continue;
      }
      if (!lineEnded) {
        lineEnded = true;
        afterCr = isCr;
        at = next + 1;
        continue;
      }
      // A blank line: the event ends here, with the LF of a CRLF if it follows.
      let end = next + 1;
      if (isCr && chunk[end] === LF) end++;
      lineEnded = false;
      afterCr = isCr && end === next + 1;
      const written =
        heldMayMatter || chunkMayMatter
          ? await rewritten([...held, chunk.subarray(start, end)])
          : undefined;
      if (written) {
        held = [];
        passOn(start);
        emit(written);
        kept = end;
      } else if (held.length > 0) passOn(end);
      heldMayMatter = false;
      first = false;
      start = end;
      at = end;
      // Whether the rewrite wrote this event or kept it: what follows it in the chunk is passed on
      // now, for the hand-off (hand-off.ts) gives the runtime the stream from the next chunk.
      if (finished()) passing = true;
    }
    // An event ended in this chunk: what was held of it is no more.
    if (start > 0) hold?.release();
    if (passing) {
      passOn(chunk.length);
      return;
    }
    // The events completed before the one still being read go on; that one is held.
    if (start > kept) emit(chunk.subarray(kept, start));
    if (start < chunk.length) {
      keepPart(held, chunk.subarray(start));
      heldBytes = start === 0 ? heldBytes + chunk.length : chunk.length - start;
      heldMayMatter ||= chunkMayMatter;
      if (heldBytes > maxEventChars) tooLarge();
      if (hold && !hold.take(chunk.length - start)) overBudget();
    } else heldBytes = 0;
  }

  return {
    async write(chunk, emit) {
      // Finished between chunks (past a bound on what is read): what is held of an event
      // passes as it came, before the rest.
      if (!passing && finished()) {
        passing = true;
        for (const part of held) emit(part);
        held = [];
        hold?.release();
      }
      if (passing) emit(chunk);
      else await read(chunk, emit);
    },
    async end(emit) {
      // An event the stream ended in the middle of: the spec's readers drop it, but Go's SDK
      // dispatches it, so it is rewritten as an event, and left as unended as it came.
      const written = heldMayMatter && held.length > 0 ? await rewritten(held, true) : undefined;
      if (written) emit(written);
      else for (const part of held) emit(part);
    },
    release: () => hold?.release(),
  };
}
