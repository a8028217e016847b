/**
 * Tool definition pins (`TOOL_CHANGES`, docs/rules.md, "Changed
 * definitions"): the first time the map sees a tool listed, it pins a
 * digest of its definition (input schema, description, annotations).
 * A tool listed later with another definition is a change the operator may
 * want to see before a model does (a "rug pull"): `log` takes the new
 * definition and logs `tool_definition_changed`; `hold` keeps the tool out of
 * listings and refuses calls to it until the operator accepts the change, by
 * writing the accept key the log line names (`acceptCommand`).
 *
 * Pins live in the origin's map in KV (stored-map.ts), shared by every
 * profile. KV is eventually consistent: another location may list a tool
 * under its old pin, or hold it, for 60 s or more after a change was taken or
 * accepted.
 *
 * Pins stored before they had a digest (fingerprints only) are replaced by a
 * pin with one the first time the tool is listed with a definition that
 * matches their fingerprints, without a log line or a hold.
 */
import { dequal } from "dequal/lite";
import type { BoundedMap } from "../bounded-map";
import { sha256 } from "../digest";
import { textAt } from "../json-spans";
import { logEvent } from "../log";
import { fingerprint32 } from "../names/stable-hash";
import type { ListedTool } from "../protocol/tools-list";
import type { ChangeMode } from "../rules/tool-rules";

/** What a definition pin covers, as the isolate last saw it listed. */
export interface Definition {
  description: unknown;
  annotations: unknown;
  /**
   * `<digest>/<schema fingerprint>/<description fingerprint>/<annotations
   * fingerprint>`. The digest (SHA-256 of the definition) decides whether a
   * definition changed: an origin can make a changed one match a 32-bit
   * fingerprint in milliseconds. The fingerprints only tell which part
   * changed. A promise: WebCrypto is async, and the listing that makes it is
   * not (tool-map.ts keeps naming free of awaits).
   */
  pin: Promise<string>;
}

const PARTS = ["inputSchema", "description", "annotations"] as const;

/**
 * A pin's digest (none in a pin stored before pins had one) and its
 * fingerprints, `<schema>/<description>/<annotations>`: the one reading of
 * a pin's format, here and in stored-map.ts.
 */
export function pinParts(pin: string): { digest?: string; fingerprints: string } {
  const slash = pin.indexOf("/");
  return pin.split("/").length === 4
    ? { digest: pin.slice(0, slash), fingerprints: pin.slice(slash + 1) }
    : { fingerprints: pin };
}

/** The pin `pinParts` reads back as `fingerprints` and `digest`. */
export const joinPin = (fingerprints: string, digest?: string) =>
  digest === undefined ? fingerprints : `${digest}/${fingerprints}`;

const fingerprintOf = (value: unknown) =>
  value === undefined ? "-" : fingerprint32(JSON.stringify(value)).toString(36);

/**
 * What the digest covers: `JSON.stringify({ inputSchema, description,
 * annotations })`, the schema copied from the listing's text where it is
 * written that way there.
 */
export function definitionText(tool: ListedTool & { annotations?: unknown }): string {
  const { schemaJson, description, annotations } = tool;
  const schema = schemaJson ? textAt(schemaJson) : JSON.stringify(tool.inputSchema ?? null);
  const rest = JSON.stringify({ description, annotations });
  return `{"inputSchema":${schema}${rest === "{}" ? "}" : `,${rest.slice(1)}`}`;
}

/**
 * The definition of `tool`, whose schema fingerprint is `schemaHash`.
 * `known`: the definition the isolate pinned for the very schema listed now
 * (compared, not fingerprinted), reused when nothing else changed, so a
 * repeated listing digests nothing.
 */
export function definitionOf(
  tool: ListedTool & { annotations?: unknown },
  schemaHash: string,
  known: Definition | undefined,
): Definition {
  const { description, annotations } = tool;
  if (known && known.description === description && dequal(known.annotations, annotations)) {
    return known;
  }
  const parts = `${schemaHash}/${fingerprintOf(description)}/${fingerprintOf(annotations)}`;
  const pin = sha256(definitionText(tool)).then((digest) => joinPin(parts, digest));
  return { description, annotations, pin };
}

/**
 * Which parts of a definition differ between two pins, by their fingerprints
 * (a pin's last three parts, with a digest before them or not): none when
 * only the digest tells the change, as for a definition made to collide.
 */
export function changedParts(from: string, to: string): Array<(typeof PARTS)[number]> {
  const [a, b] = [pinParts(from).fingerprints.split("/"), pinParts(to).fingerprints.split("/")];
  return PARTS.filter((_, index) => a[index] !== b[index]);
}

/**
 * The KV key that accepts `original`'s new definition `pin`: one per tool, as
 * two tools may have the same definition; its value is the original's name.
 */
export const acceptKey = (origin: string, pin: string, original: string) =>
  `${origin}:accept:${pin}/${fingerprintOf(original)}`;

/** The command that accepts it, ready to paste (with `--env` for a named environment). */
export const acceptCommand = (origin: string, pin: string, original: string) =>
  `npx wrangler kv key put --remote --binding TOOL_MAP ${JSON.stringify(acceptKey(origin, pin, original))} ${JSON.stringify(original)}`;

/** What one listing's definitions decide. */
export interface PinDecisions {
  /** Originals held back: listed with a definition that waits for acceptance. */
  held: Set<string>;
  /** Pins to store: new tools', and changed ones taken (`log`) or accepted (`hold`). */
  pinned: Map<string, string>;
}

/**
 * Compares each listed tool's definition with its pin, under `mode`. `pinOf`
 * is the stored pin; `accepted(pin)` reads whether the operator accepted it.
 * `logged` remembers which held changes this isolate has already logged.
 */
export async function decidePins(
  listed: ReadonlyArray<{ original: string; definition: Definition }>,
  mode: Exclude<ChangeMode, "allow">,
  pinOf: (original: string) => string | undefined,
  accepted: (original: string, pin: string) => Promise<boolean>,
  origin: string,
  logged: BoundedMap<string, true>,
): Promise<PinDecisions> {
  const held = new Set<string>();
  const pinned = new Map<string, string>();
  for (const { original, definition } of listed) {
    const pin = pinOf(original);
    const now = await definition.pin;
    if (pin === now) continue;
    // A pin without a digest is taken over by the one with it, when its fingerprints still hold.
    if (
      pin === undefined ||
      (pinParts(pin).digest === undefined && pinParts(now).fingerprints === pin)
    ) {
      pinned.set(original, now);
      continue;
    }
    const change = { tool: original, changed: changedParts(pin, now), from: pin, to: now };
    if (mode === "log") {
      logEvent("tool_definition_changed", { ...change, mode });
      pinned.set(original, now);
      continue;
    }
    if (await accepted(original, now)) {
      logEvent("tool_definition_accepted", { tool: original, pin: now });
      pinned.set(original, now);
      continue;
    }
    held.add(original);
    if (!logged.get(`${original}\n${now}`)) {
      logged.set(`${original}\n${now}`, true);
      logEvent("tool_definition_changed", {
        ...change,
        mode,
        accept: acceptCommand(origin, now, original),
      });
    }
  }
  return { held, pinned };
}
