/**
 * The tool map: every original tool an origin listed, with its `inputSchema`,
 * and for each profile the model-facing names, both ways (isolate memory in
 * front of Workers KV: map-store.ts; docs/tool-map.md); and what each caller
 * was listed (caller-listings.ts), which is all the proxy answers from.
 *
 * Names never move. A model-facing name is a pure function of the original
 * and the profile (names/sanitize.ts), the same in every isolate whatever it
 * has seen, but for names kept in KV: layout 1's, and those given a tool
 * whose own name another tool had (names/assign.ts). Two isolates writing at
 * once lose at most a tool or a schema from KV, never a name.
 *
 * The operator's rules and definition pins are decided from the listing's
 * own tools (their annotations and definitions as listed), per caller, and
 * a call by what the caller's own listing decided; never from what another
 * caller was listed or from what bounded memory kept.
 */
import { logEvent } from "../log";
import { assignNames } from "../names/assign";
import { matchName, type NameMatch, type NoMatch } from "../names/match";
import { isLegalName } from "../names/sanitize";
import type { WrittenTool } from "../protocol/listing-text";
import type { ListedTool } from "../protocol/tools-list";
import { describedTool } from "../rules/apply-rules";
import { editsListings, NO_POLICY, type ToolPolicy, type ToolRule } from "../rules/tool-rules";
import type { Profile } from "../schemas/profile";
import type { SchemaView } from "../schemas/view";
import { AnswerMemory, settingsOf } from "./answer-memory";
import { CallerView, decide, type Judgement, type ListingPart } from "./caller-listings";
import { type CallerPins, pinListing } from "./caller-pins";
import { type Caller, ONE_CALLER } from "./callers";
import { type Definition, definitionOf } from "./definition-pins";
import {
  MAX_RELISTS,
  type OriginMemory,
  type ProfileNames,
  type ToolMapMemory,
  type ToolMapScopes,
} from "./isolate-memory";
import { listingPin, ProvenPins, readFromText } from "./listing-pin";
import { MapStore, today } from "./map-store";
import { firstOfEachName, type NamedListing } from "./named-listing";
import {
  type KnownTools,
  type PlannedEntry,
  planListing,
  renamesLogged,
  type ToolEntry,
} from "./plan-listing";
import { SchemaViews } from "./schema-views";
import { type AnswerBytes, answerKey, type RememberedAnswer } from "./stored-map";
import { searchModeOf, type ToolSearch } from "./tool-search";

export type { ListingPart } from "./caller-listings";
export type { NamedListing } from "./named-listing";
export { type AnswerBytes, type RememberedAnswer, sentAsReceived } from "./stored-map";

export interface Resolution extends Judgement {
  entry: ToolEntry;
  source: "memory" | "kv";
  /** The schema the model was shown, where it differs from the origin's. */
  view?: SchemaView;
  /** The operator's rule for the tool, if any (TOOL_RULES). */
  rule?: ToolRule;
}

export class ToolMap {
  private readonly origin: OriginMemory;
  private readonly store: MapStore;
  private readonly answers: AnswerMemory;
  /** The caller's own listing here. */
  private readonly view: CallerView;
  private readonly callerPins: CallerPins;
  private readonly views: SchemaViews;
  /** The view this request last showed its caller: kept with the answer remembered from it. */
  private shown: { key: string; held: boolean } | undefined;

  constructor(
    private readonly kv: KVNamespace,
    private readonly scopes: ToolMapScopes,
    readonly profile: Profile,
    memory: ToolMapMemory,
    private readonly waitUntil: (promise: Promise<unknown>) => void,
    readonly policy: ToolPolicy = NO_POLICY,
    private readonly deployment?: string,
    /** Who the request lists and calls for, as the origin sees them. */
    private readonly caller: Caller = ONE_CALLER,
  ) {
    this.origin = memory.origin(scopes.origin);
    this.store = new MapStore(kv, scopes, this.origin);
    this.view = new CallerView(
      memory.listings,
      // None from before the origin said its tools changed.
      () => `${scopes.legacy}\n${this.origin.generation}`,
      caller,
      () => this.settings,
    );
    this.callerPins = memory.callerPins;
    this.views = new SchemaViews(profile, policy, () => this.names);
    this.answers = new AnswerMemory(
      kv,
      memory.answers,
      () => this.names,
      waitUntil,
      () => deployment && answerKey(scopes.origin, this.settings),
    );
  }

  /** What shapes a rewritten listing besides the origin's text. */
  private get settings(): string {
    return settingsOf(this.deployment ?? "", this.profile, this.policy);
  }

