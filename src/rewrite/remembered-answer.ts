/**
 * Remembered listings (docs/performance.md): clients list tools on every
 * connection, and an origin answers them with the same text but for the
 * JSON-RPC id. An answer whose text is the one the isolate last rewrote for
 * the same origin and profile, id aside, gets the same rewritten text, id
 * aside, without being parsed, named or written again. Only a whole listing
 * in one message qualifies (no cursor, no batch); the tool map keeps the
 * answers (toolmap/isolate-memory.ts, bounded in number and characters, and
 * dropped with its memory of the origin).
 */
import { parseJson } from "../json";
import type { Span } from "../json-spans";
import type { RememberedAnswer } from "../toolmap/tool-map";

/** The rewritten text for `text`, and its id, when it is the remembered answer with another id that `expected` takes. */
export function reuseAnswer(
  text: string,
  remembered: RememberedAnswer,
  expected: (id: unknown) => boolean,
): { text: string; id: unknown } | undefined {
  const [before, after] = remembered.received;
  const idLength = text.length - before.length - after.length;
  // Its ends compared as equal strings: V8 compares those a block of memory
  // at a time, `startsWith` and `endsWith` a character at a time (a
  // 1,000-tool listing: about 30 µs against 2–4 ms, npm run bench -- core).
  if (
    idLength <= 0 ||
    text.slice(0, before.length) !== before ||
    text.slice(text.length - after.length) !== after
  ) {
    return undefined;
  }
  const id = text.slice(before.length, before.length + idLength);
  // The id is one token: an integer, or a string with no escapes. Read as JSON reads it: a
  // zero before other digits, or a raw control character in a string, is no JSON.
  if (!/^(?:-?\d+|"[^"\\]*")$/.test(id)) return undefined;
  const value = parseJson(id);
  if (value === undefined) return undefined;
  return expected(value)
    ? { text: remembered.sent[0] + id + remembered.sent[1], id: value }
    : undefined;
}

/**
 * The remembered form of an answer: `received` as it came and `sent` as it
 * goes, each split around its id (at `receivedId` and `sentId`). An answer
 * sent as it came is remembered with one pair of halves for both
 * (`sentAsReceived`).
 */
export function rememberAnswer(
  received: string,
  [idStart, idEnd]: Span,
  sent: string,
  [sentStart, sentEnd]: Span,
): RememberedAnswer {
  const halves: [string, string] = [received.slice(0, idStart), received.slice(idEnd)];
  if (sent === received) return { received: halves, sent: halves };
  return { received: halves, sent: [sent.slice(0, sentStart), sent.slice(sentEnd)] };
}
