/**
 * Reads a body whole, up to a bound and no further: the proxy never holds more
 * than `maxBytes` of one body, however much the peer sends. Past the bound the
 * caller gets what was read and the unread rest, to refuse or to pass on.
 */
/**
 * The most the proxy reads of one JSON body, or holds of one event, to rename
 * a listing: far above any real tool list, far below an isolate's 128 MB.
 */
export const MAX_REWRITE_BYTES = 16 * 1024 * 1024;

export type Bounded =
  | { kind: "complete"; bytes: Uint8Array }
  /** Over the bound: what was read, and the unread rest. */
  | { kind: "over"; head: Uint8Array[]; rest: ReadableStreamDefaultReader<Uint8Array> };

/** `chunks` as one buffer (`size`: their bytes in all). */
export function concat(
  chunks: readonly Uint8Array[],
  size = chunks.reduce((sum, chunk) => sum + chunk.byteLength, 0),
): Uint8Array {
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

export async function readBounded(
  body: ReadableStream<Uint8Array>,
  maxBytes: number,
): Promise<Bounded> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return { kind: "complete", bytes: concat(chunks, size) };
    chunks.push(value);
    size += value.byteLength;
    if (size > maxBytes) return { kind: "over", head: chunks, rest: reader };
  }
}

/** A stream of what `readBounded` read and then the rest, as the peer sent it. */
export function rejoin(head: readonly Uint8Array[], rest: ReadableStreamDefaultReader<Uint8Array>) {
  let index = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (index < head.length) {
        controller.enqueue(head[index++] as Uint8Array);
        return;
      }
      const { done, value } = await rest.read();
      if (done) controller.close();
      else controller.enqueue(value);
    },
    cancel: (reason) => rest.cancel(reason),
  });
}
