/**
 * What a write of the tool map writes (map-store.ts `store`): the map KV
 * holds, merged with what this isolate knows of the origin's tools, pins,
 * held definitions and layout-1 names, expired and bounded. No I/O.
 */
import { logEvent } from "../log";
import { acceptedPin } from "./definition-pins";
import { MAX_HELD_PINS, type OriginMemory, type SharedPin } from "./isolate-memory";
import type { ProfileNames } from "./profile-names";
import { keptTools, type StoredMap } from "./stored-map";

export const EXPIRY_DAYS = 30;
/** A listed tool's "last listed" day is written again only when older than this. */
export const SEEN_REFRESH_DAYS = 7;
/**
 * Past the map's bound, a tool it holds and some listing showed within this
 * many days (its day, written again once a week, is at most a week old for
 * a tool listed every week) keeps its place, and its pin, against tools new
 * to the map: an origin cannot have the map let go of a tool's pin by listing
 * others, then change it unheld (stored-map.ts `keptTools`).
 */
const SETTLED_DAYS = 2 * SEEN_REFRESH_DAYS;

export const today = () => Math.floor(Date.now() / 86_400_000);

/**
 * `base` with this isolate's tools, pins and held definitions, and the profile's kept names;
 * expired and bounded. A pin this isolate set takes the place of the one it knew when it set it
 * (`SharedPin.over`: none, for a tool new to it; an earlier version's, taken over), not of one
 * another isolate set since (`superseded`): the map's pin is the first definition seen of a
 * tool, and an isolate that read the map before a tool was added would otherwise put what it was
 * shown over what another isolate had shown its callers, whose change to it was then taken for
 * no change. What it knew then, not the map as it knows it now: a write under way may have
 * brought it KV's pin since.
 */
export function mergeMap(
  base: StoredMap,
  origin: OriginMemory,
  names: ProfileNames,
  scope: { origin: string; legacy: string },
): { merged: StoredMap; superseded: Map<string, SharedPin> } {
  const day = today();
  const tools = new Map(base.tools);
  const superseded = new Map<string, SharedPin>();
  for (const [original, seen] of origin.listed) {
    const entry = origin.tools.get(original);
    if (!entry) continue;
    const stored = base.tools.get(original)?.pin;
    const set = origin.pinned.get(original);
    let pin = set?.pin ?? stored;
    if (set !== undefined && stored !== undefined && stored !== set.pin && stored !== set.over) {
      superseded.set(original, set);
      pin = stored;
    }
    // The check of its schema line, while it is of the same fingerprint (schema-lines.ts).
    const before = base.tools.get(original);
    const check = before?.schema === entry.schemaHash ? before.check : undefined;
    tools.set(original, {
      schema: entry.schemaHash,
      seen,
      ...(pin === undefined ? {} : { pin }),
      ...(check === undefined ? {} : { check }),
    });
  }
  for (const [original, tool] of tools) {
    if (day - tool.seen > EXPIRY_DAYS) tools.delete(original);
  }
  const kept = keptTools(
    tools,
    (original) =>
      day - (base.tools.get(original)?.seen ?? Number.NEGATIVE_INFINITY) <= SETTLED_DAYS,
  );
  if (kept !== tools) {
    logEvent("tool_map_full", { scope: scope.origin, tools: tools.size, kept: kept.size });
  }
  const held = new Map<string, string[]>();
  for (const original of new Set([...base.held.keys(), ...origin.heldPins.keys()])) {
    if (!kept.has(original)) continue;
    const pins = [...(base.held.get(original) ?? []), ...(origin.heldPins.get(original) ?? [])]
      .filter(
        (pin, i, all) =>
          all.indexOf(pin) === i && !origin.acceptedPins.get(acceptedPin(original, pin)),
      )
      .slice(-MAX_HELD_PINS);
    if (pins.length > 0) held.set(original, pins);
  }
  const { legacy, migrated, legacyRead } = mergeLegacy(base, names, scope.legacy);
  return {
    merged: { tools: kept, held, chunks: base.chunks, legacy, migrated, legacyRead },
    superseded,
  };
}

/**
 * `base`'s layout-1 names with this profile's, and how far its scope was
 * read: by this isolate or another, whichever got further (each holds the
 * names of the keys before where it got).
 */
function mergeLegacy(base: StoredMap, names: ProfileNames, scope: string) {
  const legacy = new Map(base.legacy);
  const kept = new Map([...(base.legacy.get(scope) ?? []), ...names.legacyNames]);
  if (kept.size > 0) legacy.set(scope, kept);
  const migrated = new Set(base.migrated);
  const legacyRead = new Map(base.legacyRead);
  const progress = names.legacyProgress;
  if (progress?.done) migrated.add(scope);
  if (migrated.has(scope)) {
    legacyRead.delete(scope);
  } else if (progress?.after !== undefined) {
    const before = base.legacyRead.get(scope);
    legacyRead.set(
      scope,
      before !== undefined && before > progress.after ? before : progress.after,
    );
  }
  return { legacy, migrated, legacyRead };
}
