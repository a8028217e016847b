/**
 * The model-facing names of one profile of one origin, both ways, with what
 * the isolate keeps beside them: each tool's schema view, the names an
 * earlier layout handed out, the listings the proxy asked for itself lately
 * and the answer KV holds. Part of the isolate's memory of an origin
 * (isolate-memory.ts `OriginMemory.profiles`); every part of it is bounded.
 */
import { BoundedMap } from "../bounded-map";
import type { Assignments, KnownNames } from "../names/assign";
import type { SchemaView } from "../schemas/view";
import type { LegacyProgress } from "./legacy-v1";
import { RateWindow } from "./rate-window";
import { MAX_LARGE_READS, ReadSlots } from "./read-slots";
import { MAX_TOOLS, type RememberedAnswer } from "./stored-map";

/**
 * Callers (and sessions) whose whole listing a profile keeps as read lately, and for how
 * long: a call naming a tool that listing lacked asks for no other listing
 * meanwhile (tool-map.ts `relistedLately`).
 */
const MAX_RELISTED_CALLERS = 1_000;
const RELIST_MS = 60_000;
/**
 * Listings the proxy asks for itself per profile in `RELIST_MS`, whoever the
 * callers: a client can make up callers (a cookie, a query parameter the
 * origin sees), but not more listings than this.
 */
export const MAX_RELISTS = 30;
/**
 * Of those, what one source (callers.ts `Caller.source`: one token, whatever
 * the sessions and queries it is sent with) may have the proxy ask for in
 * `RELIST_MS`: callers made up from one token spend a third of the isolate's
 * minute, and others keep the rest. Requests with no credential are one
 * source with the isolate's whole bound (an origin that keys callers by a
 * query parameter tells them apart by nothing else), once proven.
 */
export const MAX_RELISTS_PER_SOURCE = 10;
/**
 * Of those too, what every source the origin has not listed in this isolate
 * lately (isolate-memory.ts `OriginMemory.provenSources`) may have the proxy
 * ask for together in `RELIST_MS`. Relay mode checks no token, and a client
 * made up one per call, each a source with a share of its own: 30 of them
 * spent the isolate's minute, and a caller the origin did list got none.
 * Made-up credentials now spend this third, and a token the origin listed
 * keeps its own share of the rest.
 */
export const MAX_UNPROVEN_RELISTS = 10;
/**
 * Sources whose re-lists a profile counts: each counted took one in the last
 * `RELIST_MS`, of `MAX_RELISTS` in all, so twice that holds them, expired
 * ones waiting to go among them. One dropped for room has its share anew,
 * within the isolate's bound.
 */
const MAX_RELIST_SOURCES = 2 * MAX_RELISTS;
/**
 * Who has a name layout 1 handed out to a tool whose original is not read
 * yet (legacy-v1.ts): no original a listing names, so no listed tool takes it.
 */
const LEGACY_UNREAD = "\u0000layout 1, not read yet";

/** What refused a re-list: the isolate's bound, the source's share, or unproven sources' (`MAX_UNPROVEN_RELISTS`). */
export type RelistBound = "isolate" | "source" | "unproven";

/** Each re-list bound, as `relist_limited` says it (docs/logs.md). */
export const RELIST_LIMITS: Readonly<Record<RelistBound, number>> = {
  isolate: MAX_RELISTS,
  source: MAX_RELISTS_PER_SOURCE,
  unproven: MAX_UNPROVEN_RELISTS,
};

/** The model-facing names of one profile: both ways, and the schema views. */
export class ProfileNames {
  readonly byName = new Map<string, string>();
  readonly byOriginal = new Map<string, string>();
  /**
   * Each tool's schema view under the profile, and the schema it views (the
   * object the map holds, `hash` its fingerprint).
   */
  readonly views = new Map<string, { hash: string; schema: unknown; view: SchemaView }>();
  /** The model-facing names a `tools_renamed` line of this isolate said; within `byName`. */
  readonly said = new Set<string>();
  /** What `views` hold inlined together (`SchemaView.inlined`). */
  viewsInlined = 0;
  /**
   * How far this isolate read the names layout 1 handed out under this profile
   * (legacy-v1.ts); `undefined` until the map's were taken.
   */
  legacyProgress: LegacyProgress | undefined;
  /** Names layout 1 handed out to tools not read yet: no other tool gets them meanwhile. */
  pendingLegacy = new Set<string>();
  /** A name was kept (`keepName`) that KV does not hold yet. */
  keptUnstored = false;
  constructor(
    /** Digests of the credentials and sessions whose whole listing the proxy asked for and named here lately. */
    readonly relistedFor = new BoundedMap<string, true>(MAX_RELISTED_CALLERS, RELIST_MS),
    /** When the proxy asked the origin for its listing itself lately: at most `MAX_RELISTS` a minute. */
    private readonly relists = new RateWindow(MAX_RELISTS, RELIST_MS),
    /** The same, per source (`MAX_RELISTS_PER_SOURCE`). */
    private readonly sourceRelists = new BoundedMap<string, RateWindow>(
      MAX_RELIST_SOURCES,
      RELIST_MS,
    ),
    /** The same, for every source not proven, together (`MAX_UNPROVEN_RELISTS`). */
    private readonly unprovenRelists = new RateWindow(MAX_UNPROVEN_RELISTS, RELIST_MS),
  ) {}

