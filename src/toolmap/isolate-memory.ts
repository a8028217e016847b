/**
 * What one isolate remembers of the origins it serves, the one home of the
 * tool map's per-isolate state (tool-map.ts reads and writes it): each
 * origin's tools and pins, each profile's names both ways and schema views,
 * the last answers rewritten, what each caller was listed
 * (caller-listings.ts) and their own pins (caller-pins.ts), and the KV
 * scopes. A `ToolMapMemory` lives as long as the isolate
 * (routes/app-env.ts); every part of it is bounded.
 */
import { BoundedMap } from "../bounded-map";
import { sha256Bytes } from "../digest";
import type { NameRules } from "../names/profiles";
import { nameWeight } from "../names/weight";
import type { ListedTool } from "../protocol/tools-list";
import { WrittenTool } from "../protocol/written-tool";
import { RuleJudgements } from "../rules/unmatched-rules";
import { CallerListings } from "./caller-listings";
import { CallerPins, NewCallerWrites } from "./caller-pin-records";
import { type ToolEntry, toolChars } from "./plan-listing";
import { ProfileNames } from "./profile-names";
import { MAX_LARGE_READS, ReadSlots } from "./read-slots";
import { answerWeight, MAX_TOOLS, type RememberedAnswer, type StoredMap } from "./stored-map";

export const MAX_ORIGINS = 16;
/**
 * What an origin's tools in memory hold together, in characters of their
 * text as listed (`toolChars`): as much as one listing may be
 * (`MAX_REWRITE_BYTES`), so the largest fits whole. An origin is untrusted:
 * one that lists each caller tools of their own, of long schemas,
 * descriptions or names, held 195 MiB by count alone after 40 listings of
 * 100 tools of 47 KB, and would have held 10,000 of them
 * (test/node/origin-tools-memory.test.ts).
 */
export const MAX_TOOL_CHARS = 16 * 1024 * 1024;
/**
 * Nodes the schema views of an origin's tools (every profile's) hold inlined
 * from `$ref`s together (`SchemaView.inlined`, where 64 characters of what a
 * `$ref` points at count as one more): a view may hold `MAX_NODES` (5,000)
 * of them for a schema of a few hundred characters, some 335 bytes each
 * under `openai-strict`, so 10,000 such views would hold gigabytes. At the
 * bound, about 20 MB; past it, every view of the origin goes, and is made
 * again when a listing or call needs it (test/node/schema-views-memory.test.ts).
 */
export const MAX_VIEW_INLINED = 60_000;
/** Held changes remembered as logged, accept keys read lately, definitions accepted. */
export const MAX_HELD_NOTES = 1_000;
/**
 * What the notes of held changes logged and of definitions accepted weigh
 * together, in characters of their keys (a tool's name and a pin, some 300
 * characters at most for a name MCP allows): an origin's names may be far longer.
 */
export const MAX_HELD_NOTE_CHARS = MAX_HELD_NOTES * 512;
/**
 * Pins this isolate set that KV does not hold yet, and tools with held
 * definitions it has not noted in KV: twice the tools it remembers (a
 * listing over `MAX_TOOLS` pins every tool of it), each weighing its name
 * (names/weight.ts), the least recently used going first. Writes that fail
 * (a day's KV writes spent) would keep them all.
 */
const MAX_UNSTORED_PINS = 2 * MAX_TOOLS;
const unstored = <V>() =>
  new BoundedMap<string, V>(MAX_UNSTORED_PINS, undefined, {
    max: MAX_UNSTORED_PINS,
    weigh: (_, original) => nameWeight(original),
  });
const heldNotes = <V>(ttlMs?: number) =>
  new BoundedMap<string, V>(MAX_HELD_NOTES, ttlMs, {
    max: MAX_HELD_NOTE_CHARS,
    weigh: (_, key) => key.length,
  });

/**
 * A map read or written this recently is taken for what KV holds: merged into without reading
 * it again (map-store.ts), its held definitions not noted again (`noteHeld`).
 */
export const FRESH_MS = 10_000;

