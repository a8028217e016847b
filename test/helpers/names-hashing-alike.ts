/**
 * 4,096 names of one FNV-1a hash (src/names/stable-hash.ts), as a hostile
 * origin finds them in seconds: pairs of blocks that leave the hash in the
 * same state (a birthday search each), any choice of one of each pair, in
 * order, a name of the same hash (Joux's multicollision). The blocks are all
 * characters no profile allows in a tool or property name, so every name
 * also sanitizes alike: each wants the same legal name.
 */
const PAIRS: ReadonlyArray<readonly [string, string]> = [
  ["?@<? ", "?<%)'"],
  ["}]<*]", "=)|$?"],
  ["[(+&:", ',"$++'],
  ["^&:$^", "'~/|>"],
  [":^?+)", ":: = "],
  [")(+{=", ">| #]"],
  ["::+<;", ':^*@"'],
  ["+;&,!", "$?#+^"],
  ["~'/;&", '(^/"@'],
  ["}!;$$", "}=*@="],
  ["*:>:+", "&#=@}"],
  ["!/|,>", "~@#$/"],
];

export const NAMES_HASHING_ALIKE: readonly string[] = PAIRS.reduce<string[]>(
  (all, [a, b]) => all.flatMap((name) => [name + a, name + b]),
  [""],
);
