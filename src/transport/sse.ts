/**
 * Server-sent event streams, as the proxy's readers of them share: where an
 * event ends (`EVENT_END`), how many lines it has (`EventLines`, which a
 * parse costs by as much as by bytes), whether its text may mention a marker
 * (`mayMention`), a stream's text decoded (`streamDecoder`), an event's
 * lines in its bytes (`forEachLine`), the proxy's own event written
 * (`serializeEvent`), and the shape of what reads a stream chunk by
 * chunk (`ChunkRewriter`, `ChunkWatcher`). A stream that may need rewriting
 * is read by event-rewrite.ts; one that needs none is watched (event-watch.ts).
 */
import type { EventSourceMessage } from "eventsource-parser";
import { concat } from "./read-bounded";

/**
 * Whether `text` may hold one of `markers` once its JSON escapes are read:
 * written as it is, or with a `\u` or `\/` escape anywhere in it (JSON can
 * spell any character with the first, and `/` with the second). A filter in
 * front of a parse must not read a text otherwise than the parse: an origin
 * that spells `"tools"` as `"\u0074ools"` still has its listing renamed. The
 * escapes are looked for once, however many markers.
 */
export const mayMention = (text: string, markers: readonly string[]) =>
  markers.some((marker) => text.includes(marker)) || text.includes("\\u") || text.includes("\\/");

/**
 * A decoder of a stream's UTF-8, chunk by chunk, that reads a BOM as a
 * client's decoder does: dropped where the stream starts, kept
 * anywhere else. workerd's `TextDecoder` drops one at the start of every
 * `stream: true` call, so a U+FEFF that began a chunk inside a tool's
 * description was lost, and a mid-stream `\uFEFFdata:` line, which a client
 * reads as an unknown field, read as `data:`.
 */
export function streamDecoder(): (chunk: Uint8Array) => string {
  const decoder = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });
  let started = false;
  return (chunk) => {
    const text = decoder.decode(chunk, { stream: true });
    if (started || text === "") return text;
    started = true;
    return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  };
}

/**
 * Whether a client reads an event of type `event` as a message: the SDKs' clients (1.x and 2.x,
 * and the Python SDK's) read one of no type or of `message`, and skip any other.
 */
export const readAsMessage = (event: string | undefined) =>
  event === undefined || event === "message";

export function serializeEvent({ id, event, data }: EventSourceMessage): string {
  let text = "";
  if (event !== undefined) text += `event: ${event}\n`;
  if (id !== undefined) text += `id: ${id}\n`;
  for (const line of data.split("\n")) text += `data: ${line}\n`;
  return `${text}\n`;
}

export const LF = 0x0a;
export const CR = 0x0d;

/**
 * Each line of an event's bytes from `from`, in order: where it starts, where
 * its text ends, and where the next begins, past its line end (a CRLF, an LF
 * or a CR; none for a last line the stream cut off). The bytes, not their
 * text: a line is handed back as the origin wrote it, a byte that is no UTF-8
 * included.
 */
export function forEachLine(
  bytes: Uint8Array,
  from: number,
  visit: (start: number, end: number, next: number) => void,
): void {
  // The next LF and CR at or after `at`, each searched for again only once passed.
  let lf = -2;
  let cr = -2;
  let at = from;
  while (at < bytes.length) {
    if (lf !== -1 && lf < at) lf = bytes.indexOf(LF, at);
    if (cr !== -1 && cr < at) cr = bytes.indexOf(CR, at);
    const end = lf === -1 ? cr : cr === -1 ? lf : Math.min(lf, cr);
    if (end === -1) {
      visit(at, bytes.length, bytes.length);
      return;
    }
    const next = bytes[end] === CR && bytes[end + 1] === LF ? end + 2 : end + 1;
    visit(at, end, next);
    at = next;
  }
}

/**
 * What each line of an event costs to parse, beside its bytes: the parser and
 * the data lines written anew keep an object or two per line (a comment, a `retry`,
 * a `data` line's part of the data), some 30 to 80 bytes of V8's heap however
 * short the line. Counted with its bytes against `maxEventChars`: an event
 * of 2 MB of 2-byte comment lines held 68 MB parsed (16 MiB, some 550 MB).
 */
export const LINE_WEIGHT = 64;

/**
 * Where an event ends: a blank line, in any of the three line endings. A CR
 * followed by an LF is one line end (CRLF), never two: read as two, the line
 * after it would be taken for the start of an event.
 */
export const EVENT_END = /(?:\r\n|\r(?!\n)|\n)(?:\r\n|\r|\n)/;

/**
 * The lines of the event being read that a parser keeps, counted as a
 * stream's text comes: an object or two for each (`LINE_WEIGHT`), which its
 * own count of characters does not see. A comment line it keeps nothing of
 * (a keep-alive, which may come for hours with no blank line) counts none.
 */
export class EventLines {
  #lines = 0;
  /** The first character of a line the last text ended in ("" where it ended a line). */
  #first = "";
  /** Whether the last text ended with a CR: an LF that begins the next is that CRLF's. */
  #afterCr = false;