  /** This profile's names: looked up each time, since `forget` drops them. */
  private get names(): ProfileNames {
    return this.origin.profile(this.scopes.legacy);
  }

  /**
   * The answer last rewritten for this origin and profile, when it may stand
   * for the caller's: under `TOOL_CHANGES=hold` only the very view the caller
   * was shown (pins are per caller), and never one that held a tool.
   */
  async rememberedAnswer(): Promise<RememberedAnswer | undefined> {
    const remembered = await this.answers.remembered();
    if (!remembered || this.policy.changes !== "hold") return remembered;
    const current = await this.view.current();
    return remembered.view !== undefined && current?.key === remembered.view
      ? remembered
      : undefined;
  }

  /** `answer` was given again: its caller is shown what it was made from, if that is still kept. */
  async answeredFromMemory(answer: RememberedAnswer): Promise<void> {
    if (answer.view !== undefined) await this.view.showKept(answer.view);
  }

  answerBytes(answer: RememberedAnswer): AnswerBytes | undefined {
    return this.answers.bytes(answer);
  }

  /** Remembers the answer this request rewrote, with its view; not one that held a tool. */
  rememberAnswer(answer: RememberedAnswer): void {
    if (this.shown?.held) return;
    this.answers.remember(this.shown ? { ...answer, view: this.shown.key } : answer);
  }

  /**
   * Names the tools of one listing (`part` of the caller's), remembers them,
   * stores what KV lacks, views their schemas under the profile (a view is
   * computed once per tool and schema, then reused from isolate memory), and
   * shows the caller what the operator's policy makes of it.
   */
  async nameListing(
    listed: readonly ListedTool[],
    part: ListingPart = "first",
  ): Promise<NamedListing> {
    const tools = firstOfEachName(listed);
    const readable = await this.load();
    const names = this.names;
    // The map now follows this listing: an answer remembered from another no longer stands for it.
    this.answers.forget(this.origin.profiles.values());
    const { same: asListed, twoWays } = this.origin.writtenAsBefore(tools);
    const originals = tools.map((tool) => tool.name);
    const chosen = this.policy.rules.names;
    const knownTools = this.known();
    const keptNames = names.assignedBefore(originals, chosen);
    const assigned = keptNames ?? assignNames(originals, knownTools, this.profile.names, chosen);
    const plan = planListing(tools, knownTools, assigned, asListed);
    const pinning = this.policy.changes !== "allow";
    // Each rename is logged once per isolate, when it is new here: not on every listing.
    const renames = plan.renames.filter(({ from, to }) => names.byOriginal.get(from) !== to);
    const day = today();
    const proven = new ProvenPins(
      tools,
      (original) => this.origin.sharedPin(original),
      readable ? this.origin.stored?.listingPin : undefined,
      this.policy.scope,
    );
    const definitions: Array<{ original: string; definition: Definition }> = [];
    for (const { name, original, tool, schemaHash, inputSchema, sameSchema } of plan.entries) {
      const before = this.origin.tools.get(original)?.listed;
      const known = sameSchema ? before?.definition : undefined;
      const listed =
        before && asListed.has(original)
          ? before
          : {
              annotations: tool?.annotations,
              ...(pinning && tool
                ? {
                    definition: definitionOf(tool, schemaHash, known, this.policy.scope, () =>
                      proven.of(original),
                    ),
                  }
                : {}),
            };
      // Decided from this listing's own definitions: memory may not keep them all.
      if (listed.definition) definitions.push({ original, definition: listed.definition });
      this.origin.remember({ original, schemaHash, inputSchema, listed }, day);
      names.remember(name, original);
    }
    // Names given back are remembered as they were: what was kept for them still stands.
    if (keptNames === undefined) names.keepAssigned(originals, chosen, assigned);
    for (const taken of plan.taken) {
      names.keepName(taken.tool, taken.name);
      logEvent("tool_name_taken", { ...taken });
    }
    // Pins are decided only against what KV holds: never from a map that could not be read.
    const pins = readable && pinning ? await this.pinListing(definitions) : undefined;
    const pinsToStore = pins && (pins.shared.size > 0 || pins.accepted.size > 0);
    if (readable && (pinsToStore || this.store.needsWrite(plan.entries, names))) {
      if (pins) this.origin.listingPin = this.listingPin(tools, definitions);
      this.waitUntil(this.store.store(names));
    }
    for (const displacement of plan.displaced)
      logEvent("tool_name_reassigned", { ...displacement });

    const decisions = decide(plan.entries, this.policy, pins?.held);
    if (renames.length > 0) {
      const { profile, cap } = this.profile.names;
      const hidden = (original: string) => decisions.get(original) === "hidden";
      logEvent("tools_renamed", { profile: profile.name, cap, ...renamesLogged(renames, hidden) });
    }
    const hidden = new Set([...decisions].flatMap(([o, d]) => (d === "shown" ? [] : [o])));
    const listing: NamedListing = {
      names: plan.names,
      ...this.views.ofListing(plan.entries),
      descriptions: this.describe(plan.entries),
      hidden,
      twoWays,
      toolsOnly: editsListings(this.policy),
      settled: readable,
    };
    const search = part === "whole" ? this.searchMode(tools, listing, plan.entries) : null;
    this.shown = await this.view.show(part, tools, decisions, search);
    return search ? { ...listing, search } : listing;
  }

