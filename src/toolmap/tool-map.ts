/**
 * The tool map: every original tool an origin listed, with its `inputSchema`,
 * and for each profile the model-facing names, both ways. Isolate memory in
 * front of Workers KV (binding `TOOL_MAP`, layout in stored-map.ts;
 * docs/tool-map.md; ARCHITECTURE.md, "Storage").
 *
 * KV cost is constant per listing, whatever the number of tools: a listing
 * that changes nothing writes nothing; one that adds or changes tools writes
 * the origin's map and its schemas (two or three values). A cold isolate
 * reads the map in one read, and a schema in one more, when a call needs it.
 *
 * Names never move. A model-facing name is a pure function of the original
 * and the profile (names/sanitize.ts), the same in every isolate whatever it
 * has seen, so two isolates writing at once (KV keeps the later write) lose at
 * most a tool or a schema from KV, never a name: a tool KV lacks is learned
 * again from the origin (relist.ts). Names an earlier layout handed out are
 * read once per profile and kept (`legacy`).
 *
 * Bounds: at most `MAX_TOOLS` originals and `MAX_SCHEMA_CHUNKS` chunks of
 * schemas per origin; an original no listing showed for `EXPIRY_DAYS` leaves
 * the map at its next write. Past a bound, the tools least recently listed are
 * not stored (`tool_map_full`): their names stay right, a cold isolate asks
 * the origin for them.
 *
 * Platform limits: KV is eventually consistent (another location may not see
 * a write for 60 s or more), allows one write a second to a key, and can
 * fail. Every KV error is a miss, logged, never a failed request.
 */
import type { BoundedMap } from "../bounded-map";
import { logEvent } from "../log";
import { assignNames } from "../names/assign";
import { isLegalName } from "../names/sanitize";
import { fingerprint32 } from "../names/stable-hash";
import { WrittenTool } from "../protocol/listing-text";
import { firstOfItsName, type ListedTool } from "../protocol/tools-list";
import { describedTool, presentedSchema, shapesSchema } from "../rules/apply-rules";
import {
  editsListings,
  NO_POLICY,
  refusesCalls,
  type ToolPolicy,
  type ToolRule,
} from "../rules/tool-rules";
import type { Profile } from "../schemas/profile";
import { changesNothing, type SchemaView, schemaView } from "../schemas/view";
import { acceptKey, decidePins, definitionOf } from "./definition-pins";
import {
  MAX_RELISTS,
  MAX_TOOLS,
  type OriginMemory,
  type ProfileNames,
  type ToolMapMemory,
  type ToolMapScopes,
} from "./isolate-memory";
import { readLegacyNames } from "./legacy-v1";
import { type KnownTools, type PlannedEntry, planListing, type ToolEntry } from "./plan-listing";
import {
  ANSWER_TTL_DAYS,
  type AnswerBytes,
  answerBytes,
  answerKey,
  chunked,
  decodeAnswer,
  decodeMap,
  emptyMap,
  encodeAnswer,
  encodeMap,
  findSchema,
  mapKey,
  type RememberedAnswer,
  type StoredMap,
  schemaKey,
  schemaLine,
  schemaLines,
} from "./stored-map";
import { type SearchableTool, ToolSearch } from "./tool-search";

export { type AnswerBytes, type RememberedAnswer, sentAsReceived } from "./stored-map";

const MAX_SCHEMA_CHUNKS = 2;
/** Characters per schema chunk: under KV's 25 MiB a value, even at 3 bytes a character. */
const MAX_CHUNK_CHARS = 8 * 1024 * 1024;
export const EXPIRY_DAYS = 30;
/** A listed tool's "last listed" day is written again only when older than this. */
const SEEN_REFRESH_DAYS = 7;
/** A map read this recently is merged into without reading it again. */
const FRESH_MS = 10_000;
/**
 * Accept keys read from KV per listing (a request's KV operations are
 * limited): a held tool past them stays held until a later listing reads its key.
 */
const MAX_ACCEPT_READS = 10;
/** The largest value KV takes: an answer's UTF-8 text past it stays in the isolate. */
const MAX_KV_VALUE_BYTES = 25 * 1024 * 1024;
const ANSWER_WRITE_MS = 60_000;