/** Definitions held and not accepted kept per tool, the latest (here and in the map). */
export const MAX_HELD_PINS = 4;
/** An accept key found absent is read again after this long. */
const ACCEPT_CHECK_MS = 60_000;
/**
 * Answers remembered per isolate, their characters together (as received and
 * as sent: 1,000 realistic tools are about 1.5 Mi, 10,000 about 15 Mi, and
 * as many bytes again once a JSON body is compared with their bytes), and
 * for how long: a listing answered from memory skips the map's bookkeeping
 * (days last listed), so it is done again every few minutes.
 */
export const MAX_REMEMBERED_ANSWERS = 4;
export const MAX_REMEMBERED_CHARS = 16 * 1024 * 1024;
export const REMEMBERED_ANSWER_MS = 5 * 60_000;

/**
 * A map pin an isolate set, and the one it replaces, as the isolate knew the map when it decided
 * (none, for a tool new to it): KV's map keeps another isolate's pin set since (map-store.ts).
 */
export interface SharedPin {
  pin: string;
  over: string | undefined;
}

/**
 * Sources (callers.ts `Caller.source`) the origin answered a listing for in
 * this isolate lately, and for how long after their last: as many callers as
 * the isolate keeps listings of, for as long (caller-listings.ts). Full, the
 * source least recently listed or asking for a re-list goes, and spends the
 * unproven sources' re-lists (profile-names.ts `MAX_UNPROVEN_RELISTS`) until
 * its next listing is read.
 */
export const MAX_PROVEN_SOURCES = 4_096;
export const PROVEN_MS = 10 * 60_000;

/** What one isolate remembers of one origin's tools. */
export class OriginMemory {
  /**
   * Sources the origin listed here lately (`MAX_PROVEN_SOURCES`): their own share of the
   * re-lists the proxy asks for, where made-up credentials, which the origin refuses, share one
   * (profile-names.ts `MAX_UNPROVEN_RELISTS`). `undefined`: requests without credentials, which
   * an origin that keys callers by a query parameter lists.
   */
  readonly provenSources = new BoundedMap<string | undefined, true>(MAX_PROVEN_SOURCES, PROVEN_MS);
  /** Every original known: listed here, or read from KV. */
  readonly tools = new Map<string, ToolEntry>();
  /** What `tools` weigh together (`toolChars`). */
  private toolChars = 0;
  /** The originals this isolate saw listed, and the day it last did. */
  readonly listed = new Map<string, number>();
  readonly profiles = new Map<string, ProfileNames>();
  /** What KV holds, as last read or written; `undefined` until read. */
  stored: StoredMap | undefined;
  /** Whether the map was read from KV (map-store.ts `load`). */
  loaded = false;
  /** The reads of the map under way: a few at once, whatever the requests (read-slots.ts). */
  readonly mapReads = new ReadSlots(MAX_LARGE_READS);
  loadedAt = 0;
  /**
   * When the write to KV under way began (map-store.ts `store`): another waits for the next
   * listing, while the write may still be running.
   */
  writingSince: number | undefined;
  /** The write under way merged what it writes: a listing after it is not in it. */
  writeMerged = false;
  /** A listing wanted a write after the one under way merged: the next listing writes, whatever it shows. */
  writeMissed = false;
  /** When this isolate last wrote the map (and its chunks): the next write waits a second from it. */
  writtenAt = 0;
  /** Definition pins this isolate set and KV does not hold yet. */
  readonly pinned = unstored<SharedPin>();
  /** The listing pin to store with the map (listing-pin.ts), from the last listing that made one. */
  listingPin: Promise<string | undefined> | undefined;
  /**
   * The tools of the last listing read from its text, in its order: a tool
   * written the same way again is known without being read, or named anew.
   * One listing's text (one page, at most `MAX_REWRITE_BYTES`) is kept, no
   * more: for a large listing, what spares naming it anew in this isolate.
   */
  written = new Map<string, WrittenTool>();
  /** The operator's rules as the whole listings here judged them (rules/unmatched-rules.ts): each told once. */
  readonly rulesJudged = new RuleJudgements();
  /** Held changes already logged, and accept keys read lately (each: original and pin). */
  readonly heldLogged = heldNotes<true>();
  readonly acceptChecks = heldNotes<boolean>(ACCEPT_CHECK_MS);
  /** Definitions held for a caller here that KV's map does not note yet, per original (map-store.ts). */
  readonly heldPins = unstored<string[]>();
  /** Definitions the operator accepted, as read here, by tool (definition-pins.ts `acceptedPin`): no longer noted as held. */
  readonly acceptedPins = heldNotes<true>();
  /** Schema fingerprints the map names and no chunk held when a call looked (map-store.ts). */
  readonly chunksLack = new Set<string>();
  /** The records of callers new to KV this isolate may write now: kept when the origin says its tools changed. */
  readonly newCallers = new NewCallerWrites();

