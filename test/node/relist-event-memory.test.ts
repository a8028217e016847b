/**
 * A listing the proxy reads itself (src/toolmap/relist.ts `readAnswer`: the
 * re-list, the rest of a first page, `/readyz`) answered in an event stream
 * costs the isolate about its bytes while it is read, however short the lines
 * of its events. Run in Node, where a test can collect garbage and read the
 * heap: workerd runs the same V8. Typed with scripts/tsconfig.json, as relist.ts
 * is typed for the Workers runtime.
 */
import { describe, expect, it } from "vitest";
import { readAnswer } from "../../src/toolmap/relist";
import { collectGarbage } from "./heap";

const heldNow = () => {
  collectGarbage();
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return heapUsed + arrayBuffers;
};

describe("a listing the proxy reads itself, answered in an event stream", () => {
  // The re-list and /readyz read an event stream's events up to 16 MiB in all; each short `data`
  // line of an event cost the parser an object or two, counted as a byte or so.
  it("holds about its bytes while it reads an event, however short its lines", async () => {
    const chunk = new TextEncoder().encode("data:\n".repeat(10_000));
    const chunks = 100;
    let sent = 0;
    let grown = 0;
    const before = heldNow();
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        // What the read holds as the next chunk is asked for: the event so far.
        grown = Math.max(grown, heldNow() - before);
        if (sent++ < chunks) controller.enqueue(chunk);
        else controller.close();
      },
    });
    const response = new Response(body, { headers: { "content-type": "text/event-stream" } });
    const answer = await readAnswer(response, "1", { bytes: 0 }, undefined).catch(() => undefined);
    expect(answer).toBeUndefined();
    expect(grown).toBeLessThan(4 * chunk.byteLength * chunks);
  }, 60_000);
});
