/**
 * Definition pins per caller (`TOOL_CHANGES`, docs/rules.md, "Changed
 * definitions"): a definition that differs per caller (a description that
 * names the user, tools scoped by the token) is not a change; a change of
 * what the origin shows the same caller over time is.
 *
 * Each tool has the map's pin, the first definition the proxy saw of it
 * (definition-pins.ts). Each caller (callers.ts `pins`: the credentials the
 * origin sees, sessions aside) has their own where theirs differs, in KV
 * beside the map (`v2:<origin>:pins:<caller>`, stored-map.ts), read once per
 * isolate. A listing compares each tool with the caller's own pin, or the
 * map's where they have none:
 *
 * - the same: shown;
 * - another, under `log`: logged once as `tool_definition_changed`, and the
 *   caller's own from then on (a caller's first listing that differs from the
 *   tool's first definition is logged so too: `log` stores nothing for
 *   callers listed alike);
 * - another, under `hold`, for a caller the proxy has pinned before: a
 *   change, held for that caller until the operator accepts it (the accept
 *   key, which stays for every caller held on the same definition); the
 *   definition is noted in the map as held;
 * - another, under `hold`, for a caller new to the proxy: theirs, logged as
 *   `tool_definition_differs` — unless it is a definition some caller is held
 *   on (the map's `held`): held too. A caller is new until their first
 *   listing stores their pins (even none; past the isolate's budget of new
 *   callers' records, in its memory alone until a later listing writes them:
 *   caller-pin-records.ts `NewCallerWrites`).
 *
 * So under `hold` a change reaches no caller who was shown the tool before,
 * and reaches a caller new to the proxy (new credentials) only until a
 * caller who was shown the tool before lists it (SECURITY.md).
 */
import type { BoundedMap } from "../bounded-map";
import { logEvent, WholeText } from "../log";
import { namesWeight, nameWeight } from "../names/weight";
import type { ChangeMode } from "../rules/tool-rules";
import {
  type CallerRecord,
  type OwnPins,
  type RecordReads,
  type RecordWrites,
  seenBy,
  seenMark,
} from "./caller-pin-records";
import {
  acceptCommand,
  acceptedPin,
  changedParts,
  type ListedDefinition,
  takesOver,
  takesOverScope,
} from "./definition-pins";
import type { SharedPin } from "./isolate-memory";

/**
 * Own pins per caller, weighed so too. Past it a caller takes no pin of their own: under `hold`
 * a definition of theirs that differs from the map's is held, under `log` logged at each listing.
 * A pin dropped to make room would be compared with the map's again: an origin that showed a
 * caller their own definition, then as many more (100 names of 12,800 characters), could show
 * them the map's unheld and unlogged, a definition its own client was listed first.
 */
const MAX_PINS_PER_CALLER = 10_000;
/**
 * `tool_definition_changed` (and `_differs`) lines per request: an origin
 * that changes every definition at every listing gets one more line for the
 * rest, not one per tool. Under `hold`, the rest are logged on the next listings.
 */
const MAX_CHANGE_LINES = 10;
/**
 * Accept keys read from KV per request (an invocation may make 1,000 KV
 * operations): a held tool past them stays held until a later listing reads its key.
 */
const MAX_ACCEPT_READS = 10;
/**
 * What one request's listings may spend deciding pins, together: a batch of
 * 256 `tools/list` (protocol 2025-03-26) is one request, and each listing
 * spending its own was 2,560 accept keys read and as many lines logged.
 */
export class PinAllowance {
  acceptReads = MAX_ACCEPT_READS;
  changeLines = MAX_CHANGE_LINES;
  /** Whether the request logged its `tool_definition_changes_unlogged` line. */
  restLogged = false;
  /** Callers' records the request writes: one write under way each (caller-pin-records.ts). */
  readonly recordWrites: RecordWrites = new Map();
  /** Callers' records the request reads: one read each, until the isolate holds the record. */
  readonly recordReads: RecordReads = new Map();
}

