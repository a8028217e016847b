/**
 * The tool map's layout in Workers KV, layout 2 (docs/tool-map.md;
 * ARCHITECTURE.md, "Storage"), as pure functions from values to text and
 * back. Per origin, whatever the profile:
 *
 * - `v2:<origin>:map`: JSON, `{"format":2,"tools":{"<original>":["<schema
 *   fingerprint>",<day last listed>,"<pin's fingerprints>","<pin's digest>","<pin's
 *   title and output schema part>"]},"chunks":<n>,"legacy":{"<v1 scope>":
 *   {"<original>":"<name>"}},"migrated":["<v1 scope>"]}`; a sixth member of a tool,
 *   where there is one, is its schema's check (`schemaCheck`), the pin's parts
 *   before it `null` where it has none. Model-facing names are
 *   a pure function of the original and the profile (names/sanitize.ts), so
 *   the map stores none, but those an earlier layout handed out (`legacy`, per
 *   profile scope of layout 1, which `migrated` lists once read whole;
 *   `legacyRead`, `{"<v1 scope>":"<last key read>"}`, how far a scope was read
 *   meanwhile, a listing at a time: legacy-v1.ts). A pin
 *   (definition-pins.ts) is stored in its parts, each where the versions
 *   before it read what they pinned: the fingerprints (where versions before
 *   the digest read a whole pin), the digest, then the part for title and
 *   output schema. During a rollout, an isolate of the version before reads
 *   the pin it would make itself, not a change. `held`, where there are any:
 *   `{"<original>":["<pin>",…]}`, definitions a caller was held on
 *   (`TOOL_CHANGES=hold`) that no one accepted yet (caller-pins.ts). The
 *   names `legacy` keeps per profile scope are also those a listing gave a
 *   tool whose own name another tool had (names/assign.ts). `listingPin`,
 *   where there is one: the digest of a listing whose every tool has the pin
 *   the map holds (listing-pin.ts); versions before it ignore it.
 * - `v2:<origin>:pins:<caller>`: one caller's own pins (caller-pins.ts),
 *   `{"format":1,"pins":{"<original>":"<pin>"}}`, those that differ from the
 *   map's; `<caller>` is a SHA-256 digest of what the origin sees of them.
 * - `v2:<origin>:schemas:<i>`, `i < chunks`: the origin's input schemas, one
 *   line each, `<fingerprint>\t<schema as JSON>\n`, so one schema is found by
 *   its fingerprint and parsed alone; two schemas of one fingerprint have a
 *   line each, told apart by their checks (schema-lines.ts).
 * - `v2:<origin>:answer:<settings>`: the last listing an isolate rewrote under
 *   one deployment (its version id) and one set of settings that shape a
 *   listing (profile, caps, `TOOL_RULES`, `TOOL_CHANGES`), fingerprinted into
 *   `<settings>`: `1\n<a>,<b>,<c>\n` and four texts of those lengths (the last
 *   takes the rest), the answer as received and as sent, each split around its
 *   id; for an answer sent as it came, `1\n<a>\n` and its two halves as
 *   received, once. A new isolate answers the same text from it
 *   (rewrite/remembered-answer.ts).
 *   Written with a time to live of `ANSWER_TTL_DAYS`.
 */

import { namesWeight, nameWeight } from "../names/weight";
import { joinPin, pinParts } from "./definition-pins";

/** Originals per origin, in KV and in an isolate's memory (per profile). */
export const MAX_TOOLS = 10_000;

/**
 * How long after writing a key an isolate writes it again: KV takes one write a second to a
 * key, and a second one within it fails (429), what it carried not stored.
 */
export const KEY_WRITE_MS = 1_000;

export const MAP_FORMAT = 2;

export interface StoredTool {
  /** The fingerprint of its input schema (toolmap/plan-listing.ts `schemaHash`). */
  schema: string;
  /** The day (days since the epoch) a listing last showed it. */
  seen: number;
  /** Its definition's pin (definition-pins.ts), where `TOOL_CHANGES` pins definitions. */
  pin?: string;
  /** Its schema's check (`schemaCheck`): which line of its fingerprint is its schema's. */
  check?: string;
}

