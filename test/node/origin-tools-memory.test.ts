/**
 * What an origin's tools hold in an isolate's memory (src/toolmap/
 * isolate-memory.ts `OriginMemory`): each tool's schema, its definition as
 * listed (description among it), its names and its schema view. An origin is
 * untrusted (SECURITY.md): one that lists each caller, or each page, tools of
 * their own with long schemas and descriptions would have the isolate keep
 * them all, 10,000 tools of 50 KB about half a gigabyte, past the 128 MB an
 * isolate has; the bound must weigh what the tools say, not only how many
 * they are. Listings named as the proxy names an answer's: read from their
 * text (`readListingText`), then `ToolMap.nameListing`, under the default
 * settings (`TOOL_CHANGES=log`: definitions kept), against Miniflare's local
 * KV.
 */
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config";
import { readListingText } from "../../src/protocol/listing-text";
import { WrittenTool } from "../../src/protocol/written-tool";
import { profileOf } from "../../src/schemas/profile";
import { ToolMapMemory } from "../../src/toolmap/isolate-memory";
import { ToolMap } from "../../src/toolmap/tool-map";
import { heapUsed } from "./heap";
import { localKv } from "./local-kv";

const TOOLS = 100;
const PROPERTIES = 40;

/** Caller `caller`'s listing: `TOOLS` tools of about 50 KB each, theirs alone, as the origin writes it. */
function listingText(caller: number): string {
  const said = (what: string) =>
    `${what} for user ${caller}. ${"It says what it holds. ".repeat(40)}`;
  const tools = Array.from({ length: TOOLS }, (_, i) => ({
    name: `report_${i}_of_user_${caller}`,
    description: said(`Reads report ${i}`).repeat(8),
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

describe("an origin's tools in an isolate's memory", () => {
  it("hold about their bound however long the tools, and keep the latest listing's", async () => {
    const config = parseConfig({
      ORIGIN_URL: "https://origin.example/mcp",
      TOOL_MAP: kv(),
    } as unknown as Env);
    if (config.kind !== "valid") throw new Error(JSON.stringify(config.problems));
    const memory = new ToolMapMemory();
    const writes: Promise<unknown>[] = [];
    const scopes = { origin: "v2:heap", legacy: "v1:heap" };
    const openai = profileOf("openai");
    const listings = 40;
    const before = heapUsed();
    let listed = 0;
    for (let caller = 0; caller < listings; caller++) {
      const text = listingText(caller);
      listed += text.length;
      const tools = (readListingText(text)?.elements ?? []).filter((e) => e instanceof WrittenTool);
      const map = new ToolMap(
        kv(),
        scopes,
        openai,
        memory,
        (write) => writes.push(write),
        config.config.policy,
      );
      await map.nameListing(tools);
    }
    await Promise.allSettled(writes);
    const grown = heapUsed() - before;

    // 40 listings of 4.7 MB were named (180 MiB): the map keeps about what docs/limits.md says.
    expect(listed).toBeGreaterThan(170 * 2 ** 20);
    expect(grown).toBeLessThan(64 * 2 ** 20);
    const latest = new ToolMap(kv(), scopes, openai, memory, () => {}, config.config.policy);
    const call = await latest.calls.resolve(`report_0_of_user_${listings - 1}`);
    expect(call?.source).toBe("memory");
  }, 300_000);
});
