/**
 * Each caller's own definition pins as an isolate keeps them, in front of KV
 * (`v2:<origin>:pins:<caller>`, docs/tool-map.md): read once per isolate and
 * caller, written as caller-pins.ts decides, a new caller's within the
 * isolate's budget (`NewCallerWrites`). What they mean is caller-pins.ts's.
 */
import { BoundedMap } from "../bounded-map";
import { logEvent } from "../log";
import { fingerprint32 } from "../names/stable-hash";
import { NAME_WEIGHT_CHARS, namesWeight } from "../names/weight";
import type { ChangeMode } from "../rules/tool-rules";
import { WAIT_UNTIL_MS } from "../wait-until";
import { RateWindow } from "./rate-window";
import { MAX_LARGE_READS, ReadSlots } from "./read-slots";
import { KEY_WRITE_MS, MAX_TOOLS } from "./stored-map";

/**
 * A caller's own pins as the proxy knows them: `stored`, whether they were
 * pinned (the caller is not new): KV holds them, or, `unwritten`, this
 * isolate alone, until a listing of theirs finds room in `NewCallerWrites`.
 */
export interface CallerRecord {
  stored: boolean;
  unwritten?: true;
  pins: Map<string, string>;
  /**
   * The tools the caller was listed under `hold`, as `seenMark`s joined by
   * commas: a tool they were never listed is theirs at their first listing of
   * it, not a change. `undefined` where unknown (a record of an earlier
   * version, or none yet): then every tool counts as one they were listed.
   */
  seen?: string;
  /**
   * Their listing pin (listing-pin.ts): of the last large listing of theirs
   * that no listing pin proved, each tool beside the pin the listing left
   * them (their own, else the map's), where that pin is the one digested
   * from its text. A new isolate proves the same listing with one digest,
   * where the origin lists callers otherwise than the map's listing pin.
   */
  listing?: string;
}

/** What a caller's record holds in KV: their own pins, the tools they were listed, their listing pin. */
export type OwnPins = Pick<CallerRecord, "pins" | "seen" | "listing">;

/**
 * A tool in a caller's `seen`: its name's 32-bit fingerprint. Two names an
 * origin made to give one take the second for listed before: compared with
 * its pin, as every tool was before `seen`, never taken for new.
 */
export const seenMark = (original: string) => fingerprint32(original).toString(36);

/**
 * Tools a caller's record says they were listed (`seenBy`): twice what KV's
 * map holds, whose every tool's mark stays; 7 characters or so each.
 */
const MAX_SEEN = 2 * MAX_TOOLS;

/**
 * The tools a caller was listed under `hold`, before this listing (`before`,
 * `undefined` where their record does not say) and with it (`now`), and
 * whether it listed one more (`grew`; a record that did not say, too).
 * Bounded: past `MAX_SEEN` marks, those of the tools KV's map holds stay
 * first, then the latest. The map keeps a tool listed lately, and its pin,
 * against tools new to it (stored-map.ts `keptTools`): an origin that listed a
 * caller 20,000 other names cannot have a tool they were listed taken for
 * new, and its change for theirs.
 */
export function seenBy(
  record: CallerRecord,
  listed: ReadonlyArray<{ original: string }>,
  /** The tools KV's map holds, as the isolate last read or wrote it. */
  mapped: () => Iterable<string>,
): { before: Set<string> | undefined; now: string; grew: boolean } {
  const before =
    record.stored && record.seen !== undefined ? new Set(record.seen.split(",")) : undefined;
  const marks = new Set(before);
  for (const { original } of listed) marks.add(seenMark(original));
  let kept = [...marks];
  if (kept.length > MAX_SEEN) {
    const inMap = new Set([...mapped()].map(seenMark));
    const rest = kept.filter((mark) => !inMap.has(mark));
    // The oldest marks of tools KV's map lacks go first: those of its tools are all kept.
    kept = [...rest, ...kept.filter((mark) => inMap.has(mark))].slice(-MAX_SEEN);
  }
  return { before, now: kept.join(","), grew: before === undefined || marks.size > before.size };
}

