/**
 * An event stream that may need rewriting (a listing in it): `rewriteEventStream`
 * finds where each event ends (a blank line, in any of the three line endings)
 * by searching the bytes, and passes every event as the origin wrote it, byte
 * for byte, unless its text `mayMatter`: only such an event is decoded and
 * parsed (eventsource-parser), and written anew, in the canonical `field:
 * value` form, only when the rewrite changed its data. Once `finished` says
 * nothing more can need rewriting, the rest of the stream passes chunk by
 * chunk without being looked at. Nothing is held back beyond the event being
 * read, so memory stays constant however long the stream runs; an event that
 * grows past `maxEventChars` (its bytes, and its lines where it is parsed:
 * sse.ts `LINE_WEIGHT`) without ending ends the stream with an error instead.
 */
import { createParser, type EventSourceMessage } from "eventsource-parser";
import { logEvent } from "../log";
import { type Hold, keepPart, logOverBudget } from "./read-bounded";
import {
  type ChunkRewriter,
  CR,
  endableFeed,
  LF,
  LINE_WEIGHT,
  OVERLAP_CHARS,
  serializeEvent,
  streamDecoder,
  transformStreamOf,
} from "./sse";

/** New data for an event, or `undefined` to keep it as it is. */
export type EventDataRewrite = (data: string) => Promise<string | undefined> | string | undefined;

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

/** How many lines `text` has, in any of the three line endings (a CRLF is one). */
function lineCount(text: string): number {
  let lines = 0;
  for (let at = text.indexOf("\n"); at !== -1; at = text.indexOf("\n", at + 1)) lines++;
  for (let at = text.indexOf("\r"); at !== -1; at = text.indexOf("\r", at + 1)) {
    if (text.charCodeAt(at + 1) !== LF) lines++;
  }
  return lines;
}

/** An event's text, written anew with its data rewritten; `undefined` when the rewrite kept it. */
async function rewrittenEvent(
  text: string,
  rewrite: EventDataRewrite,
): Promise<string | undefined> {
  const parts: Array<EventSourceMessage | string> = [];
  const parser = createParser({
    onEvent: (event) => parts.push(event),
    onComment: (comment) => parts.push(`: ${comment}\n`),
    onRetry: (retry) => parts.push(`retry: ${retry}\n\n`),
  });
  // The event's last line ends with the text, though a CR there may be half of a CRLF to the parser.
  const lines = endableFeed((part) => parser.feed(part));
  lines.feed(text);
  lines.end();
  let changed = false;
  let written = "";
  for (const part of parts) {
    if (typeof part === "string") {
      written += part;
      continue;
    }
    const data = await rewrite(part.data);
    changed ||= data !== undefined;
    written += serializeEvent({ ...part, data: data ?? part.data });
  }
  return changed ? written : undefined;
}

export const rewriteEventStream = (options: EventStreamRewrite) =>
  transformStreamOf(eventStreamRewriter(options));

/** `eventStreamRewriter`'s rewriter, which may need the next chunk before the rest is handed on. */
export interface EventRewriter extends ChunkRewriter {
  /**
   * Whether the next chunk must go through it: the last event it wrote anew
   * ended at a CR that ended a chunk, and an LF that begins the next one is
   * that CRLF's, which it leaves out with the origin's event.
   */
  awaitsLf(): boolean;
}

export function eventStreamRewriter({
  rewrite,
  mayMatter,
  finished = () => false,
  maxEventChars,
  hold,
}: EventStreamRewrite): EventRewriter {
  const encoder = new TextEncoder();
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
  /** Whether an event written anew ended at the CR the last chunk ended with (`awaitsLf`). */
  let lfOwed = false;

  const tooLarge = (): never => {
    logEvent("event_too_large", { limit: maxEventChars });
    throw new Error(`An event of the stream exceeds ${maxEventChars} characters`);
  };
  const overBudget = (): never => {
    logOverBudget("an event of the stream");
    throw new Error("An event of the stream cannot be held: the isolate's reads hold too much");
  };

  /**
   * A complete event: its bytes as they came when the rewrite keeps it, else
   * the written ones; `unended`, the event the stream ended in, is read as
   * ended and written without its blank line.
   */
  async function rewritten(parts: Uint8Array[], unended = false): Promise<Uint8Array | undefined> {
    const decoder = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });
    let text = "";
    for (const part of parts) text += decoder.decode(part, { stream: true });
    text += decoder.decode();
    // A BOM is one only where the stream starts (`streamDecoder`).
    if (first && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    if (!mayMatter(text)) return undefined;
    // Parsed, an event of many short lines costs far more than its bytes: its lines count too.
    // (The budget counts bytes read, not what is made of them: `LINE_WEIGHT` keeps that a few times.)
    const bytes = parts.reduce((sum, part) => sum + part.byteLength, 0);
    if (bytes + lineCount(text) * LINE_WEIGHT > maxEventChars) tooLarge();
    if (!unended) {
      const written = await rewrittenEvent(text, rewrite);
      return written === undefined ? undefined : encoder.encode(written);
    }
    // A comment or `retry` line cut off is read by no reader that waits for its line's end: it
    // stays after the event, as it came. Any other line cut off is read with it, as Go's SDK reads it.
    const last = text.slice(Math.max(text.lastIndexOf("\n"), text.lastIndexOf("\r")) + 1);
    const after = /^(?::|retry(?::|$))/.test(last) ? last : "";
    const written = await rewrittenEvent(
      `${text.slice(0, text.length - after.length)}\n\n`,
      rewrite,
    );
    return written === undefined ? undefined : encoder.encode(written.slice(0, -1) + after);
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
        lfOwed = afterCr && end === chunk.length;
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
    async write(received, emit) {
      let chunk = received;
      // The LF of the CRLF that ended an event written anew: it went with the origin's event, and
      // passed after the written one, it was one blank line more than the origin wrote.
      if (lfOwed && chunk.length > 0) {
        lfOwed = false;
        if (chunk[0] === LF) {
          chunk = chunk.subarray(1);
          afterCr = false;
        }
      }
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
    awaitsLf: () => lfOwed,
  };
}
