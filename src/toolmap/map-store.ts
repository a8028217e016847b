/**
 * The tool map in Workers KV (layout in stored-map.ts; docs/tool-map.md;
 * ARCHITECTURE.md, "Storage"): read into isolate memory once, and written
 * merged with what KV last held.
 *
 * KV cost is constant per listing, whatever the number of tools: a listing
 * that changes nothing writes nothing; one that adds or changes tools writes
 * the origin's map and its schemas (two or three values). A cold isolate
 * reads the map in one read, and a schema in one more, when a call needs it.
 *
 * Bounds: at most `MAX_TOOLS` originals (weighed by their names,
 * stored-map.ts `keptTools`, as written and as read) and `MAX_SCHEMA_CHUNKS` chunks of
 * schemas per origin; an original no listing showed for `EXPIRY_DAYS` (map-merge.ts) leaves
 * the map at its next write. Past a bound, the tools least recently listed are
 * not stored (`tool_map_full`): their names stay right, a cold isolate asks
 * the origin for them.
 *
 * Platform limits: KV is eventually consistent (another location may not see
 * a write for 60 s or more), allows one write a second to a key, has no
 * compare-and-swap, and can fail. Every KV error is a miss, logged, never a
 * failed request. Two isolates writing at once keep the later write: what
 * the earlier one added is lost from KV, never a name, and a schema the map
 * names but no chunk holds is found missing by the next call that needs it
 * (`readSchema`) and written again by the next listing.
 */
import { logEvent } from "../log";
import { WAIT_UNTIL_MS } from "../wait-until";
import { FRESH_MS, type OriginMemory } from "./isolate-memory";
import { type LegacyProgress, readLegacyNames } from "./legacy-v1";
import { mergeMap, SEEN_REFRESH_DAYS, today } from "./map-merge";
import type { PlannedEntry } from "./plan-listing";
import type { ProfileNames } from "./profile-names";
import {
  chunked,
  findSchema,
  linesFor,
  needsLines,
  schemaJsonOf,
  toolsByFingerprint,
} from "./schema-lines";
import {
  decodeMap,
  emptyMap,
  encodeMap,
  KEY_WRITE_MS,
  laterFormat,
  MAX_TOOLS,
  mapKey,
  type StoredMap,
  schemaKey,
} from "./stored-map";

export const MAX_SCHEMA_CHUNKS = 2;
/** Characters per schema chunk: under KV's 25 MiB a value, even at 3 bytes a character. */
export const MAX_CHUNK_CHARS = 8 * 1024 * 1024;

export class MapStore {
  /**
   * The schema chunks read for this request's calls, until its calls are planned
   * (`forgetChunks`): a batch of calls to tools the isolate does not hold reads them once, not
   * once a tool (up to 2 values of 8 million characters each, and 256 calls a batch). Let go
   * then, not kept as long as a streamed answer keeps the request's map.
   */
  #chunks: Promise<string[]> | undefined;
  /** Whether this request read a step of layout 1 already: one a request, whatever it lists. */
  #legacyStepped = false;
  /**
   * This request's read of the map, while the isolate has none. A request never waits for
   * another's read: when its client leaves, the runtime cancels the request, and a read it had
   * under way never settles (test/worker/held-reads.test.ts).
   */
  #mapRead: Promise<StoredMap | undefined> | undefined;

  constructor(
    private readonly kv: KVNamespace,
    private readonly scope: { origin: string; legacy: string },
    private readonly origin: OriginMemory,
  ) {}

  /** Lets go of the schema chunks this request's calls read. */
  forgetChunks(): void {
    this.#chunks = undefined;
  }

