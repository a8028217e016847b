/**
 * MiniSearch's index of search mode's tools (tool-search.ts), with what one
 * search reads of it bounded by the index's size in tools, whatever words an
 * origin's listing holds: MiniSearch 7.2.0 reads a query's word as the start
 * of every longer word it starts, and its walk for a word with a typo
 * forgiven goes on below any word that could match.
 */
import MiniSearch, { type Options } from "minisearch";
import type { IndexedTool } from "./search-terms";

/**
 * The most words one word of a query may stand for, as their start or with a
 * typo forgiven. MiniSearch's cost is by word as much as by field: an origin
 * whose words each start with `create`, each another word in a field or two,
 * had a query's word that starts them stand for thousands of words within the
 * index's fields, and a search of 8 such words took 300 ms of 10,000 tools
 * (29 ms of 2,000), where 8 words each in every tool's name and sentence take
 * 28 ms (test/unit/tool-search.test.ts). Real listings' words are far fewer:
 * 21 at most start alike with 3 letters in the 349 tools of `npm run bench`
 * search.
 */
export const MAX_WORDS_READ = 256;

/** MiniSearch's radix tree: edges to subtrees, and `LEAF` to a word's fields, each its tools. */
type RadixTree = Map<string, unknown>;
type FieldTermData = Map<number, Map<number, number>>;
const LEAF = "";

/**
 * The name and description of each tool, searched by prefix and with typos
 * forgiven, as MiniSearch searches them: but a query's word is read as the
 * start of longer words only where those are in few fields together
 * (`startsFew`). MiniSearch reads every field of every tool a word it starts
 * is in: an origin's listing whose words all start alike (`aaaaaaaaaa…`) had
 * each such word of a query read the whole index, 0.9 s a search of 2,000
 * tools of 40 words, and a batch carries 32 searches.
 */
export class WordIndex extends MiniSearch<IndexedTool> {
  constructor(options: Options<IndexedTool>) {
    super(options);
    const index = this._index;
    // Typos forgiven by a walk no deeper than a match may be (`nearWords`): MiniSearch's own
    // went on through every longer word whose start is near the query's word. And only where the
    // words with a typo are in few fields together, as for a word's starts (`startsFew`).
    index.fuzzyGet = (word, distance) =>
      nearWords(index._tree, word, distance, this.fields, MAX_WORDS_READ);
  }

  /**
   * The fields the index has, a name and a sentence a tool: what a word
   * every tool has in both reads, and the most a word's starts, or its words
   * with a typo, may read besides.
   */
  get fields(): number {
    return 2 * this.documentCount;
  }

  /**
   * Whether the words that start with `start` (itself aside) are at most
   * `MAX_WORDS_READ`, in at most `fields` fields together. Reads no more
   * than that of the index.
   */
  startsFew(start: string): boolean {
    let left = this.fields;
    let words = MAX_WORDS_READ;
    /** Whether the words below `node` fit in what is `left`; `top`: its leaf is `start` itself. */
    const fits = (node: RadixTree, top: boolean): boolean => {
      for (const [key, below] of node) {
        if (key !== LEAF) {
          if (!fits(below as RadixTree, false)) return false;
          continue;
        }
        if (top) continue;
        for (const tools of (below as FieldTermData).values()) left -= tools.size;
        if (left < 0 || --words < 0) return false;
      }
      return true;
    };
    // No tree where no word starts so.
    const below: RadixTree | undefined = this._index.atPrefix(start)._tree;
    return below === undefined || fits(below, true);
  }
}

/**
 * The words of the index's radix tree within `distance` edits of `word`, as
 * MiniSearch's `SearchableMap.fuzzyGet` finds them (the same walk, after
 * http://stevehanov.ca/blog/?id=114; MiniSearch is MIT-licensed), but walked
 * no deeper than a match may be: `word`'s length and `distance`. MiniSearch's
 * own walk goes on below that depth, where its matrix has no row (and so it
 * never stops), through every longer word whose start is near `word`: an
 * origin whose words all start alike had each query word of 5 letters or more
 * walk all of them (80,000 words of 2,000 tools: 12 ms a search of 6 such words).
 *
 * None where the words with a typo (`word` itself aside) are in more than
 * `most` fields together, or are more than `mostWords`: the walk stops there,
 * and the word is read as it is written. An origin whose every word is one
 * typo from `create` had a query's `create` read all the index (160,000
 * fields of 2,000 tools: 33 ms a search).
 */
export function nearWords(
  tree: RadixTree,
  word: string,
  distance: number,
  most = Number.POSITIVE_INFINITY,
  mostWords = Number.POSITIVE_INFINITY,
): Map<string, [FieldTermData, number]> {
  const results = new Map<string, [FieldTermData, number]>();
  let left = most;
  let words = mostWords;
  // One column per letter of `word` and one before; one row per letter of a word that may
  // match (at most `distance` longer) and one before.
  const n = word.length + 1;
  const rows = n + distance;
  const matrix = new Uint8Array(rows * n).fill(distance + 1);
  for (let j = 0; j < n; ++j) matrix[j] = j;
  for (let i = 1; i < rows; ++i) matrix[i * n] = i;

  /** Whether the words near enough below `node` are within what is `left`. */
  const walk = (node: RadixTree, m: number, prefix: string): boolean => {
    const offset = m * n;
    edges: for (const [key, child] of node) {
      if (key === LEAF) {
        const found = matrix[offset - 1] as number;
        if (found > distance) continue;
        const fields = child as FieldTermData;
        results.set(prefix, [fields, found]);
        if (found > 0) {
          for (const tools of fields.values()) left -= tools.size;
          words--;
        }
        if (left < 0 || words < 0) return false;
        continue;
      }
      let i = m;
      for (let pos = 0; pos < key.length; ++pos, ++i) {
        // Deeper than any word within `distance`: nothing below matches.
        if (i >= rows) continue edges;
        const letter = key[pos];
        const row = n * i;
        const above = row - n;
        let least = matrix[row] as number;
        const from = Math.max(0, i - distance - 1);
        const to = Math.min(n - 1, i + distance);
        for (let j = from; j < to; ++j) {
          const replaced = (matrix[above + j] as number) + (letter === word[j] ? 0 : 1);
          const removed = (matrix[above + j + 1] as number) + 1;
          const inserted = (matrix[row + j] as number) + 1;
          const cell = Math.min(replaced, removed, inserted);
          matrix[row + j + 1] = cell;
          if (cell < least) least = cell;
        }
        // Distances only grow further down: no word below is near enough.
        if (least > distance) continue edges;
      }
      if (!walk(child as RadixTree, i, prefix + key)) return false;
    }
    return true;
  };
  return walk(tree, 1, "") ? results : new Map();
}
