/**
 * A large listing named from scratch that the runtime stops for its CPU
 * (error 1102: a Free plan's 10 ms, docs/limits.md) leaves its map in KV:
 * the names, pins and listing pin are written before the schemas are
 * viewed and the answer is written, so the next attempt, in a new isolate,
 * digests the listing once instead of each tool. The stop is a view that
 * throws, where the runtime would end the invocation; KV is read the moment
 * the views begin, as nothing later would run. Digests are counted, not timed.
 */
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { NO_RULES } from "../../src/rules/tool-rules";
import { profileOf } from "../../src/schemas/profile";
import { callerPinsKey } from "../../src/toolmap/caller-pin-records";
import { callerNamed } from "../../src/toolmap/callers";
import { ToolMapMemory, toolMapScopes } from "../../src/toolmap/isolate-memory";
import { SchemaViews } from "../../src/toolmap/schema-views";
import { decodeMap, mapKey } from "../../src/toolmap/stored-map";
import { ToolMap } from "../../src/toolmap/tool-map";
import { kvHolding } from "../helpers/kv";
import { digestsDuring, writtenTools } from "../helpers/listing-digests";

/** At least `listing_large`'s count: a listing whose first naming may pass a Free plan's CPU. */
const LARGE = 300;
/** What every listing digests besides pins: the view its caller was shown (caller-listings.ts). */
const VIEW = 1;

/** `size` tools, read from an answer's text. */
function listedTools(size: number) {
  const tools = Array.from({ length: size }, (_, i) => ({
    name: `tool_${i}`,
    description: `Tool ${i}.`,
    inputSchema: { type: "object", properties: { path: { type: "string" } } },
  }));
  return writtenTools(JSON.stringify({ jsonrpc: "2.0", id: 1, result: { tools } }));
}

async function freshOrigin() {
  const scopes = await toolMapScopes(
    new URL(`https://origin.example/mcp?map=${crypto.randomUUID()}`),
    profileOf("openai").names,
  );
  /**
   * A new isolate's map under the default `TOOL_CHANGES=log`, on `kv`; what it hands the
   * runtime to finish after the request goes to `waitUntil`.
   */
  const open = (
    kv = env.TOOL_MAP,
    waitUntil: (work: Promise<unknown>) => void = () => {},
    caller?: string,
  ) =>
    new ToolMap(
      kv,
      scopes,
      profileOf("openai"),
      new ToolMapMemory(),
      waitUntil,
      { rules: NO_RULES, changes: "log", scope: "definition" },
      undefined,
      caller === undefined ? undefined : callerNamed(caller),
    );
  const storedMap = async () => decodeMap((await env.TOOL_MAP.get(mapKey(scopes.origin))) ?? "");
  /** What KV holds of one caller's own record (caller-pin-records.ts), as JSON. */
  const storedRecord = async (caller: string) =>
    JSON.parse((await env.TOOL_MAP.get(callerPinsKey(scopes.origin, caller))) ?? "null") as {
      listing?: string;
    } | null;
  return { open, storedMap, storedRecord };
}

/** `run`, stopped where it begins viewing schemas; what KV holds of the map at that moment. */
async function stoppedAtViews(run: () => Promise<unknown>, storedMap: () => Promise<unknown>) {
  let storedWhenStopped: Promise<unknown> | undefined;
  vi.spyOn(SchemaViews.prototype, "ofListing").mockImplementation(() => {
    storedWhenStopped = storedMap();
    throw new Error("Worker exceeded CPU time limit");
  });
  await expect(run()).rejects.toThrow("CPU time limit");
  vi.restoreAllMocks();
  return storedWhenStopped;
}

afterEach(() => vi.restoreAllMocks());

describe("a large listing stopped before its answer", () => {
  it("has stored its names, pins and listing pin, so the next attempt digests the listing once", async () => {
    const { open, storedMap } = await freshOrigin();
    const tools = listedTools(LARGE);
    const stored = (await stoppedAtViews(() => open().nameListing(tools), storedMap)) as
      | ReturnType<typeof decodeMap>
      | undefined;
    expect(stored?.tools.size).toBe(LARGE);
    expect(stored?.listingPin).toMatch(/^[\w-]{43}$/);
    expect(stored?.tools.get("tool_7")?.pin).toMatch(/^[\w-]{43}\//);

    // The next attempt, in a new isolate: the listing pin proves every tool's pin.
    let listing: Awaited<ReturnType<ToolMap["nameListing"]>> | undefined;
    expect(
      await digestsDuring(async () => {
        listing = await open().nameListing(listedTools(LARGE));
      }),
    ).toBe(1 + VIEW);
    expect(listing?.names.get("tool_7")).toBe("tool_7");
  });

  it("has stored the caller's own listing pin where the origin lists them other tools than the map's", async () => {
    const { open, storedRecord } = await freshOrigin();
    await open(undefined, undefined, "alice").nameListing(listedTools(LARGE));
    // Bob is listed fewer tools: his listing is not the map's listing pin's, and he has one of
    // his own by the time the runtime would stop him.
    const bobs = () => open(undefined, undefined, "bob").nameListing(listedTools(LARGE - 20));
    const stored = (await stoppedAtViews(bobs, () => storedRecord("bob"))) as Awaited<
      ReturnType<typeof storedRecord>
    >;
    expect(stored?.listing).toMatch(/^[\w-]{43}$/);
    expect(await digestsDuring(bobs)).toBe(1 + VIEW);
  });

  it("has the runtime finish its map's write where its client leaves during it", async () => {
    // The runtime cancels what a request awaits once its client is gone, and finishes only what
    // it was handed (`waitUntil`, for 30 s): a write awaited alone was lost with a client that
    // gave up on a slow first listing, and left the isolate's mark of a write under way.
    const { open, storedMap } = await freshOrigin();
    const holding = kvHolding(
      env.TOOL_MAP,
      (operation, key) => operation === "put" && key.endsWith(":map"),
    );
    const handed: Array<Promise<unknown>> = [];
    const listing = open(holding.kv, (work) => handed.push(work)).nameListing(listedTools(LARGE));
    await holding.asked;
    // The write is under way, the listing waits for it: the client leaves here.
    expect(handed).toHaveLength(1);
    holding.release();
    await Promise.all([listing, ...handed]);
    expect((await storedMap())?.tools.size).toBe(LARGE);
  });

  it("does not keep a small listing's answer waiting for KV: its map is written beside it, as before", async () => {
    const { open, storedMap } = await freshOrigin();
    expect(await stoppedAtViews(() => open().nameListing(listedTools(20)), storedMap)).toBe(
      undefined,
    );
  });
});
