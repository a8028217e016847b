/**
 * Full-text search over one whole listing, for search mode
 * (docs/search-mode.md): MiniSearch's BM25 ranking, by prefix and with typos
 * forgiven, over each tool's original name (in words: the model-facing name
 * adds only a fingerprint), and its title with the first sentence of its
 * description (what the tool does; the rest is mostly how). English stop
 * words are not indexed.
 *
 * The index is built at the listing's first search and kept with it in
 * isolate memory (isolate-memory.ts), bounded as the listing is (`MAX_TOOLS`).
 * Building costs CPU in proportion to the words indexed (`npm run bench`):
 * hence the first sentence only, and no argument names, which nearly
 * doubled it.
 */
import MiniSearch from "minisearch";
import { logEvent } from "../log";
import type { ListedTool } from "../protocol/tools-list";

/** A tool as search mode shows it: the model-facing name and the profile's view of its schema. */
export interface SearchableTool {
  name: string;
  original: string;
  title?: string;
  description?: string;
  inputSchema: unknown;
}

/**
 * What of a query is read: its first characters, and of those its first
 * words. Each word is searched by prefix and with typos forgiven, which costs
 * in proportion to the index: a query of long words took 27 ms on 10,000
 * tools before these bounds and `maxFuzzy`, and takes at most about 5 ms.
 */
export const MAX_QUERY_CHARS = 256;
export const MAX_QUERY_WORDS = 8;

/** Characters of a description's first sentence that are indexed. */
const MAX_INDEXED_DESCRIPTION = 200;

const STOP_WORDS = new Set(
  "a an and are as at be by can for from has in is it its of on or that the this to use with will you your".split(
    " ",
  ),
);

/**
 * The words of a query a search looks for: of its first `MAX_QUERY_CHARS`
 * characters, its first `MAX_QUERY_WORDS` words that are no stop word.
 */
export function wordsOf(query: string): string[] {
  return query
    .slice(0, MAX_QUERY_CHARS)
    .split(/[\s\p{P}]+/u)
    .filter((word) => word !== "" && !STOP_WORDS.has(word.toLowerCase()))
    .slice(0, MAX_QUERY_WORDS);
}

/** `getPullRequest` → `get Pull Request`; the tokenizer splits at `_`, `.`, `/`, `-`. */
const words = (name: string) => name.replace(/([a-z0-9])([A-Z])/g, "$1 $2");

const firstSentence = (text: string) =>
  (/^.*?[.!?](?:\s|$)/s.exec(text)?.[0] ?? text).slice(0, MAX_INDEXED_DESCRIPTION);

/** The title, where a tool has one, is indexed with its description: it says the same in fewer words. */
const FIELDS = ["name", "description"] as const;

export class ToolSearch {
  private index: MiniSearch<{ id: number }> | undefined;

  constructor(readonly tools: readonly SearchableTool[]) {}

  /**
   * The best `limit` matches for `query`, best first; with no words to look
   * for (none, or stop words only: `wordsOf`), the first tools, in the
   * listing's order.
   */
  search(query: string, limit: number): SearchableTool[] {
    const text = wordsOf(query).join(" ");
    if (text === "") return this.tools.slice(0, limit);
    return this.indexed()
      .search(text)
      .slice(0, limit)
      .map((match) => this.tools[match.id] as SearchableTool);
  }

  private indexed(): MiniSearch<{ id: number }> {
    if (this.index) return this.index;
    const index = new MiniSearch<{ id: number }>({
      fields: [...FIELDS],
      extractField: ({ id }, field) => {
        const tool = this.tools[id] as SearchableTool;
        if (field === "id") return String(id);
        if (field === "name") return words(tool.original);
        const description = firstSentence(tool.description ?? "");
        return tool.title === undefined ? description : `${tool.title}. ${description}`;
      },
      processTerm: (term) => {
        const lower = term.toLowerCase();
        return STOP_WORDS.has(lower) ? null : lower;
      },
      // At most two edits per word, whatever its length.
      searchOptions: { boost: { name: 3 }, prefix: true, fuzzy: 0.2, maxFuzzy: 2 },
    });
    index.addAll(this.tools.map((_, id) => ({ id })));
    this.index = index;
    return index;
  }
}

/** What a named listing shows of its tools, as search mode shows them. */
export interface SearchedListing {
  names: ReadonlyMap<string, string>;
  /** The schema views that differ from the origin's schemas. */
  schemas: ReadonlyMap<string, unknown>;
  descriptions: ReadonlyMap<string, string | undefined>;
  hidden: ReadonlySet<string>;
  /**
   * The origin's schema of each tool, as the map holds it: one object for
   * every listing that shows the same schema, where each listing's own
   * parse would keep a copy per caller.
   */
  inputSchemas: ReadonlyMap<string, unknown>;
}

/**
 * Search mode, for a whole listing that shows more tools than `ceiling`: its
 * tools as a search shows them (the model-facing name, the description the
 * operator's rules give, the profile's view of the schema); `null` otherwise.
 */
export function searchModeOf(
  tools: readonly ListedTool[],
  listing: SearchedListing,
  profile: string,
  ceiling: number | undefined,
): ToolSearch | null {
  const visible = tools.filter((tool) => !listing.hidden.has(tool.name));
  if (ceiling === undefined || visible.length <= ceiling) return null;
  const searchable = visible.map((tool): SearchableTool => {
    const description = listing.descriptions.has(tool.name)
      ? listing.descriptions.get(tool.name)
      : tool.description;
    return {
      name: listing.names.get(tool.name) ?? tool.name,
      original: tool.name,
      ...(typeof tool.title === "string" ? { title: tool.title } : {}),
      ...(typeof description === "string" ? { description } : {}),
      inputSchema: listing.schemas.get(tool.name) ?? listing.inputSchemas.get(tool.name),
    };
  });
  logEvent("tools_search_mode", { profile, tools: visible.length, ceiling });
  return new ToolSearch(searchable);
}
