/**
 * What search mode reads of a listing, and of a query, as terms
 * (tool-search.ts indexes and ranks them): text split at spaces, punctuation
 * and symbols, lowercased, English stop words left out, and identifiers read
 * as words wherever they are (`getPullRequest`, `list_issues`). A tool's
 * description and parameters are read within their bounds in characters,
 * and its details only until it has `MAX_DETAIL_TERMS`: building the index
 * costs CPU in proportion to the words read. Its name and title are read
 * within bounds of their own. Pure: no I/O.
 */
import { cutBetweenCharacters } from "../text-cut";

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

/**
 * What of a query is read: its first `MAX_QUERY_CHARS` characters, cut
 * before a character written as two UTF-16 units that the bound falls in
 * (an emoji): its first half alone is no character, which the answer's
 * heading, quoting what was read, would hand the client (a Python client
 * cannot encode it again as UTF-8).
 */
export const queryRead = (query: string) => cutBetweenCharacters(query, MAX_QUERY_CHARS);

/**
 * Characters indexed of a tool's name and title, and of its description's
 * first sentence: MCP asks for names of at most 128 characters, and what a
 * title or sentence says of the tool comes first. Past them an origin's
 * text costs the build CPU and finds nothing more.
 */
const MAX_INDEXED_NAME = 256;
const MAX_INDEXED_TITLE = 200;
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
 * searched as one. A loop where two `replace`s with `$1 $2` took a fifth of
 * the index's build, for the names of every tool and parameter.
 */
export function identifierWords(name: string): string {
  let words = "";
  let from = 0;
  for (let i = 1; i < name.length; i++) {
    if (!isUpper(name.charCodeAt(i))) continue;
    const before = name.charCodeAt(i - 1);
    if (
      isLower(before) ||
      (before >= 48 && before <= 57) ||
      (isUpper(before) && isLower(name.charCodeAt(i + 1)))
    ) {
      words += `${name.slice(from, i)} `;
      from = i;
    }
  }
  return from === 0 ? name : words + name.slice(from);
}

const isUpper = (code: number) => code >= 65 && code <= 90;
const isLower = (code: number) => code >= 97 && code <= 122;

/** Where `termsOf` splits a text. */
const SEPARATORS = /[\s\p{P}\p{S}]+/u;
/** `SEPARATORS` of the ASCII characters, by code: 1 for a separator. */
const ASCII_SEPARATORS = Uint8Array.from({ length: 128 }, (_, code) =>
  SEPARATORS.test(String.fromCharCode(code)) ? 1 : 0,
);

/**
 * The terms of `text` as the index holds them: split at spaces, punctuation
 * and symbols, lowercased, stop words left out.
 *
 * Text of ASCII alone, most of what a listing says, is read a character at
 * a time, where splitting it with `SEPARATORS` took about 1.5 times as long
 * (toLowerCase, split, then each piece looked at again). Text with any other
 * character is split with `SEPARATORS` itself, for Unicode's classes and its
 * lowercasing; both read ASCII alike (the unit test holds them to it).
 */
export function termsOf(text: string): string[] {
  const terms: string[] = [];
  let start = -1;
  let upper = false;
  for (let i = 0; i <= text.length; i++) {
    // One past the end reads as a space, which ends the last term.
    const code = i < text.length ? text.charCodeAt(i) : 32;
    if (code >= 128) return unicodeTermsOf(text);
    if (ASCII_SEPARATORS[code] === 0) {
      if (start < 0) start = i;
      if (isUpper(code)) upper = true;
    } else if (start >= 0) {
      const term = upper ? text.slice(start, i).toLowerCase() : text.slice(start, i);
      if (!STOP_WORDS.has(term)) terms.push(term);
      start = -1;
      upper = false;
    }
  }
  return terms;
}

function unicodeTermsOf(text: string): string[] {
  const terms: string[] = [];
  for (const term of text.toLowerCase().split(SEPARATORS)) {
    if (term !== "" && !STOP_WORDS.has(term)) terms.push(term);
  }
  return terms;
}

/**
 * The terms of a query a search looks for: of what is read of it
 * (`queryRead`), its first `MAX_QUERY_WORDS` terms, each once, where a word
 * written as an identifier is looked for as written and in its words
 * (`getPullRequest`: `getpullrequest get pull request`), for a name of
 * either kind.
 */
export function wordsOf(query: string): string[] {
  const spaced = queryRead(query).replace(/\S+/g, (word) => {
    const words = identifierWords(word);
    return words === word ? word : `${word} ${words}`;
  });
  return [...new Set(termsOf(spaced).slice(0, MAX_QUERY_WORDS))];
}

const firstSentence = (text: string) => /^\s*.*?[.!?](?:\s|$)/s.exec(text)?.[0] ?? text;

/**
 * A parameter as details read it: its name in words and the first sentence
 * of its description, and their terms.
 */
interface Parameter {
  text: string;
  terms: string[];
}

/** The most parameters a build keeps read (`ParameterReads`): about 1,000 in 349 tools of 13 real servers. */
const MAX_KEPT_PARAMETERS = 4096;