  /**
   * Counts `text`, the stream's next: the lines of the event being read at its end, and where in
   * it the last blank line ended (-1 where none did in it).
   */
  count(text: string): { lines: number; end: number } {
    let end = -1;
    let at = 0;
    if (this.#afterCr && text.startsWith("\n")) at = 1;
    this.#afterCr = false;
    // The next LF and CR at or after `at`, each searched for again only once passed.
    let lf = -2;
    let cr = -2;
    while (at < text.length) {
      if (lf !== -1 && lf < at) lf = text.indexOf("\n", at);
      if (cr !== -1 && cr < at) cr = text.indexOf("\r", at);
      const next = lf === -1 ? cr : cr === -1 ? lf : Math.min(lf, cr);
      if (next === -1) {
        this.#first ||= text.charAt(at);
        break;
      }
      const first = this.#first || (next > at ? text.charAt(at) : "");
      this.#first = "";
      at = next + 1;
      if (text.charCodeAt(next) === CR) {
        if (at === text.length) this.#afterCr = true;
        else if (text.charCodeAt(at) === LF) at++;
      }
      if (first === "") {
        this.#lines = 0;
        end = at;
      } else if (first !== ":") this.#lines++;
    }
    return { lines: this.#lines, end };
  }

  /** A new event begins (what was counted was skipped). */
  reset(): void {
    this.#lines = 0;
    this.#first = "";
    this.#afterCr = false;
  }
}
/** Longer than any marker `mayMatter` looks for, so one cut by chunk boundaries is still seen. */
export const OVERLAP_CHARS = 64;

/** What a stream's chunks become, chunk by chunk, each part handed to `emit` in order. */
export interface ChunkRewriter {
  write(chunk: Uint8Array, emit: (bytes: Uint8Array) => void): Promise<void> | void;
  /** The body ended: what is still held. */
  end(emit: (bytes: Uint8Array) => void): Promise<void> | void;
  /** The stream ended or failed: what the rewriter took of the isolate's budget goes back. */
  release(): void;
}

/** A `ChunkRewriter` that only looks: each chunk is passed on as it came, at once. */
export interface ChunkWatcher extends ChunkRewriter {
  write(chunk: Uint8Array, emit: (bytes: Uint8Array) => void): void;
  end(emit: (bytes: Uint8Array) => void): void;
}

/** `rewriter`, with what it passes on looked at by `watcher`: one rewriter, one pump. */
export function watchedAfter(rewriter: ChunkRewriter, watcher: ChunkWatcher): ChunkRewriter {
  return {
    write: (chunk, emit) => rewriter.write(chunk, (bytes) => watcher.write(bytes, emit)),
    async end(emit) {
      await rewriter.end((bytes) => watcher.write(bytes, emit));
      watcher.end(emit);
    },
    release() {
      rewriter.release();
      watcher.release();
    },
  };
}

/** A BOM as UTF-8 writes it. */
const BOM = new Uint8Array([0xef, 0xbb, 0xbf]);

/**
 * `rewriter`, for a stream that goes out after other bytes (the proxy's own
 * events first): a BOM it starts with is dropped, however its first chunks
 * cut it. A client reads a BOM as one only where the stream starts; after
 * the proxy's events, it began the origin's first line, and a `data:` or
 * `id:` line so begun was an unknown field, its event's data or id lost.
 */
export function withoutLeadingBom(rewriter: ChunkRewriter): ChunkRewriter {
  /** How many bytes of a BOM the stream began with, held back; `undefined` once decided. */
  let matched: number | undefined = 0;
  return {
    write(chunk, emit) {
      if (matched === undefined) return rewriter.write(chunk, emit);
      const before = matched;
      let at = 0;
      while (at < chunk.length && matched < BOM.length && chunk[at] === BOM[matched]) {
        at++;
        matched++;
      }
      if (matched === BOM.length) {
        matched = undefined;
        return rewriter.write(chunk.subarray(at), emit);
      }
      // Every byte so far may begin a BOM: held until the next chunk tells.
      if (at === chunk.length) return;
      // No BOM: what was held back of the stream goes first, as it came.
      matched = undefined;
      return rewriter.write(before > 0 ? concat([BOM.subarray(0, before), chunk]) : chunk, emit);
    },
    async end(emit) {
      // The stream was the start of a BOM and no more: those bytes, as they came.
      if (matched !== undefined && matched > 0)
        await rewriter.write(BOM.subarray(0, matched), emit);
      matched = undefined;
      return rewriter.end(emit);
    },
    release: () => rewriter.release(),
  };
}

/** `rewriter` as a `TransformStream`. */
export function transformStreamOf(
  rewriter: ChunkRewriter,
): TransformStream<Uint8Array, Uint8Array> {
  return new TransformStream({
    transform: (chunk, controller) => rewriter.write(chunk, (bytes) => controller.enqueue(bytes)),
    flush: async (controller) => {
      await rewriter.end((bytes) => controller.enqueue(bytes));
      rewriter.release();
    },
    cancel: () => rewriter.release(),
  });
}

/**
 * `feed`, for an event-stream parser, and `end`, where the stream ends: that
 * ends its last line. eventsource-parser holds a CR until it sees what
 * follows, so a text's last CR reaches it as a CRLF: the line ends now, not
 * with the origin's next bytes (a watched stream may send none for minutes),
 * and an LF that then starts the next text was that CRLF's, and goes. A line
 * cut off is read too, and is no event without a blank line after it.
 */
export function endableFeed(feed: (text: string) => void): {
  feed(text: string): void;
  end(): void;
} {
  /** Whether the parser may hold a line that only the stream's end ends: after anything but a line end. */
  let lineHeld = false;
  /** Whether the last text ended with a CR, fed as a CRLF. */
  let crEnded = false;
  return {
    feed(text) {
      let rest = text;
      if (crEnded && rest.startsWith("\n")) {
        rest = rest.slice(1);
        crEnded = false;
      }
      if (rest === "") return;
      crEnded = rest.endsWith("\r");
      lineHeld = !crEnded && !rest.endsWith("\n");
      feed(crEnded ? `${rest}\n` : rest);
    },
    end() {
      if (lineHeld) feed("\n");
    },
  };
}
