/**
 * What callers' views in search mode hold in an isolate's memory
 * (src/toolmap/caller-listings.ts): each keeps its tools as a search shows
 * them, descriptions and schemas whole, so the views' bound must weigh what
 * their tools say, not only how many they are. An origin (untrusted,
 * SECURITY.md) that lists each caller their own long tools, or an honest one
 * whose per-user listings are large, would otherwise have the isolate keep
 * far more than docs/limits.md says (about 30 MiB). Views made as the tool
 * map makes them (`searchedTools` and `toolSearchOf`, then `CallerView.show`). Run in Node, where
 * a test can collect garbage and read the heap: workerd runs the same V8.
 */
import { describe, expect, it } from "vitest";
import type { ListedTool } from "../../src/protocol/tools-list";
import { CallerListings, CallerView } from "../../src/toolmap/caller-listings";
import { callerNamed } from "../../src/toolmap/callers";
import { searchedTools, toolSearchOf } from "../../src/toolmap/tool-search";
import { heapUsed } from "./heap";

/** One over OpenAI's ceiling: search mode. */
const TOOLS = 129;

/** What the origin lists caller `caller`: `TOOLS` tools of about `repeats` × 31 characters each, theirs alone. */
function listingOf(caller: number, repeats = 130): ListedTool[] {
  const tools = Array.from({ length: TOOLS }, (_, i) => ({
    name: `report_${i}`,
    description: `Reads report ${i} of user ${caller}. ${"It says what the report holds. ".repeat(repeats)}`,
    inputSchema: { type: "object", properties: { month: { type: "string" } } },
  }));
  // As a listing arrives: parsed from its text.
  return JSON.parse(JSON.stringify(tools)) as ListedTool[];
}

/** Shows caller `caller` their own listing, in search mode, as the tool map does. */
async function show(listings: CallerListings, caller: number, repeats?: number): Promise<void> {
  const tools = listingOf(caller, repeats);
  const searched = searchedTools(tools, new Set(), { name: "openai", toolCeiling: 128 });
  if (searched === null) throw new Error("not in search mode");
  const search = toolSearchOf(searched, {
    names: new Map(),
    descriptions: new Map(),
    heldSchemas: new Map(tools.map((tool) => [tool.name, { inputSchema: tool.inputSchema }])),
  });
  // The first search builds the index the view keeps.
  search.search("monthly report", 8);
  const view = new CallerView(
    listings,
    () => "origin and profile",
    callerNamed(`caller ${caller}`),
    () => "settings",
  );
  const shown = new Map(tools.map((tool) => [tool.name, "shown" as const]));
  const entries = new Map(
    tools.map(({ name, inputSchema }) => [
      name,
      { original: name, schemaHash: "2.schema", inputSchema },
    ]),
  );
  await view.show("whole", tools, shown, entries, { search: () => search });
}

describe("callers' views in search mode", () => {
  it("hold about their bound however long their tools, and keep the latest caller's", async () => {
    const listings = new CallerListings();
    const callers = 160;
    const before = heapUsed();
    for (let caller = 0; caller < callers; caller++) await show(listings, caller);
    const grown = heapUsed() - before;

    // 160 listings of about 0.5 MB were shown; the views keep what docs/limits.md says, about 30 MiB.
    expect(grown).toBeLessThan(40 * 2 ** 20);
    expect(listings.viewOf("origin and profile", `caller ${callers - 1}`)).toBeDefined();
  }, 120_000);

  it("keep a caller's view of a listing as long as one message may be (16 MiB)", async () => {
    const listings = new CallerListings();
    // 129 tools of about 126,000 characters: some 16.2 M in all.
    await show(listings, 0, 4_060);
    expect(listings.viewOf("origin and profile", "caller 0")).toBeDefined();
  }, 120_000);
});
