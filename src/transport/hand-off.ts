/**
 * A body read by JavaScript only as long as it must be. `transformUntil`
 * passes the body through a rewriter (event-rewrite.ts) until `done()` says nothing
 * after can need it (every listing asked for is answered), then hands the
 * rest of the body to the runtime: workerd pumps one of its own streams into
 * another without running JavaScript per chunk, so a long stream after its
 * listing costs the isolate neither CPU nor garbage. Or `done()` ends the
 * body there, for a rest that must not pass unread.
 */
import { concat } from "./read-bounded";
import { type ChunkRewriter, withoutLeadingBom } from "./sse";

/**
 * What follows a chunk: `false`, the next goes through the rewriter; `true`,
 * the rest passes as it came; `"end"`, the client's stream ends there and the
 * origin's is cancelled (what the rewriter holds of an unfinished event goes
 * with it).
 */
export type Next = boolean | "end";

/**
 * `body` through `rewriter` until `done()` is true after a chunk, the rest as
 * it came, or until it is `"end"`; `prefix`, when given, goes first, and a
 * BOM the body starts with, which a client would read after it as a
 * character, goes (sse.ts `withoutLeadingBom`). An error on either side ends the
 * other: the client's stream errors when the origin's does, and the origin's
 * is cancelled when the client's is, but only at the origin's next chunk (the
 * runtime tells a writer that its reader left only when more is written). A
 * client that goes away while the origin sends nothing ends the origin's
 * stream by the request's signal instead (transport/origin.ts `clientLeft`),
 * which errors the read this pump or the runtime's pipe waits on.
 */
export function transformUntil(
  body: ReadableStream<Uint8Array>,
  bodyRewriter: ChunkRewriter,
  done: () => Next,
  prefix?: Uint8Array,
): ReadableStream<Uint8Array> {
  const rewriter = prefix ? withoutLeadingBom(bodyRewriter) : bodyRewriter;
  const out = new IdentityTransformStream();
  const reader = body.getReader();
  const writer = out.writable.getWriter();
  const emitted: Uint8Array[] = [];
  const emit = (bytes: Uint8Array) => {
    if (bytes.byteLength > 0) emitted.push(bytes);
  };
  // One write per chunk read, which waits for the client to take it: the origin is
  // read no faster than the client reads, and a chunk's events cost one wait, not one each.
  const send = async () => {
    if (emitted.length === 0) return;
    const bytes = emitted.length === 1 ? (emitted[0] as Uint8Array) : concat(emitted);
    emitted.length = 0;
    await writer.write(bytes);
  };
  const pump = async () => {
    // At once: the origin may send nothing for as long as the rest of its answer takes.
    if (prefix) await writer.write(prefix);
    for (;;) {
      const { done: ended, value } = await reader.read();
      if (ended) {
        await rewriter.end(emit);
        await send();
        return writer.close();
      }
      await rewriter.write(value, emit);
      await send();
      const next = done();
      if (next === "end") {
        await reader.cancel();
        return writer.close();
      }
      if (next) break;
    }
    writer.releaseLock();
    reader.releaseLock();
    return body.pipeTo(out.writable);
  };
  pump()
    .catch(async (error: unknown) => {
      // (After the hand-off the runtime's pipe does this itself, and these find the streams released.)
      await Promise.allSettled([writer.abort(error), reader.cancel(error)]);
    })
    .finally(() => rewriter.release());
  return out.readable;
}
