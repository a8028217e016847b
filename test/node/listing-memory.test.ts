/**
 * What reading a listing leaves in an isolate's memory. Tool names outlive
 * their listing: the tool map keeps them as keys (toolmap/isolate-memory.ts,
 * thousands per origin and profile). A name must hold its own characters, not
 * the whole text it was read from. Run in Node, where a test can collect
 * garbage and read the heap: workerd runs the same V8.
 */
import { describe, expect, it } from "vitest";
import { readListingText } from "../../src/protocol/listing-text";
import { WrittenTool } from "../../src/protocol/written-tool";
import { heapUsed } from "./heap";

const TEXT_BYTES = 4_000_000;

/** A listing of one tool whose text is about 4 MB, as a large listing's is. */
const listingText = (name: string) =>
  JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    result: {
      tools: [{ name, description: "d".repeat(TEXT_BYTES), inputSchema: { type: "object" } }],
    },
  });

/** The name of the one tool of a listing read from its text; the text is gone on return. */
function nameRead(name: string): string {
  const tool = readListingText(listingText(name))?.elements[0];
  if (!(tool instanceof WrittenTool)) throw new Error("the listing was not read");
  return tool.name;
}

describe("a listing read from its text", () => {
  it("leaves its tools' names holding none of the text once it is gone", () => {
    const names = Array.from({ length: 10 }, (_, i) => `calendar.create_event_${i}`);
    const before = heapUsed();
    const kept = names.map(nameRead);
    // V8 keeps the text a regular expression last searched (`RegExp.input`) until the next search.
    /./.test("x");
    const grown = heapUsed() - before;

    expect(kept).toEqual(names);
    // Ten texts of 4 MB were read; less than one of them may stay.
    expect(grown).toBeLessThan(TEXT_BYTES);
  });
});
