import { createParser, type EventSourceMessage } from "eventsource-parser";

/** What a client's parser hands on from an event stream. */
export type Seen = EventSourceMessage | { comment: string } | { retry: number };

export const isEvent = (seen: Seen): seen is EventSourceMessage => "data" in seen;

/**
 * What a client's EventSource makes of a whole stream: its events, comments
 * and retry times, in order. A CR at the very end ends its line (the spec's
 * reading); the parser would wait for an LF that may follow it.
 */
export function clientView(text: string): Seen[] {
  const seen: Seen[] = [];
  const parser = createParser({
    onEvent: ({ id, event, data }) => seen.push({ id, event, data }),
    onComment: (comment) => seen.push({ comment }),
    onRetry: (retry) => seen.push({ retry }),
  });
  parser.feed(text.endsWith("\r") ? `${text}\n` : text);
  return seen;
}

/** `clientView` of a stream, read to its end. */
export const clientViewOf = async (stream: ReadableStream<Uint8Array>) =>
  clientView(await new Response(stream).text());
