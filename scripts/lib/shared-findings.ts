/**
 * What a binding one tenant's section shares with another's does (npm run check,
 * scripts/check.ts): credentials, a sign-in limit or budget shared are one
 * tenant's reached or spent by the other's Worker; a tool map, harmless
 * between origins; read from wrangler.toml by shared-bindings.ts.
 */
import { originUrlOf } from "../../src/config";
import { createNamespaceCommand } from "./environments";
import type { SharedBinding } from "./shared-bindings";

/** `ORIGIN_URL` as the tool map's keys read it (its URL's `href`), or as written where it is no URL. */
const originKey = (url: unknown) => {
  const read = originUrlOf(url);
  return "url" in read ? read.url.href : url;
};

/** What a namespace of each binding holds that is one tenant's credentials. */
const CREDENTIALS: Record<string, string> = {
  OAUTH_KV: "grants, token hashes and client registrations",
  ORIGIN_USER_SECRETS: "users' keys for its origin",
};

/**
 * What sharing `shared` with another tenant does, told at this section's binding (`name`'s,
 * in front of `origin`): credentials, or a rate limit or budget of sign-in, shared are one
 * tenant's reached or spent by the other's Worker; an origin's key is for that origin alone.
 * A tool map is shared harmlessly between origins: its keys begin with a digest of ORIGIN_URL
 * (docs/tool-map.md), so under the same one it is one map. `undefined`: no harm.
 */
export function sharedFinding(
  shared: SharedBinding,
  name: string,
  origin: { secret: true } | { url: unknown },
): { kind: "problem" | "note"; text: string } | undefined {
  const { binding, other, otherBinding, otherPath, kind } = shared;
  const either = (sign: string) => binding === sign || otherBinding === sign;
  const both = (sign: string) => binding === sign && otherBinding === sign;
  const also = `is [env.${other}]'s too (${otherPath}`;
  const create = `create one for this section: \`${createNamespaceCommand(binding, name)}\``;
  const problem = (text: string) => ({ kind: "problem" as const, text: `${also}${text}` });
  // Whether both are in front of one origin: `undefined` where a secret ORIGIN_URL keeps it
  // unknown, `null` where this section's is missing (a problem of its own).
  const sameOrigin =
    "secret" in origin || shared.otherOrigin === undefined
      ? undefined
      : origin.url === undefined
        ? null
        : originKey(origin.url) === originKey(shared.otherOrigin);
  const unknown = (what: string, fix: string) => ({
    kind: "note" as const,
    text: `${also}): ${what}, and ORIGIN_URL is a secret here, which check does not read: ${fix}`,
  });
  if (kind === "kv" && both("OAUTH_KV")) {
    return problem(
      `): one namespace would hold both tenants' sign-ins, so each tenant's Worker reads and writes the other's grants, token hashes and client registrations (gate mode's sign-out revokes a user's grants at both); ${create}`,
    );
  }
  if (kind === "kv" && both("ORIGIN_USER_SECRETS")) {
    if (sameOrigin === undefined) {
      return unknown(
        "users' keys are for one origin",
        `make sure the two are in front of the same one, or ${create}`,
      );
    }
    return sameOrigin !== false
      ? undefined
      : problem(
          `), in front of another ORIGIN_URL: each tenant's Worker would send its users' keys for the other's origin to its own; ${create}`,
        );
  }
  const mine = Object.hasOwn(CREDENTIALS, binding) ? CREDENTIALS[binding] : undefined;
  const theirs = Object.hasOwn(CREDENTIALS, otherBinding) ? CREDENTIALS[otherBinding] : undefined;
  if (kind === "kv" && (mine || theirs)) {
    const reach = [
      ...(mine ? [`this tenant's ${mine} would be in reach of [env.${other}]'s Worker`] : []),
      ...(theirs ? [`[env.${other}]'s ${theirs} would be in reach of this tenant's`] : []),
    ];
    return problem(`): ${reach.join(", and ")}; ${create}`);
  }
  if (kind === "secret" && both("ORIGIN_SECRET")) {
    if (sameOrigin === undefined) {
      return unknown(
        "an origin's key is for that origin",
        "make sure the two are in front of the same one, or bind each origin's own key",
      );
    }
    return sameOrigin !== false
      ? undefined
      : problem(
          "), in front of another ORIGIN_URL: each tenant's Worker would send the key of the other's origin to its own; bind each origin's own key",
        );
  }
  if (kind === "rate limit" && either("SIGN_IN_RATE_LIMIT")) {
    return problem(
      "): one limit counts both tenants' sign-in requests per client address, so one tenant's traffic spends the other's; give each section a namespace_id no other section has (npm run tenant takes the next one free)",
    );
  }
  if (shared.kind === "durable object" && either("SIGN_IN_BUDGET")) {
    return problem(
      `, the class ${shared.className} of the Worker ${shared.script}): one object a day counts both tenants' sign-in writes, so one tenant's sign-ins spend the other's SIGN_IN_DAILY_WRITES; bind each section's own Worker's class (class_name = "SignInBudget", no script_name)`,
    );
  }
  if (kind !== "kv" || !both("TOOL_MAP") || sameOrigin === false || sameOrigin === null) {
    return undefined;
  }
  if (sameOrigin === undefined) {
    return unknown(
      "tool maps are kept apart by ORIGIN_URL",
      `under the same ORIGIN_URL one map would serve both (a held change accepted for one is accepted for the other's callers): make sure they differ, or ${create}`,
    );
  }
  return problem(
    `), in front of the same ORIGIN_URL: one tool map would serve both, so a held change accepted for one (npm run holds -- accept) is accepted for the other's callers, and each tenant's listings pin definitions for the other's; ${create}`,
  );
}