export interface StoredMap {
  tools: Map<string, StoredTool>;
  /**
   * Definitions held for some caller and not accepted (`TOOL_CHANGES=hold`),
   * per original: a caller first shown one is held too (caller-pins.ts).
   */
  held: Map<string, string[]>;
  /** How many schema chunks there are. */
  chunks: number;
  /** Names layout 1 handed out, per layout-1 scope: original → name. */
  legacy: Map<string, Map<string, string>>;
  /** The layout-1 scopes already read. */
  migrated: Set<string>;
  /** How far a layout-1 scope not yet `migrated` was read: its last key read (legacy-v1.ts). */
  legacyRead: Map<string, string>;
  /** The listing pin of a listing whose every tool has the pin this map holds (listing-pin.ts). */
  listingPin?: string;
}

export const emptyMap = (): StoredMap => ({
  tools: new Map(),
  held: new Map(),
  chunks: 0,
  legacy: new Map(),
  migrated: new Set(),
  legacyRead: new Map(),
});

export const mapKey = (origin: string) => `${origin}:map`;
export const schemaKey = (origin: string, chunk: number) => `${origin}:schemas:${chunk}`;

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const asString = (value: unknown) => (typeof value === "string" ? value : undefined);

/**
 * The tools a map keeps of `tools`: all of them within `MAX_TOOLS` tools and
 * as many units of their names' weight (names/weight.ts), else those
 * `settled` says first (what is written: those the map held and some listing
 * showed lately, map-store.ts), then the most recently listed within it.
 * Both ways: what is written, and what is read of a map versions before the
 * weight wrote (up to KV's 25 MiB of names). A tool let go loses its pin with
 * it: by recency alone, one listing of new tools as heavy as the bound (100
 * names of 12,800 characters, or 10,000 short ones) let go of every tool not
 * listed that very day, and the next definition of each was pinned as new,
 * neither held nor logged.
 */
export function keptTools(
  tools: Map<string, StoredTool>,
  settled: (original: string) => boolean = () => false,
): Map<string, StoredTool> {
  if (tools.size <= MAX_TOOLS && namesWeight(tools.keys()) <= MAX_TOOLS) return tools;
  const kept = new Map<string, StoredTool>();
  let weight = 0;
  const order = [...tools].map(([original, tool]) => ({
    original,
    tool,
    first: settled(original),
  }));
  order.sort((a, b) => Number(b.first) - Number(a.first) || b.tool.seen - a.tool.seen);
  for (const { original, tool } of order) {
    weight += nameWeight(original);
    if (weight > MAX_TOOLS) break;
    kept.set(original, tool);
  }
  return kept;
}

/**
 * The names of one layout-1 scope a map keeps of `names`, in their order, as
 * far as `MAX_TOOLS` units of their originals' weight, as `keptTools` keeps
 * tools: what is read of a map a version before the weight wrote
 * (legacy-v1.ts weighs what it reads of layout 1).
 */
function keptLegacyNames(names: Iterable<[string, string]>): Map<string, string> {
  const kept = new Map<string, string>();
  let weight = 0;
  for (const [original, name] of names) {
    weight += nameWeight(original);
    if (weight > MAX_TOOLS) break;
    kept.set(original, name);
  }
  return kept;
}

/**
 * The format of a map a later version wrote, which this one does not know; `undefined` for
 * any other value. Such a map is not this version's to read, or to write over: while a
 * gradual deployment runs two versions, or after a rollback, the later version's pins would be lost.
 */
export function laterFormat(text: string): number | undefined {
  try {
    const { format } = JSON.parse(text) as { format?: unknown };
    return typeof format === "number" && format > MAP_FORMAT ? format : undefined;
  } catch {
    return undefined;
  }
}

