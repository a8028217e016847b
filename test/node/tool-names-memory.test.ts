/**
 * What long tool names hold in an isolate's memory: the structures the tool
 * map keeps per name beside the origin's tools (src/toolmap/
 * isolate-memory.ts `OriginMemory`: the map's pins KV does not hold yet, held
 * definitions, held changes logged; caller-pins.ts: each caller's own pins;
 * caller-listings.ts: each caller's view). An origin is untrusted
 * (SECURITY.md): one that lists each caller tools of their own whose names
 * are long (MCP asks for 128 characters at most; nothing makes an origin
 * keep to it) would have them keep as many names as they keep tools or pins,
 * whatever each weighs, past the 128 MB an isolate has. Listings named as
 * the proxy names an answer's: read from their text (`readListingText`),
 * then `ToolMap.nameListing`, against Miniflare's local KV.
 */
import { describe, expect, it } from "vitest";
import { readListingText } from "../../src/protocol/listing-text";
import { WrittenTool } from "../../src/protocol/written-tool";
import { NO_POLICY } from "../../src/rules/tool-rules";
import { profileOf } from "../../src/schemas/profile";
import { callerNamed } from "../../src/toolmap/callers";
import { ToolMapMemory } from "../../src/toolmap/isolate-memory";
import { today } from "../../src/toolmap/map-merge";
import { type NamedListing, ToolMap } from "../../src/toolmap/tool-map";
import { heapUsed } from "./heap";
import { isolateToolMaps } from "./isolate-tool-maps";
import { localKv } from "./local-kv";

/** A name of about `chars` characters, its end telling it apart. */
const longName = (end: string, chars: number) => `${"report_".repeat(chars / 7)}${end}`;

/** A listing's text: `names`, each with a schema of `variant`, as the origin writes it. */
function listingText(names: readonly string[], variant: string): string {
  const tools = names.map((name) => ({
    name,
    description: `Reads a report (${variant}).`,
    inputSchema: { type: "object", properties: { [`month_${variant}`]: { type: "string" } } },
  }));
  return JSON.stringify({ jsonrpc: "2.0", id: 1, result: { tools } });
}

const kv = localKv();

/** Lists each caller their own listing, as the proxy names it, and what the heap grew by. */
async function listEach(
  changes: "log" | "hold",
  listings: ReadonlyArray<{ caller: string; text: string }>,
): Promise<{ grown: number; listed: number; last: NamedListing; open: (c: string) => ToolMap }> {
  const { open, settle } = isolateToolMaps(
    kv,
    { origin: `v2:names-${changes}-${listings.length}`, legacy: "v1:names" },
    { TOOL_CHANGES: changes },
  );
  const before = heapUsed();
  let listed = 0;
  let last: NamedListing | undefined;
  for (const { caller, text } of listings) {
    listed += text.length;
    const tools = (readListingText(text)?.elements ?? []).filter((e) => e instanceof WrittenTool);
    last = await open(caller).nameListing(tools, "whole");
    await settle();
  }
  if (last === undefined) throw new Error("nothing listed");
  return { grown: heapUsed() - before, listed, last, open };
}

const MiB = 2 ** 20;
/** Tools per listing of about 1 MB, their names nearly all of it: under OpenAI's ceiling of 128, no search mode. */
const TOOLS = 20;
const NAME_CHARS = 50_000;
const LISTINGS = 50;

describe("long tool names in an isolate's memory", () => {
  it("hold about their bound when each caller is listed names of their own", async () => {
    const listings = Array.from({ length: LISTINGS }, (_, c) => ({
      caller: `caller ${c}`,
      text: listingText(
        Array.from({ length: TOOLS }, (_, i) => longName(`${c}_${i}`, NAME_CHARS)),
        "a",
      ),
    }));
    const { grown, listed, last, open } = await listEach("log", listings);

    // 50 listings of 1 MB were named (48 MiB, nearly all names): the map keeps about its bounds.
    expect(listed).toBeGreaterThan(45 * MiB);
    expect(grown).toBeLessThan(40 * MiB);
    // The latest caller's tools are still known by the names they were listed under.
    const name = last.names.get(longName(`${LISTINGS - 1}_0`, NAME_CHARS)) as string;
    const call = await open(`caller ${LISTINGS - 1}`).calls.resolve(name);
    expect(call?.source).toBe("memory");
  }, 300_000);

  it("hold about their bound when each caller is listed names of their own defined otherwise than first seen", async () => {
    // Another caller lists the names first (the map's pins), then the caller, each tool defined
    // otherwise: the caller's own pins.
    const listings = Array.from({ length: LISTINGS }, (_, c) => {
      const names = Array.from({ length: TOOLS }, (_, i) => longName(`${c}_${i}`, NAME_CHARS));
      return [
        { caller: `first ${c}`, text: listingText(names, "first") },
        { caller: `caller ${c}`, text: listingText(names, "own") },
      ];
    }).flat();
    const { grown, listed } = await listEach("log", listings);

    // 100 listings of 1 MB, 50 MB of names: each caller's own pins hold their names.
    expect(listed).toBeGreaterThan(90 * MiB);
    expect(grown).toBeLessThan(40 * MiB);
  }, 300_000);

  it("hold about their bound when a caller's long-named tools change at every listing (hold)", async () => {
    const names = Array.from({ length: 10 }, (_, i) => longName(`${i}`, 100_000));
    // The first listing pins the caller; every one after changes all ten definitions, held.
    const listings = Array.from({ length: LISTINGS }, (_, version) => ({
      caller: "one caller",
      text: listingText([...names, `extra_${version}`], `${version}`),
    }));
    const { grown, listed } = await listEach("hold", listings);

    // Ten held changes are logged a listing, each noted by its name and definition.
    expect(listed).toBeGreaterThan(45 * MiB);
    expect(grown).toBeLessThan(40 * MiB);
  }, 300_000);

  it("hold about their bound when KV holds a map an earlier version wrote of long names", async () => {
    // Versions before names were weighed (f1a5583) stored up to 10,000 originals whatever their
    // length: a map of 2,000 names of 10,000 characters, 20 MB, read by a new isolate.
    // Written as text: object keys are internalized, and the test's would be the map's own.
    const tools = Array.from(
      { length: 2_000 },
      (_, i) => `${JSON.stringify(longName(`${i}`, 10_000))}:["0000000",${today()}]`,
    );
    const origin = "v2:names-stored-earlier";
    await kv().put(`${origin}:map`, `{"format":2,"tools":{${tools.join(",")}},"chunks":0}`);
    tools.length = 0;
    const map = new ToolMap(
      kv(),
      { origin, legacy: "v1:names" },
      profileOf("openai"),
      new ToolMapMemory(),
      () => {},
      NO_POLICY,
      undefined,
      callerNamed("caller"),
    );
    const before = heapUsed();
    const listed = (readListingText(listingText(["search"], "a"))?.elements ?? []).filter(
      (e) => e instanceof WrittenTool,
    );
    const listing = await map.nameListing(listed, "whole");

    expect(listing.names.get("search")).toBe("search");
    // What the map keeps of KV's is bounded as what it writes: 10,000 names of 128 characters.
    expect(heapUsed() - before).toBeLessThan(8 * MiB);
  }, 300_000);
});
