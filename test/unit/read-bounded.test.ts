import { describe, expect, it } from "vitest";
import { ReadBudget, readBounded, rejoin } from "../../src/transport/read-bounded";

const stream = (...chunks: string[]) =>
  new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(new TextEncoder().encode(chunk));
      controller.close();
    },
  });

describe("readBounded", () => {
  it("reads a body within the bound whole", async () => {
    const read = await readBounded(stream("ab", "cd"), 4);
    expect(read.kind === "complete" && new TextDecoder().decode(read.bytes)).toBe("abcd");
  });

  it("stops past the bound, and the body can still be passed on whole", async () => {
    const read = await readBounded(stream("ab", "cd", "ef", "gh"), 3);
    expect(read.kind).toBe("over");
    if (read.kind === "complete") return;
    // What was read, small chunks copied together as they were kept.
    expect(read.head.map((chunk) => new TextDecoder().decode(chunk)).join("")).toBe("abcd");
    expect(await new Response(rejoin(read.head, read.rest)).text()).toBe("abcdefgh");
  });
});

describe("ReadBudget", () => {
  it("lets the isolate's reads take up to its limit together, and each give back what it took", () => {
    const reads = new ReadBudget(100, 0);
    const one = reads.hold();
    const two = reads.hold();
    expect(one.take(60)).toBe(true);
    expect(two.take(41)).toBe(false);
    expect(two.take(40)).toBe(true);
    expect(reads.held).toBe(100);
    one.release();
    one.release();
    expect(reads.held).toBe(40);
    expect(one.take(60)).toBe(true);
    two.release();
    one.release();
    expect(reads.held).toBe(0);
  });

  it("takes what a share reads first however much the others hold, and counts it", () => {
    const reads = new ReadBudget(100, 10);
    reads.hold().take(100);
    const small = reads.hold();
    expect(small.take(6)).toBe(true);
    expect(small.take(4)).toBe(true);
    expect(small.take(1)).toBe(false);
    expect(reads.held).toBe(110);
    small.release();
    expect(reads.held).toBe(100);
  });

  it("stops a read past it, and the body can still be passed on whole", async () => {
    const reads = new ReadBudget(3, 0);
    const hold = reads.hold();
    const read = await readBounded(stream("ab", "cd", "ef"), 100, hold);
    expect(read.kind).toBe("busy");
    if (read.kind === "complete") return;
    expect(reads.held).toBe(2);
    expect(await new Response(rejoin(read.head, read.rest)).text()).toBe("abcdef");
    hold.release();
    expect(reads.held).toBe(0);
  });

  it("gets back what a hold took once the hold is garbage, though it was never released", () => {
    // The runtime's registry, played: it calls back with a hold's share once the hold is collected
    // (test/node/read-budget-gc.test.ts has V8 collect one).
    const registered: Array<{ hold: WeakKey; share: { taken: number } }> = [];
    let collected: (share: { taken: number }) => void = () => {};
    const reads = new ReadBudget(1 << 20, 64, (giveBack) => {
      collected = giveBack;
      return { register: (hold, share) => void registered.push({ hold, share }) };
    });
    // A request whose work the runtime dropped: nothing runs its `finally`.
    (() => reads.hold().take(1000))();
    expect(reads.held).toBe(1000);
    const [dropped] = registered;
    // What the registry keeps is the count alone, never the hold, which stays collectable.
    expect(dropped?.share).toEqual({ taken: 1000 });
    collected(dropped?.share ?? { taken: 0 });
    expect(reads.held).toBe(0);
  });
});
