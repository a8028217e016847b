/**
 * Full-text search over one whole listing, for search mode
 * (docs/search-mode.md): MiniSearch's BM25 ranking, by prefix and with typos
 * forgiven, over three fields of each tool, weighed as the search benchmark
 * (`npm run bench` search) showed they pay: its original name in words (the
 * model-facing name adds only a fingerprint), its title with the first
 * sentence of its description (what the tool does), and, a third as much,
 * the rest of its description with its parameters' names and the first
 * sentence of each one's description (how it is asked, where a model's
 * words often are: "accept the alert" finds the tool whose `accept` says
 * "Whether to accept the dialog"), each read as terms by search-terms.ts.
 *
 * The index is built at the listing's first search and kept with it in
 * isolate memory (isolate-memory.ts), bounded as the listing is
 * (`MAX_TOOLS`); building costs CPU in proportion to the words read
 * (search-terms.ts bounds them).
 */
import { logEvent } from "../log";
import type { ListedTool } from "../protocol/tools-list";
import { SchemaHeld, type SchemaHolder } from "./listed-schema";
import type { PlannedEntry } from "./plan-listing";
import { SYNONYM_WEIGHT, withSynonyms } from "./search-synonyms";
import { indexedTools, type SearchableTool, wordsOf } from "./search-terms";
import { WordIndex } from "./word-index";

/**
 * How much a query's term found in a tool's details weighs: a third of what
 * one occurrence in a field of average length weighs under MiniSearch's
 * BM25+ (its inverse document frequency times `d + (k + 1) / (1 + k)`, 1.5
 * with MiniSearch's `k` and `d`), as the name weighs three times that.
 */
const DETAIL_WEIGHT = 0.3 * 1.5;

interface Index {
  /** The name and description of each tool, searched by prefix and with typos forgiven. */
  words: WordIndex;
  /** Each detail term → the tools that have it, looked up whole: cheaper to build, by half. */
  details: Map<string, number[]>;
}

/**
 * The profile's views of a search's schemas (schema-views.ts `forSearch`),
 * made as a search reads each tool and kept, within the isolate's bound, by
 * the isolate's schema views: never all held by the search, as a view may
 * inline thousands of nodes from `$ref`s.
 */
export interface SearchViews {
  /** The view of `original`'s schema, where it differs from the origin's. */
  of(original: string): unknown;
  /** The views made so far are logged (`schemas_adapted`): once, when the index has read them all. */
  logMade(): void;
}

export class ToolSearch {
  private index: Index | undefined;
  /** The tools, each with the origin's schema: what a search shows of it is `#shown`. */
  readonly #tools: readonly SearchableTool[];
  /**
   * The profile's views of the tools' schemas, where they differ: made as a
   * search reads a tool, not by the listing, which in search mode shows no
   * tool's schema; and not kept here, where a listing's views together held
   * 142 MiB (130 tools whose `$ref`s inline under openai-strict) for as long
   * as the search was kept (test/node/kept-search-memory.test.ts).
   */
  readonly #views: SearchViews | undefined;

  constructor(tools: readonly SearchableTool[], views?: SearchViews) {
    this.#tools = tools;
    this.#views = views;
  }

  /** How many tools it searches. */
  get size(): number {
    return this.#tools.length;
  }

  /** A tool as search mode shows it: its schema in the profile's view. */
  #shown(tool: SearchableTool): SearchableTool {
    const view = this.#views?.of(tool.original);
    return view === undefined ? tool : { ...tool, inputSchema: view };
  }

  /**
   * The best `limit` matches for `query`, best first; with no words to look
   * for (none, or stop words only: `wordsOf`), the first tools, in the
   * listing's order.
   *
   * A match's score is MiniSearch's: the sum of what each of the query's
   * terms it has weighs, times how many of them it has. Its details add
   * their terms to both.
   */
  search(query: string, limit: number): SearchableTool[] {
    const words = wordsOf(query);
    if (words.length === 0) return this.#tools.slice(0, limit).map((tool) => this.#shown(tool));
    const index = this.indexed();
    // Each term found counts for the query's word it stands for: a synonym adds to its word's score.
    const terms = withSynonyms(words);
    const weightOf = (term: string) => (terms.get(term) === term ? 1 : SYNONYM_WEIGHT);
    const found = new Map<number, { sum: number; words: Set<string> }>();
    const searched = index.words.search([...terms.keys()].join(" "), {
      boostTerm: weightOf,
      // A synonym is looked for as it is written: with typos forgiven, it would cost as much again.
      fuzzy: (term) => terms.get(term) === term && 0.1,
    });
    for (const match of searched) {
      const matched = new Set(match.queryTerms.map((term) => terms.get(term) ?? term));
      // MiniSearch multiplies the sum by how many terms it found (`words` does so below).
      found.set(match.id, { sum: match.score / match.queryTerms.length, words: matched });
    }
    const n = this.#tools.length;
    for (const [term, word] of terms) {
      const ids = index.details.get(term);
      if (ids === undefined) continue;
      const weight =
        DETAIL_WEIGHT * weightOf(term) * Math.log(1 + (n - ids.length + 0.5) / (ids.length + 0.5));
      for (const id of ids) {
        const match = found.get(id);
        if (match === undefined) found.set(id, { sum: weight, words: new Set([word]) });
        else {
          match.sum += weight;
          match.words.add(word);
        }
      }
    }
    return [...found]
      .map(([id, { sum, words: matched }]) => ({ id, score: sum * matched.size }))
      .sort((a, b) => b.score - a.score)
      .slice(0, limit)
      .map(({ id }) => this.#shown(this.#tools[id] as SearchableTool));
  }

  private indexed(): Index {
    if (this.index) return this.index;
    const words: WordIndex = new WordIndex({
      fields: ["name", "description"],
      // Each field is indexed as indexedTools split it into terms, and a
      // query as wordsOf did: as they are, lowercased, stop words left out.
      // A field's terms are an array, handed on as it is (no text between).
      stringifyField: (terms: string[]) => terms as unknown as string,
      tokenize: (terms) => terms as unknown as string[],
      processTerm: (term) => term,
      // Fuzzy: one edit forgiven in a word of 5 to 14 characters, two in a
      // longer one, none in a shorter one, where an edit most often makes another word.
      searchOptions: {
        tokenize: (terms) => terms.split(" "),
        boost: { name: 3 },
        // By prefix from 3 letters: each one- or two-letter word read the postings of every term it
        // starts, and 8 of them most of the index (30 ms on 10,000 tools, against 2.4 ms for words);
        // and only where the words it starts are in few tools (`startsFew`).
        prefix: (term: string) => term.length >= 3 && words.startsFew(term),
        fuzzy: 0.1,
        maxFuzzy: 2,
      },
    });
    // Each tool's parameters as its view shows them (no fixed argument), read one view at a time.
    const { indexed, details } = indexedTools(
      this.#tools,
      undefined,
      (tool) => this.#views?.of(tool.original) ?? tool.inputSchema,
    );
    this.#views?.logMade();
    words.addAll(indexed);
    this.index = { words, details };
    return this.index;
  }
}

