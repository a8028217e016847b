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
import type { AnswerBytes, RememberedAnswer } from "../toolmap/tool-map";

/**
 * The id written between an answer's halves, as JSON reads it, when it is
 * one token (an integer, or a string with no escapes) that `expected` takes.
 * A zero before other digits, or a raw control character in a string, is no JSON.
 */
function idBetween(id: string, expected: (id: unknown) => boolean): { id: unknown } | undefined {
  if (!/^(?:-?\d+|"[^"\\]*")$/.test(id)) return undefined;
  const value = parseJson(id);
  return value !== undefined && expected(value) ? { id: value } : undefined;
}

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
  const read = idBetween(id, expected);
  return read && { text: remembered.sent[0] + id + remembered.sent[1], id: read.id };
}

const subtle = crypto.subtle as SubtleCrypto & {
  timingSafeEqual?: (a: ArrayBufferView, b: ArrayBufferView) => boolean;
};

/**
 * Whether two byte strings are equal: workerd compares them natively
 * (`timingSafeEqual`, a whole buffer at a time); elsewhere (Node, the bench)
 * a loop does.
 */
function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.byteLength !== b.byteLength) return false;
  if (typeof subtle.timingSafeEqual === "function") return subtle.timingSafeEqual(a, b);
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * `reuseAnswer` for a JSON body's bytes, compared with the answer's own
 * (`AnswerBytes`): the parts of the answer to send, and its id, when the body
 * is the remembered answer with another id. The body is not decoded, nor the
 * answer encoded: the same bytes decode to the same text, and an id of ASCII
 * characters is written in the answer as it came. Any other id, or a byte
 * the decoder would have replaced, fails the comparison: the text path reads it.
 */
export function reuseAnswerBytes(
  body: Uint8Array,
  bytes: AnswerBytes,
  expected: (id: unknown) => boolean,
): { parts: Uint8Array[]; id: unknown } | undefined {
  const [before, after] = bytes.received;
  const idEnd = body.byteLength - after.byteLength;
  if (
    idEnd <= before.byteLength ||
    !sameBytes(body.subarray(0, before.byteLength), before) ||
    !sameBytes(body.subarray(idEnd), after)
  ) {
    return undefined;
  }
  const idBytes = body.subarray(before.byteLength, idEnd);
  if (idBytes.some((byte) => byte >= 0x80)) return undefined;
  const read = idBetween(new TextDecoder().decode(idBytes), expected);
  return read && { parts: [bytes.sent[0], idBytes, bytes.sent[1]], id: read.id };
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
