/**
 * The listing pin (src/toolmap/listing-pin.ts; docs/rules.md, "Changed
 * definitions"): a new deployment's first listing of the text the map's pins
 * were made from digests the whole listing once, not each tool; a listing
 * that differs in one character, or a map that pins one tool otherwise,
 * has every tool digested and compared, and a change held as before. An
 * isolate is a `ToolMapMemory` of its own. WebCrypto's digests are counted,
 * not timed.
 */
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { type ChangeScope, NO_RULES } from "../../src/rules/tool-rules";
import { profileOf } from "../../src/schemas/profile";
import { callerNamed } from "../../src/toolmap/callers";
import { FRESH_MS, ToolMapMemory, toolMapScopes } from "../../src/toolmap/isolate-memory";
import { decodeMap, encodeMap, mapKey } from "../../src/toolmap/stored-map";
import { ToolMap } from "../../src/toolmap/tool-map";
import { digestsDuring, writtenTools } from "../helpers/listing-digests";
import { captureLogs } from "../helpers/logs";

const SIZE = 50;
/** What every listing digests besides pins: the view its caller was shown (caller-listings.ts). */
const VIEW = 1;

/** Tool `i` as an origin lists it; `changed` gets another description. */
const toolAt = (i: number, changed?: number) => ({
  name: `tool_${i}`,
  description: i === changed ? `Tool ${i}, and more.` : `Tool ${i}.`,
  inputSchema: { type: "object", properties: { path: { type: "string" } } },
  ...(i % 10 === 0 ? { annotations: { readOnlyHint: true } } : {}),
});

/** `SIZE` tools as an origin lists them, `space` between each two. */
function listingText(changed?: number, space = 0): string {
  const tools = Array.from({ length: SIZE }, (_, i) => toolAt(i, changed));
  if (space === 0) return JSON.stringify({ jsonrpc: "2.0", id: 1, result: { tools } });
  const written = tools.map((tool) => JSON.stringify(tool)).join(`,${" ".repeat(space)}`);
  return `{"jsonrpc":"2.0","id":1,"result":{"tools":[${written}]}}`;
}

/** The same tools listed in two pages, each a text of its own. */
function pagesText(changed?: number): string[] {
  const page = (from: number, cursor?: string) =>
    JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      result: {
        tools: Array.from({ length: SIZE / 2 }, (_, i) => toolAt(from + i, changed)),
        ...(cursor ? { nextCursor: cursor } : {}),
      },
    });
  return [page(0, "2"), page(SIZE / 2)];
}

/** Tool maps of one new origin under `TOOL_CHANGES=hold`, each on an isolate of its own. */
async function origin() {
  const scopes = await toolMapScopes(
    new URL(`https://origin.example/mcp?map=${crypto.randomUUID()}`),
    profileOf("openai").names,
  );
  const writes: Promise<unknown>[] = [];
  /** A new isolate's map; `caller`, one listed apart from the one every other listing is of. */
  const open = (scope: ChangeScope = "definition", caller?: string, memory = new ToolMapMemory()) =>
    new ToolMap(
      env.TOOL_MAP,
      scopes,
      profileOf("openai"),
      memory,
      (write) => writes.push(write),
      { rules: NO_RULES, changes: "hold", scope },
      undefined,
      caller === undefined ? undefined : callerNamed(caller),
    );
  const list = async (text: string | string[], scope?: ChangeScope, map = open(scope)) => {
    const tools = (typeof text === "string" ? [text] : text).flatMap(writtenTools);
    const listing = await map.nameListing(tools);
    await Promise.all(writes.splice(0));
    return listing;
  };
  const storedMap = async () => decodeMap((await env.TOOL_MAP.get(mapKey(scopes.origin))) ?? "");
  const storeMap = async (map: ReturnType<typeof decodeMap>) => {
    if (map) await env.TOOL_MAP.put(mapKey(scopes.origin), encodeMap(map));
  };
  return { open, list, storedMap, storeMap };
}

afterEach(() => vi.restoreAllMocks());

