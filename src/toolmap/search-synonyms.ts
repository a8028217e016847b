/**
 * Words a model and a tool's author write for one thing (`folder` and
 * `directory`, `open` and `navigate`): a search looks for each word of a
 * query with its synonyms too, weighed less than the word (tool-search.ts).
 * General words of what tools do and work on, none of one server's, each
 * group kept where the search benchmark (`npm run bench` search) showed it
 * pays on the queries ranking is tuned on (docs/search-mode.md says which
 * did not). Pure: no I/O.
 */

/** Each group's words stand for each other. Lowercase, as terms are (search-terms.ts). */
const GROUPS: readonly (readonly string[])[] = [
  ["folder", "directory", "dir"],
  ["open", "navigate", "visit", "goto"],
  ["show", "list", "display"],
  ["find", "search", "lookup"],
  ["fetch", "retrieve", "get"],
];

const SYNONYMS: ReadonlyMap<string, readonly string[]> = new Map(
  GROUPS.flatMap((group) => group.map((word) => [word, group.filter((other) => other !== word)])),
);

/** What a synonym weighs beside the query's own word: 0.3 to 1 ranked the tuning half alike. */
export const SYNONYM_WEIGHT = 0.5;

/** The most synonyms one search looks for besides its words: each costs as much as a word. */
export const MAX_SYNONYMS = 8;

/**
 * Each term a search looks for, with the query's word it stands for: the
 * words first, each for itself, then their synonyms the query lacks, up to
 * `MAX_SYNONYMS`.
 */
export function withSynonyms(words: readonly string[]): Map<string, string> {
  const terms = new Map(words.map((word) => [word, word]));
  let added = 0;
  for (const word of words) {
    for (const synonym of SYNONYMS.get(word) ?? []) {
      if (added === MAX_SYNONYMS) return terms;
      if (terms.has(synonym)) continue;
      terms.set(synonym, word);
      added++;
    }
  }
  return terms;
}