/** What one listing's definitions are compared with, for its caller. */
export interface PinBook {
  mode: Exclude<ChangeMode, "allow">;
  /** The map's pin of a tool: the first definition seen. */
  shared(original: string): string | undefined;
  /** The map's pin of a tool as KV holds it, as far as this isolate read or wrote it. */
  stored(original: string): string | undefined;
  /** The caller's own pins; `undefined` when they could not be read (no one is new then). */
  record: CallerRecord | undefined;
  /** Whether some caller is held on this definition of the tool. */
  heldForSomeone(original: string, pin: string): boolean;
  /** The tools KV's map holds, as this isolate last read or wrote it. */
  mapped(): Iterable<string>;
  /** Whether the operator accepted this definition of the tool (reads KV, a bounded number of times). */
  accepted(original: string, pin: string): Promise<boolean>;
  /** The tenant's wrangler environment (`WRANGLER_ENV`), for the accept command the log line names. */
  environment: string | undefined;
  /** Held changes this isolate logged already. */
  logged: BoundedMap<string, true>;
  /** What the request's listings have left to spend. */
  allowance: PinAllowance;
}

/** What one listing's definitions decide, for its caller. */
export interface PinDecisions {
  /** Originals held for this caller. */
  held: Set<string>;
  /** Map pins to set: tools seen for the first time, and earlier versions' pins taken over. */
  shared: Map<string, SharedPin>;
  /** The caller's own pins as they are now, and what they were listed, when these are to be stored. */
  own: OwnPins | undefined;
  /** Definitions this caller is held on, to note in the map. */
  heldPins: Map<string, string>;
  /** Definitions the operator accepted, each `acceptedPin(original, pin)`. */
  accepted: Set<string>;
}

