/**
 * Each caller's own listing (SECURITY.md, "What the proxy answers itself"):
 * what the proxy answers itself — a search, whether a profile serves the
 * origin in search mode, whether a call names a tool the operator's policy
 * hides or holds, the fix-it text naming a tool's arguments — comes only from
 * what the origin listed to that caller (caller.ts: credentials, query and
 * session as the origin sees them). A caller with no view here (never listed
 * in this isolate, or dropped for room) gets one from a listing of their
 * own, never another caller's.
 *
 * A view is made by naming a listing (tool-map.ts) and is the same for every
 * caller shown the same listing under the same settings and decisions: it is
 * kept once, under a SHA-256 digest of what it holds (view-key.ts), and callers
 * point at it. So a hundred callers listed alike cost one view, and callers
 * listed differently cost one each, within the isolate's bounds below. The
 * digest covers each schema by its 32-bit fingerprint, which an origin that
 * writes a caller's values into their schema can have them match: a view is
 * shown another caller only for the very schemas it holds (`CallerView.show`).
 */
import { BoundedMap, SharedBoundedMap } from "../bounded-map";
import { textAt } from "../json-spans";
import type { ListedTool } from "../protocol/tools-list";
import { refusesCalls, type ToolPolicy } from "../rules/tool-rules";
import type { Caller } from "./callers";
import { type ToolEntry, toolChars } from "./plan-listing";
import type { ToolSearch } from "./tool-search";
import { listedAlike, schemasKey, ViewKeys } from "./view-key";

/** What the operator's policy made of a tool a listing showed: shown as it is, hidden by the rules, or held (`TOOL_CHANGES=hold`). */
export type Decision = "shown" | "hidden" | "held";

/** What one listing (or the pages of it read so far) showed a caller. */
export interface ListingView {
  /** Original → what the policy made of it: every tool the listing showed, and no other. */
  readonly decisions: ReadonlyMap<string, Decision>;
  /**
   * Original → the map's entry for it as the listing made it: the input
   * schema the caller was listed (the object the map holds while it holds
   * that schema, plan-listing.ts) and its fingerprint. An origin may list one
   * tool with another schema to each caller, and the map keeps the last one
   * listed (tool-map.ts): a call is repaired against the caller's own
   * (call-names.ts).
   */
  readonly entries: ReadonlyMap<string, ToolEntry>;
  /** Whether it is a whole listing: then a tool it lacks is one the origin did not list to the caller. */
  readonly whole: boolean;
  /** A whole listing over the profile's tool ceiling: the tools search mode finds; `null` otherwise. */
  readonly search: ToolSearch | null;
  /**
   * The characters of its tools as the origin wrote them: in search mode,
   * about what its search holds of them; else what `entries` hold
   * (`toolChars`), which the map may have let go since.
   */
  readonly chars: number;
}

/**
 * Views kept per isolate: their tools together, a tool in search mode
 * weighing `SEARCH_WEIGHT` (its search index, built at the first search, and
 * what a search shows of it: about 2 KB a tool of some 760 characters against
 * 0.6 KB, `npm run bench` callers), or, where its tools say more, one for each
 * `CHARS_PER_WEIGHT` characters of them: a search keeps each tool's
 * description and schema whole, and views weighed by count alone held 141 MiB
 * for 150 callers listed 129 tools of 8 KB each, their own
 * (test/node/caller-views-memory.test.ts). Outside search mode a view keeps
 * its tools' entries, names and schemas, which an origin may make long, and
 * which stay with the view once the map has let them go (another caller's
 * schemas listed since): it weighs one a tool, or one for each
 * `CHARS_PER_WEIGHT` characters of their text (test/node/tool-names-memory.test.ts;
 * weighed by their names, views held 68 MiB for 80 callers listed 20 tools
 * with schemas of 40 KB of their own, test/node/caller-schemas-memory.test.ts).
 * Views listed a schema alike share its entry, and each weighs it: the
 * bound holds whether the map still keeps it or not. So views at the bound hold about
 * 30 MiB, and one view of a listing as long as a message may be (16 MiB)
 * still fits; and how many views; and callers pointing at one. A
 * caller's view stands for `LISTING_MS`: a caller who searches or calls past
 * it is listed again.
 */
export const MAX_VIEW_WEIGHT = 60_000;
export const SEARCH_WEIGHT = 4;
export const CHARS_PER_WEIGHT = 320;
export const MAX_VIEWS = 1_000;
export const MAX_CALLERS = 4_096;
/**
 * What one source's callers (callers.ts `Caller.source`: one token, whatever
 * sessions and queries it comes with) hold of `MAX_CALLERS`: an eighth. One
 * token sent with a new `Mcp-Session-Id` each time is a new caller each
 * time, and pushed every other caller's view out; past its share, a source's
 * own caller shown longest ago goes instead. Callers without a credential are
 * one source with the whole bound, as before.
 */
