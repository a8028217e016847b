/**
 * A listing's pins decided for its caller (caller-pins.ts `decidePins`) with
 * what the isolate and KV hold: the caller's own record read, accept keys
 * read within the request's allowance, and what the decisions note kept in
 * the origin's memory (map-store.ts stores them) and the caller's record
 * written (caller-pin-records.ts).
 */
import { logEvent } from "../log";
import type { ListedTool } from "../protocol/tools-list";
import type { ChangeMode, ChangeScope } from "../rules/tool-rules";
import { type CallerPins, callerPinsKey, type OwnPins } from "./caller-pin-records";
import { decidePins, type PinAllowance, type PinDecisions } from "./caller-pins";
import { acceptedPin, acceptKey, type ListedDefinition } from "./definition-pins";
import { FRESH_MS, type OriginMemory } from "./isolate-memory";
import { type DigestedListing, ProvenPins } from "./listing-pin";

/** Where one listing's pins are decided: the origin's memory and KV, for one caller. */
export interface PinContext {
  kv: KVNamespace;
  /** The origin's KV scope (`v2:<digest>`). */
  scope: string;
  origin: OriginMemory;
  callerPins: CallerPins;
  /** The caller's digest (callers.ts `pins`). */
  caller: string;
  mode: Exclude<ChangeMode, "allow">;
  /** The tenant's wrangler environment (`WRANGLER_ENV`): where the logged accept command runs. */
  environment: string | undefined;
  waitUntil: (promise: Promise<unknown>) => void;
  /** What the request's listings have left to spend. */
  allowance: PinAllowance;
}

/**
 * The caller's own record (caller-pin-records.ts): read from KV once per
 * isolate and caller; under `hold`, again where what the isolate holds of it
 * is older than `FRESH_MS` and nothing newer than KV's: decided from, and
 * written back, an old copy took a tool listed to them in another isolate
 * since for new, and its change for theirs. Under `log` such a copy logs a
 * change once more at most, and is kept.
 */
const pinsRecord = ({ kv, scope, callerPins, caller, allowance, mode }: PinContext) =>
  callerPins.read(
    kv,
    callerPinsKey(scope, caller),
    allowance.recordReads,
    mode === "hold" ? FRESH_MS : undefined,
  );

/**
 * Writes the caller's record as `CallerPins.write` does; `listingOnly`: a
 * listing pin alone, which spends none of `log`'s write a minute.
 */
const writeRecord = (
  { kv, scope, callerPins, caller, mode, waitUntil, allowance, origin }: PinContext,
  pins: OwnPins,
  listingOnly = false,
) =>
  callerPins.write(
    kv,
    callerPinsKey(scope, caller),
    pins,
    mode,
    waitUntil,
    allowance.recordWrites,
    origin.newCallers,
    listingOnly,
  );

/**
 * What may prove a listing's pins with one digest (listing-pin.ts): the
 * map's listing pin, then the caller's own. Their record is read for it
 * here, before the listing is named, rather than when its pins are decided.
 */
export async function provenPins(
  tools: readonly ListedTool[],
  context: PinContext,
  changeScope: ChangeScope | undefined,
): Promise<ProvenPins> {
  const { origin } = context;
  const record = await pinsRecord(context);
  const sharedPin = (original: string) => origin.sharedPin(original);
  return new ProvenPins(
    tools,
    [
      { stored: origin.stored?.listingPin, pinOf: sharedPin },
      {
        stored: record?.listing,
        pinOf: (original) => record?.pins.get(original) ?? sharedPin(original),
      },
    ],
    changeScope,
  );
}

/** What a listing's pins decide, and what became of the caller's record. */
export interface PinnedListing extends PinDecisions {
  /** Settles once KV holds the record this listing wrote (or a later one); at once where none. */
  written: Promise<void>;
  /** The caller's listing pin to keep, where no record write took it: unless the map holds it. */
  listing: string | undefined;
}

/**
 * Compares each listed tool's definition with the caller's pin, or the map's,
 * and notes what that decides: the map's new pins and held definitions in the
 * origin's memory (map-store.ts stores them), the caller's own in KV.
 * `digested`, a large listing named from scratch whose tools were digested
 * one by one: where its pins are now the caller's (none held, none changed),
 * its listing pin is theirs (caller-pin-records.ts `listing`), written with
 * their record where it is written anyway.
 */
