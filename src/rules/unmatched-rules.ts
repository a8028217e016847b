/**
 * The operator's rules that name no tool the origin lists (docs/rules.md, "A
 * rule that names no tool"): `npm run check` and startup cannot know the
 * origin's tools, and such a rule does nothing. The likeliest cause is a
 * model-facing name copied from a client's listing where rules take the
 * origin's, so each comes with the originals whose model-facing names it
 * names. An origin may list each caller their own tools (admins theirs): a
 * rule is settled by the first whole listing with a tool it names, and
 * logged only once it named none of `LISTINGS_JUDGED` distinct listings,
 * sooner only where the listings say it is a mistake. Pure: tool-map.ts logs them.
 */
import { settingPath } from "../json";
import { fingerprint32 } from "../names/stable-hash";
import { matcher } from "./globs";
import type { ToolRulesDocument } from "./tool-rules";

/**
 * Distinct listings (by the names of their tools) a rule names no tool of
 * before it is logged: where admins are listed tools no one else is, the
 * first callers of an isolate seldom list them all, and a caller of each
 * of three listings that differ is likelier one of them.
 */
export const LISTINGS_JUDGED = 3;

/** A rule that names tools: its path as an operator reads it, what keys it as judged, what it names. */
interface NamingRule {
  path: string;
  key: string;
  named: (name: string) => boolean;
}

/**
 * A rule no tool of `listings` distinct whole listings answers to, and the
 * originals of the last of them whose model-facing names it names.
 */
export interface UnmatchedRule {
  rule: string;
  listings: number;
  modelFacingOf?: string[];
}

/** A whole listing, as rules are judged against it. */
export interface JudgedListing {
  /** Original → model-facing name. */
  names: ReadonlyMap<string, string>;
  /**
   * The request carried nothing the origin tells callers apart by
   * (toolmap/callers.ts `Caller.anonymous`): the origin lists every such
   * request alike, and a rule for tools it lists others is no rule of
   * this tenant's.
   */
  anonymous: boolean;
  /** The profile whose model-facing names `names` holds: the same tools read otherwise under another. */
  profile: string;
}

/**
 * What one isolate knows of the rules against one origin's whole listings:
 * the rules settled (one named a tool of them, or was logged), judged no
 * more; the listings each other rule named no tool of, by fingerprint; and
 * those listings' model-facing names it was tested against, by fingerprint
 * and profile: a client chooses the profile URL it lists at, and a copy of
 * one profile's name names nothing of the same tools listed under another.
 * As many rules as the operator wrote, at most `LISTINGS_JUDGED - 1`
 * fingerprints each, and as many namings of them as there are profiles.
 */
export class RuleJudgements {
  readonly settled = new Set<string>();
  readonly missed = new Map<string, string[]>();
  readonly faced = new Map<string, string[]>();

  settle(key: string): void {
    this.settled.add(key);
    this.missed.delete(key);
    this.faced.delete(key);
  }
}

/** Each glob of `hide` and `only` (matched as its list matches), and each tool's own rule. */
function namingRules(document: ToolRulesDocument): NamingRule[] {
  const globbed = (list: "hide" | "only", longMatches: boolean) =>
    document[list].map((pattern, at) => {
      const path = settingPath(["TOOL_RULES", list, at]);
      return { path, key: `${path}\n${pattern}`, named: matcher([pattern], longMatches) };
    });
  const tools = Object.keys(document.tools).map((original) => {
    const path = settingPath(["TOOL_RULES", "tools", original]);
    return { path, key: path, named: (name: string) => name === original };
  });
  return [...globbed("hide", true), ...globbed("only", false), ...tools];
}

/** Each document's naming rules, compiled on first use. */
const compiled = new WeakMap<ToolRulesDocument, NamingRule[]>();

/**
 * Which tools a listing has, in any order: 64 bits of its originals'
 * fingerprints, summed, and how many. Not cryptographic: an origin that
 * made two listings of its own alike here would delay a line, as listing
 * alike would.
 */
function listingFingerprint(originals: Iterable<string>): string {
  let count = 0;
  let low = 0;
  let high = 0;
  for (const original of originals) {
    count++;
    low = (low + fingerprint32(original)) >>> 0;
    high = (high + fingerprint32(original, 0, original.length, 1)) >>> 0;
  }
  return `${count}:${low}:${high}`;
}

/**
 * The rules of `document` to log for a whole listing, each with the
 * originals whose model-facing name it names instead: those that named no
 * tool of `LISTINGS_JUDGED` distinct listings now; sooner, those that
 * name a model-facing name of this one (a copy from a client's listing),
 * and where the listing is every anonymous request's, those it lacks.
 * `judgements` is kept up to date; a rule settled before tests no tool, nor
 * does a listing the rule was judged against before, and a listing of no
 * tools judges nothing.
 */
export function unmatchedRules(
  document: ToolRulesDocument,
  listing: JudgedListing,
  judgements: RuleJudgements,
): UnmatchedRule[] {
  let naming = compiled.get(document);
  if (naming === undefined) {
    naming = namingRules(document);
    compiled.set(document, naming);
  }
  const { names, anonymous, profile } = listing;
  const unmatched: UnmatchedRule[] = [];
  if (names.size === 0) return unmatched;
  // Made for the first rule not settled yet: most listings have none (or no rules at all), and
  // a listing a rule named no tool of before, to whichever caller, is not tested again, nor
  // its model-facing names under a profile they were tested under.
  let fingerprint: string | undefined;
  let originals: string[] | undefined;
  for (const { path, key, named } of naming) {
    if (judgements.settled.has(key)) continue;
    fingerprint ??= listingFingerprint(names.keys());
    const namedAs = `${fingerprint} ${profile}`;
    const missed = judgements.missed.get(key) ?? [];
    const faced = judgements.faced.get(key) ?? [];
    const seen = missed.includes(fingerprint);
    const facedBefore = faced.includes(namedAs);
    // A listing it was tested against before tells nothing new but where it is every anonymous request's.
    if (facedBefore && !anonymous) continue;
    if (!seen) {
      originals ??= [...names.keys()];
      if (originals.some(named)) {
        judgements.settle(key);
        continue;
      }
    }
    const modelFacingOf = facedBefore
      ? []
      : [...names].flatMap(([original, name]) =>
          name !== original && named(name) ? [original] : [],
        );
    const listings = seen ? missed.length : missed.length + 1;
    if (listings < LISTINGS_JUDGED && modelFacingOf.length === 0 && !anonymous) {
      if (!seen) judgements.missed.set(key, [...missed, fingerprint]);
      judgements.faced.set(key, [...faced, namedAs]);
      continue;
    }
    judgements.settle(key);
    unmatched.push(
      modelFacingOf.length > 0 ? { rule: path, listings, modelFacingOf } : { rule: path, listings },
    );
  }
  return unmatched;
}
