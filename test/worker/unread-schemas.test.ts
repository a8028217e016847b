/**
 * A listing read from its text holds each schema as that text until
 * something reads it (toolmap/listed-schema.ts): a search-mode listing, or a
 * profile that changes no schema, parses none; a view, a search or a call
 * parses the one it reads, once.
 */
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { ProfileName } from "../../src/names/profiles";
import { rewriteJsonText } from "../../src/rewrite/listing-answer";
import { profileOf } from "../../src/schemas/profile";
import { ToolMapMemory } from "../../src/toolmap/isolate-memory";
import { ToolMap } from "../../src/toolmap/tool-map";
import { realisticListing, WHOLE_LISTING } from "../../support/listing";

afterEach(() => {
  vi.restoreAllMocks();
});

/** `size` tools listed once under `profile` through one isolate's tool map, counting each schema's parses. */
async function listed(size: number, profile: ProfileName) {
  vi.spyOn(console, "log").mockImplementation(() => {});
  const listing = realisticListing(size);
  const texts = new Set(listing.tools.map((tool) => JSON.stringify(tool.inputSchema)));
  const parse = vi.spyOn(JSON, "parse");
  const schemaParses = () => parse.mock.calls.filter(([text]) => texts.has(text)).length;
  const memory = new ToolMapMemory();
  const scope = { origin: `test:${crypto.randomUUID()}`, legacy: `test:${crypto.randomUUID()}` };
  const toolMap = new ToolMap(env.TOOL_MAP, scope, profileOf(profile), memory, () => {});
  const body = JSON.stringify({ jsonrpc: "2.0", id: 1, result: listing });
  const answer = await rewriteJsonText(body, {
    listIds: new Set([1]),
    toolMap,
    wholeListing: WHOLE_LISTING,
  });
  const entries = [...memory.origin(scope.origin).tools.values()];
  return { listing, answer, entries, schemaParses };
}

describe("a listing read from its text", () => {
  it("parses no schema in search mode, and a schema read later is parsed once, as listed", async () => {
    const { listing, answer, entries, schemaParses } = await listed(300, "openai");
    expect(answer).toContain("search_tools");
    expect(entries).toHaveLength(300);
    expect(schemaParses()).toBe(0);

    const [first] = entries;
    expect(first?.inputSchema).toEqual(
      listing.tools.find((tool) => tool.name === first?.original)?.inputSchema,
    );
    expect(first?.inputSchema).toBe(first?.inputSchema);
    expect(schemaParses()).toBe(1);
  });

  it("parses no schema under a profile that changes none", async () => {
    const { entries, schemaParses } = await listed(50, "mcp");
    expect(entries).toHaveLength(50);
    expect(schemaParses()).toBe(0);
  });

  it("parses each schema once where the profile views them all", async () => {
    const { schemaParses } = await listed(50, "openai");
    expect(schemaParses()).toBe(50);
  });
});