/** Compares each listed tool's definition with the caller's pin, or the map's. */
export async function decidePins(
  listed: readonly ListedDefinition[],
  book: PinBook,
): Promise<PinDecisions> {
  const { mode, record } = book;
  const own = new Map(record?.pins);
  const decisions: PinDecisions = {
    held: new Set(),
    shared: new Map(),
    own: undefined,
    heldPins: new Map(),
    accepted: new Set(),
  };
  let ownChanged = false;
  let room = MAX_PINS_PER_CALLER - namesWeight(own.keys());
  /** Tools new to the map this listing pinned for the caller too (below). */
  const pinnedFirst = new Set<string>();
  let droppedForRoom = false;
  /**
   * Lets go of the caller's own pins that KV's map holds as the tools' own,
   * but those this listing pinned first: what the map says of them is theirs.
   */
  const dropStored = () => {
    for (const [original, pin] of own) {
      if (pinnedFirst.has(original) || book.stored(original) !== pin) continue;
      own.delete(original);
      room += nameWeight(original);
      ownChanged = true;
    }
  };
  /**
   * Sets the caller's own pin of `original`; false where a new one finds no room. `unstored`:
   * kept even where it is the map's pin, while KV's map does not hold that pin.
   */
  const setOwn = (original: string, pin: string, unstored = false): boolean => {
    if (own.get(original) === pin) return true;
    if (book.shared(original) === pin && !unstored) {
      if (own.delete(original)) room += nameWeight(original);
    } else {
      if (!own.has(original)) {
        // Once a listing, which finds no more after: once per tool past the room was quadratic.
        if (nameWeight(original) > room && !droppedForRoom) {
          droppedForRoom = true;
          dropStored();
        }
        if (nameWeight(original) > room) return false;
        room -= nameWeight(original);
      }
      own.set(original, pin);
    }
    ownChanged = true;
    return true;
  };
  const newCaller = record !== undefined && !record.stored;
  const seen =
    mode === "hold" && record !== undefined ? seenBy(record, listed, book.mapped) : undefined;
  /** Whether the caller was never listed `original` before: their own definition is no change. */
  const firstListed = (original: string) =>
    newCaller || seen?.before?.has(seenMark(original)) === false;
  const { allowance } = book;
  const unlogged: string[] = [];
  /** Logs a change, or a caller's own definition (`differs`), while the listing has lines left. */
  const logChange = (
    kind: "changed" | "differs",
    fields: { tool: string } & Record<string, unknown>,
  ) => {
    if (allowance.changeLines === 0) {
      unlogged.push(fields.tool);
      return false;
    }
    allowance.changeLines--;
    logEvent(kind === "differs" ? "tool_definition_differs" : "tool_definition_changed", fields);
    return true;
  };

  /**
   * Holds `change.to` for the caller, unless the operator accepted it; `noted`: some caller is
   * then held on that definition, which the map notes.
   */
  const holdUnlessAccepted = async (
    change: { tool: string; changed: string[]; from?: string; to: string },
    noted: boolean,
  ) => {
    const { tool: original, to: now } = change;
    if (await book.accepted(original, now)) {
      logEvent("tool_definition_accepted", { tool: original, pin: now });
      decisions.accepted.add(acceptedPin(original, now));
      if (record !== undefined) setOwn(original, now);
      return;
    }
    decisions.held.add(original);
    if (noted) decisions.heldPins.set(original, now);
    const key = `${original}\n${now}`;
    if (
      !book.logged.get(key) &&
      logChange("changed", {
        ...change,
        // Whole, as `npm run holds -- list` names it: cut, it is no pin (past the request's log
        // budget, a string is cut to 64 characters, and a pin is longer).
        to: new WholeText(now),
        mode,
        // Whole, or the pasted command would accept no definition.
        accept: new WholeText(acceptCommand(now, original, book.environment)),
      })
    ) {
      book.logged.set(key, true);
    }
  };

  for (const { original, definition, pinAs } of listed) {
    const now = await definition.pin;
    const shared = book.shared(original);
    // A tool the map holds no pin of, but the caller does (one the map had no room for, pinned
    // first for them), is compared with theirs: else every new isolate took its change for new.
    const expected = own.get(original) ?? shared;
    if (expected === undefined || (shared === undefined && expected === now)) {
      // Under `hold`, the caller's own too, until KV's map holds it: another isolate, which read
      // the map before the tool was added, may pin it at once for another caller, and KV keeps
      // the pin it got first (map-store.ts), which this caller's first definition is not.
      if (mode === "hold" && record !== undefined) {
        if (setOwn(original, now)) pinnedFirst.add(original);
        else if (!firstListed(original)) {
          // Past their bound, a tool they were listed before that no pin of KV's map or theirs
          // covers has nothing to be compared with: held, as a definition of theirs that differs
          // from the map's is, never taken for new (an origin that filled the map and their
          // pins could change it unheld in every new isolate). Not noted: it is no change.
          await holdUnlessAccepted({ tool: original, changed: [], to: now }, false);
          continue;
        }
      }
      decisions.shared.set(original, { pin: now, over: undefined });
      continue;
    }
    if (expected === now) {
      // Under `hold`, a pin this isolate set and KV's map lacks is the caller's own too, as for
      // the first caller it was listed to: the map may have no room for the tool, and a new
      // isolate would find no pin of it to compare with.
      if (mode === "hold" && record !== undefined && book.stored(original) === undefined) {
        setOwn(original, now, true);
      }
      continue;
    }
    if (
      takesOver(expected, now) ||
      (pinAs !== undefined && (await takesOverScope(expected, now, pinAs)))
    ) {
      if (own.has(original)) setOwn(original, now);
      else decisions.shared.set(original, { pin: now, over: shared });
      continue;
    }
    const change = {
      tool: original,
      changed: changedParts(expected, now),
      from: expected,
      to: now,
    };
    if (mode === "log") {
      if (record !== undefined) setOwn(original, now);
      logChange("changed", { ...change, mode });
      continue;
    }
    // Theirs while they have room for a pin of their own; past it, held as a change is.
    if (
      firstListed(original) &&
      !own.has(original) &&
      !book.heldForSomeone(original, now) &&
      setOwn(original, now)
    ) {
      logChange("differs", { ...change, mode });
      continue;
    }
    await holdUnlessAccepted(change, true);
  }
  if (unlogged.length > 0 && !allowance.restLogged) {
    allowance.restLogged = true;
    logEvent("tool_definition_changes_unlogged", { mode, count: unlogged.length, tools: unlogged });
  }
  // Under `hold`, a caller is pinned at their first listing, even with no pin of their own, and
  // again once listed a tool they were not. A write under `log` says nothing of what they were
  // listed: then every tool counts as listed to them, should the operator choose `hold` again.
  // And again while KV lacks the record (`unwritten`): a new caller's, past the isolate's budget.
  if (record !== undefined && (ownChanged || seen?.grew || record.unwritten)) {
    // Written anyway: what the map now holds as theirs need not be written with it.
    if (mode === "hold") dropStored();
    // Their listing pin stays: made with other pins than these, it proves no listing, and a
    // listing that pays its digests stores another (tool-map.ts).
    const { listing } = record;
    decisions.own = {
      pins: own,
      ...(seen ? { seen: seen.now } : {}),
      ...(listing === undefined ? {} : { listing }),
    };
  }
  return decisions;
}
