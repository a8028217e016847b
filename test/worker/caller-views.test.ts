/**
 * Callers' views in one isolate (src/toolmap/caller-listings.ts; SECURITY.md,
 * "What the proxy answers itself"), where an origin writes each caller's
 * listing its own way: what the proxy answers a caller itself (a search, its
 * schemas, its holds) comes only from that caller's listing, however another
 * caller's was written. Tool maps of one `ToolMapMemory` (one isolate), each
 * for its caller, fed the listing texts as the proxy reads an answer.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { PLACES_ONLY, stringifyExact } from "../../src/json";
import { readListingText } from "../../src/protocol/listing-text";
import { revisionOf } from "../../src/protocol/revision";
import { WrittenTool } from "../../src/protocol/written-tool";
import { rewriteJsonText } from "../../src/rewrite/listing-answer";
import { answerSearch } from "../../src/rewrite/search-mode";
import { type ChangeMode, NO_RULES } from "../../src/rules/tool-rules";
import { profileOf } from "../../src/schemas/profile";
import { callerNamed } from "../../src/toolmap/callers";
import { ToolMapMemory, toolMapScopes } from "../../src/toolmap/isolate-memory";
import { schemaHash } from "../../src/toolmap/plan-listing";
import { toolResolver } from "../../src/toolmap/resolve-tool";
import { type ListingPart, ToolMap } from "../../src/toolmap/tool-map";
import { WHOLE_LISTING } from "../../support/listing";

/** One origin's tool maps in one isolate under `profile`, one per caller (`who`). */
async function callerMaps(changes: Exclude<ChangeMode, "allow">, profile = profileOf("openai")) {
  const scopes = await toolMapScopes(
    new URL(`https://origin.example/mcp?map=${crypto.randomUUID()}`),
    profile.names,
  );
  const memory = new ToolMapMemory();
  const writes: Promise<unknown>[] = [];
  const mapOf = (who: string) =>
    new ToolMap(
      env.TOOL_MAP,
      scopes,
      profile,
      memory,
      (write) => writes.push(write),
      { rules: NO_RULES, changes, scope: "definition" },
      undefined,
      callerNamed(`${who} listing`, `${who} pins`),
    );
  return { mapOf, settled: () => Promise.all(writes.splice(0)) };
}

/** One origin's tool maps in one isolate, one per caller; `list` names a listing's text for `who`. */
async function isolate(changes: Exclude<ChangeMode, "allow">) {
  const { mapOf, settled } = await callerMaps(changes);
  return async (who: string, text: string, part: ListingPart = "whole") => {
    const map = mapOf(who);
    const read = readListingText(text, map.writtenBefore());
    if (!read) throw new Error("not a listing");
    const tools = read.elements.filter((element) => element instanceof WrittenTool);
    const listing = await map.nameListing(tools, part);
    await settled();
    return { map, listing };
  };
}

/** A `tools/list` answer of `tools` (each written as it is given). */
const answer = (tools: readonly string[]) =>
  `{"jsonrpc":"2.0","id":1,"result":{"tools":[${tools.join(",")}]}}`;

/**
 * `count` tools of `owner`'s, each with a parameter of theirs; `twice`: each
 * input schema writes `type` twice (every reader takes one of them).
 */
const ownTools = (owner: string, count: number, twice = false) =>
  answer(
    Array.from(
      { length: count },
      (_, i) =>
        `{"name":"item_${i}","description":"Reads ${owner}'s item ${i}.","inputSchema":{"type":"object",${twice ? '"type":"object",' : ""}"properties":{"${owner}_id":{"type":"string"}}}}`,
    ),
  );