export const MAX_CALLERS_PER_SOURCE = MAX_CALLERS / 8;
export const LISTING_MS = 10 * 60_000;

/** The views of one isolate, every origin and profile: `scope` keeps them apart. */
export class CallerListings {
  private readonly views = new BoundedMap<string, ListingView>(MAX_VIEWS, LISTING_MS, {
    max: MAX_VIEW_WEIGHT,
    weigh: (view) =>
      Math.max(
        view.decisions.size * (view.search ? SEARCH_WEIGHT : 1),
        Math.ceil(view.chars / CHARS_PER_WEIGHT),
      ),
  });
  /** The key of the view each caller was last shown, one source's at most `MAX_CALLERS_PER_SOURCE`. */
  private readonly callers = new SharedBoundedMap<string, string>(
    MAX_CALLERS,
    MAX_CALLERS_PER_SOURCE,
    LISTING_MS,
  );
  /** The key each scope's last listing was shown under (view-key.ts). */
  readonly keys = new ViewKeys();

  /** The view the caller was last shown in `scope`, with its key; none once it is gone. */
  viewOf(scope: string, caller: string): { key: string; view: ListingView } | undefined {
    const key = this.callers.get(`${scope}\n${caller}`);
    const view = key === undefined ? undefined : this.views.get(key);
    return view && key !== undefined ? { key, view } : undefined;
  }

  /** The caller is shown no view in `scope` from now on: their next listing is a new one. */
  forget(scope: string, caller: string): void {
    this.callers.delete(`${scope}\n${caller}`);
  }

  /** The view kept under `key`, if it still is. */
  kept(key: string): ListingView | undefined {
    return this.views.get(key);
  }

  /**
   * Shows the caller, from `source`, the view of `key`: the one kept under it,
   * else `view` (kept from now on). A view over the bound is kept for no one:
   * its callers are listed again when they search or call. A source past its
   * share of callers (`MAX_CALLERS_PER_SOURCE`) lets its own go first.
   */
  show(
    scope: string,
    caller: string,
    source: string | undefined,
    key: string,
    view?: ListingView,
  ): void {
    if (view !== undefined && !this.views.get(key)) this.views.set(key, view);
    const at = `${scope}\n${caller}`;
    if (this.views.get(key) === undefined) {
      this.callers.delete(at);
      return;
    }
    this.callers.set(at, key, source);
  }
}

/** The characters of `texts` together. */
const lengthOf = (texts: readonly string[]) => texts.reduce((sum, text) => sum + text.length, 0);

/** What `entries` weigh together, in characters (`toolChars`). */
function charsOf(entries: ReadonlyMap<string, ToolEntry>): number {
  let chars = 0;
  for (const entry of entries.values()) chars += toolChars(entry);
  return chars;
}

/** A tool's text, for a view's key: as the listing wrote it, or as JSON writes what the proxy reads of it. */
const textOf = (tool: ListedTool) => (tool.written ? textAt(tool.written) : JSON.stringify(tool));

/** What a listing is of the caller's whole listing: all of it (its search mode decided), its first page, or a later page. */
export type ListingPart = "whole" | "first" | "later";

/** What the policy makes of a call to one tool, as the caller's own listing decided it. */
export interface Judgement {
  /**
   * Why the call is refused: the rules hide the tool or its changed
   * definition is held; the caller's whole listing lacks it while the policy
   * refuses calls (`unlisted`); or only a listing of the caller's can tell
   * (`unchecked`: the resolver asks the origin for one).
   */
  refused?: "hidden" | "held" | "unlisted" | "unchecked";
  /** Whether the caller's own listing showed the tool: only then does the proxy tell of it itself. */
  shown: boolean;
}

/** What the operator's policy makes of each tool a listing shows, from the listing's own annotations. */
export function decide(
  tools: ReadonlyArray<{ original: string; tool: ListedTool | undefined }>,
  { rules }: ToolPolicy,
  held: ReadonlySet<string> = new Set(),
): Map<string, Decision> {
  const decisions = new Map<string, Decision>();
  for (const { original, tool } of tools) {
    // The tool itself where it is listed by its original name: its annotations are read (a tool
    // read from a listing's text parses them) only where a rule names some (ToolRules.hides).
    const ruled =
      tool?.name === original ? tool : { name: original, annotations: tool?.annotations };
    const hides = rules.hides(ruled);
    decisions.set(original, held.has(original) ? "held" : hides ? "hidden" : "shown");
  }
  return decisions;
}

/** One caller's own listing, in one origin and profile. */
export class CallerView {
  constructor(
    private readonly listings: CallerListings,
    /** Where the views of this origin and profile are kept (it changes when the origin's tools do). */
    private readonly scope: () => string,
    private readonly caller: Caller,
    /** What shapes a view besides the listing. */
    private readonly settings: () => string,
  ) {}

