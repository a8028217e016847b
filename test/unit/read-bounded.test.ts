import { describe, expect, it } from "vitest";
import { readBounded, rejoin } from "../../src/transport/read-bounded";

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
    expect(read.head.map((chunk) => new TextDecoder().decode(chunk))).toEqual(["ab", "cd"]);
    expect(await new Response(rejoin(read.head, read.rest)).text()).toBe("abcdefgh");
  });
});