const MAX_CALLERS = 1_000;
/**
 * Under `log`, how long after this isolate wrote a caller's pins it writes
 * them again: an origin whose descriptions hold a date or a count changes a
 * definition at every listing, and each write is one of KV's (a Free plan's
 * 1,000 a day; one a second per key). Memory keeps the latest pins; another
 * isolate may log a change once more. Under `hold` the pins decide what is
 * held, and every change is written.
 */
export const LOG_PINS_WRITE_MS = 60_000;
/** Own pins kept per isolate, all callers together, each weighing its tool's name (names/weight.ts). */
const MAX_OWN_PINS = 50_000;
/**
 * Records of callers KV holds none of that an isolate writes a minute. In
 * relay mode a caller is whatever credentials a request carries, so a client
 * that made up a cookie (or a query) per request made each `tools/list` under
 * `hold` a write: a Free plan's 1,000 a day, the whole account's, in 1,000
 * listings. Past them a new caller's record is kept in the isolate's memory
 * alone (`unwritten`): this isolate holds changes for them as for any caller,
 * and writes it at a listing of theirs that finds room; another isolate takes
 * them for new until then (SECURITY.md). A request is never refused for it:
 * refused, a client could keep every new caller out with 10 requests a minute.
 */
export const MAX_NEW_CALLER_WRITES = 10;
const NEW_CALLER_MS = 60_000;

/**
 * One isolate's budget of new callers' records for an origin (kept with its
 * memory, isolate-memory.ts `OriginMemory`), and the line that says a record
 * waits for it: once a minute at most, with how many since the last.
 */
export class NewCallerWrites extends RateWindow {
  private loggedAt = Number.NEGATIVE_INFINITY;
  private deferred = 0;

  constructor() {
    super(MAX_NEW_CALLER_WRITES, NEW_CALLER_MS);
  }

  /** A new caller's record was left unwritten (`take` found no room): logged, once a minute at most. */
  defer(now = Date.now()): void {
    this.deferred++;
    if (now - this.loggedAt < NEW_CALLER_MS) return;
    logEvent("caller_pins_deferred", { limit: MAX_NEW_CALLER_WRITES, deferred: this.deferred });
    this.loggedAt = now;
    this.deferred = 0;
  }
}
export const callerPinsKey = (origin: string, caller: string) => `${origin}:pins:${caller}`;

/** One request's writes of callers' records under way, by key: each writes the latest when it may. */
export type RecordWrites = Map<string, { latest: OwnPins; done: Promise<void> }>;
/**
 * One request's reads of callers' records under way, by key. A request never waits for another's:
 * when its client leaves, the runtime cancels the request, and a read it had under way never
 * settles (test/worker/held-reads.test.ts).
 */
export type RecordReads = Map<string, Promise<CallerRecord | undefined>>;

/** A caller KV holds nothing of: one record for all of them, as most callers have no pins of their own. */
const NEW_CALLER: CallerRecord = { stored: false, pins: new Map() };

function decodeRecord(text: string | null): CallerRecord {
  if (text === null) return NEW_CALLER;
  try {
    const value = JSON.parse(text) as {
      format?: unknown;
      pins?: unknown;
      seen?: unknown;
      listing?: unknown;
    };
    if (value.format === 1 && typeof value.pins === "object" && value.pins !== null) {
      const pins = Object.entries(value.pins).filter(
        (pair): pair is [string, string] => typeof pair[1] === "string",
      );
      const seen = typeof value.seen === "string" ? { seen: value.seen } : {};
      const listing = typeof value.listing === "string" ? { listing: value.listing } : {};
      return { stored: true, pins: new Map(pins), ...seen, ...listing };
    }
  } catch {}
  // Another format: the caller was pinned, by a version that wrote it otherwise.
  return { stored: true, pins: new Map() };
}

