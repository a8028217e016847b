/**
 * What the name a call gives stands for in the tool map, per caller: a name
 * this profile handed out (memory first, then KV), or a tool of the caller's
 * own whole listing that another spelling matches; and what the operator's
 * policy makes of a call to it, as that caller's listing decided.
 * resolve-tool.ts decides the order in which these are asked, and when the
 * origin is listed again.
 */
import { sameJson } from "../json";
import {
  indexShown,
  matchIndexed,
  type NameMatch,
  type NoMatch,
  type ShownIndex,
} from "../names/match";
import { isLegalName } from "../names/sanitize";
import type { ToolPolicy, ToolRule } from "../rules/tool-rules";
import type { Profile } from "../schemas/profile";
import type { SchemaView } from "../schemas/view";
import type { CallerView, Judgement } from "./caller-listings";
import type { OriginMemory } from "./isolate-memory";
import { holdsSchema } from "./listed-schema";
import type { MapStore } from "./map-store";
import type { ToolEntry } from "./plan-listing";
import type { ProfileNames } from "./profile-names";
import type { SchemaViews } from "./schema-views";

/**
 * Whether the caller's own entry of a tool holds the map's schema: the same
 * object (the map holds one for every listing of a schema), or an equal one
 * (listed again since another caller's was). Not the map's where it holds
 * none: the caller's is known without a read of KV.
 */
const sameSchema = (shown: ToolEntry, entry: ToolEntry) =>
  shown.inputSchema === entry.inputSchema ||
  (entry.inputSchema !== undefined && sameJson(shown.inputSchema, entry.inputSchema));

export interface Resolution extends Judgement {
  entry: ToolEntry;
  /** The tool's model-facing name here: the one called, or the one a call by another spelling means. */
  name: string;
  source: "memory" | "kv";
  /** The schema the model was shown, where it differs from the origin's. */
  view?: SchemaView;
  /** The operator's rule for the tool, if any (TOOL_RULES). */
  rule?: ToolRule;
}

/** The parts of a request's tool map that calls are resolved from (tool-map.ts). */
export interface CallNamesSource {
  profile: Profile;
  policy: ToolPolicy;
  origin: OriginMemory;
  store: MapStore;
  views: SchemaViews;
  /** The caller's own listing here. */
  view: CallerView;
  /** This profile's names: looked up each time, since `ToolMap.forget` replaces them. */
  names: () => ProfileNames;
  /** Reads what KV holds of the origin's tools and names them, once a request; whether it could. */
  load: () => Promise<boolean>;
}

export class CallNames {
  constructor(private readonly map: CallNamesSource) {}

  /**
   * Whether `name` could be a model-facing name of this profile: legal under
   * its rules, so at most its cap long. No other name is looked up anywhere.
   */
  couldHaveNamed(name: string): boolean {
    return isLegalName(name, this.map.profile.names);
  }

