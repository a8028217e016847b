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
import type { ListedTool } from "../protocol/tools-list";
import type { WrittenTool } from "../protocol/written-tool";
import { NO_POLICY, type ToolPolicy } from "../rules/tool-rules";
import type { Profile } from "../schemas/profile";
import { AnswerMemory, settingsOf } from "./answer-memory";
import { CallNames } from "./call-names";
import { CallerView, decide, type ListingPart } from "./caller-listings";
import type { CallerPins } from "./caller-pin-records";
import { PinAllowance } from "./caller-pins";
import { type Caller, ONE_CALLER } from "./callers";
import { pinsOf } from "./definition-pins";
import type { OriginMemory, ToolMapMemory, ToolMapScopes } from "./isolate-memory";
import { rememberEntries } from "./listed-entries";
import { logTaken, logUnmatchedRules } from "./listing-lines";
import { digestedListing, ProvenPins, storedListingPin } from "./listing-pin";
import { MapStore } from "./map-store";
import { firstOfEachName, type NamedListing, noteLargeListing } from "./named-listing";
import { keepListingPin, type PinContext, pinListing, provenPins } from "./pin-listing";
import { type KnownTools, planListing, renamesLogged } from "./plan-listing";
import { type ProfileNames, RELIST_LIMITS } from "./profile-names";
import { SchemaViews } from "./schema-views";
import { shownDescriptions } from "./shown-descriptions";
import { shownInSearchMode, shownMembers } from "./shown-members";
import { type AnswerBytes, answerKey, type RememberedAnswer } from "./stored-map";
import { searchedTools, searchOfListing, type ToolSearch } from "./tool-search";

export type { ListingPart } from "./caller-listings";
export type { NamedListing } from "./named-listing";
export { type AnswerBytes, type RememberedAnswer, sentAsReceived } from "./stored-map";