// fromEntries: an original named `__proto__` stays an ordinary key.
const encodeRecord = ({ pins, seen, listing }: OwnPins) =>
  JSON.stringify({
    format: 1,
    pins: Object.fromEntries(pins),
    ...(seen === undefined ? {} : { seen }),
    ...(listing === undefined ? {} : { listing }),
  });

/** Every caller's own pins this isolate read or wrote, per origin (the key says whose). */
export class CallerPins {
  private readonly records = new BoundedMap<string, CallerRecord>(MAX_CALLERS, undefined, {
    max: MAX_OWN_PINS,
    weigh: (record) =>
      1 +
      namesWeight(record.pins.keys()) +
      Math.ceil(((record.seen?.length ?? 0) + (record.listing?.length ?? 0)) / NAME_WEIGHT_CHARS),
  });
  /** Callers whose pins this isolate wrote within `LOG_PINS_WRITE_MS`. */
  private readonly writtenLately = new BoundedMap<string, true>(MAX_CALLERS, LOG_PINS_WRITE_MS);
  /**
   * When this isolate last read each caller's record from KV, or KV took its write of it: a record
   * held longer may be one another isolate wrote over since (`syncedAt`).
   */
  private readonly synced = new BoundedMap<string, number>(MAX_CALLERS);
  /**
   * Callers whose record this isolate holds newer than KV's: a write of it under way (one under
   * way `WAIT_UNTIL_MS` was stopped with its request, and is taken for over), or one left to the
   * next under `log` (`LOG_PINS_WRITE_MS`), until a write is done.
   */
  private readonly writing = new BoundedMap<string, true>(MAX_CALLERS, WAIT_UNTIL_MS);
  private readonly ahead = new BoundedMap<string, true>(MAX_CALLERS);
  /** When this isolate last wrote each caller's record, or is to: its next write a second after. */
  private readonly writeTimes = new BoundedMap<string, number>(MAX_CALLERS);
  /** The reads of each caller's record under way: a few at once, whatever the requests. */
  private readonly readSlots = new BoundedMap<string, ReadSlots>(MAX_CALLERS);

  /**
   * The caller's own pins: read from KV once (again after a failed read), by the request's own
   * read (`reads`) until one is done; `undefined` when it failed. `freshWithin`: read again where
   * the isolate read it, or KV took its write, longer ago than that, and holds nothing newer:
   * another isolate may have written it since, and a listing decided from the copy held here
   * wrote that copy back over it (a tool listed to them there taken for new here, and its
   * change for theirs).
   */
  async read(
    kv: KVNamespace,
    key: string,
    reads: RecordReads,
    freshWithin?: number,
  ): Promise<CallerRecord | undefined> {
    const known = this.records.get(key);
    const stale =
      known !== undefined &&
      freshWithin !== undefined &&
      known.unwritten !== true &&
      !this.writing.get(key) &&
      !this.ahead.get(key) &&
      Date.now() - (this.synced.get(key) ?? 0) > freshWithin
        ? known
        : undefined;
    if (known && !stale) return known;
    let read = reads.get(key);
    if (!read) {
      let slots = this.readSlots.get(key);
      if (!slots) {
        slots = new ReadSlots(MAX_LARGE_READS);
        this.readSlots.set(key, slots);
      }
      read = slots
        .read(
          () => ![undefined, stale].includes(this.records.get(key)),
          () => kv.get(key, "text"),
        )
        .then(
          (text) => {
            reads.delete(key);
            if (text !== undefined) this.synced.set(key, Date.now());
            // Another request's read may have come first (`undefined`), and its listing written
            // since: what it holds stands, but for the copy this read was to replace.
            const held = this.records.get(key);
            const record =
              held !== undefined && (held !== stale || text === undefined)
                ? held
                : text === undefined
                  ? undefined
                  : decodeRecord(text);
            if (record) this.records.set(key, record);
            return record;
          },
          (error) => {
            reads.delete(key);
            logEvent("kv_error", { op: "get", what: "caller_pins", error: String(error) });
            // The copy held, as before the read: no worse than not reading again.
            return this.records.get(key);
          },
        );
      reads.set(key, read);
    }
    return read;
  }

