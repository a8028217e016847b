/**
 * Remembered listings (docs/performance.md): clients list tools on every
 * connection, and an origin answers them with the same text but for the
 * JSON-RPC id. An answer whose text is the one the isolate last rewrote for
 * the same origin and profile, id aside, gets the same rewritten text, id
 * aside, without being parsed, named or written again. Only a whole listing
 * in one message qualifies (no cursor, no batch), at most
 * `MAX_REMEMBERED_CHARS` long; the tool map keeps the answers (tool-map.ts,
 * bounded and dropped with its memory of the origin).
 */
import { topLevelSpan } from "../json";
import type { RememberedAnswer } from "../toolmap/tool-map";

/** The largest answer remembered, in characters: 1,000 realistic tools are about 760,000. */
export const MAX_REMEMBERED_CHARS = 2 * 1024 * 1024;

/** The rewritten text for `text`, and its id, when it is the remembered answer with another id that `expected` takes. */
export function reuseAnswer(
  text: string,
  remembered: RememberedAnswer,
  expected: (id: unknown) => boolean,
): { text: string; id: unknown } | undefined {
  const [before, after] = remembered.received;
  const idLength = text.length - before.length - after.length;
  if (idLength <= 0 || !text.startsWith(before) || !text.endsWith(after)) return undefined;
  const id = text.slice(before.length, before.length + idLength);
  // The id is one token: an integer, or a string with no escapes.
  if (!/^(?:-?\d+|"[^"\\]*")$/.test(id)) return undefined;
  const value: unknown = JSON.parse(id);
  return expected(value)
    ? { text: remembered.sent[0] + id + remembered.sent[1], id: value }
    : undefined;
}

/**
 * The remembered form of an answer: `text` as received, and `rewrite(id)`, the
 * rewritten message written with `id` as its id, split around a marker id;
 * with the rewritten text itself, its id written as `text` wrote it.
 */
export function rememberAnswer(
  text: string,
  rewrite: (id: string) => string,
): { answer: RememberedAnswer; text: string } | undefined {
  if (text.length > MAX_REMEMBERED_CHARS) return undefined;
  const span = topLevelSpan(text, "id");
  if (!span) return undefined;
  const marker = `mcp-edge-rewriter:${crypto.randomUUID()}`;
  const sent = rewrite(marker).split(JSON.stringify(marker));
  const [before, after] = sent;
  if (sent.length !== 2 || before === undefined || after === undefined) return undefined;
  return {
    answer: { received: [text.slice(0, span[0]), text.slice(span[1])], sent: [before, after] },
    text: before + text.slice(span[0], span[1]) + after,
  };
}
