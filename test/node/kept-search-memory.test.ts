/**
 * What a search kept in isolate memory holds of the request that listed it
 * (src/toolmap/tool-search.ts, tool-map.ts `nameListing`): in search mode a
 * search views its tools' schemas when it is first asked, maybe minutes
 * later and for another caller listed alike. Until then it holds what it
 * views them with, and nothing else: not the request's caller (their
 * credentials, toolmap/callers.ts, kept only as digests), not its
 * `waitUntil` (the request's context), not the listing's text (the tools
 * read from it), none of which its views' bound weighs; nor every view it
 * made: a profile that inlines `$ref`s views a schema of a few hundred
 * characters as thousands of nodes (test/node/schema-views-memory.test.ts).
 * Run in Node, where a test can collect garbage and read the heap: workerd
 * runs the same V8.
 */
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config";
import { readListingText } from "../../src/protocol/listing-text";
import { WrittenTool } from "../../src/protocol/written-tool";
import { profileOf } from "../../src/schemas/profile";
import { callerOf } from "../../src/toolmap/callers";
import { ToolMapMemory } from "../../src/toolmap/isolate-memory";
import { ToolMap } from "../../src/toolmap/tool-map";
import { captureLogs } from "../helpers/logs";
import { collectGarbage, heapUsed } from "./heap";
import { localKv } from "./local-kv";
import { refTreeSchema } from "./ref-tree";

const kv = localKv();
const ORIGIN = new URL("https://origin.example/mcp");

/** What the origin lists `user`: 130 tools, over OpenAI's ceiling of 128 (search mode). */
function listingText(user: string): string {
  const tools = Array.from({ length: 130 }, (_, i) => ({
    name: `report_${i}`,
    description: `Reads report ${i} of ${user}.`,
    inputSchema: { type: "object", properties: { month: { type: "string" } } },
  }));
  return JSON.stringify({ jsonrpc: "2.0", id: 1, result: { tools } });
}

/** What a request leaves behind once answered, each held weakly. */
interface Request {
  caller: WeakRef<object>;
  waitUntil: WeakRef<object>;
  tool: WeakRef<object>;
}

describe("a search kept in isolate memory", () => {
  it("holds nothing of the request that listed it, its caller's credentials included, until it is searched", async () => {
    const config = parseConfig({ ORIGIN_URL: ORIGIN.href, TOOL_MAP: kv() } as unknown as Env);
    if (config.kind !== "valid") throw new Error(JSON.stringify(config.problems));
    const memory = new ToolMapMemory();
    const scopes = { origin: "v2:kept-search", legacy: "v1:kept-search" };
    const writes: Promise<unknown>[] = [];
    /** A request's tool map, for the caller whose bearer token is `token`. */
    const open = (token: string) => {
      const headers = new Headers({ authorization: `Bearer ${token}` });
      const caller = callerOf(headers, ORIGIN);
      const waitUntil = (write: Promise<unknown>) => void writes.push(write);
      const map = new ToolMap(
        kv(),
        scopes,
        profileOf("openai"),
        memory,
        waitUntil,
        config.config.policy,
        undefined,
        caller,
      );
      return { map, caller, waitUntil };
    };
    /** A request of `user`'s that lists the origin, and is over. */
    const list = async (user: string, token: string): Promise<Request> => {
      const { map, caller, waitUntil } = open(token);
      const tools = (readListingText(listingText(user))?.elements ?? []).filter(
        (element) => element instanceof WrittenTool,
      );
      const listing = await map.nameListing(tools, "whole");
      expect(listing.search?.size).toBe(130);
      await Promise.allSettled(writes.splice(0));
      return {
        caller: new WeakRef(caller),
        waitUntil: new WeakRef(waitUntil),
        tool: new WeakRef(tools[0] as WrittenTool),
      };
    };

    // Ann's listing is kept in search mode, not searched; ben's, listed since, is the map's last.
    const annToken = `ann-${crypto.randomUUID()}`;
    const ann = await list("ann", annToken);
    await list("ben", `ben-${crypto.randomUUID()}`);
    await new Promise((resolve) => setTimeout(resolve, 0));
    collectGarbage();

    expect(ann.caller.deref()).toBeUndefined();
    expect(ann.waitUntil.deref()).toBeUndefined();
    expect(ann.tool.deref()).toBeUndefined();
    // Her search is still kept, and answers from her listing.
    const [found] = (await open(annToken).map.search())?.search("report 7", 1) ?? [];
    expect(found?.description).toBe("Reads report 7 of ann.");
  }, 120_000);

  it("holds no more of its tools' views than the isolate's bound, however many nodes they inline", async () => {
    const memory = new ToolMapMemory();
    const writes: Promise<unknown>[] = [];
    const tools = Array.from({ length: 130 }, (_, t) => ({
      name: `tool_${t}`,
      description: `Reads tree ${t}.`,
      inputSchema: refTreeSchema(t),
    }));
    const text = JSON.stringify({ jsonrpc: "2.0", id: 1, result: { tools } });
    const before = heapUsed();
    const map = new ToolMap(
      kv(),
      { origin: "v2:kept-views", legacy: "v1:kept-views" },
      profileOf("openai-strict"),
      memory,
      (write) => writes.push(write),
    );
    const read = (readListingText(text)?.elements ?? []).filter((e) => e instanceof WrittenTool);
    const search = (await map.nameListing(read, "whole")).search;
    await Promise.allSettled(writes.splice(0));
    // The first search views the tools' schemas, and logs them; the answer shows the view, `$ref`s inlined.
    const logs = captureLogs();
    const [found] = search?.search("tree 7", 1) ?? [];
    expect(logs.events("schemas_adapted")).toEqual([
      expect.objectContaining({ profile: "openai-strict" }),
    ]);
    expect(found?.description).toBe("Reads tree 7.");
    expect(JSON.stringify(found?.inputSchema)).not.toContain("$ref");
    expect(JSON.stringify(found?.inputSchema)).toContain("A leaf of tool 7.");
    const grown = heapUsed() - before;

    // A listing of 172 KB: the search, kept, holds about what docs/limits.md says views do.
    expect(text.length).toBeLessThan(180 * 1024);
    expect(grown).toBeLessThan(40 * 2 ** 20);
    expect(search?.search("tree 8", 1)[0]?.description).toBe("Reads tree 8.");
    expect(logs.events("schemas_adapted")).toHaveLength(1);
    logs.restore();
  }, 120_000);
});