describe("the listing pin", () => {
  it("is stored by a first listing, and spares a new isolate a digest per tool of the same text", async () => {
    const { list, storedMap } = await origin();
    // A first listing digests every tool, and the listing once more.
    expect(await digestsDuring(() => list(listingText()))).toBe(SIZE + 1 + VIEW);
    expect((await storedMap())?.listingPin).toMatch(/^[\w-]{43}$/);

    const logs = captureLogs();
    let hidden = -1;
    expect(
      await digestsDuring(async () => {
        hidden = (await list(listingText())).hidden.size;
      }),
    ).toBe(1 + VIEW);
    expect(hidden).toBe(0);
    expect(logs.events("tool_definition_changed")).toEqual([]);
    logs.restore();
  });

  it("does not hide a change: one tool changed in the text is digested, compared and held", async () => {
    const { list } = await origin();
    await list(listingText());
    const logs = captureLogs();
    let listing: Awaited<ReturnType<typeof list>> | undefined;
    // The listing pin, then every tool: the listing differs.
    expect(
      await digestsDuring(async () => {
        listing = await list(listingText(7));
      }),
    ).toBe(1 + SIZE + VIEW);
    expect(listing?.hidden).toEqual(new Set(["tool_7"]));
    expect(logs.events("tool_definition_changed")).toMatchObject([
      { tool: "tool_7", changed: ["description"] },
    ]);
    logs.restore();
  });

  it("covers each tool's text, not only its place: a change that keeps every tool as long, and where it was, is held", async () => {
    const { list } = await origin();
    await list(listingText());
    const reworded = listingText().replace('"Tool 7."', '"Wipe 7."');
    expect(reworded.length).toBe(listingText().length);
    const logs = captureLogs();
    expect((await list(reworded)).hidden).toEqual(new Set(["tool_7"]));
    expect(logs.events("tool_definition_changed")).toMatchObject([
      { tool: "tool_7", changed: ["description"] },
    ]);
    logs.restore();
  });

  it("covers a listing of several pages: the same pages spare a digest per tool, one character changed in one does not", async () => {
    const { list, storedMap } = await origin();
    await list(pagesText());
    expect((await storedMap())?.listingPin).toMatch(/^[\w-]{43}$/);
    expect(await digestsDuring(() => list(pagesText()))).toBe(1 + VIEW);

    const logs = captureLogs();
    let hidden: string[] = [];
    expect(
      await digestsDuring(async () => {
        hidden = [...(await list(pagesText(SIZE - 1))).hidden];
      }),
    ).toBe(1 + SIZE + VIEW);
    expect(hidden).toEqual([`tool_${SIZE - 1}`]);
    expect(logs.events("tool_definition_changed")).toMatchObject([{ tool: `tool_${SIZE - 1}` }]);
    logs.restore();
  });

  it("covers what is written between tools: the same tools spaced otherwise are digested, compared, and none held", async () => {
    const { list } = await origin();
    await list(listingText());
    const logs = captureLogs();
    let hidden = -1;
    expect(
      await digestsDuring(async () => {
        hidden = (await list(listingText(undefined, 2))).hidden.size;
      }),
    ).toBe(1 + SIZE + VIEW);
    expect(hidden).toBe(0);
    expect(logs.events("tool_definition_changed")).toEqual([]);
    logs.restore();
  });

  it("holds a change listed while the origin says its tools changed, as a new isolate finds out whether its listing pin holds", async () => {
    const { open, list, storedMap } = await origin();
    await list(listingText());
    // The origin's notifications/tools/list_changed reaches the isolate (another request's
    // stream) while its first listing awaits the listing pin's digest.
    const map = open();
    const digest = crypto.subtle.digest.bind(crypto.subtle);
    let digests = 0;
    vi.spyOn(crypto.subtle, "digest").mockImplementation((...args: Parameters<typeof digest>) => {
      if (digests++ === 0) map.forget();
      return digest(...args);
    });
    const logs = captureLogs();
    expect((await list(listingText(7), undefined, map)).hidden).toEqual(new Set(["tool_7"]));
    expect(logs.events("tool_definition_changed")).toMatchObject([{ tool: "tool_7" }]);
    logs.restore();
    vi.restoreAllMocks();
    // The map still pins the definition first seen, and every tool: the change stays held.
    expect((await storedMap())?.tools.size).toBe(SIZE);
    expect((await list(listingText(7))).hidden).toEqual(new Set(["tool_7"]));
  });

  it("proves only the pins it was made with: a map that pins one tool otherwise has every tool compared", async () => {
    const other = await origin();
    await other.list(listingText(7));
    const changedPin = (await other.storedMap())?.tools.get("tool_7")?.pin;
    const { open, list, storedMap, storeMap } = await origin();
    // Listed first to another caller: the one listed next has no pin of their own.
    await list(listingText(), undefined, open(undefined, "first"));
    await list(listingText());
    // The map pins tool_7's other definition, beside the listing pin made without it.
    const map = await storedMap();
    const entry = map?.tools.get("tool_7");
    if (!map?.listingPin || !entry || changedPin === undefined) throw new Error("no map");
    map.tools.set("tool_7", { ...entry, pin: changedPin });
    await storeMap(map);

    const logs = captureLogs();
    expect((await list(listingText())).hidden).toEqual(new Set(["tool_7"]));
    expect(logs.events("tool_definition_changed")).toMatchObject([{ tool: "tool_7" }]);
    logs.restore();
  });

  it("proves nothing under another TOOL_CHANGES_SCOPE: every tool is digested under each, and taken over where it held", async () => {
    const { list } = await origin();
    await list(listingText());
    let hidden: string[] = [];
    expect(
      await digestsDuring(async () => {
        hidden = [...(await list(listingText(7), "schema")).hidden];
      }),
    ).toBe(1 + SIZE + SIZE + VIEW);
    // The scope switched to the schema alone: the one reworded since its pin is held, as the
    // digest of its whole definition cannot vouch for its schema (docs/rules.md).
    expect(hidden).toEqual(["tool_7"]);
  });
});