const today = () => Math.floor(Date.now() / 86_400_000);

/**
 * What a rewritten listing depends on besides the origin's text: the code (a
 * deployment's version id) and the settings that shape it, as one fingerprint.
 */
function settingsOf(deployment: string, profile: Profile, policy: ToolPolicy): string {
  const { names, toolCeiling } = profile;
  const settings = [deployment, profile.name, names.cap, toolCeiling, policy.changes];
  return fingerprint32(JSON.stringify([...settings, policy.rules.document])).toString(36);
}

/**
 * A listing's tools, each name's first only, as the listing the client gets
 * shows them (`firstOfItsName`); a name written again is logged.
 */
function firstOfEachName(tools: readonly ListedTool[]): readonly ListedTool[] {
  const seen = new Set<string>();
  const first: ListedTool[] = [];
  const repeated = new Set<string>();
  for (const tool of tools) {
    if (firstOfItsName(tool, seen)) first.push(tool);
    else repeated.add(tool.name);
  }
  if (repeated.size === 0) return tools;
  logEvent("tool_listed_twice", { tools: [...repeated] });
  return first;
}

const sameAnswer = (a: RememberedAnswer, b: RememberedAnswer) =>
  a.received.every((part, i) => part === b.received[i]) &&
  a.sent.every((part, i) => part === b.sent[i]);

export interface Resolution {
  entry: ToolEntry;
  source: "memory" | "kv";
  /** The schema the model was shown, where it differs from the origin's. */
  view?: SchemaView;
  /** The operator's rule for the tool, if any (TOOL_RULES). */
  rule?: ToolRule;
  /**
   * Why calls to it are refused: the operator's rules hide it, its changed
   * definition is held, the origin's listing lacks it while such rules apply
   * (`unlisted`), or whether any of these applies needs a listing this isolate
   * has not seen (`unchecked`).
   */
  refused?: "hidden" | "held" | "unlisted" | "unchecked";
}

/** A listing page as the model sees it: original → model-facing name, and → schema view where it differs. */
export interface NamedListing {
  names: Map<string, string>;
  schemas: Map<string, unknown>;
  /** original → why its view is beyond the provider's limits (the listing marks the tool). */
  unfit: Map<string, string>;
  /** original → the description the operator's rules give it, where they change it. */
  descriptions: Map<string, string | undefined>;
  /** Originals left out of the listing: hidden by the operator's rules, or held. */
  hidden: Set<string>;
  /**
   * Originals read from a text that writes a key twice in their input
   * schema, annotations or output schema: written again from the proxy's
   * reading, so no client reads a definition other than the one pinned and
   * checked.
   */
  twoWays: Set<string>;
  /**
   * Whether entries of `tools` that are no tool (not an object with a string
   * `name`) are left out: where the operator's rules or `TOOL_CHANGES=hold`
   * edit listings, as the rules judged none of them and a lenient client may
   * still read one as a tool (a name `["secret.admin"]`, `String`ed).
   */
  toolsOnly: boolean;
  /**
   * Whether the names took every name KV holds into account; not when the map
   * could not be read (a name may then stand for another tool): such a
   * listing is answered but never remembered.
   */
  settled: boolean;
}

export class ToolMap {
  private readonly origin: OriginMemory;

  constructor(
    private readonly kv: KVNamespace,
    private readonly scopes: ToolMapScopes,
    readonly profile: Profile,
    memory: ToolMapMemory,
    private readonly waitUntil: (promise: Promise<unknown>) => void,
    readonly policy: ToolPolicy = NO_POLICY,
    private readonly deployment?: string,
  ) {
    this.origin = memory.origin(scopes.origin);
    this.answers = memory.answers;
  }

  private readonly answers: BoundedMap<ProfileNames, RememberedAnswer>;

  /**
   * Where KV keeps the last answer rewritten under this deployment and these
   * settings; none without a deployment id. Worked out when a listing asks,
   * not for every request (the rules are written out to fingerprint them).
   */
  private get answerKey(): string | undefined {
    const { deployment, scopes, profile, policy } = this;
    return deployment && answerKey(scopes.origin, settingsOf(deployment, profile, policy));
  }