  /**
   * These names as the origin's tools are forgotten (it said they changed): the schema views and
   * the answer KV holds let go, the names handed out kept, and what bounds the work the proxy
   * makes of the origin and KV. A client whose calls have the origin say so (an origin whose
   * tools change per session) had the isolate's minute of re-lists anew each time, and a KV write
   * of the answer. Names: other callers keep their listings (caller-listings.ts), and a name
   * depends on what was named before it (names/assign.ts: a legal tool of another's
   * fingerprinted name, `_2`); forgotten before KV held them (its write after the answer, a second
   * after the last, or failed), the next listing, of other tools, handed a name to another tool
   * than the one a kept listing showed under it (test/worker/list-changed-callers.test.ts). They
   * are kept up to `maxChars` of their originals, the latest first: the tools' own bound, so that
   * an origin that says so again and again does not pile up names without end.
   */
  forgotten(maxChars: number): ProfileNames {
    const names = new ProfileNames(
      this.relistedFor,
      this.relists,
      this.sourceRelists,
      this.unprovenRelists,
    );
    names.answerWrittenAt = this.answerWrittenAt;
    const named = [...this.byName];
    let from = named.length;
    for (let chars = 0; from > 0; from--) {
      chars += (named[from - 1] as [string, string])[1].length;
      if (chars > maxChars) break;
    }
    for (const [name, original] of named.slice(from)) names.remember(name, original);
    for (const name of this.said) if (names.byName.has(name)) names.said.add(name);
    names.keepLegacy(this.legacyNames);
    names.pendingLegacy = this.pendingLegacy;
    names.keptUnstored = this.keptUnstored;
    return names;
  }
  /** The answer KV holds for this profile, as far as this isolate knows; `undefined` until read. */
  storedAnswer: { answer: RememberedAnswer | undefined } | undefined;
  /** The reads of it under way: a few at once, whatever the requests (read-slots.ts). */
  readonly answerReads = new ReadSlots(MAX_LARGE_READS);
  /** When this isolate last wrote it. */
  answerWrittenAt = 0;
  /**
   * The same names, once read, and those a listing gave a tool whose own
   * name another tool had (names/assign.ts): original → name, and name → original.
   */
  readonly legacyNames = new Map<string, string>();
  readonly legacyOwners = new Map<string, string>();

  /** Counts the changes to the names above: what a kept assignment is checked against. */
  private changes = 0;
  private kept:
    | {
        originals: readonly string[];
        /** The same, as a set: made when a listing brings them in another order. */
        set?: Set<string>;
        chosen: ReadonlyMap<string, string>;
        assigned: Assignments;
        changes: number;
      }
    | undefined;

  /**
   * The names handed out, as a listing is named against them (names/assign.ts):
   * this profile's, kept ones too, and those layout 1 handed out to tools not
   * read yet, which no listed tool takes.
   */
  known(): KnownNames {
    return {
      nameOf: (original) => this.byOriginal.get(original) ?? this.legacyNames.get(original),
      originalOf: (name) =>
        this.byName.get(name) ??
        this.legacyOwners.get(name) ??
        (this.pendingLegacy.has(name) ? LEGACY_UNREAD : undefined),
    };
  }

  /**
   * Whether the proxy may ask the origin for its listing once more now, on
   * behalf of a caller from `source` (`undefined`: none, no share of its own),
   * which the origin listed lately or not (`proven`): `undefined` when it may
   * (counted), else the bound that refuses.
   */
  takeRelist(source: string | undefined, proven: boolean): RelistBound | undefined {
    const window =
      source === undefined
        ? undefined
        : (this.sourceRelists.get(source) ?? new RateWindow(MAX_RELISTS_PER_SOURCE, RELIST_MS));
    if (window && !window.free()) return "source";
    if (!proven && !this.unprovenRelists.free()) return "unproven";
    if (!this.relists.take()) return "isolate";
    if (!proven) this.unprovenRelists.take();
    if (window === undefined || source === undefined) return undefined;
    window.take();
    // Set again at each one taken: it expires a minute after its last, when it holds none.
    this.sourceRelists.set(source, window);
    return undefined;
  }

