/**
 * A name a model wrote, matched against the tools a caller was shown
 * (docs/names.md, "Calls by another spelling"): models drop a fingerprint
 * that looks like noise (`files_read` for `files_read_yqgun6`), write the
 * original (`files.read`), or change the case. Pure.
 */
import { hash6 } from "./stable-hash";

/** A tool as a caller was shown it: its original name and the name it was listed under. */
export interface ShownName {
  original: string;
  listed: string;
}

/**
 * No tool, or more than one, answers to a name: the names the caller was
 * shown that are alike (a word in common, or the same first four
 * characters), best first; every one that answers, where several do.
 */
export interface NoMatch {
  kind: "none" | "many";
  closest: string[];
}

/** Exactly one tool the caller was shown answers to the name; or no one. */
export type NameMatch = { kind: "one"; original: string } | NoMatch;

/** Suggestions a did-you-mean gives at most. */
const MAX_CLOSEST = 5;
/** A fingerprinted name's tail (names/sanitize.ts): `_` and six characters. */
const FINGERPRINT = /_[0-9a-z]{6}$/;

/** A name with case, separators and runs of them set aside: `Files.Read` and `files_read` alike. */
const key = (name: string) =>
  name
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, "_")
    .replace(/^_|_$/g, "");

/**
 * Whether `listed` ends in `original`'s fingerprint (names/sanitize.ts), not
 * a word that only looks like one: a name the operator chose
 * (`search_issues`) or an earlier version handed out (`unity_health`). An
 * original past `MAX_MATCHED_CHARS` is not read, and its name is taken to
 * end in one: no shorter name is handed out without.
 */
const fingerprinted = (original: string, listed: string) =>
  FINGERPRINT.test(listed) &&
  (original.length > MAX_MATCHED_CHARS || listed.endsWith(`_${hash6(original)}`));

/**
 * The keys a shown tool answers to: its original's, its listed name's, that
 * name without its fingerprint; of each only where it has at most
 * `MAX_MATCHED_CHARS`, as a call's name: an origin's name may be megabytes
 * long, and one of 15 MB, read at every call, cost each 0.5 s of CPU.
 */
function keysOf({ original, listed }: ShownName): string[] {
  const keys = [original, listed].filter((name) => name.length <= MAX_MATCHED_CHARS).map(key);
  if (listed !== original && listed.length <= MAX_MATCHED_CHARS && fingerprinted(original, listed))
    keys.push(key(listed.replace(FINGERPRINT, "")));
  return keys;
}

/**
 * How alike two keys are (`words`: the words of `a`, read once for every
 * tool): the words they share, then the length of their common start; 0 for
 * names not alike.
 */
function likeness(a: string, words: ReadonlySet<string>, b: string): number {
  const shared = b.split("_").filter((word) => words.has(word)).length;
  let prefix = 0;
  while (prefix < a.length && a[prefix] === b[prefix]) prefix++;
  return shared > 0 || prefix >= MIN_PREFIX ? shared * 1000 + prefix : 0;
}

/**
 * The longest name matched at all: a client's name may be megabytes long, and
 * read whole against each tool, one of 100 KB cost 7.5 s of CPU at 1,000
 * tools. MCP asks names of at most 128 characters; a longer one goes to the
 * origin as it came.
 */
export const MAX_MATCHED_CHARS = 256;

/** Characters two names must start with alike, where they share no word, to be alike at all. */
const MIN_PREFIX = 4;

/**
 * The tool of `shown` a name stands for: the one whose own name it is, else
 * the one that answers to it, where exactly one does; otherwise the closest
 * names. Linear in the tools shown.
 */
export function matchName(name: string, shown: readonly ShownName[]): NameMatch {
  if (name.length > MAX_MATCHED_CHARS) return { kind: "none", closest: [] };
  // A tool's own name is that tool's, whichever others answer to its spelling (`a.b` beside `a/b`);
  // not where another tool is listed under it (`files_write_g6n43p`, `files.write`'s): the name
  // reaches the tool shown under it, or none, and no other.
  const own = shown.find((tool) => tool.original === name);
  if (own !== undefined && !shown.some((tool) => tool !== own && tool.listed === name)) {
    return { kind: "one", original: own.original };
  }
  const wanted = key(name);
  const matches = new Set<string>();
  if (wanted !== "") {
    for (const tool of shown) if (keysOf(tool).includes(wanted)) matches.add(tool.original);
  }
  const [only] = matches;
  if (matches.size === 1 && only !== undefined) return { kind: "one", original: only };
  const pool = matches.size > 1 ? shown.filter((tool) => matches.has(tool.original)) : shown;
  const words = new Set(wanted.split("_"));
  const closest = pool
    .filter((tool) => tool.listed.length <= MAX_MATCHED_CHARS)
    .map((tool) => ({ listed: tool.listed, score: likeness(wanted, words, key(tool.listed)) }))
    .filter((tool) => matches.size > 1 || tool.score > 0)
    .sort((a, b) => b.score - a.score || (a.listed < b.listed ? -1 : 1))
    .slice(0, MAX_CLOSEST)
    .map((tool) => tool.listed);
  return { kind: matches.size > 1 ? "many" : "none", closest };
}