/** The map a KV value holds; `undefined` for a value of another format (read as none). */
export function decodeMap(text: string): StoredMap | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isRecord(value) || value.format !== MAP_FORMAT || !isRecord(value.tools)) return undefined;
  const map = emptyMap();
  const tools = value.tools;
  // `for…in`, not `Object.entries`: a pair made for each of up to 10,000 tools, only to be
  // dropped. A parsed object's keys are its own (`__proto__` too), in the same order.
  for (const original in tools) {
    const entry = tools[original];
    if (!Array.isArray(entry) || typeof entry[0] !== "string" || typeof entry[1] !== "number") {
      continue;
    }
    const [schema, seen, fingerprints, digest, extra, check] = entry;
    const pin =
      typeof fingerprints === "string"
        ? joinPin({ fingerprints, digest: asString(digest), extra: asString(extra) })
        : undefined;
    const tool: StoredTool = { schema, seen };
    if (pin !== undefined) tool.pin = pin;
    if (typeof check === "string") tool.check = check;
    map.tools.set(original, tool);
  }
  map.tools = keptTools(map.tools);
  map.chunks = typeof value.chunks === "number" ? value.chunks : 0;
  for (const [original, pins] of Object.entries(isRecord(value.held) ? value.held : {})) {
    if (!Array.isArray(pins) || !map.tools.has(original)) continue;
    const strings = pins.filter((pin): pin is string => typeof pin === "string");
    if (strings.length > 0) map.held.set(original, strings);
  }
  for (const [scope, names] of Object.entries(isRecord(value.legacy) ? value.legacy : {})) {
    if (!isRecord(names)) continue;
    const kept = Object.entries(names).filter(
      (pair): pair is [string, string] => typeof pair[1] === "string",
    );
    map.legacy.set(scope, keptLegacyNames(kept));
  }
  if (Array.isArray(value.migrated)) {
    for (const scope of value.migrated) if (typeof scope === "string") map.migrated.add(scope);
  }
  for (const [scope, key] of Object.entries(isRecord(value.legacyRead) ? value.legacyRead : {})) {
    if (typeof key === "string" && !map.migrated.has(scope)) map.legacyRead.set(scope, key);
  }
  if (typeof value.listingPin === "string") map.listingPin = value.listingPin;
  return map;
}

/** A pin as stored: its fingerprints, then its digest and its extra part where it has them. */
function storedPin(pin: string): string[] {
  const { digest, fingerprints, extra } = pinParts(pin);
  return [fingerprints, digest, extra].filter((part) => part !== undefined);
}

/** A tool as stored: a check after the pin's three parts, `null` where it lacks them. */
function storedTool({ schema, seen, pin, check }: StoredTool): unknown[] {
  const parts = pin === undefined ? [] : storedPin(pin);
  if (check === undefined) return [schema, seen, ...parts];
  return [schema, seen, ...parts, ...Array(3 - parts.length).fill(null), check];
}

export function encodeMap(map: StoredMap): string {
  // The tools are written member by member: made into an object of up to
  // 10,000 keys first, they took twice the time, and left that much garbage.
  const tools = [...map.tools].map(
    ([original, tool]) => `${JSON.stringify(original)}:${JSON.stringify(storedTool(tool))}`,
  );
  const rest = JSON.stringify({
    chunks: map.chunks,
    // fromEntries: an original named `__proto__` stays an ordinary key.
    ...(map.held.size > 0 ? { held: Object.fromEntries(map.held) } : {}),
    // fromEntries: a name of layout 1 for an original named `__proto__` stays an ordinary key.
    legacy: Object.fromEntries(
      [...map.legacy].map(([scope, names]) => [scope, Object.fromEntries(names)]),
    ),
    migrated: [...map.migrated],
    ...(map.legacyRead.size > 0 ? { legacyRead: Object.fromEntries(map.legacyRead) } : {}),
    ...(map.listingPin === undefined ? {} : { listingPin: map.listingPin }),
  });
  return `{"format":${MAP_FORMAT},"tools":{${tools.join(",")}},${rest.slice(1)}`;
}