  /** The view the caller was last shown here, if it is still kept. */
  async current(): Promise<{ key: string; view: ListingView } | undefined> {
    return this.listings.viewOf(this.scope(), await this.caller.listing());
  }

  /** The caller's origin said their tools changed: the view they were last shown here is gone. */
  async forget(): Promise<void> {
    this.listings.forget(this.scope(), await this.caller.listing());
  }

  /**
   * Shows the caller a listing: anew, or added to the pages shown before. Its
   * key, whether it holds a tool, and its search. `entries`: the map's entry
   * of each tool as the listing made it. `search` makes the search of
   * a listing in search mode, only where no view under the same key is kept
   * (that view's is the same). `pins`: the definitions it showed, where they
   * count in its key; `pinsShowSearch`: they cover all its search shows of each
   * tool, which then stand for the tools' texts (`viewKey`).
   */
  async show(
    part: ListingPart,
    tools: readonly ListedTool[],
    decisions: ReadonlyMap<string, Decision>,
    entries: ReadonlyMap<string, ToolEntry>,
    {
      search,
      pins,
      pinsShowSearch = false,
    }: {
      search: (() => ToolSearch) | null;
      pins?: ReadonlyMap<string, string> | undefined;
      pinsShowSearch?: boolean;
    },
  ): Promise<{ key: string; held: boolean; search: ToolSearch | null }> {
    const before = part === "later" ? await this.current() : undefined;
    const all = before ? new Map([...before.view.decisions, ...decisions]) : decisions;
    // Read once: for the view's key, and for what it weighs.
    const texts = search ? tools.map(textOf) : undefined;
    const shape = {
      decisions: all,
      entries: before ? new Map([...before.view.entries, ...entries]) : entries,
      whole: part === "whole",
    };
    let key = await this.listings.keys.of(
      this.scope(),
      this.settings(),
      before?.key,
      tools,
      { ...shape, searching: search !== null },
      pins,
      pinsShowSearch ? undefined : texts,
    );
    const caller = await this.caller.listing();
    const source = await this.caller.source();
    // The key tells schemas apart by fingerprint alone, or in search mode by definition pins, which
    // digest a schema as `JSON.stringify` writes it (one double for two 64-bit ids): a kept view of
    // other schemas that give these is another caller's (an origin may write their values in to
    // give them), and this one is kept apart. Checked with nothing awaited before it is shown.
    let kept = this.listings.kept(key);
    if (kept !== undefined && !listedAlike(kept.entries, entries)) {
      key = await schemasKey(key, tools, entries);
      kept = this.listings.kept(key);
    }
    const view = kept ?? {
      ...shape,
      search: search?.() ?? null,
      chars: texts ? lengthOf(texts) : (before?.view.chars ?? 0) + charsOf(entries),
    };
    this.listings.show(this.scope(), caller, source, key, view);
    return { key, held: [...all.values()].includes("held"), search: view.search };
  }

  /** Shows the caller the view kept under `key` (an answer made from it was given again), if it still is. */
  async showKept(key: string): Promise<void> {
    const [caller, source] = await Promise.all([this.caller.listing(), this.caller.source()]);
    this.listings.show(this.scope(), caller, source, key);
  }

  /** The map's entry for `original` as the caller's own listing here made it, its schema theirs. */
  async entryShown(original: string): Promise<ToolEntry | undefined> {
    return (await this.current())?.view.entries.get(original);
  }

  /**
   * The caller's search mode, from their own whole listing: its search, `null`
   * when it is not in search mode, `undefined` when the caller has no whole
   * listing here (one of theirs is asked for).
   */
  async search(): Promise<ToolSearch | null | undefined> {
    const shown = await this.current();
    return shown?.view.whole ? shown.view.search : undefined;
  }

  /**
   * What the policy makes of a call to `original`, as the caller's own listing
   * decided. Without one here, where the policy refuses calls, `unchecked`.
   */
  async judge(original: string, policy: ToolPolicy): Promise<Judgement> {
    const shown = await this.current();
    if (shown) {
      const decision = shown.view.decisions.get(original);
      if (decision === "hidden" || decision === "held") return { refused: decision, shown: false };
      if (decision === "shown") return { shown: true };
      if (!refusesCalls(policy)) return { shown: false };
      if (!shown.view.whole) return { refused: "unchecked", shown: false };
      const byName = policy.rules.hides({ name: original });
      return { refused: byName ? "hidden" : "unlisted", shown: false };
    }
    // Only the caller's listing tells what the policy makes of the tool, or whether it is theirs
    // (listed to someone else, it would be forwarded to the origin, whose answer tells whether
    // anyone has it). A name the rules hide too: refused from the rules alone, sooner and without
    // the alike names a listing gives, its answer told a name they hide from one no tool has.
    return refusesCalls(policy) ? { refused: "unchecked", shown: false } : { shown: false };
  }
}
