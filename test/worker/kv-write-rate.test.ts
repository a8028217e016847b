/**
 * KV takes one write a second to a key (ARCHITECTURE.md, "Platform limits, where they bite"):
 * past it a `put` fails (429), and what it carried is not stored. The local
 * namespace does not refuse them, so each `put` is timed through a wrapper of
 * the real binding and no key may be written twice within a second by one
 * isolate, however its requests come.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import type { ListedTool } from "../../src/protocol/tools-list";
import { NO_RULES, type ToolPolicy } from "../../src/rules/tool-rules";
import { profileOf } from "../../src/schemas/profile";
import { callerNamed } from "../../src/toolmap/callers";
import { ToolMapMemory, type ToolMapScopes, toolMapScopes } from "../../src/toolmap/isolate-memory";
import { mapKey } from "../../src/toolmap/stored-map";
import { ToolMap } from "../../src/toolmap/tool-map";
import { timedPuts } from "../../support/counting-kv";
import { realisticListing } from "../../support/listing";
import { kvHolding } from "../helpers/kv";

const KV_KEY_WRITE_MS = 1_000;
/** How long the runtime lets a request's work after its response (`waitUntil`) run: then it is stopped. */
const WAIT_UNTIL_MS = 30_000;

/** Each key written twice within a second, with how far apart. */
function tooSoon(puts: readonly { key: string; at: number }[]) {
  const last = new Map<string, number>();
  const soon: { key: string; apart: number }[] = [];
  for (const { key, at } of puts) {
    const before = last.get(key);
    if (before !== undefined && at - before < KV_KEY_WRITE_MS)
      soon.push({ key, apart: at - before });
    last.set(key, at);
  }
  return soon;
}

const profile = profileOf("openai");

/** An origin no test has used, thirty tools in three pages, and one isolate's memory in front of it. */
async function isolateOfPages() {
  const origin = new URL(`https://origin.example/mcp?map=${crypto.randomUUID()}`);
  const tools = realisticListing(30).tools as ListedTool[];
  const pages = [tools.slice(0, 10), tools.slice(10, 20), tools.slice(20)];
  return { pages, memory: new ToolMapMemory(), scopes: await toolMapScopes(origin, profile.names) };
}

/** Whether a cold isolate finds each tool by the name it was shown, from KV alone. */
async function inKv(scopes: ToolMapScopes, names: Map<string, string>) {
  const cold = new ToolMap(env.TOOL_MAP, scopes, profile, new ToolMapMemory(), () => {});
  const found = new Map<string, string | undefined>();
  for (const [original, name] of names) {
    found.set(original, (await cold.calls.resolve(name))?.entry.original);
  }
  return found;
}

const itself = (names: Map<string, string>) => new Map([...names.keys()].map((o) => [o, o]));

describe("one isolate's requests, one after another, each listing tools new to the map", () => {
  it("write no key twice within a second, and KV ends up with every tool", async () => {
    const { pages, memory, scopes } = await isolateOfPages();
    const timed = timedPuts(env.TOOL_MAP);
    const names = new Map<string, string>();
    // Pages of a listing, or callers each shown tools of their own: a request each, the next
    // once the write the one before started is done (KV answers locally in a millisecond).
    for (const page of pages) {
      const writes: Promise<unknown>[] = [];
      const request = new ToolMap(timed.kv, scopes, profile, memory, (w) => writes.push(w));
      for (const [original, name] of (await request.nameListing(page)).names) {
        names.set(original, name);
      }
      await Promise.all(writes);
    }
    expect(tooSoon(timed.puts)).toEqual([]);
    expect(await inKv(scopes, names)).toEqual(itself(names));
  });

  it("listed while a write is under way: the next listing writes them, whichever page it is", async () => {
    const { pages, memory, scopes } = await isolateOfPages();
    const names = new Map<string, string>();
    const writes: Promise<unknown>[] = [];
    const list = async (page: ListedTool[]) => {
      const request = new ToolMap(env.TOOL_MAP, scopes, profile, memory, (w) => writes.push(w));
      for (const [original, name] of (await request.nameListing(page)).names) {
        names.set(original, name);
      }
    };
    await Promise.all(pages.map(list));
    await Promise.all(writes.splice(0));
    // The first page again, a new client's: it shows nothing new, but the pages after it were
    // listed while the first page's write was under way.
    await list(structuredClone(pages[0] as ListedTool[]));
    await Promise.all(writes.splice(0));
    expect(await inKv(scopes, names)).toEqual(itself(names));
  });
});

describe("a write of the map the runtime stopped before it ended", () => {
  // The runtime stops a request's work after its response 30 s after the response (or its client
  // leaving): a write under way then never ends, nor says it is done.
  it("is written in place of by a listing once the write has run longer than the runtime lets it", async () => {
    const { pages, memory, scopes } = await isolateOfPages();
    const names = new Map<string, string>();
    const stopped = kvHolding(
      env.TOOL_MAP,
      (operation, key) => operation === "put" && key === mapKey(scopes.origin),
    );
    const first = new ToolMap(stopped.kv, scopes, profile, memory, () => {});
    for (const [original, name] of (await first.nameListing(pages[0] as ListedTool[])).names) {
      names.set(original, name);
    }
    await stopped.asked;
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      vi.setSystemTime(Date.now() + WAIT_UNTIL_MS);
      const writes: Promise<unknown>[] = [];
      const later = new ToolMap(env.TOOL_MAP, scopes, profile, memory, (w) => writes.push(w));
      for (const [original, name] of (await later.nameListing(pages[1] as ListedTool[])).names) {
        names.set(original, name);
      }
      await Promise.all(writes);
    } finally {
      vi.useRealTimers();
    }
    expect(await inKv(scopes, names)).toEqual(itself(names));
    stopped.release();
  });
});

describe("TOOL_CHANGES=hold, one caller's requests, one after another, each listing tools they were not listed", () => {
  it("write no key twice within a second, their own record neither", async () => {
    const { pages, memory, scopes } = await isolateOfPages();
    const timed = timedPuts(env.TOOL_MAP);
    const caller = callerNamed("caller");
    const hold: ToolPolicy = { rules: NO_RULES, changes: "hold" };
    for (const page of pages) {
      const writes: Promise<unknown>[] = [];
      const request = new ToolMap(
        timed.kv,
        scopes,
        profile,
        memory,
        (w) => writes.push(w),
        hold,
        undefined,
        caller,
      );
      expect((await request.nameListing(page)).hidden).toEqual(new Set());
      await Promise.all(writes);
    }
    expect(timed.puts.some(({ key }) => key.includes(":pins:"))).toBe(true);
    expect(tooSoon(timed.puts)).toEqual([]);
  });
});
