/**
 * One name made legal under one profile (docs/names.md, "Tool names", rules 1 to 3).
 * Pure. A legal name is kept; any other becomes a pure function of the
 * original: sanitized, cut to leave room, and fingerprinted (`_` and six
 * characters of a hash of the original), so two originals that sanitize
 * alike never share a name, whichever isolate names them and whatever else
 * it has seen. Collisions left (a legal name equal to a fingerprinted one)
 * are `assign.ts`'s business.
 */
import type { NameRules } from "./profiles";
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

  // NFKD splits `ü` into `u` + a combining mark, so `über` keeps its letters.
  let name = original
    .normalize("NFKD")
    .replace(COMBINING_MARKS, "")
    .replace(profile.disallowed, "_");
  if (name !== original) reasons.push("charset");

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

const FINGERPRINT_LENGTH = 7;

/** `base` with the collision suffix `_n`, trimmed so the whole stays within the cap. */
export function withSuffix(base: string, n: number, cap: number): string {
  const suffix = `_${n}`;
  return `${base.slice(0, cap - suffix.length)}${suffix}`;
}
