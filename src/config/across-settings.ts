/**
 * The checks across settings (config/index.ts reads each setting on its own
 * first): a setting of another sign-in mode, a binding a mode requires, what
 * call analytics and broker mode need beside a setting, gate mode's checks,
 * and the names the operator's rules choose. Each is made where the settings
 * it reads have no problem of their own, so that one reading finds every
 * problem.
 */
import type * as v from "valibot";
import { PROFILE_NAMES } from "../names/profiles";
import { ruleNamesProblems, toolRulesOnTheirOwn } from "../rules/tool-rules";
import { profileOf } from "../schemas/profile";
import type { Settings } from ".";
import { MODE_SETTINGS, SIGN_IN_BINDINGS } from "./auth-modes";
import { gateProblems } from "./gate";

/** A problem found across settings: the keys of its path, and what is wrong. */
type Found = [keys: readonly string[], problem: string];

/** The problems found across settings, of `value` (`env` parsed, with `issues`) and `env` as set. */
export function acrossSettings(
  env: unknown,
  value: unknown,
  issues: readonly v.BaseIssue<unknown>[],
): Found[] {
  const found: Found[] = [];
  const settled = (keys: readonly string[]) => {
    if (typeof value !== "object" || value === null) return undefined;
    const clear = issues.every((issue) => {
      const key = issue.path?.[0]?.key;
      return typeof key === "string" && !keys.includes(key);
    });
    // Only `keys` are read from it: the other settings may be anything.
    return clear ? (value as Settings) : undefined;
  };
  // Read from `env`: the parsed settings hold the defaults of those left unset.
  const mode = settled(["AUTH_MODE"])?.AUTH_MODE;
  for (const [settings, modes] of MODE_SETTINGS) {
    if (mode === undefined || modes.includes(mode)) continue;
    for (const setting of settings) {
      if ((env as Record<string, unknown>)[setting] === undefined || !settled([setting])) continue;
      found.push([
        [setting],
        `is read only with AUTH_MODE=${modes.join(" or ")}, and AUTH_MODE is ${mode}: set AUTH_MODE, or remove this`,
      ]);
    }
  }
  for (const [binding, how] of SIGN_IN_BINDINGS) {
    const vars = settled(["AUTH_MODE", binding]);
    if (vars && vars.AUTH_MODE !== "relay" && vars[binding] === undefined) {
      found.push([[binding], `is required with AUTH_MODE=${vars.AUTH_MODE}: ${how}`]);
    }
  }
  // Call analytics indexes each point by the tenant: without its name, tenants would share an index.
  const calls = settled(["CALLS", "WRANGLER_ENV"]);
  if (calls?.CALLS !== undefined && calls.WRANGLER_ENV === undefined) {
    found.push([
      ["WRANGLER_ENV"],
      "is required with the CALLS binding: each data point is indexed by it; set it to the name of this [env.NAME] (npm run tenant writes it)",
    ]);
  }
  // In another mode, the secret is told to be broker mode's (above).
  const client = settled(["AUTH_MODE", "UPSTREAM_CLIENT_ID", "UPSTREAM_CLIENT_SECRET"]);
  if (
    client?.AUTH_MODE === "broker" &&
    client.UPSTREAM_CLIENT_SECRET !== undefined &&
    client.UPSTREAM_CLIENT_ID === undefined
  ) {
    // Told of the one to add: the secret may be a declared one, left to the Worker by npm run check.
    found.push([["UPSTREAM_CLIENT_ID"], "is required beside UPSTREAM_CLIENT_SECRET"]);
  }
  // Each of gate mode's checks is made where the settings it reads are fine.
  const gate = settled([]);
  const fine = (setting: string) => settled([setting]) !== undefined;
  for (const [setting, problem] of gate ? gateProblems(gate, fine) : []) {
    found.push([[setting], problem]);
  }
  // The names the operator chose, legal under every profile's rules: of each tool whose rule
  // reads well, whatever else of TOOL_RULES is wrong.
  const cap = settled(["NAME_MAX_LENGTH"]);
  const rules = cap && toolRulesOnTheirOwn((env as Record<string, unknown>).TOOL_RULES);
  if (cap && rules) {
    const names = PROFILE_NAMES.map(
      (name) => profileOf(name, { nameMaxLength: cap.NAME_MAX_LENGTH, maxTools: undefined }).names,
    );
    for (const [keys, problem] of ruleNamesProblems(rules, names)) {
      found.push([["TOOL_RULES", ...keys], problem]);
    }
  }
  return found;
}