  /**
   * The answer last rewritten for this origin and profile: this isolate's, or
   * the one KV holds (read once per isolate); none while a tool is held, so
   * each listing reads whether its change was accepted.
   */
  async rememberedAnswer(): Promise<RememberedAnswer | undefined> {
    if (this.origin.held.size > 0) return undefined;
    const names = this.names;
    const remembered = this.answers.get(names);
    if (remembered || this.deployment === undefined) return remembered;
    if (names.storedAnswer === undefined) {
      names.storedAnswer = this.readAnswer();
      const stored = await names.storedAnswer;
      if (stored && !this.answers.get(names)) this.answers.set(names, stored);
    }
    return this.answers.get(names);
  }

  /**
   * The bytes of `answer`, the one this isolate remembers: made once, and kept
   * with it while they fit the isolate's bound (`undefined` when they do not,
   * and the body is compared as text).
   */
  answerBytes(answer: RememberedAnswer): AnswerBytes | undefined {
    if (answer.bytes) return answer.bytes;
    const bytes = answerBytes(answer);
    // Only to the answer it was made from: another listing may have replaced it meanwhile.
    if (this.answers.get(this.names) !== answer) return bytes;
    return this.answers.replace(this.names, { ...answer, bytes }) ? bytes : undefined;
  }

  /** Remembers an answer in this isolate, and in KV for new isolates when KV holds another. */
  rememberAnswer(answer: RememberedAnswer): void {
    if (this.origin.held.size > 0) return;
    const names = this.names;
    this.answers.set(names, answer);
    // At most one write a minute per isolate and profile: KV takes one a second per key.
    if (Date.now() - names.answerWrittenAt < ANSWER_WRITE_MS) return;
    const key = this.answerKey;
    // An answer over the isolate's bound would be read back by new isolates only to be dropped.
    if (key === undefined || this.answers.get(names) !== answer) return;
    const stored = names.storedAnswer;
    names.storedAnswer = Promise.resolve(answer);
    names.answerWrittenAt = Date.now();
    this.waitUntil(
      (async () => {
        const known = await stored;
        if (known && sameAnswer(known, answer)) return;
        // Encoded here, as KV would encode the text: its size in bytes is known before it is sent.
        const value = encodeAnswer(answer);
        if (value.byteLength > MAX_KV_VALUE_BYTES) return;
        await this.kv.put(key, value, { expirationTtl: ANSWER_TTL_DAYS * 86_400 });
      })().catch((error) => logEvent("kv_error", { op: "put", error: String(error) })),
    );
  }

  private async readAnswer(): Promise<RememberedAnswer | undefined> {
    const key = this.answerKey;
    if (key === undefined) return undefined;
    try {
      const text = await this.kv.get(key, "text");
      return text === null ? undefined : decodeAnswer(text);
    } catch (error) {
      logEvent("kv_error", { op: "get", error: String(error) });
      return undefined;
    }
  }

  /** This profile's names: looked up each time, since `forget` drops them. */
  private get names(): ProfileNames {
    return this.origin.profile(this.scopes.legacy);
  }

