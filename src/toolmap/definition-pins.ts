/**
 * Tool definition pins (`TOOL_CHANGES`, docs/rules.md, "Changed
 * definitions"): the first time the map sees a tool listed, it pins a
 * fingerprint of its definition (input schema, description, annotations).
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
 */
import { dequal } from "dequal/lite";
import type { BoundedMap } from "../bounded-map";
import { logEvent } from "../log";
import { fingerprint32 } from "../names/stable-hash";
import type { ListedTool } from "../protocol/tools-list";
import type { ChangeMode } from "../rules/tool-rules";

/** What a definition pin covers, as the isolate last saw it listed. */
export interface Definition {
  description: unknown;
  annotations: unknown;
  /** `<schema fingerprint>/<description fingerprint>/<annotations fingerprint>`. */
  pin: string;
}

const PARTS = ["inputSchema", "description", "annotations"] as const;

const fingerprintOf = (value: unknown) =>
  value === undefined ? "-" : fingerprint32(JSON.stringify(value)).toString(36);

/**
 * The definition of `tool`, whose schema fingerprint is `schemaHash`; the one
 * the isolate knows when nothing changed, so a repeated listing fingerprints
 * nothing.
 */
export function definitionOf(
  tool: ListedTool & { annotations?: unknown },
  schemaHash: string,
  known: Definition | undefined,
): Definition {
  const { description, annotations } = tool;
  if (
    known?.pin.startsWith(`${schemaHash}/`) &&
    known.description === description &&
    dequal(known.annotations, annotations)
  ) {
    return known;
  }
  return {
    description,
    annotations,
    pin: `${schemaHash}/${fingerprintOf(description)}/${fingerprintOf(annotations)}`,
  };
}

/** Which parts of a definition differ between two pins. */
export function changedParts(from: string, to: string): Array<(typeof PARTS)[number]> {
  const [a, b] = [from.split("/"), to.split("/")];
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
    const now = definition.pin;
    if (pin === now) continue;
    if (pin === undefined) {
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
