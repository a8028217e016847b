/** What the core section streams through the event-stream transforms: 32 chunks of 64 progress events of about 500 bytes. */
const event = `id: 1\nevent: message\ndata: ${JSON.stringify({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: "p", progress: 1, message: "x".repeat(400) } })}\n\n`;
const streamChunk = new TextEncoder().encode(event.repeat(64));
const STREAM_CHUNKS = 32;
export const STREAM_BYTES = streamChunk.byteLength * STREAM_CHUNKS;

export async function pump(transform: TransformStream<Uint8Array, Uint8Array>) {
  const source = new ReadableStream<Uint8Array>({
    start(controller) {
      for (let i = 0; i < STREAM_CHUNKS; i++) controller.enqueue(streamChunk);
      controller.close();
    },
  });
  const reader = source.pipeThrough(transform).getReader();
  while (!(await reader.read()).done) {}
}
