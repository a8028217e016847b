/**
 * The key a caller's view is kept under (caller-listings.ts): a SHA-256
 * digest of all the view holds, each part after its length, so no two views
 * read alike; and the key made last in each scope, so that a listing shown
 * again as it was (every caller after the first listed the same tools) is
 * not digested again.
 */
import { BoundedMap } from "../bounded-map";
import { sha256Parts } from "../digest";
import { PLACES_ONLY, sameJson, stringifyExact } from "../json";
import { namesWeight } from "../names/weight";
import type { ListedTool } from "../protocol/tools-list";

/** What a view's key covers of the view: each tool's decision and schema, and what shapes it. */
export interface KeyedView {
  decisions: ReadonlyMap<string, string>;
  entries: ReadonlyMap<string, { schemaHash: string; inputSchema?: unknown }>;
  whole: boolean;
  searching: boolean;
}

const flagsOf = (view: KeyedView, pins: unknown) => `${view.whole} ${view.searching} ${!!pins}`;

/**
 * The key of a view. `settings`: what else shapes it (tool-map.ts
 * `settingsOf`); `before`: the key of the view a later page adds to. A view
 * in search mode holds its tools' texts too (`texts`, one per tool), as its
 * search shows them, or, where the pins cover each tool's whole definition
 * (`TOOL_CHANGES_SCOPE=definition`), its pins in their place: a SHA-256
 * digest each, already made, where the texts are the whole listing to digest
 * again. `pins`: under `TOOL_CHANGES=hold`, the definitions it showed
 * (caller-pins.ts), as an answer remembered from one view is given only to
 * a caller last shown that view (tool-map.ts `rememberedAnswer`): a caller
 * shown another definition before is one it may hold.
 */
export function viewKey(
  settings: string,
  before: string | undefined,
  tools: readonly ListedTool[],
  view: KeyedView,
  pins?: ReadonlyMap<string, string>,
  texts?: readonly string[],
): Promise<string> {
  // Each part after its length, handed on in pieces: in search mode the texts are the whole
  // listing, and joined into one string first they cost more than their digest.
  const parts: string[] = [];
  const add = (part: string) => parts.push(`${part.length}:`, part);
  add(settings);
  add(before ?? "");
  add(flagsOf(view, pins));
  for (const [i, tool] of tools.entries()) {
    // A name is the origin's, and may hold a lone surrogate, which UTF-8 (what is digested) writes
    // as U+FFFD: then as JSON, after a mark of its own, or names that differ would read alike.
    if (tool.name.isWellFormed()) add(tool.name);
    else parts.push(`${tool.name.length};`, JSON.stringify(tool.name));
    add(String(view.decisions.get(tool.name)));
    add(String(view.entries.get(tool.name)?.schemaHash));
    if (pins) add(String(pins.get(tool.name)));
    if (texts) add(texts[i] as string);
  }
  return sha256Parts(parts);
}

/**
 * Whether a kept view was listed the very schemas of `entries` (a page's):
 * the same objects, as the map holds one for every listing of a schema
 * (plan-listing.ts), else equal ones whose numbers are written alike where
 * their text is known (json.ts `sameJson`), as `schemasKey` digests them
 * (the map let go of the view's, or another caller's was listed in
 * between): two 64-bit ids one apart are one double to `JSON.stringify`,
 * and a search kept for one caller showed its id to the other. So a view
 * kept under `schemasKey` is always listed alike: one key more at most,
 * never a chain of them.
 */
export function listedAlike(
  kept: KeyedView["entries"],
  entries: ReadonlyMap<string, { inputSchema?: unknown }>,
): boolean {
  for (const [original, { inputSchema }] of entries) {
    if (!sameJson(kept.get(original)?.inputSchema, inputSchema)) return false;
  }
  return true;
}

/**
 * The key of a view whose key's kept view holds other schemas of the same
 * fingerprints (or pins): the key digested again with its page's schemas
 * whole, each number as its text wrote it where that is known (as
 * `listedAlike` compares them). Only then: its listing's every schema,
 * written and digested.
 */
export function schemasKey(
  key: string,
  tools: readonly ListedTool[],
  entries: ReadonlyMap<string, { inputSchema?: unknown }>,
): Promise<string> {
  const parts = [key];
  for (const tool of tools) {
    const text = stringifyExact(entries.get(tool.name)?.inputSchema, PLACES_ONLY) ?? "";
    parts.push(`${text.length}:`, text);
  }
  return sha256Parts(parts);
}

/** A key, and all it was made of but texts, tool by tool. */
interface Made {
  key: string;
  settings: string;
  before: string | undefined;
  flags: string;
  names: readonly string[];
  decisions: readonly unknown[];
  schemas: readonly unknown[];
  pins: readonly unknown[] | undefined;
}

/** Scopes (an origin and profile) whose last key is kept, and the names they hold together (names/weight.ts). */
const MAX_SCOPES = 64;
const MAX_NAMES = 60_000;

/**
 * The key made last in each scope. A listing's view key is digested from
 * all it holds (`viewKey`: about a third of a listing with no answer
 * remembered, 1,000 tools); where it holds what the last one held, value for
 * value, the key is that one's. Not where the key holds the tools' texts:
 * they would keep the listing's text.
 */
export class ViewKeys {
  private readonly made = new BoundedMap<string, Made>(MAX_SCOPES, undefined, {
    max: MAX_NAMES,
    weigh: (made) => 1 + namesWeight(made.names),
  });

  /** `viewKey` of the listing shown in `scope`. */
  async of(scope: string, ...inputs: Parameters<typeof viewKey>): Promise<string> {
    const [settings, before, tools, view, pins, texts] = inputs;
    if (texts !== undefined) return viewKey(...inputs);
    const flags = flagsOf(view, pins);
    const last = this.made.get(scope);
    if (last !== undefined && madeOf(last, settings, before, flags, tools, view, pins)) {
      return last.key;
    }
    const key = await viewKey(...inputs);
    const names = tools.map((tool) => tool.name);
    this.made.set(scope, {
      key,
      settings,
      before,
      flags,
      names,
      decisions: names.map((name) => view.decisions.get(name)),
      schemas: names.map((name) => view.entries.get(name)?.schemaHash),
      pins: pins && names.map((name) => pins.get(name)),
    });
    return key;
  }
}

/** Whether `made` was made of these: each value the same as `viewKey` reads it. */
function madeOf(
  made: Made,
  settings: string,
  before: string | undefined,
  flags: string,
  tools: readonly ListedTool[],
  view: KeyedView,
  pins: ReadonlyMap<string, string> | undefined,
): boolean {
  if (
    made.settings !== settings ||
    made.before !== before ||
    made.flags !== flags ||
    made.names.length !== tools.length
  ) {
    return false;
  }
  for (let i = 0; i < tools.length; i++) {
    const { name } = tools[i] as ListedTool;
    if (
      made.names[i] !== name ||
      made.decisions[i] !== view.decisions.get(name) ||
      made.schemas[i] !== view.entries.get(name)?.schemaHash ||
      (pins !== undefined && made.pins?.[i] !== pins.get(name))
    ) {
      return false;
    }
  }
  return true;
}