/**
 * Each parameter as details read it, by name and by what is read of its
 * description, for one build: tools of one origin repeat their parameters
 * (`owner`, `repo`, `cursor`, `limit`), and each is read once. At most
 * `MAX_KEPT_PARAMETERS` are kept, and past them each is read every time, as
 * it would be with none kept: a listing of parameters each unlike the others
 * (a hostile one) would keep them all, hundreds of MB for a listing of a few
 * MB. A name longer than `MAX_READ_PARAMETER` characters is read each time,
 * only as far as details can read it: V8 hashes a string of over 16,383
 * characters by its length alone, and a map of many such keys compares them
 * whole, each with every other.
 */
export class ParameterReads {
  /** By name, then by what is read of the description. */
  readonly #kept = new Map<string, Map<string | undefined, Parameter>>();
  #count = 0;

  /** How many it keeps. */
  get kept(): number {
    return this.#count;
  }

  of(name: string, description: unknown): Parameter {
    const read =
      typeof description === "string" ? description.slice(0, MAX_READ_PARAMETER) : undefined;
    if (name.length > MAX_READ_PARAMETER) {
      return readParameter(name.slice(0, MAX_READ_PARAMETERS), read);
    }
    const byDescription = this.#kept.get(name);
    const kept = byDescription?.get(read);
    if (kept !== undefined) return kept;
    const parameter = readParameter(name, read);
    if (this.#count < MAX_KEPT_PARAMETERS) {
      this.#count++;
      if (byDescription) byDescription.set(read, parameter);
      else this.#kept.set(name, new Map([[read, parameter]]));
    }
    return parameter;
  }
}

function readParameter(name: string, description: string | undefined): Parameter {
  let text = ` ${identifierWords(name)}`;
  if (description !== undefined) text += ` ${firstSentence(description)}`;
  return { text, terms: termsOf(text) };
}

/** A tool as MiniSearch reads it: its name's terms and its description's. */
export interface IndexedTool {
  id: number;
  name: string[];
  description: string[];
}

/**
 * The tools as MiniSearch reads them, and each detail term → the tools that
 * have it. A tool's details are the terms of the rest of its description,
 * then of each parameter (`ParameterReads`), until `MAX_READ_PARAMETERS`
 * characters of these; of them, the first `MAX_DETAIL_TERMS` its name and
 * first sentence lack, each once. Most tools have that many before their
 * last parameter, and the rest is not read.
 */
export function indexedTools(
  tools: readonly SearchableTool[],
  parameters = new ParameterReads(),
  /** The schema a search shows of a tool, asked once per tool and let go after: it may be a large view. */
  schemaOf: (tool: SearchableTool) => unknown = (tool) => tool.inputSchema,
): {
  indexed: IndexedTool[];
  details: Map<string, number[]>;
} {
  const details = new Map<string, number[]>();
  const indexed = tools.map((tool, id): IndexedTool => {
    const text = tool.description ?? "";
    // Sliced first, so that a description of no sentence is not read to its end.
    const first = firstSentence(text.slice(0, MAX_INDEXED_DESCRIPTION));
    const indexedTool: IndexedTool = {
      id,
      name: termsOf(identifierWords(tool.original.slice(0, MAX_INDEXED_NAME))),
      description: termsOf(
        tool.title === undefined ? first : `${tool.title.slice(0, MAX_INDEXED_TITLE)}. ${first}`,
      ),
    };
    const rest = text.slice(first.length, first.length + MAX_READ_DETAILS);
    let taken = takeDetails(details, indexedTool, termsOf(rest), 0);
    const properties = (schemaOf(tool) as { properties?: unknown } | null)?.properties;
    if (typeof properties !== "object" || properties === null) return indexedTool;
    let read = 0;
    for (const key in properties) {
      if (taken === MAX_DETAIL_TERMS || read >= MAX_READ_PARAMETERS) break;
      const about = (properties as Record<string, { description?: unknown } | null>)[key]
        ?.description;
      const parameter = parameters.of(key, about);
      const left = MAX_READ_PARAMETERS - read;
      read += parameter.text.length;
      // The bound may fall within a parameter: what of it comes before is read.
      const terms =
        parameter.text.length > left ? termsOf(parameter.text.slice(0, left)) : parameter.terms;
      taken = takeDetails(details, indexedTool, terms, taken);
    }
    return indexedTool;
  });
  return { indexed, details };
}

/**
 * `terms` taken as details of `tool`, which has `taken` already, until it
 * has `MAX_DETAIL_TERMS`: how many it has then.
 */
function takeDetails(
  details: Map<string, number[]>,
  tool: IndexedTool,
  terms: readonly string[],
  taken: number,
): number {
  for (const term of terms) {
    if (taken === MAX_DETAIL_TERMS) break;
    const ids = details.get(term);
    // The tool's already: a detail term it has (its id last), or one of its name or sentence.
    if (ids !== undefined && ids[ids.length - 1] === tool.id) continue;
    if (tool.name.includes(term) || tool.description.includes(term)) continue;
    if (ids === undefined) details.set(term, [tool.id]);
    else ids.push(tool.id);
    taken++;
  }
  return taken;
}