  /**
   * When this isolate last read the record `key` from KV, or KV took its write of it; `undefined`
   * where neither. What it holds of the record is what KV held then: another isolate may have
   * written the record since (listed the caller a tool, or accepted a change for them).
   */
  syncedAt(key: string): number | undefined {
    return this.synced.get(key);
  }

  /**
   * Stores the caller's pins (and, under `hold`, the tools they were
   * listed): in memory now, in KV by `waitUntil`; under `log`, in KV once per
   * `LOG_PINS_WRITE_MS`. Where the request (`writes`) writes the record already,
   * that write takes this one's place: once done, it writes the latest a second later.
   * A record KV holds none of is written only where `newCallers` has room, else kept unwritten.
   * Settles once KV holds this record or a later one, or the write failed (logged); at once where
   * none is made.
   */
  write(
    kv: KVNamespace,
    key: string,
    record: OwnPins,
    mode: Exclude<ChangeMode, "allow">,
    waitUntil: (promise: Promise<unknown>) => void,
    writes: RecordWrites,
    newCallers: NewCallerWrites,
    listingOnly = false,
  ): Promise<void> {
    const known = this.records.get(key);
    const waiting = known?.unwritten === true;
    if ((known?.stored !== true || waiting) && !newCallers.take()) {
      if (!waiting) newCallers.defer();
      this.records.set(key, { ...record, stored: true, unwritten: true });
      return Promise.resolve();
    }
    const stored = known?.stored === true && !waiting;
    this.records.set(key, { stored: true, ...record });
    if (mode === "log" && stored && this.writtenLately.get(key)) {
      this.ahead.set(key, true);
      return Promise.resolve();
    }
    // A listing pin alone spends none of the minute's write: the pins that follow it need it.
    if (!listingOnly) this.writtenLately.set(key, true);
    const underWay = writes.get(key);
    if (underWay) {
      underWay.latest = record;
      return underWay.done;
    }
    const write: { latest: OwnPins; done: Promise<void> } = {
      latest: record,
      done: Promise.resolve(),
    };
    writes.set(key, write);
    this.writing.set(key, true);
    const writeLatest = async () => {
      let written: typeof write.latest;
      do {
        await this.turnToWrite(key);
        written = write.latest;
        await kv.put(key, encodeRecord(written));
        this.ahead.delete(key);
        this.synced.set(key, Date.now());
        // Counted from when KV took it: the second is KV's, and the write took its time.
        this.writeTimes.set(key, Math.max(Date.now(), this.writeTimes.get(key) ?? 0));
        // Let go of at once where nothing came meanwhile: a write after it starts one of its own.
      } while (write.latest !== written);
      writes.delete(key);
    };
    write.done = writeLatest()
      .catch((error) => {
        writes.delete(key);
        logEvent("kv_error", { op: "put", what: "caller_pins", error: String(error) });
      })
      .finally(() => this.writing.delete(key));
    waitUntil(write.done);
    return write.done;
  }

  /**
   * Waits until this isolate may write `key` again: a second after its last write of it, whatever
   * request made that one (two requests of one caller, each showing them a tool they were not
   * listed, wrote their record milliseconds apart, and KV refuses the second).
   */
  private async turnToWrite(key: string): Promise<void> {
    const now = Date.now();
    const at = Math.max(now, (this.writeTimes.get(key) ?? 0) + KEY_WRITE_MS);
    this.writeTimes.set(key, at);
    if (at > now) await new Promise((waited) => setTimeout(waited, at - now));
  }
}
