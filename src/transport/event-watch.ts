/**
 * Event streams that need no rewrite, watched: `eventWatcher` (and
 * `watchEventStream`, the same over a whole stream) passes the bytes
 * unchanged as they come, and hands on only the events a client reads as
 * messages (sse.ts `readAsMessage`) that mention a marker (`mayMention`);
 * an event too long to look at passes
 * unparsed, and the watch can tell whether it may have mentioned one.
 */
import { createParser } from "eventsource-parser";
import {
  type ChunkWatcher,
  EVENT_END,
  EventLines,
  endableFeed,
  LINE_WEIGHT,
  mayMention,
  OVERLAP_CHARS,
  readAsMessage,
  streamDecoder,
  transformStreamOf,
} from "./sse";

/** What `eventWatcher` looks for in a stream it passes on unchanged. */
export interface EventWatch {
  /** What an event's data must mention (`mayMention`) to be handed to `onEvent`. */
  markers: readonly string[];
  onEvent: (data: string) => void;
  /** Longer events are not parsed: they pass, and the watch goes on at the next one. */
  maxEventChars: number;
  /**
   * An event longer than `maxEventChars` passed unparsed: `mentioned` says
   * whether its text may have mentioned a marker of `skipMarkers`
   * (`mayMention`, over the text from the event before it to the end of this one).
   */
  onSkipped?: (mentioned: (marker: string) => boolean) => void;
  skipMarkers?: readonly string[];
  /**
   * An event set an id: a client that loses the stream after it resumes it
   * from there (a GET with `Last-Event-ID`), as an SDK client reads ids.
   */
  onId?: () => void;
}

/**
 * Passes the bytes through unchanged and hands `onEvent` the data of every
 * event whose data may mention a marker (`mayMention`), for the caller to
 * parse: a mention in text (a log message, a tool result) is not the message
 * itself. An event longer than `maxEventChars` is not looked at: the watch
 * skips to the next blank line and goes on, and the bytes still pass.
 */
export function eventWatcher({
  markers,
  onEvent,
  maxEventChars,
  onSkipped,
  skipMarkers = [],
  onId,
}: EventWatch): ChunkWatcher {
  const decode = streamDecoder();
  let skipping = false;
  /** While skipping: the end of the text seen, where a blank line may have begun. */
  let tail = "";
  /** The `skipMarkers` the text since the last event may mention, and the last characters of it. */
  const mentioned = new Set<string>();
  let escaped = false;
  let seenTail = "";
  /** Whether an event ended in the chunk being read: what follows it there is the next one's. */
  let boundary = false;
  /** The lines of the event the parser reads, which its own count does not see. */
  const eventLines = new EventLines();
  const forget = () => {
    mentioned.clear();
    escaped = false;
    boundary = true;
  };
  const parser = createParser({
    maxBufferSize: maxEventChars,
    onError: (error) => {
      if (error.type === "max-buffer-size-exceeded") skipping = true;
    },
    onEvent: ({ id, event, data }) => {
      forget();
      if (id) onId?.();
      // What no client reads as a message is none: its call's answer, or `list_changed`, comes after.
      if (readAsMessage(event) && mayMention(data, markers)) onEvent(data);
    },
  });
  const note = (text: string) => {
    if (!onSkipped) return;
    const seen = seenTail + text;
    for (const marker of skipMarkers) if (seen.includes(marker)) mentioned.add(marker);
    escaped ||= seen.includes("\\u") || seen.includes("\\/");
    seenTail = seen.slice(-OVERLAP_CHARS);
  };
  const feed = (text: string) => {
    if (skipping) {
      const seen = tail + text;
      const end = EVENT_END.exec(seen);
      if (!end) {
        tail = seen.slice(-3);
        return;
      }
      skipping = false;
      tail = "";
      eventLines.reset();
      parser.reset();
      onSkipped?.((marker) => escaped || mentioned.has(marker));
      forget();
      text = seen.slice(end.index + end[0].length);
    }
    const { lines, end } = eventLines.count(text);
    if (lines * LINE_WEIGHT > maxEventChars) {
      // An event of too many lines to look at: what ends before it is read, and it is skipped. A
      // CR that ends the text read is a line's end whole (no LF follows it): the parser would wait.
      const before = text.slice(0, Math.max(0, end));
      parser.feed(before.endsWith("\r") ? `${before}\n` : before);
      parser.reset();
      eventLines.reset();
      skipping = true;
      tail = text.slice(-3);
      return;
    }
    parser.feed(text);
    // The parser gave up on the event having read every line of `text`: the blank line that ends
    // the event may begin with the line end `text` ends with, and the next text end it. Without
    // it the next blank line was taken for the event's end, and the event before it went unseen.
    if (skipping) tail = text.slice(-3);
  };
  const lines = endableFeed(feed);
  return {
    write(chunk, emit) {
      emit(chunk);
      const text = decode(chunk);
      // Noted before the events it ends, and again after, for the one it begins: a mention
      // is never missed, though one may be counted for both.
      note(text);
      boundary = false;
      lines.feed(text);
      if (boundary) note(text);
    },
    end: () => lines.end(),
    release: () => {},
  };
}

/** `eventWatcher` for a whole stream, looking for one marker. */
export const watchEventStream = (
  marker: string,
  onEvent: (data: string) => void,
  maxEventChars: number,
): TransformStream<Uint8Array, Uint8Array> =>
  transformStreamOf(eventWatcher({ markers: [marker], onEvent, maxEventChars }));