  /**
   * The tool a model-facing name stands for, with its schema and view:
   * memory first, then KV. None where the caller's own listing here lacks
   * the tool, whole or the pages of it they read: the name was handed out to
   * another caller, and the origin's answer to its original would tell this
   * one that some caller has a tool of that name (the resolver lists the
   * origin again for them, in case the tool is theirs since, or on a page
   * they read elsewhere).
   */
  async resolve(name: string): Promise<Resolution | undefined> {
    if (!this.couldHaveNamed(name)) return undefined;
    let original = this.map.names().byName.get(name);
    // A name kept while the origin's tools were let go (`ProfileNames.forgotten`): KV holds its tool.
    const held = original !== undefined && this.map.origin.tools.has(original);
    if (!held && (await this.map.load())) {
      original = this.map.names().byName.get(name);
    }
    if (original === undefined || (await this.#notInListing(original))) return undefined;
    return this.#resolveOriginal(original, name);
  }

  /**
   * Whether the caller has a listing here that neither shows, hides nor holds
   * `original`. Pages count too: a caller can turn their whole listing into
   * pages by asking for one by a cursor, and an origin's pages under a
   * profile with no tool ceiling are never read whole.
   */
  async #notInListing(original: string): Promise<boolean> {
    const shown = await this.map.view.current();
    return shown !== undefined && !shown.view.decisions.has(original);
  }

  /**
   * A name no listing handed out, matched against the caller's own whole
   * listing (names/match.ts): the tool it stands for where exactly one of
   * theirs answers to it (its original name, or its listed name in another
   * case or without its fingerprint), resolved as a call by its listed name
   * is; else the closest names they were shown. `undefined` when this
   * isolate has no whole listing of the caller's, or no longer the one tool's schema.
   */
  async spelledAs(name: string): Promise<Resolution | NoMatch | undefined> {
    const match = await this.matchShown(name);
    if (match?.kind !== "one") return match;
    return this.#resolveOriginal(match.original, this.listedName(match.original));
  }

  /**
   * The original this profile handed `name` out for, as far as this isolate
   * knows (memory only): for a call refused as no tool of the caller's, the
   * tool an older listing showed under it.
   */
  handedOutFor(name: string): string | undefined {
    return this.couldHaveNamed(name) ? this.map.names().byName.get(name) : undefined;
  }

  /** The name `original` is listed under here. */
  listedName(original: string): string {
    return this.map.names().byOriginal.get(original) ?? original;
  }

  /**
   * The caller's whole listing as read for matching: once a request (a
   * CallNames is one request's), again only where the listing or the names
   * changed since (`ToolMap.forget`, a listing read for the caller).
   */
  #indexed: { view: object; names: ProfileNames; index: ShownIndex } | undefined;

  /** `name` matched against the tools the caller's own whole listing showed; `undefined` without one here. */
  async matchShown(name: string): Promise<NameMatch | undefined> {
    const shown = await this.map.view.current();
    if (!shown?.view.whole) return undefined;
    const names = this.map.names();
    if (this.#indexed?.view !== shown.view || this.#indexed.names !== names) {
      const tools = [...shown.view.decisions]
        .filter(([, decision]) => decision === "shown")
        .map(([original]) => ({ original, listed: this.listedName(original) }));
      this.#indexed = { view: shown.view, names, index: indexShown(tools) };
    }
    return matchIndexed(name, this.#indexed.index);
  }

  /**
   * Why the policy refuses a call naming a tool by its original name, if it
   * does: judged as a call by its model-facing name is (`unchecked` where
   * only a listing of the caller's can tell: the resolver lists the origin).
   */
  async refusalOf(original: string): Promise<Resolution["refused"]> {
    await this.map.load();
    return (await this.#judge(original)).refused;
  }

  /**
   * The tool `original` as a call by `name` resolves it, with the schema the
   * caller's own listing here showed (their view keeps it), else the map's:
   * memory first, then KV.
   */
  async #resolveOriginal(original: string, name: string): Promise<Resolution | undefined> {
    const { origin, store } = this.map;
    // The map holds the schema listed last, which may be another caller's, and of any fingerprint
    // (an origin that writes a caller's values into their schema can have them match another's):
    // a call is repaired and checked against the one its caller was listed, told by the object.
    const shown = await this.map.view.entryShown(original);
    const entry = origin.tools.get(original);
    if (!entry) {
      // Let go of since their listing (the origin said its tools changed, on another session's
      // stream), and not in KV yet: theirs stands, and the origin is asked for no listing for them.
      return shown && holdsSchema(shown)
        ? this.#resolution(name, shown, "memory", false)
        : undefined;
    }
    if (shown !== undefined && !sameSchema(shown, entry)) {
      return this.#resolution(name, shown, "memory", false);
    }
    if (holdsSchema(entry)) return this.#resolution(name, entry, "memory");
    const read = await store.readSchema(entry.schemaHash, entry.schemaCheck);
    // Known by name, but its schema is not in KV (a lost write): the origin is asked.
    if (read === undefined) return undefined;
    const { schema: inputSchema, chars } = read;
    const weighed = (entry.chars ?? original.length) + chars;
    const full = { ...entry, inputSchema, schemaChars: chars, chars: weighed };
    origin.remember(full);
    return this.#resolution(name, full, "kv");
  }

  /** `mapped`: `entry` is the map's, whose schema view is kept for its listings; else a caller's own. */
  async #resolution(
    name: string,
    entry: ToolEntry,
    source: Resolution["source"],
    mapped = true,
  ): Promise<Resolution> {
    const view = this.map.views.of(name, entry, mapped)?.view;
    const rule = this.map.policy.rules.ruleFor(entry.original);
    const { refused, shown } = await this.#judge(entry.original);
    return {
      entry,
      name,
      source,
      shown,
      ...(view?.differs ? { view } : {}),
      ...(rule ? { rule } : {}),
      ...(refused ? { refused } : {}),
    };
  }

  /** What the policy makes of a call to `original`, as the caller's own listing decided. */
  #judge(original: string): Promise<Judgement> {
    const { view, policy } = this.map;
    return view.judge(original, policy);
  }
}