  /**
   * Sets the map's pin of `original`, until KV holds it (map-store.ts). One set
   * again before KV holds it replaces what the first replaced.
   */
  setPin(original: string, pin: SharedPin): void {
    const unstoredPin = this.pinned.get(original);
    this.pinned.set(original, unstoredPin ? { ...pin, over: unstoredPin.over } : pin);
  }

  /** Notes `pin` as a definition of `original` some caller is held on, until KV's map notes it. */
  noteHeld(original: string, pin: string): void {
    const pins = this.heldPins.get(original) ?? [];
    // One the map holds already is no news (noted again, every listing of a held caller wrote the
    // map), while the map was read or written within `FRESH_MS`: KV keeps the later of two writes,
    // and another isolate's may have left it out since (one that read the map before the note).
    // Past that, a held caller's listing notes it again, and the write reads KV first.
    const fresh = Date.now() - this.loadedAt <= FRESH_MS;
    if (pins.includes(pin) || (fresh && this.stored?.held.get(original)?.includes(pin))) return;
    this.heldPins.set(original, [...pins, pin].slice(-MAX_HELD_PINS));
  }

  /** The map's pin of `original`, the first definition seen of it: set here, or as KV holds it. */
  sharedPin(original: string): string | undefined {
    return this.pinned.get(original)?.pin ?? this.stored?.tools.get(original)?.pin;
  }

  /**
   * Remembers a tool, most recently; past `MAX_TOOLS`, or `MAX_TOOL_CHARS`
   * together, the least recently remembered go, with their names and schema
   * views: a call naming one is resolved as one this isolate never knew.
   */
  remember(entry: ToolEntry, listedOn?: number): void {
    const { original } = entry;
    const before = this.tools.get(original);
    if (before) {
      this.toolChars -= toolChars(before);
      this.tools.delete(original);
    }
    this.tools.set(original, entry);
    this.toolChars += toolChars(entry);
    if (listedOn !== undefined) this.listed.set(original, listedOn);
    // Past neither bound, as for every tool of most listings: no iterator made.
    if (this.tools.size <= MAX_TOOLS && this.toolChars <= MAX_TOOL_CHARS) return;
    for (const [oldest, held] of this.tools) {
      if (oldest === original) break;
      if (this.tools.size <= MAX_TOOLS && this.toolChars <= MAX_TOOL_CHARS) break;
      this.tools.delete(oldest);
      this.toolChars -= toolChars(held);
      this.listed.delete(oldest);
      for (const names of this.profiles.values()) names.forget(oldest);
    }
  }

  /**
   * The originals written exactly as the last listing read from its text
   * wrote them (a string comparison, no parse), and those whose text reads
   * two ways (tool-map.ts `NamedListing.twoWays`); this listing's places then
   * replace that listing's. A text that reads two ways is not kept: it is
   * checked again at every listing.
   */
  writtenAsBefore(tools: readonly ListedTool[]): { same: Set<string>; twoWays: Set<string> } {
    const same = new Set<string>();
    const twoWays = new Set<string>();
    const written = new Map<string, WrittenTool>();
    for (const tool of tools) {
      const { name } = tool;
      const before = this.written.get(name);
      // A tool this listing shows otherwise is no longer known by the text kept for it.
      if (!(tool instanceof WrittenTool)) {
        this.written.delete(name);
        continue;
      }
      if (before && tool.sameTextAs(before)) same.add(name);
      else if (tool.readsOneWay === false) {
        twoWays.add(name);
        // Named from this text now: a listing of two-way texts alone keeps the texts kept before,
        // and a tool written as one of them would take this one's schema and pin for its own.
        this.written.delete(name);
        continue;
      }
      written.set(name, tool);
    }
    if (written.size > 0) this.written = written;
    return { same, twoWays };
  }