  keepLegacy(names: Map<string, string>): void {
    if (names.size > 0) this.changes++;
    for (const [original, name] of names) {
      this.legacyNames.set(original, name);
      this.legacyOwners.set(name, original);
    }
  }

  /** Keeps a name the pure name function would not give, for every isolate after this one (stored with layout 1's). */
  keepName(original: string, name: string): void {
    if (this.legacyNames.get(original) === name || this.legacyNames.size >= MAX_TOOLS) return;
    this.keepLegacy(new Map([[original, name]]));
    this.keptUnstored = true;
  }

  /**
   * What `assignNames` gives `originals`, where they are the very
   * originals of the last listing kept (`keepAssigned`), in any order
   * (`assignNames` sorts them), with the same names chosen by the operator,
   * and no name changed since: a listing's own names, once remembered, are
   * what it is given again (names/assign.ts), so they are not sorted and
   * sanitized anew. The profile's name rules are those of this
   * `ProfileNames` (its scope is theirs). `undefined` otherwise.
   */
  assignedBefore(
    originals: readonly string[],
    chosen: ReadonlyMap<string, string>,
  ): Assignments | undefined {
    const kept = this.kept;
    if (
      kept === undefined ||
      kept.changes !== this.changes ||
      kept.chosen !== chosen ||
      kept.originals.length !== originals.length
    ) {
      return undefined;
    }
    if (kept.originals.every((original, i) => original === originals[i])) return kept.assigned;
    // A new isolate names what KV holds in the map's order, then is listed in the origin's.
    kept.set ??= new Set(kept.originals);
    const set = kept.set;
    const same = new Set(originals).size === set.size && originals.every((o) => set.has(o));
    return same ? kept.assigned : undefined;
  }

  /**
   * Keeps a listing's names, once they are remembered, for the next listing
   * of the same originals; not when one of them is not (a listing over
   * `MAX_TOOLS`): its names would then not be given back.
   */
  keepAssigned(
    originals: readonly string[],
    chosen: ReadonlyMap<string, string>,
    { assignments }: Assignments,
  ): void {
    const remembered = assignments.every(
      ({ original, name }) =>
        this.byOriginal.get(original) === name && this.byName.get(name) === original,
    );
    this.kept = remembered
      ? {
          originals,
          chosen,
          assigned: { assignments, displaced: [], taken: [] },
          changes: this.changes,
        }
      : undefined;
  }

  /** Keeps a tool's schema view (schema-views.ts), in place of the one before. */
  keepView(name: string, hash: string, schema: unknown, view: SchemaView): void {
    this.dropView(name);
    this.views.set(name, { hash, schema, view });
    this.viewsInlined += view.inlined;
  }

  dropView(name: string): void {
    this.viewsInlined -= this.views.get(name)?.view.inlined ?? 0;
    this.views.delete(name);
  }

  clearViews(): void {
    this.views.clear();
    this.viewsInlined = 0;
  }

  /**
   * The renames no `tools_renamed` line of this isolate said yet: new names, and those it gave
   * the tools KV held (`nameKnownTools`), which no line said either.
   */
  unsaid<T extends { from: string; to: string }>(renames: readonly T[]): T[] {
    return renames.filter(({ from, to }) => this.byOriginal.get(from) !== to || !this.said.has(to));
  }

  /** Notes renames a `tools_renamed` line said, while the names stand. */
  saidRenames(renames: readonly { from: string; to: string }[]): void {
    for (const { from, to } of renames) if (this.byOriginal.get(from) === to) this.said.add(to);
  }

  /** Lets go of a tool's name and schema view: it left the origin's memory (`OriginMemory.remember`). */
  forget(original: string): void {
    const name = this.byOriginal.get(original);
    if (name === undefined) return;
    this.changes++;
    this.byOriginal.delete(original);
    this.byName.delete(name);
    this.said.delete(name);
    this.dropView(name);
  }

  remember(name: string, original: string): void {
    if (this.byOriginal.get(original) === name && this.byName.get(name) === original) return;
    this.changes++;
    if (this.byName.size >= MAX_TOOLS && !this.byName.has(name)) {
      const oldest = this.byName.keys().next().value as string;
      this.byOriginal.delete(this.byName.get(oldest) as string);
      this.byName.delete(oldest);
      this.said.delete(oldest);
    }
    const previous = this.byName.get(name);
    if (previous !== undefined && previous !== original) {
      this.byOriginal.delete(previous);
      this.said.delete(name);
    }
    const oldName = this.byOriginal.get(original);
    if (oldName !== undefined && oldName !== name) {
      this.byName.delete(oldName);
      this.said.delete(oldName);
    }
    this.byName.set(name, original);
    this.byOriginal.set(original, name);
  }
}