export class ToolMap {
  private readonly origin: OriginMemory;
  private readonly store: MapStore;
  private readonly answers: AnswerMemory;
  /** The caller's own listing here. */
  private readonly view: CallerView;
  private readonly callerPins: CallerPins;
  private readonly views: SchemaViews;
  /** What this request's listings may spend deciding pins, together (a batch holds up to 256). */
  private readonly pinAllowance = new PinAllowance();
  /** The view this request last showed its caller: kept with the answer remembered from it. */
  private shown: { key: string; held: boolean; whole: boolean } | undefined;
  /** What the names calls give stand for, for this caller. */
  readonly calls: CallNames;
  private relistedNow = false;

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
      () => scopes.legacy,
      caller,
      () => this.settings,
    );
    this.callerPins = memory.callerPins;
    // Nothing of the request's: a search kept past it views its schemas with these (`namesIn`).
    this.views = new SchemaViews(profile, policy, namesIn(this.origin, scopes.legacy), this.origin);
    this.calls = new CallNames({
      profile,
      policy,
      origin: this.origin,
      store: this.store,
      views: this.views,
      view: this.view,
      names: () => this.names,
      load: () => this.load(),
    });
    this.answers = new AnswerMemory(
      kv,
      memory.answers,
      () => this.names,
      waitUntil,
      // None under `hold`: an answer goes only to a caller shown its very view here
      // (`rememberedAnswer`), which KV does not hold, so one read from KV went to no one.
      () =>
        deployment && policy.changes !== "hold"
          ? answerKey(scopes.origin, this.settings)
          : undefined,
    );
  }

  /** What shapes a rewritten listing besides the origin's text. */
  private get settings(): string {
    return settingsOf(this.deployment ?? "", this.profile, this.policy);
  }

  /** This profile's names: looked up each time, since `forget` replaces them. */
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
    await this.proven();
    if (answer.view !== undefined) await this.view.showKept(answer.view);
  }

  /** This request's calls are planned: what was read from KV for them only is let go. */
  callsPlanned(): void {
    this.store.forgetChunks();
  }

  answerBytes(answer: RememberedAnswer): AnswerBytes | undefined {
    return this.answers.bytes(answer);
  }

  /**
   * Remembers the answer this request rewrote, with its view; not one that held a tool, nor a
   * later page: its view holds the caller's pages before it, which a caller whose whole listing
   * is that page's text was never shown.
   */
  rememberAnswer(answer: RememberedAnswer): void {
    if (this.shown?.held || this.shown?.whole === false) return;
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
    await this.proven();
    const tools = firstOfEachName(listed);
    // An isolate that holds none of the origin's listing texts names every tool from scratch.
    const large = this.origin.written.size === 0 && noteLargeListing(tools, this.profile.name);
    const readable = await this.load(true);
    // Pins are decided only against what KV holds: never from a map that could not be read.
    const pinning = this.policy.changes !== "allow";
    const context = readable && pinning ? await this.pinContext() : undefined;
    const proven = context
      ? await provenPins(tools, context, this.policy.scope)
      : new ProvenPins(tools, [], this.policy.scope);
    // A new isolate's first listing, where the listing pin most likely holds (a new deployment's):
    // proven, each schema's fingerprint is its pin's, not computed again. Found out before the
    // isolate's state is read: nothing is awaited between reading and changing it.
    const fingerprints =
      this.origin.written.size === 0 ? await proven.schemaFingerprints() : undefined;
    const names = this.names;
    // The map now follows this listing: an answer remembered from another no longer stands for it.
    this.answers.forget(this.origin.profiles.values());
    const { same: asListed, twoWays } = this.origin.writtenAsBefore(tools);
    const originals = tools.map((tool) => tool.name);
    const chosen = this.policy.rules.names;
    const knownTools = this.known();
    const keptNames = names.assignedBefore(originals, chosen);
    const assigned = keptNames ?? assignNames(originals, knownTools, this.profile.names, chosen);
    const plan = planListing(tools, knownTools, assigned, asListed, fingerprints);
    // Each rename is logged once per isolate, when it is new here: not on every listing. Noted as
    // said once the names are kept, before anything is awaited: a listing named while this one
    // waited (on KV, for a large one) said them again.
    const renames = names.unsaid(plan.renames);
    const { definitions, remembered } = rememberEntries(
      plan,
      this.origin,
      names,
      asListed,
      pinning ? { scope: this.policy.scope, proven } : undefined,
    );
    // Names given back are remembered as they were: what was kept for them still stands.
    if (keptNames === undefined) names.keepAssigned(originals, chosen, assigned);
    for (const taken of plan.taken) names.keepName(taken.tool, taken.name);
    names.saidRenames(renames);
    logTaken(plan.taken);
    // Digested tool by tool, a large listing's pin may be the caller's own (pin-listing.ts).
    const digested =
      large && context && (await proven.digested())
        ? await digestedListing(tools, definitions, this.policy.scope)
        : undefined;
    const pins = context ? await pinListing(definitions, context, digested) : undefined;
    const pinsToStore = pins && (pins.shared.size > 0 || pins.accepted.size > 0);
    if (readable && (pinsToStore || this.store.needsWrite(plan.entries, names))) {
      if (pins) {
        const sharedPin = (original: string) => this.origin.sharedPin(original);
        const { scope } = this.policy;
        this.origin.listingPin = storedListingPin(tools, definitions, sharedPin, scope, digested);
      }
      const storing = this.store.store(names);
      // Handed to the runtime whether awaited or not: a request whose client left is cancelled,
      // what it awaits with it, and only what `waitUntil` holds is finished.
      this.waitUntil(storing);
      // Such a listing may be stopped for its CPU before its answer (error 1102, a Free plan's
      // 10 ms: docs/limits.md). Stored first, its names, pins and listing pin are left, and the
      // next attempt digests the listing once, not each tool; a smaller one is not kept waiting.
      if (large) await storing;
    }
    // Where the origin lists each caller their own tools, the map's listing pin is one caller's.
    if (context && pins?.listing) await keepListingPin(pins.listing, context);
    else if (large) await pins?.written;
    for (const displacement of plan.displaced)
      logEvent("tool_name_reassigned", { ...displacement });

    const decisions = decide(plan.entries, this.policy, pins?.held);
    if (renames.length > 0) {
      const { profile, cap } = this.profile.names;
      const hidden = (original: string) => decisions.get(original) === "hidden";
      logEvent("tools_renamed", { profile: profile.name, cap, ...renamesLogged(renames, hidden) });
    }
    if (part === "whole") {
      const judged = {
        names: plan.names,
        anonymous: this.caller.anonymous === true,
        profile: this.profile.name,
      };
      logUnmatchedRules(this.policy.rules, judged, this.origin.rulesJudged);
    }
    const hidden = new Set([...decisions].flatMap(([o, d]) => (d === "shown" ? [] : [o])));
    const searched = part === "whole" ? searchedTools(tools, hidden, this.profile) : null;
    const listing: NamedListing = {
      names: plan.names,
      ...(searched
        ? shownInSearchMode()
        : shownMembers(tools, hidden, plan.entries, this.views, this.profile.name)),
      descriptions: shownDescriptions(plan.entries, this.policy.rules, this.profile, !!searched),
      hidden,
      twoWays,
      settled: readable,
      perCaller: this.policy.changes === "hold",
    };
    // Under `hold`, the definitions shown count in the view's key: an answer remembered from it
    // goes only to a caller shown those before (`rememberedAnswer`). A search shows each tool's
    // definition: where every tool's pin covers all of it, the pins stand for the tools' texts.
    const pinsShowSearch =
      searched !== null && this.policy.scope !== "schema" && definitions.length === tools.length;
    const shownPins =
      (pins && this.policy.changes === "hold") || pinsShowSearch
        ? await pinsOf(definitions)
        : undefined;
    const { search, ...shown } = await this.view.show(part, tools, decisions, remembered, {
      search: searched && (() => searchOfListing(searched, listing, plan.entries, this.views)),
      pins: shownPins,
      pinsShowSearch,
    });
    this.shown = { ...shown, whole: part === "whole" };
    return search ? { ...listing, search } : listing;
  }

  /** The tools of the last listing read from its text here, in its order: where a new one may read fastest. */
  writtenBefore(): readonly WrittenTool[] {
    return [...this.origin.written.values()];
  }

  /** Where this listing's pins are decided for the caller (pin-listing.ts). */
  private async pinContext(): Promise<PinContext> {
    return {
      kv: this.kv,
      scope: this.scopes.origin,
      origin: this.origin,
      callerPins: this.callerPins,
      caller: await this.caller.pins(),
      mode: this.policy.changes === "hold" ? "hold" : "log",
      environment: this.policy.environment,
      waitUntil: this.waitUntil,
      allowance: this.pinAllowance,
    };
  }

  /** Names the whole listing the proxy asked the origin for itself, on behalf of the caller. */
  async relisted(tools: readonly ListedTool[]): Promise<void> {
    await this.nameListing(tools, "whole");
    this.names.relistedFor.set(await this.caller.listing(), true);
    this.relistedNow = true;
  }

  /** Whether this request read the origin's whole listing for its caller, not one of the last minute. */
  get relistedHere(): boolean {
    return this.relistedNow;
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
   * most `MAX_RELISTS` a minute per isolate and profile, `MAX_RELISTS_PER_SOURCE`
   * of them on behalf of one source's callers, `MAX_UNPROVEN_RELISTS` of them for
   * sources the origin has not listed here lately, but for users the proxy
   * signed in, whom no client makes up); counted when it may.
   */
  async takeRelist(): Promise<boolean> {
    const source = await this.caller.source();
    const proven = this.caller.signedIn === true || this.origin.provenSources.get(source) === true;
    const refused = this.names.takeRelist(source, proven);
    if (refused === undefined) return true;
    logEvent("relist_limited", {
      profile: this.profile.name,
      per: refused,
      limit: RELIST_LIMITS[refused],
    });
    return false;
  }

  /**
   * The origin answered a listing for this request's caller: their source is proven here
   * (`OriginMemory.provenSources`), and has a share of its own of the re-lists.
   */
  async proven(): Promise<void> {
    this.origin.provenSources.set(await this.caller.source(), true);
  }

  /** What the map knows, for planning: this profile's names (kept ones too), the origin's tools. */
  private known(): KnownTools {
    return { ...this.names.known(), entryOf: (original) => this.origin.tools.get(original) };
  }

  /** The caller's search mode (caller-listings.ts `CallerView.search`). */
  search(): Promise<ToolSearch | null | undefined> {
    return this.view.search();
  }

  /**
   * The origin said the caller's tools changed, on their session's stream: drops this isolate's
   * memory of its tools, and the view the caller was shown. Not other callers': it said nothing
   * of theirs, and their clients list nothing again.
   */
  async forget(): Promise<void> {
    this.origin.clear();
    await this.view.forget();
  }

  /** Reads what KV holds of the origin's tools and this profile's kept names, once, naming every original it knows. */
  private async load(migrate = false): Promise<boolean> {
    if (!(await this.store.load(this.names, migrate))) return false;
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

/**
 * A profile's names in `origin`, looked up each time (its memory may drop
 * them), for the schema views a search kept past its request makes. Made
 * here, not in the constructor: V8 keeps one context for all the closures a
 * scope makes, so one made there held whatever the others capture, the
 * request's tool map among them (its caller's credentials, its `waitUntil`),
 * for as long as the search was kept (test/node/kept-search-memory.test.ts).
 */
const namesIn = (origin: OriginMemory, scope: string) => () => origin.profile(scope);
