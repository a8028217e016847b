/**
 * The root's property names a provider refuses, renamed (providers/anthropic.ts,
 * bedrock.ts, portable.ts). Anthropic's Messages API and Bedrock's Converse
 * API refuse a request whose tool declares a top-level property outside
 * `^[a-zA-Z0-9_.-]{1,64}$` (`input_schema.properties: Property keys should
 * match pattern '^[a-zA-Z0-9_.-]{1,64}$'`): an origin's `filter[id]`,
 * `$filter`, `Account Number` or a name of 65 characters failed every
 * request that carried the tool, whatever the model meant to call. They
 * check the top level only; a nested object's names stay as they are.
 *
 * As a tool's name is (names/sanitize.ts), such a name becomes a pure
 * function of itself: each character the pattern refuses one `_` (Unicode
 * decomposed first, so `ü` keeps its `u`), cut to leave room, then `_` and
 * six characters of a hash of the whole name, so two names that read alike
 * never share one, whichever isolate views the schema. A name taken all the
 * same (the origin declares it too) gets the next free `_2`, `_3`, …
 * `required` follows, as do the root's dependencies and a name its
 * description quotes (a merged root's sets of fields): nothing the model
 * reads names a property as it is not shown. The call's keys are written back as the origin names
 * them before anything else reads them (way-back.ts `keysBack`), from the
 * view the caller was shown (`SchemaView.keys`).
 */
import { isPlainObject } from "../../json";
import { SuffixedNames } from "../../names/sanitize";
import { hash6 } from "../../names/stable-hash";
import type { RootPass } from "../pass";

const LEGAL_KEY = /^[a-zA-Z0-9_.-]{1,64}$/;
const MAX_KEY = 64;
/** `_` and `hash6`'s six characters. */
const FINGERPRINT = 7;
/**
 * Code units of a name read for its legal characters: enough for the
 * `MAX_KEY - FINGERPRINT` kept, whatever a name's length (an origin's may be
 * megabytes), but where most are combining marks, which leave nothing.
 */
const READ_UNITS = 4 * MAX_KEY;

const COMBINING_MARKS = /\p{M}/gu;
/** A name quoted in a description, as merge-branches.ts writes a form's fields. */
const QUOTED = /`([^`]*)`/g;
/** The root's keywords keyed by its properties' names; `dependentRequired`'s, and draft-07's, list names too. */
const DEPENDENCIES = ["dependentRequired", "dependencies", "dependentSchemas"] as const;
const REFUSED = /[^a-zA-Z0-9_.-]/g;

/** `name` as the pattern takes it: a legal name is itself. */
export function legalKey(name: string): string {
  if (LEGAL_KEY.test(name)) return name;
  let end = Math.min(name.length, READ_UNITS);
  // A surrogate pair stays whole.
  const last = name.charCodeAt(end - 1);
  if (end < name.length && last >= 0xd800 && last <= 0xdbff) end++;
  const legal = name
    .slice(0, end)
    .normalize("NFKD")
    .replace(COMBINING_MARKS, "")
    .replace(REFUSED, "_")
    .slice(0, MAX_KEY - FINGERPRINT);
  return `${legal}_${hash6(name)}`;
}

/**
 * Each name of `names` the pattern refuses, with the legal one the view
 * writes for it (`legalKey`, or one with a suffix where that is taken).
 */
export function renamedKeys(names: readonly string[]): Map<string, string> {
  const renamed = new Map<string, string>();
  const taken = new Set(names.filter((name) => LEGAL_KEY.test(name)));
  const suffixed = new SuffixedNames(MAX_KEY);
  for (const name of names) {
    if (taken.has(name)) continue;
    const base = legalKey(name);
    const key = taken.has(base) ? suffixed.free(base, (key) => !taken.has(key)) : base;
    taken.add(key);
    renamed.set(name, key);
  }
  return renamed;
}

export const propertyKeys: RootPass = {
  needed: (root) => {
    const { properties } = root;
    if (!isPlainObject(properties)) return false;
    for (const name of Object.keys(properties)) if (!LEGAL_KEY.test(name)) return true;
    return false;
  },
  apply: (root, view) => {
    const properties = root.properties as Record<string, unknown>;
    const renamed = renamedKeys(Object.keys(properties));
    // fromEntries: a property named `__proto__` stays an ordinary one.
    root.properties = Object.fromEntries(
      Object.entries(properties).map(([name, schema]) => [renamed.get(name) ?? name, schema]),
    );
    const named = (names: unknown) =>
      Array.isArray(names)
        ? names.map((name) => (typeof name === "string" ? (renamed.get(name) ?? name) : name))
        : names;
    if (Array.isArray(root.required)) root.required = named(root.required);
    // What one property asks of the others is said by the names the view declares.
    for (const keyword of DEPENDENCIES) {
      const dependencies = root[keyword];
      if (!isPlainObject(dependencies)) continue;
      root[keyword] = Object.fromEntries(
        Object.entries(dependencies).map(([name, value]) => [
          renamed.get(name) ?? name,
          named(value),
        ]),
      );
    }
    // A merged root's "Takes one of these sets of fields: (1) `filter[id]`" (merge-branches.ts),
    // or the origin's own words, quote a name as the model must write it.
    if (typeof root.description === "string") {
      root.description = root.description.replace(QUOTED, (quoted, name: string) => {
        const key = renamed.get(name);
        return key === undefined ? quoted : `\`${key}\``;
      });
    }
    view.keysRenamed(renamed);
    view.applied.add("property_keys_renamed");
    return root;
  },
};
