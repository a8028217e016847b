/**
 * Model-facing names for a whole listing (docs/names.md, "Tool names", rules 4 and
 * 5). Pure: the names already handed out come in as `known`, the decisions
 * go out as data, and the caller stores them.
 *
 * - A name the operator chose (`chosen`: TOOL_RULES, checked legal and
 *   distinct at startup) is the tool's, first of all, whether or not the
 *   tool is among `originals`.
 * - A name handed out keeps pointing at its tool: an original that already
 *   has a model-facing name keeps it (sticky: a name kept in KV), and a legal
 *   original whose own name another tool already has (`known`), or is the
 *   fingerprinted name of another original listed with it, is named as an
 *   illegal one is, and `taken` says so. A client that was shown the name
 *   never reaches another tool by it.
 * - A name legal as it is keeps its name otherwise.
 * - Any other gets its fingerprinted name (sanitize.ts), the same in every
 *   isolate. Only where that is taken, by a legal original or a stored name,
 *   does it get `_2`, `_3`, … within the cap, in code-unit order of the
 *   originals, so the order of the listing never changes the outcome.
 */
import type { NameRules } from "./profiles";
import {
  isLegalName,
  type RenameReason,
  type Sanitized,
  SuffixedNames,
  sanitizeName,
} from "./sanitize";

/** The names handed out by earlier listings. */
export interface KnownNames {
  /** The model-facing name an original already has. */
  nameOf(original: string): string | undefined;
  /** The original a model-facing name already points at. */
  originalOf(name: string): string | undefined;
}

export interface Assignment {
  original: string;
  name: string;
  /** Why `name` differs from `original` (empty when it does not). */
  reasons: RenameReason[];
}

/** A model-facing name that now names a different tool than it did before: only a name the operator chose does. */
export interface Displacement {
  name: string;
  from: string;
  to: string;
}

/**
 * An original not given its name, as another tool has it: a legal one its own
 * (or another listed tool's fingerprinted name), an illegal one its
 * fingerprinted name, handed out before to a tool of that own name.
 */
export interface Taken {
  tool: string;
  name: string;
  takenBy: string;
}

export interface Assignments {
  /** One per distinct original, in code-unit order. */
  assignments: Assignment[];
  displaced: Displacement[];
  taken: Taken[];
}

export function assignNames(
  originals: Iterable<string>,
  known: KnownNames,
  rules: NameRules,
  chosen: ReadonlyMap<string, string> = new Map(),
): Assignments {
  const distinct = [...new Set(originals)].sort();
  const taken = new Map<string, string>();
  const assignments: Assignment[] = [];
  const displaced: Displacement[] = [];
  const takenNames: Taken[] = [];

  // Every chosen name is its tool's, listed here or not: a page, or a cold
  // isolate's tools from KV, may lack the tool and hold the one whose own name it is.
  for (const [original, name] of chosen) taken.set(name, original);
  const own = distinct.filter((original) => chosen.has(original));
  for (const original of own) {
    const name = chosen.get(original) as string;
    assignments.push({ original, name, reasons: name === original ? [] : ["rule"] });
    const previous = known.originalOf(name);
    if (previous !== undefined && previous !== original) {
      displaced.push({ name, from: previous, to: original });
    }
  }
  const illegal: string[] = [];
  // Each illegal original's sanitized name, made once: a new isolate names every tool it knows.
  const sanitized = new Map<string, Sanitized>();
  const fingerprinted = new Map<string, string>();
  for (const original of distinct) {
    if (!chosen.has(original) && !isLegalName(original, rules)) {
      const made = sanitizeName(original, rules);
      sanitized.set(original, made);
      fingerprinted.set(made.name, original);
    }
  }
  // Legal originals named as illegal ones are, after those: a fingerprinted name is its tool's.
  const holders = new Map<string, string>();
  const demoted: string[] = [];
  const other = (original: string, tool: string | undefined) =>
    tool !== undefined && tool !== original ? tool : undefined;
  for (const original of distinct) {
    if (chosen.has(original)) continue;
    if (sanitized.has(original) || taken.has(original)) {
      illegal.push(original);
      continue;
    }
    const sticky = known.nameOf(original);
    const holder =
      other(original, known.originalOf(original)) ?? other(original, fingerprinted.get(original));
    if ((sticky !== undefined && sticky !== original) || holder !== undefined) {
      if (holder !== undefined) holders.set(original, holder);
      demoted.push(original);
      continue;
    }
    taken.set(original, original);
    assignments.push({ original, name: original, reasons: [] });
  }

  const isFree = (name: string, original: string) => {
    if (taken.has(name)) return false;
    const owner = known.originalOf(name);
    return owner === undefined || owner === original;
  };

  const suffixed = new SuffixedNames(rules.cap);
  for (const original of [...illegal, ...demoted]) {
    const { name: base, reasons } = sanitized.get(original) ?? sanitizeName(original, rules);
    const sticky = known.nameOf(original);
    let name =
      sticky !== undefined && isFree(sticky, original) && isLegalName(sticky, rules)
        ? sticky
        : base;
    // A suffix the run skips is taken, or `known` holds it for another tool: one it holds for
    // this tool is `sticky`, tried first.
    if (!isFree(name, original)) name = suffixed.free(base, (name) => isFree(name, original));
    taken.set(name, original);
    assignments.push({
      original,
      name,
      reasons: name === base ? reasons : [...reasons, "collision"],
    });
    // Reported when it is given: a listing after gives it back as it was. So is an illegal
    // original's fingerprinted name that a tool listed before it has as its own: an isolate that
    // names both at once (from KV) would give it that name, and the other tool the next.
    const holder =
      holders.get(original) ?? (name === base ? undefined : heldBefore(base, original, known));
    if (holder !== undefined && name !== original && sticky !== name) {
      takenNames.push({ tool: original, name, takenBy: holder });
    }
  }

  assignments.sort((a, b) => (a.original < b.original ? -1 : a.original > b.original ? 1 : 0));
  return { assignments, displaced, taken: takenNames };
}

/** The other tool an earlier listing handed `name` to, if one did. */
function heldBefore(name: string, original: string, known: KnownNames): string | undefined {
  const holder = known.originalOf(name);
  return holder === original ? undefined : holder;
}