  /** Search mode, for a whole listing over the profile's ceiling (tool-search.ts `searchModeOf`). */
  private searchMode(
    tools: readonly ListedTool[],
    listing: NamedListing,
    entries: readonly PlannedEntry[],
  ): ToolSearch | null {
    const { name, toolCeiling } = this.profile;
    if (toolCeiling === undefined || tools.length <= toolCeiling) return null;
    const inputSchemas = new Map(entries.map((entry) => [entry.original, entry.inputSchema]));
    return searchModeOf(tools, { ...listing, inputSchemas }, name, toolCeiling);
  }

  /** The descriptions the operator's rules give this listing's tools, where they change them. */
  private describe(entries: readonly PlannedEntry[]): Map<string, string | undefined> {
    const descriptions = new Map<string, string | undefined>();
    for (const { original, tool } of entries) {
      const rule = this.policy.rules.ruleFor(original);
      if (rule?.description !== undefined || rule?.appendDescription !== undefined) {
        descriptions.set(original, describedTool(tool?.description, rule));
      }
    }
    return descriptions;
  }

  /** The tools of the last listing read from its text here, in its order: where a new one may read fastest. */
  writtenBefore(): readonly WrittenTool[] {
    return [...this.origin.written.values()];
  }

  /**
   * The listing pin to store with the map: only where every tool's pin, as
   * digested from its text, is now the map's; else `undefined`.
   */
  private async listingPin(
    tools: readonly ListedTool[],
    definitions: ReadonlyArray<{ original: string; definition: Definition }>,
  ): Promise<string | undefined> {
    if (definitions.length !== tools.length || !readFromText(tools)) return undefined;
    const pins = new Map<string, string>();
    for (const { original, definition } of definitions) {
      const pin = await definition.pin;
      if (pin !== this.origin.sharedPin(original)) return undefined;
      pins.set(original, pin);
    }
    return listingPin(tools, (original) => pins.get(original), this.policy.scope);
  }

  /** Decides this listing's pins for the caller (caller-pins.ts). */
  private async pinListing(listed: Array<{ original: string; definition: Definition }>) {
    return pinListing(listed, {
      kv: this.kv,
      scope: this.scopes.origin,
      origin: this.origin,
      callerPins: this.callerPins,
      caller: await this.caller.pins(),
      mode: this.policy.changes === "hold" ? "hold" : "log",
      environment: this.policy.environment,
      waitUntil: this.waitUntil,
    });
  }

  /** Names the whole listing the proxy asked the origin for itself, on behalf of the caller. */
  async relisted(tools: readonly ListedTool[]): Promise<void> {
    await this.nameListing(tools, "whole");
    this.names.relistedFor.set(await this.caller.listing(), true);
  }

  /**
   * Whether the proxy asked the origin for its whole listing on behalf of this
   * caller and session and named it here under this profile lately: a name
   * that listing lacked is not asked for again meanwhile. Else a client
   * calling names the origin does not list would have the proxy list the
   * origin, and name what it lists, on every call.
   */
  async relistedLately(): Promise<boolean> {
    return this.names.relistedFor.get(await this.caller.listing()) === true;
  }

  /**
   * Whether the proxy may ask the origin for its whole listing once more (at
   * most `MAX_RELISTS` a minute per isolate and profile); counted when it may.
   */
  takeRelist(): boolean {
    if (this.names.takeRelist()) return true;
    logEvent("relist_limited", { profile: this.profile.name, limit: MAX_RELISTS });
    return false;
  }