  /**
   * Reads the origin's map once per isolate (each request that finds it unread, until one read is
   * done), and, for a listing (`migrate`) until they are all read, a step of a profile's layout-1
   * names; false when KV could not be read (tried again next time).
   */
  async load(names: ProfileNames, migrate = false): Promise<boolean> {
    const origin = this.origin;
    if (!origin.loaded) {
      this.#mapRead ??= origin.mapReads.read(
        () => origin.loaded,
        () => this.readMap(),
      );
      let stored: StoredMap | undefined;
      try {
        stored = await this.#mapRead;
      } catch (error) {
        logEvent("kv_error", { op: "get", what: "map", error: String(error) });
        return false;
      } finally {
        // Done: a map the isolate lets go of later (`OriginMemory.clear`) is read anew.
        this.#mapRead = undefined;
      }
      // Another request's read may have come first, and its listing written since.
      if (stored !== undefined && !origin.loaded) this.keepRead(stored);
    }
    return this.readLegacy(names, migrate);
  }

  /** What KV held of the map: the isolate's from now on. */
  private keepRead(stored: StoredMap): void {
    const origin = this.origin;
    origin.stored = stored;
    origin.loaded = true;
    origin.loadedAt = Date.now();
    for (const [original, { schema, check }] of stored.tools) {
      if (!origin.tools.has(original)) {
        origin.remember({
          original,
          schemaHash: schema,
          ...(check === undefined ? {} : { schemaCheck: check }),
        });
      }
    }
  }

  /** What KV holds of the map; throws, as a failed read, for a later version's. */
  private async readMap(): Promise<StoredMap> {
    const text = await this.kv.get(mapKey(this.scope.origin), "text");
    if (text === null) return emptyMap();
    const map = decodeMap(text);
    if (map) return map;
    const later = laterFormat(text);
    if (later !== undefined) {
      throw new Error(`the map is a later version's (format ${later}): not read, not written over`);
    }
    return emptyMap();
  }

  /**
   * Layout 1's names for this profile, kept in memory: those the map holds,
   * then, while the map says the scope is not read whole, a step of reading
   * it (legacy-v1.ts) for a listing, at most one a request: a listing writes
   * the map, and with it how far the step got. False when a step could not
   * be read.
   */
  private async readLegacy(names: ProfileNames, migrate: boolean): Promise<boolean> {
    const { legacy: scope } = this.scope;
    if (names.legacyProgress === undefined) {
      const stored = this.origin.stored ?? emptyMap();
      names.keepLegacy(stored.legacy.get(scope) ?? new Map());
      names.legacyProgress = stored.migrated.has(scope)
        ? { done: true }
        : { after: stored.legacyRead.get(scope), done: false };
    }
    if (names.legacyProgress.done || !migrate || this.#legacyStepped) return true;
    this.#legacyStepped = true;
    return this.readLegacyStep(names, names.legacyProgress);
  }

  private async readLegacyStep(names: ProfileNames, progress: LegacyProgress): Promise<boolean> {
    const { legacy: scope } = this.scope;
    try {
      const read = await readLegacyNames(this.kv, scope, progress, names.legacyNames, MAX_TOOLS);
      // Another request read this step first (its own read, as this one is): it is kept.
      if (names.legacyProgress !== progress) return true;
      if (read.truncated) logEvent("tool_map_full", { scope, kept: MAX_TOOLS });
      // A tool named meanwhile, its layout-1 name not read yet, is given that name back.
      for (const [original, name] of read.names) {
        if (names.byOriginal.get(original) !== name) names.forget(original);
      }
      names.keepLegacy(read.names);
      names.pendingLegacy = new Set(read.pending);
      names.legacyProgress = { after: read.after, done: read.done };
      return true;
    } catch (error) {
      logEvent("kv_error", { op: "list", what: "names_v1", error: String(error) });
      return false;
    }
  }

  /**
   * Whether KV lacks what this listing shows: a tool, a schema (also one a
   * chunk was found to lack), a stale day, this profile's migration or a
   * name kept since, a held definition; or what a listing showed while a
   * write was under way.
   */
  needsWrite(entries: readonly PlannedEntry[], names: ProfileNames): boolean {
    const { stored, chunksLack, heldPins } = this.origin;
    if (!stored) return false;
    if (!stored.migrated.has(this.scope.legacy) || names.keptUnstored) return true;
    if (chunksLack.size > 0 || heldPins.size > 0 || this.origin.writeMissed) return true;
    const day = today();
    return entries.some(({ original, schemaHash }) => {
      const tool = stored.tools.get(original);
      return tool?.schema !== schemaHash || day - tool.seen >= SEEN_REFRESH_DAYS;
    });
  }

  /**
   * Writes the origin's map merged with what this isolate knows: the schemas
   * first (so the map never names one that is not there), then the map.
   */
  async store(names: ProfileNames): Promise<void> {
    const origin = this.origin;
    const began = Date.now();
    // A write begun longer ago than the runtime lets work after a response run was stopped, and
    // never cleared its mark: this one writes in its place, or no write of the map would ever be
    // made again in the isolate. One that was not stopped (KV slower than that while a response
    // streams) ends as two isolates' writes at once do: the later one is kept.
    if (origin.writingSince !== undefined && began - origin.writingSince < WAIT_UNTIL_MS) {
      // The write under way merges this listing's tools and notes, where it has not merged yet;
      // else the next write does, whichever listing needs it.
      if (origin.writeMerged) origin.writeMissed = true;
      return;
    }
    origin.writingSince = began;
    origin.writeMerged = false;
    try {
      // KV takes one write a second to a key (past it, a put fails): a write of the map (its
      // chunks) within a second of this isolate's last one waits, then merges what came meanwhile.
      const wait = origin.writtenAt + KEY_WRITE_MS - Date.now();
      if (wait > 0) await new Promise((waited) => setTimeout(waited, wait));
      // Pins are read afresh before they are written: another isolate may have pinned the tool.
      const base =
        Date.now() - origin.loadedAt > FRESH_MS || origin.pinned.size > 0
          ? await this.readMap()
          : (origin.stored ?? emptyMap());
      // The held definitions this write notes: one noted while it is under way waits for the next.
      const noted = [...origin.heldPins.keys()].map((o) => [o, origin.heldPins.get(o)] as const);
      const { merged, superseded } = mergeMap(base, origin, names, this.scope);
      origin.writeMissed = false;
      origin.writeMerged = true;
      merged.listingPin = (await origin.listingPin) ?? base.listingPin;
      const lines = await this.schemaLinesFor(base, merged);
      if (lines !== undefined) {
        const chunks = chunked(lines, MAX_CHUNK_CHARS).slice(0, MAX_SCHEMA_CHUNKS);
        for (const [index, chunk] of chunks.entries()) {
          await this.kv.put(schemaKey(this.scope.origin, index), chunk);
        }
        merged.chunks = chunks.length;
        origin.chunksLack.clear();
      }
      await this.kv.put(mapKey(this.scope.origin), encodeMap(merged));
      for (const [original, tool] of merged.tools) {
        if (origin.pinned.get(original)?.pin === tool.pin) origin.pinned.delete(original);
      }
      for (const [original, pin] of superseded) {
        if (origin.pinned.get(original) === pin) origin.pinned.delete(original);
      }
      for (const [original, pins] of noted) {
        if (origin.heldPins.get(original) === pins) origin.heldPins.delete(original);
      }
      names.keptUnstored = false;
      origin.stored = merged;
      origin.loadedAt = Date.now();
    } catch (error) {
      logEvent("kv_error", { op: "put", what: "map", error: String(error) });
    } finally {
      origin.writtenAt = Date.now();
      // Not the mark of a write begun since, in place of this one taken for stopped.
      if (origin.writingSince === began) {
        origin.writingSince = undefined;
        origin.writeMerged = false;
      }
    }
  }

  /**
   * The schema lines the merged map needs (schema-lines.ts `linesFor`), read
   * with KV's chunks; `undefined` when KV's chunks hold every one.
   */
  private async schemaLinesFor(base: StoredMap, merged: StoredMap): Promise<string[] | undefined> {
    const byHash = toolsByFingerprint(merged);
    if (!needsLines(base, merged, byHash, this.origin.chunksLack)) return undefined;
    const texts = base.chunks > 0 ? await this.readChunks(base.chunks) : [];
    const held = (original: string) => schemaJsonOf(this.origin.tools.get(original));
    return linesFor(merged, byHash, texts, held);
  }

  private async readChunks(count: number): Promise<string[]> {
    // No version writes more: a map that says so (corrupt, or another's) is read as far as that.
    const keys = Array.from({ length: Math.min(count, MAX_SCHEMA_CHUNKS) }, (_, i) =>
      schemaKey(this.scope.origin, i),
    );
    const texts = await this.kv.get(keys, "text");
    return [...texts.values()].filter((text): text is string => text !== null);
  }

  /**
   * One schema from KV, by its fingerprint: one read of the chunks a request. One the
   * map names and no chunk holds (a write lost to another's) is noted, so
   * that the next listing writes it again.
   */
  async readSchema(
    hash: string,
    check?: string,
  ): Promise<{ schema: unknown; chars: number } | undefined> {
    const chunks = this.origin.stored?.chunks ?? 0;
    try {
      if (chunks > 0) this.#chunks ??= this.readChunks(chunks);
      const texts = chunks > 0 ? await this.#chunks : undefined;
      for (const text of texts ?? []) {
        const found = findSchema(text, hash, check);
        if (found !== undefined) return found;
      }
      if (this.origin.chunksLack.size < MAX_TOOLS) this.origin.chunksLack.add(hash);
    } catch (error) {
      // Read again by the next call that needs one: a failed read is no answer to keep.
      this.#chunks = undefined;
      logEvent("kv_error", { op: "get", what: "schemas", error: String(error) });
    }
    return undefined;
  }
}
