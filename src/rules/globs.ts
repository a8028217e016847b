/**
 * How the operator's rules name tools (docs/rules.md, "Hiding tools"):
 * picomatch globs over original names, or `exact:` names. Picomatch reads
 * some globs otherwise than they are written (`**` beside a name's
 * characters as `*`, a range in braces as a class of one character, a glob it
 * cannot compile as one that matches nothing): those are refused at startup,
 * each told what to write. Pure.
 */
import picomatch from "picomatch/posix";
import * as v from "valibot";

/**
 * A pattern that names one tool exactly: globs read `[]`, `()`, `!`, `{}` and
 * `*` in a name as a pattern, so `report[1]` is `report1`, and a rule meant
 * to hide the tool would miss it.
 */
const EXACT = "exact:";

/**
 * How a glob reads a name: a `.` at its start or after a `/` is a character
 * like any other (`dot`), and so is a line break (`flags: "s"`): picomatch
 * makes each glob a regular expression, whose `.` stops at one, so `**` and
 * a glob's negation (`!files.*`, every tool but these) left a tool named
 * `admin\ndelete` unmatched, and listed.
 */
const GLOB_OPTIONS = { dot: true, flags: "s", expandRange: rangeOfCharacters };

/** A range in braces picomatch cannot read as the operator meant it; the glob is refused. */
class UnreadRange extends Error {}

/**
 * A range in braces as picomatch reads it, a character class, where that is
 * what it means: one letter or digit at each end, no step. Any other picomatch
 * reads as a class too, and names other tools than meant: `{1..20}` is
 * `[1-20]` (one of 1, 2 and 0), `{01..10}` one of 0 to 1 and 0, `{1..9..2}`
 * any digit or `-`, `{^..z}` any character but `-` and `z`.
 */
function rangeOfCharacters(...parts: unknown[]): string {
  // picomatch hands over the range's parts, then its options.
  const ends = parts.slice(0, -1);
  const single = (end: unknown) => typeof end === "string" && /^[A-Za-z0-9]$/.test(end);
  if (ends.length !== 2 || !ends.every(single)) throw new UnreadRange();
  return `[${ends.sort().join("-")}]`;
}

/** Whether picomatch reads a range in the glob as no class of characters (`rangeOfCharacters`). */
function readsNoRange(pattern: string): boolean {
  try {
    picomatch.makeRe(pattern, GLOB_OPTIONS);
    return false;
  } catch (error) {
    return error instanceof UnreadRange;
  }
}

/**
 * Whether a glob writes `**` (or more stars) beside another character of a
 * name (`github**`, `**delete`, `a/***`): picomatch reads it as `*`, which
 * stops at a `/`, where the docs' `**` crosses it, so the operator's rule
 * would leave `github/delete_repo` out of what it names. Apart from a name's
 * characters, a `**` stands at the glob's ends (after the `!`s that negate
 * it), beside a `/`, or at a brace's or parenthesis' edge or separator while
 * one is open. A `\` escapes what follows, and a `[…]` is one character.
 */
function starsBesideName(pattern: string): boolean {
  let start = 0;
  while (pattern[start] === "!") start++;
  let braces = 0;
  let parens = 0;
  const apart = (char: string | undefined, inBraces: string, inParens: string) =>
    char === undefined ||
    char === "/" ||
    (braces > 0 && inBraces.includes(char)) ||
    (parens > 0 && inParens.includes(char));
  for (let at = start; at < pattern.length; at++) {
    const char = pattern[at];
    if (char === "\\") at++;
    else if (char === "[") at = Math.max(at, pattern.indexOf("]", at + 2));
    else if (char === "{") braces++;
    else if (char === "}") braces = Math.max(0, braces - 1);
    else if (char === "(") parens++;
    else if (char === ")") parens = Math.max(0, parens - 1);
    else if (char === "*") {
      let end = at;
      while (pattern[end] === "*") end++;
      const before = at === start ? undefined : pattern[at - 1];
      if (end - at > 2) return true;
      if (end - at === 2 && !(apart(before, "{,", "(|") && apart(pattern[end], "},", ")|"))) {
        return true;
      }
      at = end - 1;
    }
  }
  return false;
}

const glob = v.pipe(
  v.string("must be a glob (a string)"),
  v.nonEmpty("must not be empty"),
  v.check((pattern) => pattern !== EXACT, `must name a tool after ${EXACT}`),
  // A glob: every tool but one named `exact:admin`, `admin` among them.
  v.check(
    (pattern) => !/^!+exact:/.test(pattern),
    `negates an ${EXACT} name, which only a glob can be: write the glob, each pattern character escaped (!report\\[1\\] for every tool but report[1])`,
  ),
  v.check(
    (pattern) => pattern.startsWith(EXACT) || !readsNoRange(pattern),
    "writes a range in braces picomatch reads as one character of a set: write {a..e} or {1..9} (one letter or digit at each end, no step), or the names ({1,2,10,20})",
  ),
  v.check(
    (pattern) => pattern.startsWith(EXACT) || !starsBesideName(pattern),
    "writes ** beside other characters, where picomatch reads it as *, which stops at a /: write ** as a part of its own to cross a / (github/**, **/*delete*), or * within a name",
  ),
  v.check((pattern) => {
    if (pattern.startsWith(EXACT)) return true;
    try {
      // `debug`: else picomatch takes a glob it makes no regular expression of
      // (`admin.{delete,drop`) for one that matches no name, and its rule is off without a word.
      picomatch.makeRe(pattern, { ...GLOB_OPTIONS, debug: true });
      return true;
    } catch {
      return false;
    }
  }, "is not a glob picomatch can read (a { or ( left open, a \\ at its end, a range written backwards such as [z-a])"),
);
export const globs = v.optional(v.array(glob, "must be a list of globs"), []);

/**
 * The longest name a glob is matched against, what MCP asks of a tool's name:
 * a glob's regular expression backtracks, each `*` by up to the name's length
 * again, and a name may be as long as a listing or a call's body. `*delete*`
 * took a second of CPU for a call naming a tool by 128 KB of `delete`s, and a
 * minute for 1 MiB (test/worker/request-bounds.test.ts); at this length, at
 * most 0.05 ms for a glob of four `*`s, 0.6 ms for six. A longer name only
 * an `exact:` name names.
 */
export const MAX_GLOBBED_CHARS = 128;

/**
 * Whether a name matches any of `patterns`: an `exact:` name, or a glob (as
 * picomatch reads one, it names its own text too). A name longer than
 * `MAX_GLOBBED_CHARS` matches a glob's pattern where `longMatches`: `hide`
 * hides it, as it cannot tell, and `only` lists it not.
 */
export function matcher(
  patterns: readonly string[],
  longMatches: boolean,
): (name: string) => boolean {
  const exact = new Set(patterns.map((p) => (p.startsWith(EXACT) ? p.slice(EXACT.length) : p)));
  const globbed = patterns.filter((p) => !p.startsWith(EXACT));
  if (globbed.length === 0) return (name) => exact.has(name);
  const isMatch = picomatch(globbed, GLOB_OPTIONS);
  return (name) =>
    exact.has(name) || (name.length > MAX_GLOBBED_CHARS ? longMatches : isMatch(name));
}
