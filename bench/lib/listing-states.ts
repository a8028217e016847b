/**
 * The listing path in the six states of the map that the core section
 * times in Node and the listing-cpu Worker (workers/listing-cpu.ts) runs in
 * workerd: one home for what each state holds, so both measure the same
 * thing. KV is answered from memory (memory-kv.ts): its I/O is not the
 * proxy's CPU.
 */
import { parseConfig } from "../../src/config";
import type { ProfileName } from "../../src/names/profiles";
import { rewriteJsonText, rewriteMessages } from "../../src/rewrite/listing-answer";
import { profileOf } from "../../src/schemas/profile";
import { callerNamed } from "../../src/toolmap/callers";
import { ToolMapMemory } from "../../src/toolmap/isolate-memory";
import { ToolMap } from "../../src/toolmap/tool-map";
import { realisticListing, realisticTool, WHOLE_LISTING } from "../../support/listing";
import { memoryKv, readOnly } from "./memory-kv";

export const SCOPES = { origin: "v2:bench", legacy: "v1:bench" };
export const LIST_IDS = new Set([1]);

/** The settings a tenant gets by default (TOOL_CHANGES=log among them): what the listing path is measured under. */
const DEFAULTS = parseConfig({
  ORIGIN_URL: "https://origin.example/mcp",
  TOOL_MAP: memoryKv(),
} as unknown as Env);
if (DEFAULTS.kind !== "valid")
  throw new Error(`bench settings: ${JSON.stringify(DEFAULTS.problems)}`);
export const { policy } = DEFAULTS.config;

/** The deployment every isolate of the bench belongs to, but those of `deploy`, a new one. */
const DEPLOYMENT = "bench";

/** The caller every state lists for but `caller`'s, and the one listed one tool more there. */
const [BOB, ALICE] = [callerNamed("bob"), callerNamed("alice")];

/** A tool map as one request opens it; `background` collects the KV writes it hands off. */
export function openToolMap(
  kv: KVNamespace,
  memory: ToolMapMemory,
  background: Promise<unknown>[],
  profile: ProfileName = "openai",
  deployment = DEPLOYMENT,
  caller = BOB,
) {
  return new ToolMap(
    kv,
    SCOPES,
    profileOf(profile),
    memory,
    (promise) => background.push(promise),
    policy,
    deployment,
    caller,
  );
}

/** Whose names the map knows when the listing arrives. */
export const LISTING_STATES = {
  first: "first listing: nothing known, every tool named and stored",
  warm: "repeated, same isolate: names and schemas in memory, and with the runtime's JSON the answer remembered from the listing before (the listing from parsed objects, timed just before, drops it: the first run names the listing again)",
  known:
    "repeated, same isolate, no answer remembered: names and schemas in memory, with the runtime's JSON every tool known by its text (a listing every 5 minutes in an isolate, or the first after another listing; from parsed objects, as the state before)",
  cold: "repeated, new isolate: the answer another isolate of the deployment rewrote, from KV (from parsed objects, as the next state)",
  deploy: "repeated, first isolate of a new deployment: names and schema hashes from KV, no answer",
  caller:
    "repeated, first isolate of a new deployment, the map's listing pin another caller's: as the state before, where the origin lists each caller their own tools and the map was written last by a listing of one tool more",
} as const;
export type ListingState = keyof typeof LISTING_STATES;

/** A state's short name, as tables and targets name it: its description up to the colon. */
export const stateName = (state: ListingState): string =>
  LISTING_STATES[state].split(":")[0] ?? state;

export interface ListingCase {
  size: number;
  body: string;
  /**
   * Two parses of the body, made when the listing from parsed objects first
   * needs them: a repeated listing brings equal schemas, never the same
   * objects. Not before: what a process keeps alive makes each of its
   * collections cost more, and the listing from its text never reads them.
   */
  parsed?: [unknown, unknown];
  /**
   * The text a timed listing reads: decoded afresh from the body's bytes
   * before each run (`freshText`), as each request's is. A repeated listing
   * brings an equal text, never the same string, and comparing a string
   * with itself reads its memory once, not twice.
   */
  text: string;
  bytes: Uint8Array;
  /** The KV a new isolate finds after the first listing, and the warm isolate's memory. */
  storedKv: KVNamespace;
  /** The KV after another caller's listing of one tool more, then this listing: `caller`'s. */
  callerKv: KVNamespace;
  warmMemory: ToolMapMemory;
}

/** The listing of `size` tools, named once under `profile` (the states are timed under `openai`). */
export async function listingCase(
  size: number,
  profile: ProfileName = "openai",
): Promise<ListingCase> {
  const body = JSON.stringify({ jsonrpc: "2.0", id: 1, result: realisticListing(size) });
  const storedKv = memoryKv();
  const warmMemory = new ToolMapMemory();
  const background: Promise<unknown>[] = [];
  await rewriteJsonText(body, {
    listIds: LIST_IDS,
    toolMap: openToolMap(storedKv, warmMemory, background, profile),
    wholeListing: WHOLE_LISTING,
  });
  await Promise.all(background);
  const callerKv = memoryKv();
  const { tools } = realisticListing(size);
  const theirs = [...tools, { ...realisticTool(0), name: "another_callers_tool" }];
  for (const [text, caller] of [
    [JSON.stringify({ jsonrpc: "2.0", id: 1, result: { tools: theirs } }), ALICE],
    [body, BOB],
  ] as const) {
    const toolMap = openToolMap(callerKv, new ToolMapMemory(), background, "openai", "", caller);
    await rewriteJsonText(text, { listIds: LIST_IDS, toolMap, wholeListing: WHOLE_LISTING });
    await Promise.all(background);
  }
  const bytes = new TextEncoder().encode(body);
  return { size, body, text: body, bytes, storedKv, callerKv, warmMemory };
}

/**
 * A new text of the listing, decoded from its bytes as a request's body is;
 * in the `known` state, the answer the isolate remembered dropped as well.
 */
export function freshText(c: ListingCase, state: ListingState): void {
  c.text = new TextDecoder().decode(c.bytes);
  if (state !== "known") return;
  for (const names of c.warmMemory.origin(SCOPES.origin).profiles.values()) {
    c.warmMemory.answers.delete(names);
  }
}

/**
 * One listing through the proxy's path, in the given map state; with `json`,
 * from the body's text to the text sent on, else from the parsed message.
 */
export function renameOnce(c: ListingCase, state: ListingState, json: boolean, turn: number) {
  const background: Promise<unknown>[] = [];
  const toolMap =
    state === "first"
      ? openToolMap(memoryKv(), new ToolMapMemory(), background)
      : state === "warm" || state === "known"
        ? openToolMap(c.storedKv, c.warmMemory, background)
        : openToolMap(
            readOnly(state === "caller" ? c.callerKv : c.storedKv),
            new ToolMapMemory(),
            background,
            "openai",
            state === "cold" ? DEPLOYMENT : `deploy-${turn}`,
          );
  if (json)
    return rewriteJsonText(c.text, { listIds: LIST_IDS, toolMap, wholeListing: WHOLE_LISTING });
  c.parsed ??= [JSON.parse(c.body), JSON.parse(c.body)];
  return rewriteMessages(c.parsed[turn % 2], {
    listIds: LIST_IDS,
    toolMap,
    wholeListing: WHOLE_LISTING,
  });
}
