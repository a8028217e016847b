/**
 * What an origin's schema views hold in an isolate's memory (src/toolmap/
 * isolate-memory.ts `ProfileNames.views`, made by schema-views.ts): a
 * profile that inlines `$ref`s (`gemini`, `portable`, `openai-strict`) views
 * a schema of a few hundred characters as thousands of nodes, up to
 * `MAX_NODES`, so what views hold is not what their tools' text weighs. An
 * origin is untrusted (SECURITY.md): one whose every tool inlines a `$ref`
 * many times would have the isolate keep a view of thousands of nodes per
 * tool, per profile. Listings named as the proxy names an answer's: read
 * from their text (`readListingText`), then `ToolMap.nameListing`, against
 * Miniflare's local KV.
 */
import { describe, expect, it } from "vitest";
import type { ProfileName } from "../../src/names/profiles";
import { readListingText } from "../../src/protocol/listing-text";
import { WrittenTool } from "../../src/protocol/written-tool";
import { profileOf } from "../../src/schemas/profile";
import { schemaView } from "../../src/schemas/view";
import { ToolMapMemory } from "../../src/toolmap/isolate-memory";
import { ToolMap } from "../../src/toolmap/tool-map";
import { heapUsed } from "./heap";
import { localKv } from "./local-kv";
import { refTreeSchema } from "./ref-tree";

const TOOLS = 100;

const listingText = (tools = TOOLS, viaAllOf = false) =>
  JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    result: {
      tools: Array.from({ length: tools }, (_, t) => ({
        name: `tool_${t}`,
        inputSchema: refTreeSchema(t, viaAllOf),
      })),
    },
  });

const kv = localKv();

describe("an origin's schema views in an isolate's memory", () => {
  it("hold about their bound however many nodes their schemas inline, and are all listed", async () => {
    const memory = new ToolMapMemory();
    const writes: Promise<unknown>[] = [];
    const text = listingText();
    const before = heapUsed();
    for (const profile of ["openai-strict", "gemini", "portable"] satisfies ProfileName[]) {
      const map = new ToolMap(
        kv(),
        { origin: "v2:views", legacy: `v1:views-${profile}` },
        profileOf(profile),
        memory,
        (write) => writes.push(write),
      );
      const tools = (readListingText(text)?.elements ?? []).filter((e) => e instanceof WrittenTool);
      const listing = await map.nameListing(tools);
      // Every tool is listed with its view, whatever memory keeps of them.
      expect(listing.schemas.size).toBe(TOOLS);
      await Promise.allSettled(writes.splice(0));
    }
    const grown = heapUsed() - before;

    // A listing of 132 KB, viewed under three profiles: the views keep about what docs/limits.md says.
    expect(text.length).toBeLessThan(160 * 1024);
    expect(grown).toBeLessThan(40 * 2 ** 20);
  }, 300_000);

  // A `$ref` as an `allOf`'s branch is merged, not inlined by refs.ts: it counted nothing, and
  // such a listing held 283 MiB.
  it.each([
    ["as they are", false],
    ["as an `allOf`'s branches", true],
  ])(
    "of one listing, held together while its answer is written, inline no more than that bound: past it, `$ref`s %s are asked for as JSON text",
    async (_, viaAllOf) => {
      const writes: Promise<unknown>[] = [];
      // As many tools as openai-strict's ceiling: listed, not searched.
      const text = listingText(128, viaAllOf);
      const map = new ToolMap(
        kv(),
        { origin: `v2:listing-views-${viaAllOf}`, legacy: `v1:listing-views-${viaAllOf}` },
        profileOf("openai-strict"),
        new ToolMapMemory(),
        (write) => writes.push(write),
      );
      const tools = (readListingText(text)?.elements ?? []).filter((e) => e instanceof WrittenTool);
      const before = heapUsed();
      const listing = await map.nameListing(tools, "whole");
      const grown = heapUsed() - before;
      await Promise.allSettled(writes.splice(0));

      // 168 KB of listing (219 KB through `allOf`s); its views inlined whole held 140 MiB (283).
      expect(grown).toBeLessThan(40 * 2 ** 20);
      expect(listing.search).toBeUndefined();
      expect(listing.schemas.size).toBe(128);
      const viewOf = (t: number) => JSON.stringify(listing.schemas.get(`tool_${t}`));
      expect(viewOf(0)).toContain("A leaf of tool 0.");
      expect(viewOf(127)).not.toContain("A leaf of tool 127.");
      expect(viewOf(127)).toContain("as JSON text");
      expect(viewOf(127)).not.toContain("$ref");
      expect(viewOf(127)).not.toContain("allOf");
    },
    300_000,
  );

  // Each time a `$ref` is inlined, its view is made anew: a value the view writes out (a
  // `default` in words, an `enum` as strings) is made anew too, whatever the nodes count. One tool
  // of 51 KB, whose 1,000 `$ref`s point at a `default` of 50 KB, was viewed as 48 MiB; of 25 KB,
  // at an `enum` of 5,000 numbers, as 153 MiB under `gemini`.
  const heavy = {
    "a long default": { type: "object", default: { text: "x".repeat(50_000) } },
    "a long enum": { enum: Array.from({ length: 5_000 }, (_, i) => i) },
  };
  describe.each(Object.entries(heavy))("whose `$ref`s point at %s", (_, leaf) => {
    const properties = (schema: unknown) =>
      Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`p${i}`, schema]));
    const schema = {
      type: "object",
      $defs: {
        leaf,
        branch: { type: "object", properties: properties({ $ref: "#/$defs/leaf" }) },
        trunk: { type: "object", properties: properties({ $ref: "#/$defs/branch" }) },
      },
      properties: properties({ $ref: "#/$defs/trunk" }),
    };
    it.each(["openai-strict", "gemini", "portable"] satisfies ProfileName[])(
      "a view of one schema, as a call makes it, holds a few MiB under %s",
      (profile) => {
        const before = heapUsed();
        // As call-names.ts makes it: no listing's room.
        const view = schemaView(schema, profileOf(profile).schemas);
        const grown = heapUsed() - before;
        expect(grown).toBeLessThan(8 * 2 ** 20);
        expect(view.rules).toContain("ref_cycle_cut");
        expect(JSON.stringify(view.schema)).toContain("as JSON text");
      },
    );
  });
});
