/**
 * A listing's pins decided for its caller (caller-pins.ts `decidePins`) with
 * what the isolate and KV hold: the caller's own record read, accept keys
 * read within the request's allowance, and what the decisions note kept in
 * the origin's memory (map-store.ts stores them) and the caller's record
 * written (caller-pin-records.ts).
 */
import { logEvent } from "../log";
import type { ChangeMode } from "../rules/tool-rules";
import { type CallerPins, callerPinsKey } from "./caller-pin-records";
import { decidePins, type PinAllowance, type PinDecisions } from "./caller-pins";
import { acceptedPin, acceptKey, type ListedDefinition } from "./definition-pins";
import type { OriginMemory } from "./isolate-memory";

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
 * Compares each listed tool's definition with the caller's pin, or the map's,
 * and notes what that decides: the map's new pins and held definitions in the
 * origin's memory (map-store.ts stores them), the caller's own in KV.
 */
export async function pinListing(
  listed: readonly ListedDefinition[],
  { kv, scope, origin, callerPins, caller, mode, environment, waitUntil, allowance }: PinContext,
): Promise<PinDecisions> {
  const key = callerPinsKey(scope, caller);
  const decisions = await decidePins(listed, {
    mode,
    shared: (original) => origin.sharedPin(original),
    stored: (original) => origin.stored?.tools.get(original)?.pin,
    record: await callerPins.read(kv, key, allowance.recordReads),
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
  if (own)
    callerPins.write(kv, key, own, mode, waitUntil, allowance.recordWrites, origin.newCallers);
  return decisions;
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
