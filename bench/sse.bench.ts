/**
 * Event streams that carry a `tools/list` result are parsed and re-emitted
 * event by event. Budget: at least 50 MB/s of event stream on one core, so the
 * transform never shows next to the network.
 */
import { bench, describe } from "vitest";
import { rewriteEventStream, watchEventStream } from "../src/transport/sse";

const event = `id: 1\nevent: message\ndata: ${JSON.stringify({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: "p", progress: 1, message: "x".repeat(400) } })}\n\n`;
const chunk = new TextEncoder().encode(event.repeat(64)); // ~32 KB
const CHUNKS = 32; // ~1 MB per iteration

async function pump(transform: TransformStream<Uint8Array, Uint8Array>) {
  const source = new ReadableStream<Uint8Array>({
    start(controller) {
      for (let i = 0; i < CHUNKS; i++) controller.enqueue(chunk);
      controller.close();
    },
  });
  const reader = source.pipeThrough(transform).getReader();
  while (!(await reader.read()).done) {}
}

describe(`event stream, ${((chunk.byteLength * CHUNKS) / 1e6).toFixed(1)} MB per run`, () => {
  bench("rewriteEventStream (parse and re-emit every event)", async () => {
    await pump(rewriteEventStream(() => undefined, 1 << 24));
  });
  bench("watchEventStream (pass-through, marker scan)", async () => {
    await pump(watchEventStream("notifications/tools/list_changed", () => {}));
  });
});
