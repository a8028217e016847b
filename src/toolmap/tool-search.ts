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
 * "Whether to accept the dialog"). English stop words are not indexed, and
 * identifiers are read as words wherever they are: in names, text and
 * queries alike (`termsOf`).
 *
 * The index is built at the listing's first search and kept with it in
 * isolate memory (isolate-memory.ts), bounded as the listing is
 * (`MAX_TOOLS`). Building costs CPU in proportion to the words indexed
 * (`npm run bench`): hence each field's bound in characters.
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

/** Characters indexed of a description's first sentence. */
const MAX_INDEXED_DESCRIPTION = 200;
/**
 * Characters read of what follows that sentence, and of the parameters
 * (names and descriptions) and of each one's description; and of the terms
 * these give that the name and first sentence lack, how many are indexed.
 * Building costs CPU in proportion to the terms indexed of each tool: 24
 * such terms found as much as all of them (`npm run bench` search).
 */
const MAX_READ_DETAILS = 300;
const MAX_READ_PARAMETERS = 400;
const MAX_READ_PARAMETER = 100;
const MAX_DETAIL_TERMS = 24;

const STOP_WORDS = new Set(
  "a an and are as at be by can for from has in is it its of on or that the this to use with will you your".split(
    " ",
  ),
);

/**
 * The words of an identifier written in camelCase or PascalCase, apart:
 * `getPullRequest` → `get Pull Request`, `HTMLParser` → `HTML Parser`. The
 * other ways of joining words (`_`, `.`, `-`, `/`) are split by `termsOf`.
 * Only names and parameter names are read so: in prose a word in camelCase is
 * most often a name of its own (GitHub, MongoDB, localStorage), and
 * searched as one.
 */
export const identifierWords = (name: string): string =>
  name.replace(/([a-z0-9])([A-Z])/g, "$1 $2").replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2");

/**
 * The terms of `text` as the index holds them: split at spaces, punctuation
 * and symbols, lowercased, stop words left out.
 */
export function termsOf(text: string): string[] {
  const terms: string[] = [];
  for (const term of text.toLowerCase().split(/[\s\p{P}\p{S}]+/u)) {
    if (term !== "" && !STOP_WORDS.has(term)) terms.push(term);
  }
  return terms;
}

/**
 * The terms of a query a search looks for: of its first `MAX_QUERY_CHARS`
 * characters, its first `MAX_QUERY_WORDS` terms, each once, where a word
 * written as an identifier is looked for as written and in its words
 * (`getPullRequest`: `getpullrequest get pull request`), for a name of
 * either kind.
 */
export function wordsOf(query: string): string[] {
  const spaced = query.slice(0, MAX_QUERY_CHARS).replace(/\S+/g, (word) => {
    const words = identifierWords(word);
    return words === word ? word : `${word} ${words}`;
  });
  return [...new Set(termsOf(spaced).slice(0, MAX_QUERY_WORDS))];
}

const firstSentence = (text: string) => /^\s*.*?[.!?](?:\s|$)/s.exec(text)?.[0] ?? text;

/**
 * The parameters of an input schema as text: each one's name, then the first
 * sentence of its description, until `MAX_READ_PARAMETERS` characters.
 */
function parametersText(schema: unknown): string {
  const properties = (schema as { properties?: unknown } | null)?.properties;
  if (typeof properties !== "object" || properties === null) return "";
  let text = "";
  for (const name in properties) {
    if (text.length >= MAX_READ_PARAMETERS) break;
    const description = (properties as Record<string, { description?: unknown } | null>)[name]
      ?.description;
    text += ` ${identifierWords(name)}`;
    if (typeof description === "string") {
      text += ` ${firstSentence(description.slice(0, MAX_READ_PARAMETER))}`;
    }
  }
  return text.slice(0, MAX_READ_PARAMETERS);
}

/** A tool as the index reads it: each field's terms. */
interface IndexedTool {
  id: number;
  name: string[];
  description: string[];
  details: string[];
}

function indexedTool(tool: SearchableTool, id: number): IndexedTool {
  const name = termsOf(identifierWords(tool.original));
  const text = tool.description ?? "";
  // Sliced first, so that a description of no sentence is not read to its end.
  const first = firstSentence(text.slice(0, MAX_INDEXED_DESCRIPTION));
  const description = termsOf(tool.title === undefined ? first : `${tool.title}. ${first}`);
  const seen = new Set([...name, ...description]);
  const details: string[] = [];
  const more = `${text.slice(first.length, first.length + MAX_READ_DETAILS)} ${parametersText(tool.inputSchema)}`;
  for (const term of termsOf(more)) {
    if (details.length === MAX_DETAIL_TERMS) break;
    if (seen.has(term)) continue;
    seen.add(term);
    details.push(term);
  }
  return { id, name, description, details };
}

/**
 * How much a query's term found in a tool's details weighs: a third of what
 * one occurrence in a field of average length weighs under MiniSearch's
 * BM25+ (its inverse document frequency times `d + (k + 1) / (1 + k)`, 1.5
 * with MiniSearch's `k` and `d`), as the name weighs three times that.
 */
const DETAIL_WEIGHT = 0.3 * 1.5;

interface Index {
  /** The name and description of each tool, searched by prefix and with typos forgiven. */
  words: MiniSearch<IndexedTool>;
  /** Each detail term → the tools that have it, looked up whole: cheaper to build, by half. */
  details: Map<string, number[]>;
}

export class ToolSearch {
  private index: Index | undefined;

  constructor(readonly tools: readonly SearchableTool[]) {}

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
    const terms = wordsOf(query);
    if (terms.length === 0) return this.tools.slice(0, limit);
    const { words, details } = this.indexed();
    const found = new Map<number, { sum: number; terms: Set<string> }>();
    for (const match of words.search(terms.join(" "))) {
      const matched = new Set<string>(match.queryTerms);
      found.set(match.id, { sum: match.score / matched.size, terms: matched });
    }
    for (const term of terms) {
      const ids = details.get(term);
      if (ids === undefined) continue;
      const n = this.tools.length;
      const weight = DETAIL_WEIGHT * Math.log(1 + (n - ids.length + 0.5) / (ids.length + 0.5));
      for (const id of ids) {
        const match = found.get(id);
        if (match === undefined) found.set(id, { sum: weight, terms: new Set([term]) });
        else {
          match.sum += weight;
          match.terms.add(term);
        }
      }
    }
    return [...found]
      .map(([id, { sum, terms: matched }]) => ({ id, score: sum * matched.size }))
      .sort((a, b) => b.score - a.score)
      .slice(0, limit)
      .map(({ id }) => this.tools[id] as SearchableTool);
  }

  private indexed(): Index {
    if (this.index) return this.index;
    const words = new MiniSearch<IndexedTool>({
      fields: ["name", "description"],
      // Each field is indexed as indexedTool split it into terms, and a
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
        prefix: true,
        fuzzy: 0.1,
        maxFuzzy: 2,
      },
    });
    const indexed = this.tools.map(indexedTool);
    words.addAll(indexed);
    const details = new Map<string, number[]>();
    for (const { id, details: terms } of indexed) {
      for (const term of terms) {
        const ids = details.get(term);
        if (ids === undefined) details.set(term, [id]);
        else ids.push(id);
      }
    }
    this.index = { words, details };
    return this.index;
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
