/**
 * Step 3 of argument repair, for a string its schema's `enum` or `const` does not name: the
 * member it names in another case (`"ASC"` for `["asc","desc"]`, `"High"` for `"high"`), as
 * models write them and an origin that checks its schema refuses. Only where exactly one string
 * member equals it ignoring case (docs/arguments.md, step 3).
 */

/** Two members or more fold alike: which one a string of that fold means is not known. */
const AMBIGUOUS = Symbol("ambiguous");

export type FoldedMembers = ReadonlyMap<string, string | typeof AMBIGUOUS>;

/**
 * Case as `toLowerCase` writes it: Unicode's default, the same in every locale (no Turkish
 * dotless `ı` for `I`), and no folding past case (`ß` is not `ss`, a fullwidth `ａ` not `a`).
 * Nothing else is taken for the same: surrounding spaces, `-`, `_` may say something of their
 * own (`"-name"`, a descending sort, beside no `"name"`).
 */
const folded = (text: string) => text.toLowerCase();

/** The string members of `values`, by their case folded. */
export function foldedMembers(values: ReadonlySet<unknown>): FoldedMembers {
  const members = new Map<string, string | typeof AMBIGUOUS>();
  for (const value of values) {
    if (typeof value !== "string") continue;
    const fold = folded(value);
    members.set(fold, members.has(fold) ? AMBIGUOUS : value);
  }
  return members;
}

/**
 * The one member of `members` that `text`, which its enum does not name, equals ignoring case;
 * `undefined` where none or several do.
 */
export function memberInAnotherCase(text: string, members: FoldedMembers): string | undefined {
  if (members.size === 0) return undefined;
  const member = members.get(folded(text));
  return member === AMBIGUOUS ? undefined : member;
}