  /**
   * Names the tools of one listing (one page), remembers them, stores what
   * KV lacks, and views their schemas under the profile (a view is computed
   * once per tool and schema, then reused from isolate memory).
   */
  async nameListing(listed: readonly ListedTool[]): Promise<NamedListing> {
    const tools = firstOfEachName(listed);
    const readable = await this.load();
    // The map now follows this listing: an answer remembered from another no longer stands for it.
    for (const names of this.origin.profiles.values()) this.answers.delete(names);
    const { same: asListed, twoWays } = this.writtenAsBefore(tools);
    const originals = tools.map((tool) => tool.name);
    const chosen = this.policy.rules.names;
    const knownTools = this.known();
    const keptNames = this.names.assignedBefore(originals, chosen);
    const assigned = keptNames ?? assignNames(originals, knownTools, this.profile.names, chosen);
    const plan = planListing(tools, knownTools, assigned, asListed);
    const pinning = this.policy.changes !== "allow";
    // Each rename is logged once per isolate, when it is new here: not on every listing.
    const renames = plan.renames.filter(({ from, to }) => this.names.byOriginal.get(from) !== to);
    const day = today();
    for (const { name, original, tool, schemaHash, inputSchema, sameSchema } of plan.entries) {
      const before = this.origin.tools.get(original)?.listed;
      const known = sameSchema ? before?.definition : undefined;
      const listed =
        before && asListed.has(original)
          ? before
          : {
              annotations: tool?.annotations,
              ...(pinning && tool ? { definition: definitionOf(tool, schemaHash, known) } : {}),
            };
      this.origin.remember({ original, schemaHash, inputSchema, listed }, day);
      this.names.remember(name, original);
    }
    // Names given back are remembered as they were: what was kept for them still stands.
    if (keptNames === undefined) this.names.keepAssigned(originals, chosen, assigned);
    // Pins are decided only against what KV holds: never from a map that could not be read.
    const pinsChanged = readable && pinning && (await this.decidePins(plan.entries));
    // Names planned without KV's legacy names could take one for another tool: not stored.
    if (readable && (pinsChanged || this.needsWrite(plan.entries))) this.waitUntil(this.store());

    if (renames.length > 0) {
      const { profile, cap } = this.profile.names;
      logEvent("tools_renamed", { profile: profile.name, cap, renames });
    }
    for (const displacement of plan.displaced)
      logEvent("tool_name_reassigned", { ...displacement });
    return {
      names: plan.names,
      ...this.viewSchemas(plan.entries),
      ...this.ruled(plan.entries),
      twoWays,
      toolsOnly: editsListings(this.policy),
      settled: readable,
    };
  }

  /** The tools of the last listing read from its text here, in its order: where a new one may read fastest. */
  writtenBefore(): readonly WrittenTool[] {
    return [...this.origin.written.values()];
  }

  /**
   * The originals written exactly as the last listing read from its text
   * wrote them (a string comparison, no parse), and those whose text reads
   * two ways (`NamedListing.twoWays`); this listing's places then replace
   * that listing's. A text that reads two ways is not kept: it is checked
   * again at every listing.
   */
  private writtenAsBefore(tools: readonly ListedTool[]) {
    const same = new Set<string>();
    const twoWays = new Set<string>();
    const written = new Map<string, WrittenTool>();
    for (const tool of tools) {
      const { name } = tool;
      const before = this.origin.written.get(name);
      // A tool this listing shows otherwise is no longer known by the text kept for it.
      if (!(tool instanceof WrittenTool)) {
        this.origin.written.delete(name);
        continue;
      }
      if (before && tool.sameTextAs(before)) same.add(name);
      else if (tool.readsOneWay === false) {
        twoWays.add(name);
        continue;
      }
      written.set(name, tool);
    }
    if (written.size > 0) this.origin.written = written;
    return { same, twoWays };
  }

  /** Compares each listed tool's definition with its pin; whether a pin is to be stored. */
  private async decidePins(entries: readonly PlannedEntry[]): Promise<boolean> {
    const origin = this.origin;
    let reads = 0;
    const listed = entries.flatMap(({ original }) => {
      const definition = origin.tools.get(original)?.listed?.definition;
      return definition ? [{ original, definition }] : [];
    });
    const { held, pinned } = await decidePins(
      listed,
      this.policy.changes === "hold" ? "hold" : "log",
      (original) => origin.pinned.get(original) ?? origin.stored?.tools.get(original)?.pin,
      (original, pin) => this.accepted(original, pin, () => reads++ < MAX_ACCEPT_READS),
      this.scopes.origin,
      origin.heldLogged,
    );
    for (const { original } of listed) {
      if (held.has(original)) origin.held.add(original);
      else origin.held.delete(original);
    }
    for (const [original, pin] of pinned) origin.pinned.set(original, pin);
    return pinned.size > 0;
  }

