/**
 * What callers' views keep of their own schemas in an isolate's memory
 * (src/toolmap/caller-listings.ts): a view keeps each tool's entry as the
 * caller's listing made it, so that a call is repaired against the caller's
 * own schema after another caller's of the tool was listed
 * (call-names.ts). An origin (untrusted, SECURITY.md) that lists every caller
 * the same tools with long schemas of their own has the map keep the last
 * caller's alone, and the views every other's: the views' bound must weigh
 * them, or the isolate would keep one listing's schemas per caller. Listings
 * named as the proxy names an answer's: read from their text
 * (`readListingText`), then `ToolMap.nameListing`, against Miniflare's local
 * KV. Run in Node, where a test can collect garbage and read the heap.
 */
import { describe, expect, it } from "vitest";
import { readListingText } from "../../src/protocol/listing-text";
import { WrittenTool } from "../../src/protocol/written-tool";
import { heapUsed } from "./heap";
import { isolateToolMaps } from "./isolate-tool-maps";
import { localKv } from "./local-kv";

/** Under OpenAI's ceiling of 128: no search mode, whose views weigh their texts already. */
const TOOLS = 20;
const PROPERTIES = 40;
const CALLERS = 80;

/** Caller `caller`'s listing: the same `TOOLS` tools as everyone's, each schema of about 40 KB theirs alone. */
function listingText(caller: number): string {
  const said = (what: string) =>
    `${what} for user ${caller}. ${"It says what it holds. ".repeat(40)}`;
  const tools = Array.from({ length: TOOLS }, (_, i) => ({
    name: `report_${i}`,
    description: `Reads report ${i}.`,
    inputSchema: {
      type: "object",
      properties: Object.fromEntries(
        Array.from({ length: PROPERTIES }, (_, p) => [
          `field_${p}`,
          { type: "string", description: said(`Field ${p}`) },
        ]),
      ),
    },
  }));
  return JSON.stringify({ jsonrpc: "2.0", id: 1, result: { tools } });
}

const kv = localKv();

describe("callers' own schemas in an isolate's memory", () => {
  it("hold about their bound when each caller is listed the same tools with long schemas of their own", async () => {
    const { open, settle } = isolateToolMaps(kv, {
      origin: "v2:caller-schemas",
      legacy: "v1:caller-schemas",
    });
    const before = heapUsed();
    let listed = 0;
    for (let caller = 0; caller < CALLERS; caller++) {
      const text = listingText(caller);
      listed += text.length;
      const tools = (readListingText(text)?.elements ?? []).filter((e) => e instanceof WrittenTool);
      await open(`caller ${caller}`).nameListing(tools, "whole");
      await settle();
    }
    const grown = heapUsed() - before;

    // 80 listings of 0.8 MB were named (60 MiB, nearly all schemas): the views keep about their bound.
    expect(listed).toBeGreaterThan(60 * 2 ** 20);
    expect(grown).toBeLessThan(40 * 2 ** 20);
    // The caller before the last, whose view is kept, is answered with their own schema.
    const call = await open(`caller ${CALLERS - 2}`).calls.resolve("report_0");
    expect(JSON.stringify(call?.entry.inputSchema)).toContain(`for user ${CALLERS - 2}.`);
  }, 300_000);
});
