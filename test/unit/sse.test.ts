import { describe, expect, it } from "vitest";
import { rewriteEventStream, watchEventStream } from "../../src/transport/sse";
import { captureLogs } from "../helpers/logs";

const encoder = new TextEncoder();

async function run(transform: TransformStream<Uint8Array, Uint8Array>, chunks: string[]) {
  const input = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
  return new Response(input.pipeThrough(transform)).text();
}

const upper = (data: string) => (data.startsWith("{") ? data.toUpperCase() : undefined);

describe("rewriteEventStream", () => {
  it("re-emits events, ids, event types, comments and retry", async () => {
    const out = await run(
      rewriteEventStream(() => undefined, 1 << 24),
      [': keep-alive\n\nretry: 1500\n\nid: 7\nevent: message\ndata: {"a":1}\n\n'],
    );
    expect(out).toBe(': keep-alive\nretry: 1500\n\nevent: message\nid: 7\ndata: {"a":1}\n\n');
  });

  it("keeps empty priming events (an id and empty data)", async () => {
    expect(
      await run(
        rewriteEventStream(() => undefined, 1 << 24),
        ["id: p-0\ndata: \n\n"],
      ),
    ).toBe("id: p-0\ndata: \n\n");
  });

  it("reads CRLF and CR line endings, multi-line data, and id before data", async () => {
    const out = await run(
      rewriteEventStream(() => undefined, 1 << 24),
      ["id: 1\r\ndata: line one\r\ndata: line two\r\n\r\n", "id: 2\rdata: x\r\r", "data: y\n\n"],
    );
    expect(out).toBe("id: 1\ndata: line one\ndata: line two\n\nid: 2\ndata: x\n\ndata: y\n\n");
  });

  it("rewrites only what the rewrite returns, event by event", async () => {
    const out = await run(rewriteEventStream(upper, 1 << 24), ['data: {"a":1}\n\ndata: plain\n\n']);
    expect(out).toBe('data: {"A":1}\n\ndata: plain\n\n');
  });

  it("handles an event split across chunks at every byte position", async () => {
    const stream = 'id: 42\nevent: message\ndata: {"jsonrpc":"2.0","id":1,"result":{"ü":"ß"}}\n\n';
    const bytes = encoder.encode(stream);
    const expected = await run(rewriteEventStream(upper, 1 << 24), [stream]);
    for (let cut = 1; cut < bytes.length; cut++) {
      const input = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(bytes.slice(0, cut));
          controller.enqueue(bytes.slice(cut));
          controller.close();
        },
      });
      const out = await new Response(input.pipeThrough(rewriteEventStream(upper, 1 << 24))).text();
      expect(out, `cut at ${cut}`).toBe(expected);
    }
  });
});

describe("watchEventStream", () => {
  const MARKER = "notifications/tools/list_changed";

  it("passes bytes through unchanged and hands on an event whose marker is split across chunks", async () => {
    const seen: string[] = [];
    const chunks = ['data: {"method":"notifications/to', 'ols/list_changed"}\r\n\r\n', ": x\n"];
    const out = await run(
      watchEventStream(MARKER, (data) => seen.push(data), 1000),
      chunks,
    );
    expect(out).toBe(chunks.join(""));
    expect(seen).toEqual(['{"method":"notifications/tools/list_changed"}']);
  });

  it("hands on only events that mention the marker, and skips past one too long to look at", async () => {
    const seen: string[] = [];
    const chunks = [
      'data: {"a":1}\n\n',
      `data: ${"x".repeat(1200)}`,
      `"${MARKER}"\n\n`,
      `data: {"method":"${MARKER}"}\n\n`,
    ];
    const out = await run(
      watchEventStream(MARKER, (data) => seen.push(data), 1000),
      chunks,
    );
    expect(out).toBe(chunks.join(""));
    expect(seen).toEqual([`{"method":"${MARKER}"}`]);
  });
});

describe("an event that never ends", () => {
  it("ends a rewritten stream with an error instead of growing without bound", async () => {
    const logs = captureLogs();
    const endless = ["data: ", "x".repeat(600), "y".repeat(600)];
    await expect(
      run(
        rewriteEventStream(() => undefined, 1000),
        endless,
      ),
    ).rejects.toThrow("exceeds 1000 characters");
    expect(logs.events("event_too_large")).toEqual([{ event: "event_too_large", limit: 1000 }]);
    logs.restore();
  });
});