export async function pinListing(
  listed: readonly ListedDefinition[],
  context: PinContext,
  digested?: DigestedListing,
): Promise<PinnedListing> {
  const { kv, scope, origin, mode, environment, allowance } = context;
  const record = await pinsRecord(context);
  const decisions = await decidePins(listed, {
    mode,
    shared: (original) => origin.sharedPin(original),
    stored: (original) => origin.stored?.tools.get(original)?.pin,
    record,
    heldForSomeone: (original, pin) =>
      !origin.acceptedPins.get(acceptedPin(original, pin)) &&
      [
        ...(origin.heldPins.get(original) ?? []),
        ...(origin.stored?.held.get(original) ?? []),
      ].includes(pin),
    accepted: (original, pin) =>
      accepted(
        kv,
        scope,
        origin,
        original,
        pin,
        () => allowance.acceptReads > 0 && allowance.acceptReads-- > 0,
      ),
    mapped: () => origin.stored?.tools.keys() ?? [],
    environment,
    logged: origin.heldLogged,
    allowance,
  });
  for (const [original, pin] of decisions.shared) origin.setPin(original, pin);
  for (const [original, pin] of decisions.heldPins) origin.noteHeld(original, pin);
  for (const accepted of decisions.accepted) origin.acceptedPins.set(accepted, true);
  const { own } = decisions;
  const theirs = (original: string) =>
    (own ?? record)?.pins.get(original) ?? origin.sharedPin(original);
  const kept =
    digested &&
    record &&
    listed.every(({ original }) => theirs(original) === digested.pins.get(original))
      ? await digested.digest()
      : undefined;
  const listing = kept !== undefined && kept !== record?.listing ? kept : undefined;
  if (!own) return { ...decisions, written: Promise.resolve(), listing };
  const written = writeRecord(context, listing ? { ...own, listing } : own);
  return { ...decisions, written, listing: undefined };
}

/**
 * Writes the caller's listing pin (`PinnedListing.listing`) where the map's
 * is not the same, with their record as it is: a listing of theirs other
 * than the one the map's listing pin was made from. As their record is
 * written (`CallerPins.write`): within the isolate's budget of new callers,
 * under `log` once a minute at most. Only where the isolate read the record
 * from KV (or wrote it) within `FRESH_MS`, as a new isolate's first listing
 * has: no listing of theirs needs the write, and one from a record held
 * since before the origin said its tools changed wrote over what another
 * isolate wrote since (a tool listed to them there, then taken for new and
 * its change for theirs: test/worker/listing-pin.test.ts).
 */
export async function keepListingPin(listing: string, context: PinContext): Promise<void> {
  const { scope, origin, callerPins, caller } = context;
  const record = await pinsRecord(context);
  if (record === undefined || listing === origin.stored?.listingPin) return;
  const synced = callerPins.syncedAt(callerPinsKey(scope, caller));
  if (synced === undefined || Date.now() - synced > FRESH_MS) return;
  const { pins, seen } = record;
  await writeRecord(context, { pins, ...(seen === undefined ? {} : { seen }), listing }, true);
}

/**
 * Whether the operator wrote the accept key for `original`'s definition
 * `pin`: known for a minute once read, read from KV only while `mayRead`.
 * The key stays: every caller held on the same definition takes it. Known
 * by the tool and pin (`acceptedPin`), not by the key: the key names the
 * tool by its name's 32-bit fingerprint, which an origin can give another
 * tool, and that tool's check would have found this one's answer.
 */
async function accepted(
  kv: KVNamespace,
  scope: string,
  origin: OriginMemory,
  original: string,
  pin: string,
  mayRead: () => boolean,
): Promise<boolean> {
  const check = acceptedPin(original, pin);
  const known = origin.acceptChecks.get(check);
  if (known !== undefined) return known;
  if (!mayRead()) return false;
  let value: string | null = null;
  try {
    value = await kv.get(acceptKey(scope, pin, original), "text");
  } catch (error) {
    logEvent("kv_error", { op: "get", what: "accept_key", error: String(error) });
  }
  const isAccepted = value === original;
  origin.acceptChecks.set(check, isAccepted);
  return isAccepted;
}