  /**
   * Whether the operator wrote the accept key for `original`'s definition
   * `pin`: known for a minute once read, read from KV only while `mayRead`.
   */
  private async accepted(original: string, pin: string, mayRead: () => boolean): Promise<boolean> {
    const key = acceptKey(this.scopes.origin, pin, original);
    const known = this.origin.acceptChecks.get(key);
    if (known !== undefined) return known;
    if (!mayRead()) return false;
    let value: string | null = null;
    try {
      value = await this.kv.get(key, "text");
    } catch (error) {
      logEvent("kv_error", { op: "get", error: String(error) });
    }
    const accepted = value === original;
    this.origin.acceptChecks.set(key, accepted);
    if (accepted) this.waitUntil(this.kv.delete(key).catch(() => {}));
    return accepted;
  }

  /** What the operator's rules do to this listing: descriptions, and the tools left out. */
  private ruled(entries: readonly PlannedEntry[]): Pick<NamedListing, "descriptions" | "hidden"> {
    const { rules } = this.policy;
    const descriptions = new Map<string, string | undefined>();
    const hidden = new Set<string>();
    for (const { original, tool } of entries) {
      const entry = this.origin.tools.get(original);
      if (this.origin.held.has(original)) hidden.add(original);
      else if (rules.hides({ name: original, annotations: entry?.listed?.annotations }))
        hidden.add(original);
      const rule = rules.ruleFor(original);
      if (rule?.description !== undefined || rule?.appendDescription !== undefined) {
        descriptions.set(original, describedTool(tool?.description, rule));
      }
    }
    return { descriptions, hidden };
  }

  /**
   * Names a whole listing (every page), and decides whether the profile serves
   * it in search mode: more tools than its ceiling. The decision, with the
   * tools as search mode shows them, is kept until the next whole listing.
   */
  async nameWholeListing(
    whole: readonly ListedTool[],
    /** The caller (`relistedLatelyFor`) a listing the proxy asked for itself was asked for. */
    relistedFor?: string,
  ): Promise<{ listing: NamedListing; search: ToolSearch | null }> {
    const tools = firstOfEachName(whole);
    const listing = await this.nameListing(tools);
    if (relistedFor !== undefined) this.names.relistedFor.set(relistedFor, true);
    const visible = tools.filter((tool) => !listing.hidden.has(tool.name));
    const ceiling = this.profile.toolCeiling;
    if (ceiling === undefined || visible.length <= ceiling) {
      this.names.search = null;
      return { listing, search: null };
    }
    const searchable = visible.map((tool): SearchableTool => {
      const description = listing.descriptions.has(tool.name)
        ? listing.descriptions.get(tool.name)
        : tool.description;
      return {
        name: listing.names.get(tool.name) ?? tool.name,
        original: tool.name,
        ...(typeof tool.title === "string" ? { title: tool.title } : {}),
        ...(typeof description === "string" ? { description } : {}),
        inputSchema: listing.schemas.get(tool.name) ?? tool.inputSchema,
      };
    });
    const search = new ToolSearch(searchable);
    this.names.search = search;
    logEvent("tools_search_mode", { profile: this.profile.name, tools: visible.length, ceiling });
    return { listing, search };
  }