describe("calls by names no tool of the caller's has", () => {
  it("read the caller's listing for matching once a request, not once for each call", async () => {
    // Each call read every tool's names again, twice for a name alike to some (its did-you-mean):
    // a batch of 32 such calls against 10,000 tools took some 2.5 s of CPU. Counted, not timed.
    const { mapOf, settled } = await callerMaps("log");
    const map = mapOf("ann");
    const tools = Array.from({ length: 200 }, (_, i) => ({
      name: `svc.tool_${i}`,
      inputSchema: { type: "object" },
    }));
    await map.nameListing(tools, "whole");
    await settled();
    const resolve = toolResolver(map, async () => false);
    const lowered = vi.spyOn(String.prototype, "toLowerCase");
    for (let call = 0; call < 32; call++) {
      await resolve(`nothing_like_${call}`, {});
      await resolve.closest(`svc_tool_${call}_x`);
    }
    const reads = lowered.mock.calls.length;
    lowered.mockRestore();
    expect(await resolve.closest("svc_tool_7_x")).toContain(map.calls.listedName("svc.tool_7"));
    expect(reads).toBeLessThan(tools.length * 8);
  });
});

describe("callers' views in one isolate", () => {
  it("answers a caller's search from their own listing after another's wrote every schema's key twice", async () => {
    // 130 tools: over the openai profile's ceiling (128), so in search mode.
    const list = await isolate("log");
    await list("ann", ownTools("ann", 130));
    await list("ben", ownTools("ben", 130, true));
    const { map } = await list("ann", ownTools("ann", 130));

    const [tool] = (await map.search())?.search("item 7", 1) ?? [];
    expect(tool?.description).toBe("Reads ann's item 7.");
    expect(JSON.stringify(tool?.inputSchema)).toContain("ann_id");
    expect(JSON.stringify(tool)).not.toContain("ben");
  });

  it("holds nothing of a caller's unchanged listing after another's wrote every schema's key twice", async () => {
    const list = await isolate("hold");
    await list("ann", ownTools("ann", 3));
    await list("ben", ownTools("ben", 3, true));
    const { listing } = await list("ann", ownTools("ann", 3));

    expect(listing.hidden).toEqual(new Set());
  });

  it("answers a caller's search with their own tools' names where two callers' names differ only in a lone surrogate", async () => {
    // Equal but for a name each, which UTF-8 writes alike (U+FFFD); the openai profile renames them.
    const listing = (name: string) =>
      answer(
        Array.from(
          { length: 130 },
          (_, i) =>
            `{"name":${JSON.stringify(i === 0 ? name : `item_${i}`)},"description":"Reads item ${i}.","inputSchema":{"type":"object"}}`,
        ),
      );
    const list = await isolate("log");
    await list("ann", listing("item_\ud800"));
    const ben = await list("ben", listing("item_\udbff"));

    const [tool] = (await ben.map.search())?.search("item 0", 1) ?? [];
    // As JSON: a lone surrogate in a failure's message is not UTF-8 to the test runner.
    const json = (value: unknown) => JSON.stringify(value);
    expect(json(tool?.original)).toBe(json("item_\udbff"));
    expect(json(tool?.name)).toBe(json(ben.listing.names.get("item_\udbff")));
  });

  it("views a caller's own schema of a tool where another's was written to give its fingerprint", async () => {
    // Two descriptions of one length that differ in three characters, found so that the two
    // schemas give one 32-bit fingerprint (plan-listing.ts `schemaHash`): in seconds.
    const ann = {
      type: "object",
      description: "3eadH the notes of the user, kept private by them.",
    };
    const ben = {
      type: "object",
      description: "Zeadu th\ue2b7 notes of the user, kept private by them.",
    };
    expect(schemaHash(ben).hash).toBe(schemaHash(ann).hash);
    // The openai profile views a schema without `properties` (it adds them): one view a tool.
    const listing = (schema: object, count: number) =>
      answer(
        Array.from({ length: count }, (_, i) =>
          JSON.stringify({
            name: `item_${i}`,
            description: `Reads item ${i}.`,
            inputSchema: i === 0 ? schema : { type: "object" },
          }),
        ),
      );
    const list = await isolate("log");
    await list("ann", listing(ann, 3));
    const { listing: named } = await list("ben", listing(ben, 3));
    expect(named.schemas.get("item_0")).toMatchObject({ description: ben.description });

    await list("ann", listing(ann, 130));
    const { map } = await list("ben", listing(ben, 130));
    const [tool] = (await map.search())?.search("item 0", 1) ?? [];
    expect(tool?.inputSchema).toMatchObject({ description: ben.description });
  });
});

