/**
 * A read budget's hold dropped without its `release` (a request whose work
 * the runtime dropped) gives its share back once V8 collects it
 * (src/transport/read-bounded.ts `ReadBudget`). Run in Node, where a test can
 * collect garbage: workerd runs the same V8.
 */
import { describe, expect, it } from "vitest";
import { ReadBudget } from "../../src/transport/read-bounded";
import { collectGarbage } from "./heap";

describe("a hold that is garbage", () => {
  it("gives back what it took once V8 collects it, though it was never released", async () => {
    let collected: () => void = () => {};
    const given = new Promise<void>((resolve) => {
      collected = resolve;
    });
    // V8's registry, which says when it called back.
    const reads = new ReadBudget(
      1 << 20,
      64,
      (giveBack) =>
        new FinalizationRegistry<{ taken: number }>((share) => {
          giveBack(share);
          collected();
        }),
    );
    (() => reads.hold().take(1000))();
    expect(reads.held).toBe(1000);
    collectGarbage();
    await given;
    expect(reads.held).toBe(0);
  }, 10_000);
});