describe("a caller's own listing pin, where the origin lists each caller their own tools", () => {
  /** At least `listing_large`'s 250 tools: a listing whose naming from scratch costs. */
  const ADMIN = 300;
  const MEMBER = 280;
  /** Tools `tool_0`… as the origin lists them to one caller; `of`: a description that names them. */
  const callerText = (
    count: number,
    {
      changed,
      of,
      added,
      spaced = false,
    }: { changed?: number; of?: string; added?: string; spaced?: boolean } = {},
  ) => {
    const tools: object[] = Array.from({ length: count }, (_, i) => {
      const tool = toolAt(i, changed);
      return of === undefined ? tool : { ...tool, description: `${tool.description} For ${of}.` };
    });
    // A tool the origin adds, described as `added`.
    if (added !== undefined) tools.push({ ...toolAt(count), name: "added", description: added });
    const written = tools.map((tool) => JSON.stringify(tool)).join(spaced ? ", " : ",");
    return `{"jsonrpc":"2.0","id":1,"result":{"tools":[${written}]}}`;
  };

  it("spares a caller listed other tools than the map's listing pin a digest per tool in the next new isolate", async () => {
    const { open, list } = await origin();
    await list(callerText(ADMIN), undefined, open(undefined, "alice"));
    // Bob is listed fewer of the same tools: the map's listing pin is alice's listing, and each of
    // his tools is digested; his own listing pin is one digest more.
    const puts = vi.spyOn(env.TOOL_MAP, "put");
    expect(
      await digestsDuring(() => list(callerText(MEMBER), undefined, open(undefined, "bob"))),
    ).toBe(1 + MEMBER + 1 + VIEW);
    // Written with the record his first listing writes anyway (`hold`: the tools he was listed).
    const records = puts.mock.calls.filter(([key]) => key.endsWith(":pins:bob"));
    expect(records).toHaveLength(1);
    expect(JSON.parse(String(records[0]?.[1]))).toMatchObject({
      seen: expect.any(String),
      listing: expect.stringMatching(/^[\w-]{43}$/),
    });
    puts.mockRestore();
    // The next isolate he reaches digests his listing once, as the map's listing pin spares alice.
    expect(
      await digestsDuring(() => list(callerText(MEMBER), undefined, open(undefined, "bob"))),
    ).toBe(1 + VIEW);
    expect(
      await digestsDuring(() => list(callerText(ADMIN), undefined, open(undefined, "alice"))),
    ).toBe(1 + VIEW);
  });

  it("proves a caller's own definitions with their own pins: descriptions that name the user", async () => {
    const { open, list } = await origin();
    await list(callerText(ADMIN, { of: "alice" }), undefined, open(undefined, "alice"));
    const logs = captureLogs();
    await list(callerText(MEMBER, { of: "bob" }), undefined, open(undefined, "bob"));
    // Bob is new to the proxy: his definitions are his own, not a change.
    expect(logs.events("tool_definition_differs").length).toBeGreaterThan(0);
    logs.restore();
    // The map's pins give one digest, his own another: two, not one a tool.
    let hidden: Set<string> | undefined;
    expect(
      await digestsDuring(async () => {
        hidden = (await list(callerText(MEMBER, { of: "bob" }), undefined, open(undefined, "bob")))
          .hidden;
      }),
    ).toBe(2 + VIEW);
    expect(hidden).toEqual(new Set());
  });

  it("does not hide a change of one of the caller's tools: it is digested, compared and held", async () => {
    const { open, list } = await origin();
    await list(callerText(ADMIN), undefined, open(undefined, "alice"));
    await list(callerText(MEMBER), undefined, open(undefined, "bob"));
    const logs = captureLogs();
    const changed = await list(
      callerText(MEMBER, { changed: 7 }),
      undefined,
      open(undefined, "bob"),
    );
    expect(changed.hidden).toEqual(new Set(["tool_7"]));
    expect(logs.events("tool_definition_changed")).toMatchObject([
      { tool: "tool_7", changed: ["description"] },
    ]);
    logs.restore();
    // Held, his listing pin stays the one of the definitions he was shown: held again next time.
    expect(
      (await list(callerText(MEMBER, { changed: 7 }), undefined, open(undefined, "bob"))).hidden,
    ).toEqual(new Set(["tool_7"]));
  });

  /**
   * An isolate reads alice's record at her first listing, and keeps it; another lists her a tool
   * the origin added, and her record says she was listed it. Past what an isolate takes for what
   * KV holds (`FRESH_MS`), `again` lists her in the first isolate. Then, in a new isolate, the
   * tool she was listed, changed, is a change to her: held, not taken for her own.
   */
  async function changeHeldAfterWarmListing(
    again: (warm: ToolMapMemory, at: Awaited<ReturnType<typeof origin>>) => Promise<unknown>,
  ) {
    const at = await origin();
    const { open, list } = at;
    const warm = new ToolMapMemory();
    await list(callerText(ADMIN), undefined, open(undefined, "alice", warm));
    await list(callerText(ADMIN, { added: "Adds." }), undefined, open(undefined, "alice"));
    const now = Date.now.bind(Date);
    vi.spyOn(Date, "now").mockImplementation(() => now() + FRESH_MS + 1_000);
    await again(warm, at);
    const logs = captureLogs();
    const changed = await list(
      callerText(ADMIN, { added: "Adds, and wipes." }),
      undefined,
      open(undefined, "alice"),
    );
    expect(logs.events("tool_definition_differs")).toEqual([]);
    expect(logs.events("tool_definition_changed")).toMatchObject([{ tool: "added" }]);
    expect(changed.hidden).toEqual(new Set(["added"]));
    logs.restore();
  }

  it("is not written from a record another isolate wrote over since: a tool listed there stays listed", async () => {
    // The origin says its tools changed, and lists her the tools she had there, spaced otherwise:
    // named from scratch, no listing pin holds, and nothing of hers changed.
    await changeHeldAfterWarmListing(async (warm, { open, list }) => {
      const first = open(undefined, "alice", warm);
      first.forget();
      await list(callerText(ADMIN, { spaced: true }), undefined, first);
    });
  });

  // Under `hold` the record is read again where the isolate's copy is older than `FRESH_MS`: the
  // record's own write, when a listing shows the caller a tool new to them, was made from the copy
  // the isolate read at its first listing of theirs, and wrote over what another isolate wrote since.
  it("nor is the record's own write made from it: a tool listed to them in another isolate stays listed", async () => {
    // The first isolate lists her one more tool of its own: her record grows there, and is written.
    await changeHeldAfterWarmListing((warm, { open, list }) =>
      list(callerText(ADMIN + 1), undefined, open(undefined, "alice", warm)),
    );
  });
});