  /** What the map knows, for planning: this profile's names (kept ones too), the origin's tools. */
  private known(): KnownTools {
    const names = this.names;
    return {
      nameOf: (original) => names.byOriginal.get(original) ?? names.legacyNames.get(original),
      originalOf: (name) => names.byName.get(name) ?? names.legacyOwners.get(name),
      entryOf: (original) => this.origin.tools.get(original),
    };
  }

  /**
   * Whether `name` could be a model-facing name of this profile: legal under
   * its rules, so at most its cap long. No other name is looked up anywhere.
   */
  couldHaveNamed(name: string): boolean {
    return isLegalName(name, this.profile.names);
  }

  /** The tool a model-facing name stands for, with its schema and view: memory first, then KV. */
  async resolve(name: string): Promise<Resolution | undefined> {
    if (!this.couldHaveNamed(name)) return undefined;
    let original = this.names.byName.get(name);
    if (original === undefined && (await this.load())) original = this.names.byName.get(name);
    return original === undefined ? undefined : this.resolveOriginal(original, name);
  }

  /** The tool `original` as a call by `name` resolves it: memory first, then KV. */
  private async resolveOriginal(original: string, name: string): Promise<Resolution | undefined> {
    const entry = this.origin.tools.get(original);
    if (!entry) return undefined;
    if (entry.inputSchema !== undefined) return this.resolution(name, entry, "memory");
    const inputSchema = await this.store.readSchema(entry.schemaHash);
    // Known by name, but its schema is not in KV (a lost write): the origin is asked.
    if (inputSchema === undefined) return undefined;
    const full = { ...entry, inputSchema };
    this.origin.remember(full);
    return this.resolution(name, full, "kv");
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
    return this.resolveOriginal(match.original, this.listedName(match.original));
  }

  /** The name `original` is listed under here. */
  listedName(original: string): string {
    return this.names.byOriginal.get(original) ?? original;
  }

  /** `name` matched against the tools the caller's own whole listing showed; `undefined` without one here. */
  async matchShown(name: string): Promise<NameMatch | undefined> {
    const shown = await this.view.current();
    if (!shown?.view.whole) return undefined;
    const tools = [...shown.view.decisions]
      .filter(([, decision]) => decision === "shown")
      .map(([original]) => ({ original, listed: this.listedName(original) }));
    return matchName(name, tools);
  }

  private async resolution(
    name: string,
    entry: ToolEntry,
    source: Resolution["source"],
  ): Promise<Resolution> {
    const view = this.views.of(name, entry)?.view;
    const rule = this.policy.rules.ruleFor(entry.original);
    const { refused, shown } = await this.judge(entry.original);
    return {
      entry,
      source,
      shown,
      ...(view?.differs ? { view } : {}),
      ...(rule ? { rule } : {}),
      ...(refused ? { refused } : {}),
    };
  }

  /**
   * Why the policy refuses a call naming a tool by its original name, if it
   * does: judged as a call by its model-facing name is (`unchecked` where
   * only a listing of the caller's can tell: the resolver lists the origin).
   */
  async refusalOf(original: string): Promise<Resolution["refused"]> {
    await this.load();
    return (await this.judge(original)).refused;
  }

  /** What the policy makes of a call to `original`, as the caller's own listing decided. */
  private judge(original: string): Promise<Judgement> {
    return this.view.judge(original, this.policy, this.origin.tools.has(original));
  }

  /** The caller's search mode (caller-listings.ts `CallerView.search`). */
  search(): Promise<ToolSearch | null | undefined> {
    return this.view.search();
  }

  /** Drops this isolate's memory of the origin (it said its tools changed), callers' views with it. */
  forget(): void {
    this.origin.clear();
  }

  /** Reads what KV holds of the origin's tools and this profile's kept names, once, naming every original it knows. */
  private async load(): Promise<boolean> {
    if (!(await this.store.load(this.names))) return false;
    this.nameKnownTools();
    return true;
  }

  /**
   * Names every original the isolate knows but this profile has not named
   * yet, as a listing of them would: the operator's chosen names included,
   * or a cold isolate would hand a chosen name to the tool whose own name it is.
   */
  private nameKnownTools(): void {
    const unnamed = [...this.origin.tools.keys()].filter((o) => !this.names.byOriginal.has(o));
    if (unnamed.length === 0) return;
    const chosen = this.policy.rules.names;
    const assigned = assignNames(unnamed, this.known(), this.profile.names, chosen);
    for (const { name, original } of assigned.assignments) this.names.remember(name, original);
    // A new isolate's first listing is most often of these very tools: not named twice.
    this.names.keepAssigned(unnamed, chosen, assigned);
  }
}