  /**
   * Whether the proxy asked the origin for its whole listing on behalf of
   * `caller` (a digest of the credentials and session the origin sees) and named it here
   * under this profile lately: a name that listing lacked is not asked for
   * again meanwhile. Else a client calling names the origin does not list
   * would have the proxy list the origin, and name what it lists, on every call.
   */
  relistedLatelyFor(caller: string): boolean {
    return this.names.relistedFor.get(caller) === true;
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

  /** The last whole listing's search mode: `null` when not in it, `undefined` when not known here. */
  get search(): ToolSearch | null | undefined {
    return this.names.search;
  }

  /** What the map knows, for planning: this profile's names (layout 1's too), the origin's tools. */
  private known(): KnownTools {
    const names = this.names;
    return {
      nameOf: (original) => names.byOriginal.get(original) ?? names.legacyNames.get(original),
      originalOf: (name) => names.byName.get(name) ?? names.legacyOwners.get(name),
      entryOf: (original) => this.origin.tools.get(original),
    };
  }

  /**
   * original → schema view, for the tools whose view differs, and → why a view
   * is still beyond the provider's limits; views computed now are logged.
   */
  private viewSchemas(entries: readonly PlannedEntry[]): Pick<NamedListing, "schemas" | "unfit"> {
    const schemas = new Map<string, unknown>();
    const unfit = new Map<string, string>();
    const adapted: Array<Record<string, unknown>> = [];
    for (const entry of entries) {
      const { view, fresh } = this.viewOf(entry.name, entry) ?? {};
      if (view?.unfit !== undefined) unfit.set(entry.original, view.unfit);
      if (!view?.differs) continue;
      schemas.set(entry.original, view.schema);
      if (fresh) {
        const { rules, dropped } = view;
        adapted.push({
          tool: entry.original,
          rules,
          dropped,
          ...(view.unfit === undefined ? {} : { unfit: view.unfit }),
        });
      }
    }
    if (adapted.length > 0)
      logEvent("schemas_adapted", { profile: this.profile.name, tools: adapted });
    return { schemas, unfit };
  }

  /**
   * The view of a tool's schema under the profile, from isolate memory while
   * the schema's hash is unchanged; `undefined` where the profile changes no schema.
   */
  private viewOf(
    name: string,
    {
      original,
      inputSchema,
      schemaHash: hash,
    }: Pick<ToolEntry, "original" | "inputSchema" | "schemaHash">,
  ): { view: SchemaView; fresh: boolean } | undefined {
    const rules = this.profile.schemas;
    const rule = this.policy.rules.ruleFor(original);
    const shaped = shapesSchema(rule);
    if ((changesNothing(rules) && !shaped) || inputSchema === undefined) return undefined;
    const known = this.names.views.get(name);
    if (known?.hash === hash) return { view: known.view, fresh: false };
    if (this.names.views.size >= MAX_TOOLS) this.names.views.clear();
    const viewed = schemaView(presentedSchema(inputSchema, rule), rules);
    // Arguments the proxy sets are left out of what the model sees, whatever the profile.
    const view = shaped ? { ...viewed, differs: true } : viewed;
    this.names.views.set(name, { hash, view });
    return { view, fresh: true };
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
    const entry = original === undefined ? undefined : this.origin.tools.get(original);
    if (!entry) return undefined;
    if (entry.inputSchema !== undefined) return this.resolution(name, entry, "memory");
    const inputSchema = await this.readSchema(entry.schemaHash);
    // Known by name, but its schema is not in KV (a lost write): the origin is asked.
    if (inputSchema === undefined) return undefined;
    const full = { ...entry, inputSchema };
    this.origin.remember(full);
    return this.resolution(name, full, "kv");
  }

  private resolution(name: string, entry: ToolEntry, source: Resolution["source"]): Resolution {
    const view = this.viewOf(name, entry)?.view;
    const rule = this.policy.rules.ruleFor(entry.original);
    const refused = this.refusal(entry.original, entry.listed);
    return {
      entry,
      source,
      ...(view?.differs ? { view } : {}),
      ...(rule ? { rule } : {}),
      ...(refused ? { refused } : {}),
    };
  }

  /** Why the operator's policy refuses calls to `original`, as this isolate saw it `listed`, if it does. */
  private refusal(original: string, listed: ToolEntry["listed"]): Resolution["refused"] {
    const { rules, changes } = this.policy;
    if (rules.hides({ name: original, annotations: listed?.annotations })) {
      // Annotations unseen here may be what hides it, or what lets it through.
      return listed || !rules.readsAnnotations ? "hidden" : "unchecked";
    }
    if (this.origin.held.has(original)) return "held";
    if (!listed && (rules.readsAnnotations || changes === "hold")) return "unchecked";
    return undefined;
  }

  /**
   * Why the policy refuses a call naming a tool by its original name, if it
   * does: judged as a call by its model-facing name is (`unchecked` where
   * only a listing shows what the policy reads: the resolver lists the
   * origin). Under a policy that refuses calls, a name this isolate does not
   * know needs a listing too, and once `listingRead`, a name the listing
   * lacks is refused as a hidden tool is (`unlisted`, for the log).
   */
  refusalOf(original: string, listingRead = false): Resolution["refused"] {
    const known = this.origin.tools.get(original);
    if (listingRead && !known?.listed) {
      if (this.policy.rules.hides({ name: original })) return "hidden";
      return refusesCalls(this.policy) ? "unlisted" : undefined;
    }
    const refused = this.refusal(original, known?.listed);
    // A name this isolate does not know, and no rule refuses by itself: the listing tells.
    return refused === undefined && !known && refusesCalls(this.policy) ? "unchecked" : refused;
  }

  /** Reads what KV knows of the origin's tools into this isolate, once (`refusalOf` judges by it). */
  async readStored(): Promise<void> {
    await this.load();
  }

  /** Drops this isolate's memory of the origin (it said its tools changed). */
  forget(): void {
    this.origin.clear();
  }

  /**
   * Reads the origin's map once per isolate, and this profile's layout-1
   * names once, naming every original KV knows; false when KV could not be
   * read (tried again next time).
   */
  private async load(): Promise<boolean> {
    const origin = this.origin;
    origin.loaded ??= this.readMap().then(
      (stored) => {
        origin.stored = stored;
        origin.loadedAt = Date.now();
        for (const [original, tool] of stored.tools) {
          if (!origin.tools.has(original)) {
            origin.remember({ original, schemaHash: tool.schema });
          }
        }
        return true;
      },
      (error) => {
        origin.loaded = undefined;
        logEvent("kv_error", { op: "get", error: String(error) });
        return false;
      },
    );
    if (!(await origin.loaded)) return false;
    if (!(await this.readLegacy())) return false;
    this.nameKnownTools();
    return true;
  }

  private async readMap(): Promise<StoredMap> {
    const text = await this.kv.get(mapKey(this.scopes.origin), "text");
    return (text === null ? undefined : decodeMap(text)) ?? emptyMap();
  }

  /**
   * Layout 1's names for this profile, kept in memory: from the map once
   * migrated, else read from KV once; false when they could not be read.
   */
  private async readLegacy(): Promise<boolean> {
    const names = this.names;
    const stored = this.origin.stored ?? emptyMap();
    names.legacy ??= stored.migrated.has(this.scopes.legacy)
      ? Promise.resolve(stored.legacy.get(this.scopes.legacy) ?? new Map())
      : readLegacyNames(this.kv, this.scopes.legacy, MAX_TOOLS).then(
          (read) => {
            if (read.truncated)
              logEvent("tool_map_full", { scope: this.scopes.legacy, kept: MAX_TOOLS });
            return read.names;
          },
          (error) => {
            names.legacy = undefined;
            logEvent("kv_error", { op: "list", error: String(error) });
            return undefined;
          },
        );
    const legacy = await names.legacy;
    if (legacy === undefined) return false;
    if (names.legacyNames.size === 0) names.keepLegacy(legacy);
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
    const { assignments } = assignNames(
      unnamed,
      this.known(),
      this.profile.names,
      this.policy.rules.names,
    );
    for (const { name, original } of assignments) this.names.remember(name, original);
  }

  /** Whether KV lacks what this listing shows: a tool, a schema, a stale day, this profile's migration. */
  private needsWrite(entries: readonly PlannedEntry[]): boolean {
    const stored = this.origin.stored;
    if (!stored) return false;
    if (!stored.migrated.has(this.scopes.legacy)) return true;
    const day = today();
    return entries.some(({ original, schemaHash }) => {
      const tool = stored.tools.get(original);
      return tool?.schema !== schemaHash || day - tool.seen >= SEEN_REFRESH_DAYS;
    });
  }

  /**
   * Writes the origin's map merged with what this isolate knows: the schemas
   * first (so the map never names one that is not there), then the map.
   */
  private async store(): Promise<void> {
    const origin = this.origin;
    if (origin.writing) return;
    origin.writing = true;
    try {
      const base =
        Date.now() - origin.loadedAt > FRESH_MS
          ? await this.readMap()
          : (origin.stored ?? emptyMap());
      const merged = this.merge(base);
      const lines = await this.schemaLinesFor(base, merged);
      if (lines !== undefined) {
        const chunks = chunked(lines.values(), MAX_CHUNK_CHARS).slice(0, MAX_SCHEMA_CHUNKS);
        for (const [index, chunk] of chunks.entries()) {
          await this.kv.put(schemaKey(this.scopes.origin, index), chunk);
        }
        merged.chunks = chunks.length;
      }
      await this.kv.put(mapKey(this.scopes.origin), encodeMap(merged));
      for (const [original, tool] of merged.tools) {
        if (origin.pinned.get(original) === tool.pin) origin.pinned.delete(original);
      }
      origin.stored = merged;
      origin.loadedAt = Date.now();
    } catch (error) {
      logEvent("kv_error", { op: "put", error: String(error) });
    } finally {
      origin.writing = false;
    }
  }

  /** `base` with this isolate's tools and this profile's legacy names, expired and bounded. */
  private merge(base: StoredMap): StoredMap {
    const day = today();
    const tools = new Map(base.tools);
    for (const [original, seen] of this.origin.listed) {
      const entry = this.origin.tools.get(original);
      if (!entry) continue;
      const pin = this.origin.pinned.get(original) ?? base.tools.get(original)?.pin;
      tools.set(original, {
        schema: entry.schemaHash,
        seen,
        ...(pin === undefined ? {} : { pin }),
      });
    }
    for (const [original, tool] of tools) {
      if (day - tool.seen > EXPIRY_DAYS) tools.delete(original);
    }
    let kept = tools;
    if (tools.size > MAX_TOOLS) {
      const recent = [...tools].sort((a, b) => b[1].seen - a[1].seen).slice(0, MAX_TOOLS);
      kept = new Map(recent);
      logEvent("tool_map_full", { scope: this.scopes.origin, tools: tools.size, kept: MAX_TOOLS });
    }
    const legacy = new Map(base.legacy);
    if (this.names.legacyNames.size > 0) legacy.set(this.scopes.legacy, this.names.legacyNames);
    const migrated = new Set(base.migrated);
    migrated.add(this.scopes.legacy);
    return { tools: kept, chunks: base.chunks, legacy, migrated };
  }

  /**
   * The schema lines the merged map needs, when KV's chunks lack one of them:
   * the stored lines it still needs, and this isolate's for the rest;
   * `undefined` when KV's chunks already hold every one.
   */
  private async schemaLinesFor(
    base: StoredMap,
    merged: StoredMap,
  ): Promise<Map<string, string> | undefined> {
    const inBase = new Set([...base.tools.values()].map((tool) => tool.schema));
    const needed = new Set([...merged.tools.values()].map((tool) => tool.schema));
    const missing = [...needed].filter((hash) => !inBase.has(hash));
    if (missing.length === 0) return undefined;
    const texts = base.chunks > 0 ? await this.readChunks(base.chunks) : [];
    const lines = schemaLines(texts, (hash) => needed.has(hash));
    for (const entry of this.origin.tools.values()) {
      if (!needed.has(entry.schemaHash) || lines.has(entry.schemaHash)) continue;
      if (entry.inputSchema === undefined) continue;
      lines.set(entry.schemaHash, schemaLine(entry.schemaHash, JSON.stringify(entry.inputSchema)));
    }
    return lines;
  }

  private async readChunks(count: number): Promise<string[]> {
    const keys = Array.from({ length: count }, (_, i) => schemaKey(this.scopes.origin, i));
    const texts = await this.kv.get(keys, "text");
    return [...texts.values()].filter((text): text is string => text !== null);
  }

  /** One schema from KV, by its fingerprint: one read of the chunks. */
  private async readSchema(hash: string): Promise<unknown> {
    const chunks = this.origin.stored?.chunks ?? 0;
    if (chunks === 0) return undefined;
    try {
      for (const text of await this.readChunks(chunks)) {
        const schema = findSchema(text, hash);
        if (schema !== undefined) return schema;
      }
    } catch (error) {
      logEvent("kv_error", { op: "get", error: String(error) });
    }
    return undefined;
  }
}
