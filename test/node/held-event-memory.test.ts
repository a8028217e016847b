/**
 * An event held across chunks (src/transport/event-rewrite.ts `eventStreamRewriter`)
 * and a body read whole (read-bounded.ts `readBounded`) cost the isolate
 * about their bytes, however small the chunks they came in:
 * the read budget and `maxEventChars` count bytes, and a chunk held alone
 * costs V8 some hundred bytes whatever its length. Run in Node, where a test
 * can collect garbage and read the heap: workerd runs the same V8.
 */
import { describe, expect, it } from "vitest";
import { eventStreamRewriter } from "../../src/transport/event-rewrite";
import { eventWatcher } from "../../src/transport/event-watch";
import { readBounded } from "../../src/transport/read-bounded";
import { collectGarbage } from "./heap";

const heldNow = () => {
  collectGarbage();
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return heapUsed + arrayBuffers;
};

describe("an event held across chunks", () => {
  it("costs about its bytes, though it came a byte at a time", async () => {
    const rewriter = eventStreamRewriter({
      rewrite: () => undefined,
      mayMatter: () => false,
      maxEventChars: 1 << 24,
    });
    const drop = () => {};
    await rewriter.write(new TextEncoder().encode("data: "), drop);
    const before = heldNow();
    // An origin's event, one byte per chunk: each a read of the runtime's.
    const bytes = 1_000_000;
    for (let i = 0; i < bytes; i++) await rewriter.write(new Uint8Array([0x78]), drop);
    const grown = heldNow() - before;
    let passed = 0;
    await rewriter.end((part) => {
      passed += part.byteLength;
    });
    expect(passed).toBe(bytes + 6);
    expect(grown).toBeLessThan(4 * bytes);
  }, 60_000);
});

describe("an event of many short lines that may hold a listing", () => {
  // Parsed, each line cost V8 an object or two whatever its length: a comment line of 2 bytes
  // some 34 bytes, a `retry` line of 8 some 80, an empty `data:` line of 6 some 38, so that an
  // event of 16 MiB so written held some 550 MB, over an isolate's 128 MB.
  it.each([
    ["comment", ":\n"],
    ["retry", "retry:1\n"],
    ["data", "data:\n"],
  ])(
    "is parsed at about its bytes, or refused: %s lines",
    async (_, line) => {
      const lines = 1_000_000;
      const bytes = new TextEncoder().encode(`data: {"tools":[]}\n${line.repeat(lines)}\n`);
      let grown: number | undefined;
      const before = heldNow();
      const rewriter = eventStreamRewriter({
        // What the parse holds once the event is read: the data handed to the rewrite, and the rest.
        rewrite: () => {
          grown = heldNow() - before;
          return undefined;
        },
        mayMatter: (text) => text.includes('"tools"'),
        maxEventChars: 1 << 24,
      });
      const feed = async () => {
        for (let at = 0; at < bytes.length; at += 65_536) {
          await rewriter.write(bytes.subarray(at, at + 65_536), () => {});
        }
      };
      const refused = await feed().then(
        () => false,
        () => true,
      );
      expect(refused || (grown as number) < 4 * bytes.length).toBe(true);
    },
    60_000,
  );
});

describe("an event of a watched stream (GET, subscriptions/listen, call analytics)", () => {
  // The watch parses an event up to 64 KiB as eventsource-parser counts it (its data's characters
  // and the pending line), but the parser keeps an object or two per data line whatever its
  // length: 60,000 empty `data:` lines (360 KB, 60,000 characters of data) held 1.6 MB, in no
  // budget, per stream (some 80 such streams at once filled an isolate). Each line now counts.
  it("holds about what it parses up to its bound, however short the lines", () => {
    const maxEventChars = 64 * 1024;
    const watch = eventWatcher({ markers: ['"tools"'], onEvent: () => {}, maxEventChars });
    const bytes = new TextEncoder().encode("data:\n".repeat(60_000));
    const before = heldNow();
    for (let at = 0; at < bytes.length; at += 16_384) {
      watch.write(bytes.subarray(at, at + 16_384), () => {});
    }
    expect(heldNow() - before).toBeLessThan(4 * maxEventChars);
  });
});

describe("a body read whole", () => {
  it("costs about its bytes, though it came a byte at a time", async () => {
    const bytes = 1_000_000;
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent++ < bytes + 1) controller.enqueue(new Uint8Array([0x78]));
        else controller.close();
      },
    });
    const before = heldNow();
    // Past its bound, what was read is handed back unjoined: as it was held.
    const read = await readBounded(body, bytes);
    const grown = heldNow() - before;
    expect(read.kind === "over" && read.head.reduce((sum, part) => sum + part.byteLength, 0)).toBe(
      bytes + 1,
    );
    expect(grown).toBeLessThan(4 * bytes);
  }, 60_000);

  it("costs about its bytes, though a byte comes between each longer chunk", async () => {
    // Each short chunk alone in a buffer of its own, after a long one: what a buffer costs is
    // what such a chunk holds.
    const long = new Uint8Array(1024).fill(0x78);
    const pairs = 1_000;
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= 2 * pairs) return controller.close();
        controller.enqueue(sent++ % 2 === 0 ? new Uint8Array([0x78]) : long.slice());
      },
    });
    const bytes = pairs * (1 + long.byteLength);
    const before = heldNow();
    const read = await readBounded(body, bytes - 1);
    const grown = heldNow() - before;
    expect(read.kind === "over" && read.head.reduce((sum, part) => sum + part.byteLength, 0)).toBe(
      bytes,
    );
    expect(grown).toBeLessThan(4 * bytes);
  }, 60_000);
});
