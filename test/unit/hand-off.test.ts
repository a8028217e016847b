/**
 * transformUntil (src/transport/hand-off.ts): a body through a JavaScript
 * transform until nothing more can need it, then the rest as it came, with
 * no JavaScript seeing its chunks, or no rest at all; errors and cancellation
 * cross both ways.
 */
import { describe, expect, it } from "vitest";
import { transformUntil } from "../../src/transport/hand-off";
import type { ChunkRewriter } from "../../src/transport/sse";

const encoder = new TextEncoder();

function source(chunks: string[], fail?: Error) {
  let cancelled: unknown;
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      if (fail) controller.error(fail);
      else controller.close();
    },
    cancel(reason) {
      cancelled = reason ?? "cancelled";
    },
  });
  return { stream, cancelled: () => cancelled };
}

/** Upper-cases each chunk it sees, and keeps them. */
function upper() {
  const seen: string[] = [];
  const decoder = new TextDecoder();
  const released = { times: 0 };
  let once: () => void = () => {};
  /** Settles when the rewriter is released: the stream's end, error or cancellation signals it. */
  const releasing = new Promise<void>((resolve) => {
    once = resolve;
  });
  const transform: ChunkRewriter = {
    async write(chunk, emit) {
      const text = decoder.decode(chunk);
      seen.push(text);
      emit(encoder.encode(text.toUpperCase()));
    },
    end: () => {},
    release: () => {
      released.times++;
      once();
    },
  };
  return { transform, seen, released, releasing };
}

describe("transformUntil", () => {
  it("transforms until done, then passes the rest as it came, unseen", async () => {
    const { stream } = source(["a", "b", "c", "d"]);
    const { transform, seen, released, releasing } = upper();
    const out = transformUntil(stream, transform, () => seen.length === 2);
    expect(await new Response(out).text()).toBe("ABcd");
    expect(seen).toEqual(["a", "b"]);
    // What the rewriter held of the isolate's budget goes back once the stream is done.
    await releasing;
    expect(released.times).toBe(1);
  });

  it("ends both streams when done says so: the client's closes, the origin's is cancelled", async () => {
    // An origin that would go on for ever.
    let cancel: () => void = () => {};
    const cancelled = new Promise<void>((resolve) => {
      cancel = resolve;
    });
    let sent = 0;
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.enqueue(encoder.encode(String.fromCharCode(0x61 + (sent++ % 26))));
      },
      cancel: () => cancel(),
    });
    const { transform, seen, released, releasing } = upper();
    const out = transformUntil(endless, transform, () => (seen.length === 2 ? "end" : false));
    expect(await new Response(out).text()).toBe("AB");
    expect(seen).toEqual(["a", "b"]);
    await Promise.all([cancelled, releasing]);
    expect(released.times).toBe(1);
  });

  it("sends the prefix first, and transforms to the end when never done", async () => {
    const { stream } = source(["a", "b"]);
    const { transform } = upper();
    const out = transformUntil(stream, transform, () => false, encoder.encode("p:"));
    expect(await new Response(out).text()).toBe("p:AB");
  });

  it("errors the client's stream when the origin's fails, before or after the hand-off", async () => {
    for (const doneAfter of [0, 1]) {
      const { stream } = source(["a", "b"], new Error("origin went away"));
      const { transform, seen, released, releasing } = upper();
      const out = transformUntil(
        stream,
        transform,
        () => doneAfter > 0 && seen.length >= doneAfter,
      );
      await expect(new Response(out).text()).rejects.toThrow();
      await releasing;
      expect(released.times).toBe(1);
    }
  });

  it("cancels the origin's stream when the client goes away, before or after the hand-off", async () => {
    for (const done of [() => false, () => true]) {
      let cancel: () => void = () => {};
      const cancelled = new Promise<void>((resolve) => {
        cancel = resolve;
      });
      const endless = new ReadableStream<Uint8Array>({
        pull(controller) {
          controller.enqueue(encoder.encode("x"));
        },
        cancel: () => cancel(),
      });
      const { transform, released, releasing } = upper();
      const reader = transformUntil(endless, transform, done).getReader();
      await reader.read();
      await reader.read();
      await reader.cancel();
      // Each settles only when the hand-off passes the cancellation on and releases the rewriter.
      await Promise.all([cancelled, releasing]);
      expect(released.times).toBe(1);
    }
  });
});

describe("transformUntil after a prefix", () => {
  const passing = (): ChunkRewriter => ({
    write: (chunk, emit) => emit(chunk),
    end() {},
    release() {},
  });
  /** What reaches the client of `bytes` cut at `cuts`, after a prefix. */
  async function after(bytes: number[], cuts: number[]) {
    const chunks: Uint8Array[] = [];
    let from = 0;
    for (const at of [...cuts, bytes.length]) {
      chunks.push(new Uint8Array(bytes.slice(from, at)));
      from = at;
    }
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const chunk of chunks) controller.enqueue(chunk);
        controller.close();
      },
    });
    const out = transformUntil(body, passing(), () => false, new Uint8Array([0x21]));
    return [...new Uint8Array(await new Response(out).arrayBuffer())];
  }

  it("drops a BOM the body starts with, however chunks cut it, and keeps any other bytes as they came", async () => {
    const BOM = [0xef, 0xbb, 0xbf];
    const cases: Array<[number[], number[]]> = [
      // A BOM and data: the BOM goes.
      [
        [...BOM, 0x64, 0x61],
        [0x64, 0x61],
      ],
      // The start of one and no more, or bytes that only begin like one: as they came.
      [
        [0xef, 0xbb],
        [0xef, 0xbb],
      ],
      [
        [0xef, 0xbb, 0x64],
        [0xef, 0xbb, 0x64],
      ],
      [
        [0xef, 0x64, 0xbf],
        [0xef, 0x64, 0xbf],
      ],
      // One past the first: a character of the stream, kept.
      [
        [0x64, ...BOM],
        [0x64, ...BOM],
      ],
      [[...BOM, ...BOM], BOM],
    ];
    for (const [bytes, expected] of cases) {
      for (let a = 0; a <= bytes.length; a++) {
        for (let b = a; b <= bytes.length; b++) {
          expect(await after(bytes, [a, b]), `${bytes} cut at ${a}, ${b}`).toEqual([
            0x21,
            ...expected,
          ]);
        }
      }
    }
  });
});
