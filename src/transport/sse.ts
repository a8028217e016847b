/**
 * Server-sent event streams, handled one event at a time as bytes arrive.
 *
 * `rewriteEventStream` parses with eventsource-parser and re-emits every event
 * (its `id:`, `event:` and `data:`, in the canonical `field: value` form),
 * comment and `retry:`, handing each event's data to a rewrite that may replace
 * it. Nothing is held back beyond the event being read, so memory stays
 * constant however long the stream runs; an event that grows past
 * `maxEventChars` without ending ends the stream with an error instead.
 *
 * `watchEventStream` is for streams that need no rewrite: the bytes pass
 * unchanged, and only events that mention a marker are handed on.
 */
import { createParser, type EventSourceMessage, type ParseError } from "eventsource-parser";
import { logEvent } from "../log";

/** New data for an event, or `undefined` to keep it as it is. */
export type EventDataRewrite = (data: string) => Promise<string | undefined> | string | undefined;

export function serializeEvent({ id, event, data }: EventSourceMessage): string {
  let text = "";
  if (event !== undefined) text += `event: ${event}\n`;
  if (id !== undefined) text += `id: ${id}\n`;
  for (const line of data.split("\n")) text += `data: ${line}\n`;
  return `${text}\n`;
}

type Pending = { event: EventSourceMessage } | { text: string };

export function rewriteEventStream(
  rewrite: EventDataRewrite,
  maxEventChars: number,
): TransformStream<Uint8Array, Uint8Array> {
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  const pending: Pending[] = [];
  let overflow: ParseError | undefined;
  const parser = createParser({
    maxBufferSize: maxEventChars,
    onError: (error) => {
      if (error.type === "max-buffer-size-exceeded") overflow = error;
    },
    onEvent: (event) => pending.push({ event }),
    onComment: (comment) => pending.push({ text: `: ${comment}\n` }),
    onRetry: (retry) => pending.push({ text: `retry: ${retry}\n\n` }),
  });

  async function drain(controller: TransformStreamDefaultController<Uint8Array>) {
    for (const item of pending.splice(0)) {
      if ("text" in item) {
        controller.enqueue(encoder.encode(item.text));
        continue;
      }
      const data = (await rewrite(item.event.data)) ?? item.event.data;
      controller.enqueue(encoder.encode(serializeEvent({ ...item.event, data })));
    }
  }

  return new TransformStream({
    async transform(chunk, controller) {
      parser.feed(decoder.decode(chunk, { stream: true }));
      await drain(controller);
      if (overflow) {
        logEvent("event_too_large", { limit: maxEventChars });
        throw new Error(`An event of the stream exceeds ${maxEventChars} characters`);
      }
    },
    async flush(controller) {
      parser.feed(decoder.decode());
      await drain(controller);
    },
  });
}

/** Where an event ends: a blank line, in any of the three line endings. */
const EVENT_END = /(\r\n|\r|\n)(\r\n|\r|\n)/;

/**
 * Passes the bytes through unchanged and hands `onEvent` the data of every
 * event whose data mentions `marker`, for the caller to parse: a mention in
 * text (a log message, a tool result) is not the message itself. An event
 * longer than `maxEventChars` is not looked at: the watch skips to the next
 * blank line and goes on, and the bytes still pass.
 */
export function watchEventStream(
  marker: string,
  onEvent: (data: string) => void,
  maxEventChars: number,
): TransformStream<Uint8Array, Uint8Array> {
  const decoder = new TextDecoder();
  let skipping = false;
  /** While skipping: the end of the text seen, where a blank line may have begun. */
  let tail = "";
  const parser = createParser({
    maxBufferSize: maxEventChars,
    onError: (error) => {
      if (error.type === "max-buffer-size-exceeded") skipping = true;
    },
    onEvent: ({ data }) => {
      if (data.includes(marker)) onEvent(data);
    },
  });
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
      parser.reset();
      text = seen.slice(end.index + end[0].length);
    }
    parser.feed(text);
    if (skipping) feed("");
  };
  return new TransformStream({
    transform(chunk, controller) {
      controller.enqueue(chunk);
      feed(decoder.decode(chunk, { stream: true }));
    },
  });
}
