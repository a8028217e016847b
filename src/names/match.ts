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

/**
 * A name's words, lower case, joined by `_`: `Files.Read` and `files_read`
 * alike, and a capital begins a word (`getForecastHTTPData`: `get`,
 * `forecast`, `http`, `data`), so that a camelCase name misspelt is still
 * alike to its tool by its other words.
 */
const spelling = (name: string) =>
  name
    .replace(/(?<=[\p{Ll}\p{N}])(?=\p{Lu})|(?<=\p{Lu})(?=\p{Lu}\p{Ll})/gu, "_")
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, "_")
    .replace(/^_|_$/g, "");

/**
 * What a name answers to: its spelling with separators set aside too, so
 * that snake_case, camelCase and PascalCase spellings of one name are one
 * (`get_weather`, `getWeather`, `GetWeather`), as they are of an argument's
 * key (args/coalesce.ts); but for one between two numbers, which set aside
 * would make another number (`tool_1_0` is not `tool_10`).
 */
const key = (name: string) => spelling(name).replace(/_(?!(?<=\p{N}_)\p{N})/gu, "");

/**
 * Whether `listed` ends in `original`'s fingerprint (names/sanitize.ts), not
 * a word that only looks like one: a name the operator chose
 * (`search_issues`) or an earlier version handed out (`unity_health`). An
 * original past `MAX_MATCHED_CHARS` is not hashed at each call: longer than
 * any profile's cap, it is named with its fingerprint unless the operator
 * chose its name, and its name is taken to end in one.
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
 * tool; `bWords`, `b`'s, read once for every name): the words they share,
 * then the length of their common start; 0 for names not alike.
 */
function likeness(
  a: string,
  words: ReadonlySet<string>,
  b: string,
  bWords: readonly string[],
): number {
  const shared = bWords.filter((word) => words.has(word)).length;
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
 * The tools a caller was shown, read for matching once (`indexShown`): each
 * name matched against them then costs a look-up, and a scan of their keys
 * only for the closest names. Read again for each call, a batch of 32 calls
 * by names no tool has, against 10,000 tools, read every tool's names 64
 * times over (about 2.5 s of CPU).
 */
export interface ShownIndex {
  tools: readonly ShownName[];
  /** The first tool of each original. */
  byOriginal: ReadonlyMap<string, ShownName>;
  /** The tools listed under each name. */
  byListed: ReadonlyMap<string, readonly ShownName[]>;
  /** The originals that answer to each key (`keysOf`), in the order of `tools`. */
  byKey: ReadonlyMap<string, readonly string[]>;
  /** Each tool's listed name as spelt (`spelling`) and its words, where it has at most `MAX_MATCHED_CHARS`. */
  listedKeys: ReadonlyArray<{ key: string; words: readonly string[] } | undefined>;
}

export function indexShown(tools: readonly ShownName[]): ShownIndex {
  const byOriginal = new Map<string, ShownName>();
  const byListed = new Map<string, ShownName[]>();
  const byKey = new Map<string, string[]>();
  const listedKeys: ShownIndex["listedKeys"][number][] = [];
  for (const tool of tools) {
    if (!byOriginal.has(tool.original)) byOriginal.set(tool.original, tool);
    const listed = byListed.get(tool.listed);
    if (listed) listed.push(tool);
    else byListed.set(tool.listed, [tool]);
    for (const answered of new Set(keysOf(tool))) {
      const originals = byKey.get(answered);
      if (originals) originals.push(tool.original);
      else byKey.set(answered, [tool.original]);
    }
    const listedKey = tool.listed.length <= MAX_MATCHED_CHARS ? spelling(tool.listed) : undefined;
    listedKeys.push(
      listedKey === undefined ? undefined : { key: listedKey, words: listedKey.split("_") },
    );
  }
  return { tools, byOriginal, byListed, byKey, listedKeys };
}

/**
 * The tool of `shown` a name stands for: the one whose own name it is, else
 * the one that answers to it, where exactly one does; otherwise the closest
 * names. Linear in the tools shown.
 */
export const matchName = (name: string, shown: readonly ShownName[]): NameMatch =>
  matchIndexed(name, indexShown(shown));

/** `matchName` against tools read once (`indexShown`): linear in them only for the closest names. */
export function matchIndexed(name: string, index: ShownIndex): NameMatch {
  if (name.length > MAX_MATCHED_CHARS) return { kind: "none", closest: [] };
  // A tool's own name is that tool's, whichever others answer to its spelling (`a.b` beside `a/b`);
  // not where another tool is listed under it (`files_write_g6n43p`, `files.write`'s): the name
  // reaches the tool shown under it, or none, and no other.
  const own = index.byOriginal.get(name);
  if (own !== undefined && !(index.byListed.get(name) ?? []).some((tool) => tool !== own)) {
    return { kind: "one", original: own.original };
  }
  const wanted = spelling(name);
  const matches = new Set<string>(wanted === "" ? [] : (index.byKey.get(key(name)) ?? []));
  const [only] = matches;
  if (matches.size === 1 && only !== undefined) return { kind: "one", original: only };
  const words = new Set(wanted.split("_"));
  const scored: Array<{ listed: string; score: number }> = [];
  index.tools.forEach((tool, at) => {
    const listed = index.listedKeys[at];
    if (listed === undefined || (matches.size > 1 && !matches.has(tool.original))) return;
    const score = likeness(wanted, words, listed.key, listed.words);
    if (matches.size > 1 || score > 0) scored.push({ listed: tool.listed, score });
  });
  const closest = scored
    .sort((a, b) => b.score - a.score || (a.listed < b.listed ? -1 : 1))
    .slice(0, MAX_CLOSEST)
    .map((tool) => tool.listed);
  return { kind: matches.size > 1 ? "many" : "none", closest };
}