/** What a named listing shows of its tools, as search mode shows them. */
export interface SearchedListing {
  names: ReadonlyMap<string, string>;
  descriptions: ReadonlyMap<string, string | undefined>;
  /**
   * The origin's schema of each tool, as the map holds it: one object for
   * every listing that shows the same schema, where each listing's own
   * parse would keep a copy per caller; read when a search first reads it
   * (listed-schema.ts).
   */
  heldSchemas: ReadonlyMap<string, SchemaHolder>;
}

/**
 * The tools a search finds in a whole listing that shows more than the
 * profile's ceiling (search mode, logged), each name once, none the rules
 * hide; `null` otherwise.
 */
export function searchedTools(
  tools: readonly ListedTool[],
  hidden: ReadonlySet<string>,
  { name: profile, toolCeiling: ceiling }: { name: string; toolCeiling: number | undefined },
): readonly ListedTool[] | null {
  const visible = tools.filter((tool) => !hidden.has(tool.name));
  if (ceiling === undefined || visible.length <= ceiling) return null;
  logEvent("tools_search_mode", { profile, tools: visible.length, ceiling });
  return visible;
}

/**
 * Search mode's tools as a search shows them: the model-facing name, the
 * description the operator's rules give, the profile's view of the schema
 * (`views`, made as a search reads each; the origin's schema where they give
 * none).
 */
export function toolSearchOf(
  visible: readonly ListedTool[],
  listing: SearchedListing,
  views?: SearchViews,
): ToolSearch {
  const searchable = visible.map((tool): SearchableTool => {
    const description = listing.descriptions.has(tool.name)
      ? listing.descriptions.get(tool.name)
      : tool.description;
    return new SearchedTool(
      listing.names.get(tool.name) ?? tool.name,
      tool.name,
      typeof tool.title === "string" ? tool.title : undefined,
      typeof description === "string" ? description : undefined,
      listing.heldSchemas.get(tool.name) ?? {},
    );
  });
  return new ToolSearch(searchable, views);
}

/** A tool as a search shows it, its schema read when the search first reads it. */
class SearchedTool extends SchemaHeld implements SearchableTool {
  // Declared, not defined: a tool with neither has no such member.
  declare readonly title?: string;
  declare readonly description?: string;

  constructor(
    readonly name: string,
    readonly original: string,
    title: string | undefined,
    description: string | undefined,
    schema: SchemaHolder,
  ) {
    super(schema);
    if (title !== undefined) this.title = title;
    if (description !== undefined) this.description = description;
  }
}

/** What a search keeps of a tool's map entry: its schema, viewed under its model-facing name. */
class SearchEntry extends SchemaHeld {
  constructor(
    readonly name: string,
    readonly original: string,
    readonly schemaHash: string,
    schema: SchemaHolder,
  ) {
    super(schema);
  }
}

/**
 * The search of a whole listing in search mode, of its `visible` tools as
 * `listing` shows them, their schemas the map's (`entries`), viewed by
 * `views` as a search reads each. What it keeps of the entries is their
 * schemas, not the tools, which hold the listing's text.
 */
export function searchOfListing(
  visible: readonly ListedTool[],
  listing: Omit<SearchedListing, "heldSchemas">,
  entries: readonly PlannedEntry[],
  // schema-views.ts `SchemaViews`.
  views: { forSearch(entries: readonly SearchEntry[]): SearchViews },
): ToolSearch {
  const shown = new Set(visible.map((tool) => tool.name));
  const kept = entries
    .filter(({ original }) => shown.has(original))
    .map((entry) => new SearchEntry(entry.name, entry.original, entry.schemaHash, entry));
  const heldSchemas = new Map(kept.map((entry) => [entry.original, entry]));
  return toolSearchOf(visible, { ...listing, heldSchemas }, views.forSearch(kept));
}
