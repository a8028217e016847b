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
import { schemaHash } from "../../src/toolmap/plan-listing";
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

  /** A tool map of a new isolate's memory for `scope`, under `profile`, and its KV writes. */
  function isolateMap(profile: ProfileName, scope: { origin: string; legacy: string }) {
    const writes: Promise<unknown>[] = [];
    const toolMap = new ToolMap(
      env.TOOL_MAP,
      scope,
      profileOf(profile),
      new ToolMapMemory(),
      (write) => {
        writes.push(write);
      },
    );
    return { toolMap, written: () => Promise.all(writes) };
  }

  const listingOf = (...tools: Array<[name: string, schema: string]>) =>
    `{"jsonrpc":"2.0","id":1,"result":{"tools":[${tools.map(([name, schema]) => `{"name":"${name}","inputSchema":${schema}}`).join(",")}]}}`;

  const newScope = () => ({
    origin: `test:${crypto.randomUUID()}`,
    legacy: `test:${crypto.randomUUID()}`,
  });

  // A schema that is no JSON but has no member (a text JSON.parse does not read) was held as its
  // text, and threw where it was first read: the whole listing, and each call of the tool.
  it("names a listing beside a tool whose schema is not JSON, which is read as no schema", async () => {
    vi.spyOn(console, "log").mockImplementation(() => {});
    const { toolMap } = isolateMap("openai", newScope());
    const body = listingOf(["broken", "[1,,2]"], ["good", '{"type":"object"}']);
    const answer = await rewriteJsonText(body, {
      listIds: new Set([1]),
      toolMap,
      wholeListing: WHOLE_LISTING,
    });
    // A tool's definition that is no JSON makes the listing none: where nothing is hidden or held
    // it passes as it came (SECURITY.md), named all the same.
    expect(answer).toBeUndefined();
    expect((await toolMap.calls.resolve("broken"))?.entry.inputSchema).toBeUndefined();
    expect((await toolMap.calls.resolve("good"))?.entry.inputSchema).toEqual({ type: "object" });
  });

  // KV holds each schema as a line, `fingerprint\tJSON`: a schema's text with a line break in a
  // string (no JSON) wrote a line of its own there, with another tool's fingerprint.
  it("has a new isolate read each tool's own schema from KV, whatever another tool's text holds", async () => {
    vi.spyOn(console, "log").mockImplementation(() => {});
    const good = '{"type":"object","properties":{"n":{"type":"number"}}}';
    const { hash } = schemaHash(undefined, { text: good, span: [0, good.length] });
    const scope = newScope();
    const first = isolateMap("mcp", scope);
    const body = listingOf(["forger", `["\n${hash}\t{}\n"]`], ["good", good]);
    await rewriteJsonText(body, {
      listIds: new Set([1]),
      toolMap: first.toolMap,
      wholeListing: WHOLE_LISTING,
    });
    await first.written();

    const resolved = await isolateMap("mcp", scope).toolMap.calls.resolve("good");
    expect(resolved?.source).toBe("kv");
    expect(resolved?.entry.inputSchema).toEqual(JSON.parse(good));
  });
});