describe("callers' answers in one isolate, their numbers past a double's precision", () => {
  it("writes a caller's view with the numbers their own listing wrote, where another's wrote one of the same double", async () => {
    const { mapOf } = await callerMaps("log");
    const answered = (who: string, text: string) =>
      rewriteJsonText(text, {
        listIds: new Set([1]),
        wholeListing: WHOLE_LISTING,
        toolMap: mapOf(who),
      });
    // Each caller's own account, as a signed-in origin writes it into their schema: 64-bit ids one
    // apart, which JSON.parse reads as one double. The openai view leaves out the `oneOf`.
    const listing = (account: string) =>
      `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"pay.send","description":"Pays from your account.","inputSchema":{"type":"object","oneOf":[{"required":["from"]}],"properties":{"from":{"type":"integer","enum":[${account}]}},"required":["from"]}}]}}`;
    // Ann's client asks in a batch: her answer is parsed whole, each number's text kept where it was.
    const ann = await answered("ann", `[${listing("12345678901234567891")}]`);
    const bob = await answered("bob", listing("12345678901234567890"));

    expect(ann).toContain('"enum":[12345678901234567891]');
    expect(bob).toContain('"enum":[12345678901234567890]');
  });
});

describe("callers' searches in one isolate, their numbers past a double's precision", () => {
  it("answers a caller's search with the numbers their own listing wrote, where another's wrote one of the same double", async () => {
    const { mapOf } = await callerMaps("log", profileOf("openai", { maxTools: 2 }));
    // Over the ceiling of 2: search mode. Each caller's own account in their schema, 64-bit ids
    // one apart, which JSON.parse reads as one double, so their definitions' pins are alike.
    const listing = (account: string) =>
      `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"pay.send","description":"Pays from your account.","inputSchema":{"type":"object","properties":{"from":{"type":"integer","enum":[${account}]}},"required":["from"]}},{"name":"notes.read","description":"Reads notes.","inputSchema":{"type":"object"}},{"name":"notes.write","description":"Writes notes.","inputSchema":{"type":"object"}}]}}`;
    const searched = async (who: string, text: string) => {
      const toolMap = mapOf(who);
      await rewriteJsonText(text, { listIds: new Set([1]), wholeListing: WHOLE_LISTING, toolMap });
      const search = await mapOf(who).search();
      if (!search) throw new Error(`no search mode for ${who}`);
      const call = {
        jsonrpc: "2.0" as const,
        id: 2,
        method: "tools/call",
        params: { name: "search_tools", arguments: { query: "pays account", limit: 1 } },
      };
      return stringifyExact(
        answerSearch(call, search, revisionOf(new Headers()), 1 << 20).response,
        PLACES_ONLY,
      );
    };
    // Ann's client asks in a batch: her answer is parsed whole, each number's text kept where it was.
    const ann = await searched("ann", `[${listing("12345678901234567891")}]`);
    const bob = await searched("bob", listing("12345678901234567890"));

    expect(ann).toContain("12345678901234567891");
    expect(bob).not.toContain("12345678901234567891");
    // In the answer's text too, which a model reads: each schema as the caller's listing wrote it.
    const textOf = (answer: string) => JSON.parse(answer).result.content[0].text as string;
    expect(textOf(ann)).toContain('"enum":[12345678901234567891]');
    expect(textOf(bob)).toContain('"enum":[12345678901234567890]');
  });
});
