/**
 * One name made legal under one profile (docs/names.md, "Tool names", rules 1 to 3).
 * Pure. A legal name is kept; any other becomes a pure function of the
 * original: sanitized, cut to leave room, and fingerprinted (`_` and six
 * characters of a hash of the original), so two originals that sanitize
 * alike never share a name, whichever isolate names them and whatever else
 * it has seen. Collisions left (a legal name equal to a fingerprinted one)
 * are `assign.ts`'s business.
 */
import type { NameProfile, NameRules } from "./profiles";
import { hash6 } from "./stable-hash";

/** Why a tool's model-facing name is not its own; `rule`: the operator chose it (TOOL_RULES). */
export type RenameReason = "charset" | "first_character" | "length" | "collision" | "rule";

export interface Sanitized {
  name: string;
  /** Why the name differs from the original; empty when it does not. */
  reasons: RenameReason[];
}

export function isLegalName(name: string, { profile, cap }: NameRules): boolean {
  return name.length <= cap && profile.allowedName.test(name);
}

const COMBINING_MARKS = /\p{M}/gu;

export function sanitizeName(original: string, rules: NameRules): Sanitized {
  if (isLegalName(original, rules)) return { name: original, reasons: [] };
  const { profile, cap } = rules;
  const reasons: RenameReason[] = [];

  let { name, changed } = legalCharacters(original, rules, cap - FINGERPRINT_LENGTH);
  if (changed) reasons.push("charset");

  if (name.length === 0) {
    name = "tool";
  } else if (!profile.allowedFirst.test(name[0] as string)) {
    name = `${profile.allowedFirst.test("_") ? "_" : "t_"}${name}`;
    reasons.push("first_character");
  }

  // Room for the fingerprint: `_` and six characters.
  if (name.length > cap - FINGERPRINT_LENGTH) {
    name = name.slice(0, cap - FINGERPRINT_LENGTH);
    reasons.push("length");
  }
  return { name: `${name}_${hash6(original)}`, reasons };
}

/** Code units of the original made legal at a time. */
const SLICE_UNITS = 64;

/**
 * The original's characters made legal: Unicode decomposed (NFKD, so `ü`
 * keeps its `u`), combining marks dropped, every character still not allowed
 * one `_`; read a slice at a time, only until the result is longer than
 * `room`, as no more of it is kept. Whole, one character may decompose into
 * 18 (U+FDFA), and an origin's name of 16 MiB was some 100 M code units:
 * past an isolate's 128 MB. Slice by slice the result is the whole name's:
 * NFKD decomposes each character alone, and reorders only combining marks
 * (test/unit/names.test.ts, over every code point), which are dropped.
 * `changed`: whether the result differs from the original, which is so
 * where a character is not allowed, read or not (no allowed one changes).
 */
function legalCharacters(
  original: string,
  { profile }: NameRules,
  room: number,
): { name: string; changed: boolean } {
  let name = "";
  let start = 0;
  while (start < original.length && name.length <= room) {
    let end = Math.min(start + SLICE_UNITS, original.length);
    // A surrogate pair stays in one slice.
    if (end < original.length && isHighSurrogate(original.charCodeAt(end - 1))) end++;
    name += original
      .slice(start, end)
      .normalize("NFKD")
      .replace(COMBINING_MARKS, "")
      .replace(profile.disallowed, "_");
    start = end;
  }
  const changed = start < original.length ? hasDisallowed(original, profile) : name !== original;
  return { name, changed };
}

const isHighSurrogate = (unit: number) => unit >= 0xd800 && unit <= 0xdbff;

/** Whether `text` holds a character `profile` does not allow: read without a copy. */
function hasDisallowed(text: string, { disallowed }: NameProfile): boolean {
  disallowed.lastIndex = 0;
  const found = disallowed.test(text);
  disallowed.lastIndex = 0;
  return found;
}

const FINGERPRINT_LENGTH = 7;

/** `base` with the collision suffix `_n`, trimmed so the whole stays within the cap. */
export function withSuffix(base: string, n: number, cap: number): string {
  const suffix = `_${n}`;
  return `${base.slice(0, cap - suffix.length)}${suffix}`;
}

/**
 * The first free name of `base` with a suffix, `_2`, `_3`, …, for each of a run of names
 * wanting it. Each base goes on from the suffix its last name took, as names are only ever
 * taken, never freed, within a run: an origin can make thousands of names of one base
 * (stable-hash.ts is no cryptographic hash), which each trying every suffix from `_2` would
 * cost their number squared.
 */
export class SuffixedNames {
  readonly #next = new Map<string, number>();

  constructor(private readonly cap: number) {}

  free(base: string, isFree: (name: string) => boolean): string {
    let n = this.#next.get(base) ?? 2;
    let name = withSuffix(base, n, this.cap);
    while (!isFree(name)) name = withSuffix(base, ++n, this.cap);
    this.#next.set(base, n + 1);
    return name;
  }
}