  /**
   * Makes room for a view holding `inlined` nodes from `$ref`s beside every
   * profile's views of the origin: past `MAX_VIEW_INLINED`, they all go.
   */
  roomForView(inlined: number): void {
    let held = inlined;
    for (const names of this.profiles.values()) held += names.viewsInlined;
    if (held <= MAX_VIEW_INLINED) return;
    for (const names of this.profiles.values()) names.clearViews();
  }

  profile(key: string): ProfileNames {
    let names = this.profiles.get(key);
    if (!names) {
      names = new ProfileNames();
      this.profiles.set(key, names);
    }
    return names;
  }

  /**
   * Forgets the origin's tools (it said they changed): the next listing reads
   * the map again. What KV held as last read stays until then, and the next
   * write reads KV first: a listing under way when the origin said so (an
   * await away) still decides its pins against the map, and merges what it
   * writes into KV's. Dropped, the map read as empty: every tool was new to
   * that listing, a change shown unheld and pinned, and its write left KV a
   * map of its own tools alone, no pin of any other
   * (test/worker/listing-pin.test.ts, changed-definitions-kv.test.ts). The
   * names handed out and the bounds on what the proxy asks the origin for
   * itself stay as they were (`ProfileNames.forgotten`), and so do other callers' views
   * (caller-listings.ts): the origin says so on one session's stream, of
   * that session's tools.
   */
  clear(): void {
    this.tools.clear();
    this.toolChars = 0;
    this.listed.clear();
    for (const [key, names] of this.profiles) {
      this.profiles.set(key, names.forgotten(MAX_TOOL_CHARS));
    }
    this.written.clear();
    this.loaded = false;
    this.loadedAt = 0;
  }
}

/**
 * The isolate's memory of every origin it has served, least recently used
 * first out beyond `MAX_ORIGINS`. One lives as long as the isolate.
 */
export class ToolMapMemory {
  private readonly origins = new BoundedMap<string, OriginMemory>(MAX_ORIGINS);
  /** The last answer rewritten per origin and profile (rewrite/remembered-answer.ts). */
  readonly answers = new BoundedMap<ProfileNames, RememberedAnswer>(
    MAX_REMEMBERED_ANSWERS,
    REMEMBERED_ANSWER_MS,
    { max: MAX_REMEMBERED_CHARS, weigh: answerWeight },
  );
  private readonly scopes = new BoundedMap<string, Promise<ToolMapScopes>>(MAX_ORIGINS * 6);
  /** What each caller was listed, every origin and profile. */
  readonly listings = new CallerListings();
  /** Each caller's own definition pins, every origin. */
  readonly callerPins = new CallerPins();

  origin(scope: string): OriginMemory {
    let origin = this.origins.get(scope);
    if (!origin) {
      origin = new OriginMemory();
      this.origins.set(scope, origin);
    }
    return origin;
  }

  /** The KV scopes of an origin and profile, computed once per configuration. */
  scopesOf(originUrl: URL, rules: NameRules): Promise<ToolMapScopes> {
    const identity = `${originUrl.href}\n${rules.profile.name}\n${rules.cap}`;
    let scopes = this.scopes.get(identity);
    if (!scopes) {
      scopes = toolMapScopes(originUrl, rules);
      this.scopes.set(identity, scopes);
    }
    return scopes;
  }
}

export interface ToolMapScopes {
  /** Layout 2's keys start with this: the origin's map, shared by every profile. */
  origin: string;
  /** Layout 1's prefix for this origin, profile and cap, read once for its names. */
  legacy: string;
}

/** A scope's part of a KV key: SHA-256's first 8 bytes in hex, as layouts 1 and 2 write it. */
async function scopeDigest(text: string): Promise<string> {
  return [...new Uint8Array(await sha256Bytes(text), 0, 8)]
    .map((byte) => byte.toString(16).padStart(2, "0"))
    .join("");
}

/** The KV scopes of an origin (its URL, query included) and a profile's names. */
export async function toolMapScopes(originUrl: URL, rules: NameRules): Promise<ToolMapScopes> {
  const [origin, legacy] = await Promise.all([
    scopeDigest(originUrl.href),
    scopeDigest(`${originUrl.href}\n${rules.profile.name}\n${rules.cap}`),
  ]);
  return { origin: `v2:${origin}`, legacy: `v1:${legacy}` };
}