/** An answer as received and as sent, each split around its JSON-RPC id. */
export interface RememberedAnswer {
  received: [string, string];
  sent: [string, string];
  /** The same halves in UTF-8, once a JSON body was compared with them (isolate memory only). */
  bytes?: AnswerBytes;
  /** The key of the caller view it was made with (caller-listings.ts; isolate memory only). */
  view?: string;
}

/** A remembered answer's halves as UTF-8 bytes: one pair for both where it was sent as it came. */
export interface AnswerBytes {
  received: [Uint8Array, Uint8Array];
  sent: [Uint8Array, Uint8Array];
}

export const ANSWER_TTL_DAYS = 7;

export const answerKey = (origin: string, settings: string) => `${origin}:answer:${settings}`;

/** Whether a remembered answer went to the client as the origin wrote it: one pair of halves for both. */
export const sentAsReceived = (answer: RememberedAnswer): boolean =>
  answer.sent === answer.received;

/** An answer's halves in UTF-8, as it is given to a JSON body compared byte for byte. */
export function answerBytes(answer: RememberedAnswer): AnswerBytes {
  const encoder = new TextEncoder();
  const encode = ([a, b]: [string, string]): [Uint8Array, Uint8Array] => [
    encoder.encode(a),
    encoder.encode(b),
  ];
  const received = encode(answer.received);
  return { received, sent: sentAsReceived(answer) ? received : encode(answer.sent) };
}

const halvesLength = ([a, b]: [{ length: number }, { length: number }]) => a.length + b.length;

/**
 * What an answer weighs in isolate memory: its characters, as received and
 * as sent, and its bytes where it has them (each held once when received
 * and sent are the same).
 */
export function answerWeight(answer: RememberedAnswer): number {
  const once = sentAsReceived(answer);
  const { bytes } = answer;
  return (
    halvesLength(answer.received) +
    (once ? 0 : halvesLength(answer.sent)) +
    (bytes ? halvesLength(bytes.received) + (once ? 0 : halvesLength(bytes.sent)) : 0)
  );
}

/**
 * An answer as its KV value, in UTF-8. An answer of ASCII characters only is
 * written into one buffer a part at a time, never joined into one string
 * first: for 10,000 tools, that string alone is 15 MB of an isolate's 128.
 */
export function encodeAnswer(answer: RememberedAnswer): Uint8Array {
  const parts = sentAsReceived(answer) ? answer.received : [...answer.received, ...answer.sent];
  const header = `1\n${parts
    .slice(0, -1)
    .map((part) => part.length)
    .join(",")}\n`;
  const pieces = [header, ...parts];
  const encoder = new TextEncoder();
  // As many bytes as characters: any other character takes more, and does not fit.
  const bytes = new Uint8Array(pieces.reduce((sum, piece) => sum + piece.length, 0));
  let at = 0;
  for (const piece of pieces) {
    const { read, written } = encoder.encodeInto(piece, bytes.subarray(at));
    if (read !== piece.length) return encoder.encode(pieces.join(""));
    at += written;
  }
  return bytes;
}

/** The answer a KV value holds; `undefined` for a value of another format. */
export function decodeAnswer(text: string): RememberedAnswer | undefined {
  const header = /^1\n(\d+)(?:,(\d+),(\d+))?\n/.exec(text);
  if (!header) return undefined;
  // Where each part starts; the last part takes the rest.
  const starts = [header[0].length];
  for (const length of header.slice(1)) {
    if (length !== undefined) starts.push((starts.at(-1) as number) + Number(length));
  }
  if ((starts.at(-1) as number) > text.length) return undefined;
  const part = (i: number) => text.slice(starts[i], starts[i + 1]);
  const received: [string, string] = [part(0), part(1)];
  // An answer sent as it came is one pair of halves, as the isolate that wrote it kept it.
  return { received, sent: starts.length === 2 ? received : [part(2), part(3)] };
}
