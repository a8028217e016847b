/**
 * Gate mode (AUTH_MODE=gate, docs/sign-in.md "Gate mode"): the proxy signs
 * users in at the operator's identity provider, lets in those the ALLOWED_*
 * lists name, and adds the origin's key itself. Its settings, their checks
 * across settings (`gateProblems`) and what they become (`gateAuthOf`).
 */

import * as v from "valibot";
import { keyReadTwice, withoutBom } from "../json";
import { brokered, dashed, headerKind, unpassable } from "../protocol/header-names";
import type { AUTH_MODES, GateAuth, SecretSource, SignInBindings, UserSecrets } from "./auth-modes";
import {
  commaList,
  emailKey,
  httpUrl,
  isKvNamespace,
  isLoopbackHost,
  isSecretsStoreSecret,
  notHeaderName,
  oneOf,
  secret,
  wholeNumber,
} from "./values";

const IDP_PROTOCOLS = ["oidc", "github"] as const;
const GITHUB = "https://github.com";
const SECRET_PLACE = "{secret}";
const MAX_SECRET_CHARS = 4096;
const MAX_USER_SECRETS = 10_000;
const DOMAIN_NAME = "[a-z0-9-]+(?:\\.[a-z0-9-]+)+";
const EMAIL = new RegExp(`^[^\\s@,]+@${DOMAIN_NAME}$`);
const DOMAIN = new RegExp(`^${DOMAIN_NAME}$`);
/** RFC 5322's dot-atom (`atext` and dots) at a domain name: no quotes, comments, spaces or lists. */
const PLAIN_ADDRESS = new RegExp(`^[a-z0-9.!#$%&'*+/=?^_\`{|}~-]+@${DOMAIN_NAME}$`);
const GITHUB_LOGIN = /^[a-z\d](?:[a-z\d]|-(?=[a-z\d])){0,38}$/;

/**
 * Whether `text` can stand in a header value as it is: printable ASCII, no
 * space at either end (the runtime would trim it). A secret read at request
 * time (Secrets Store, KV) is held to it too.
 */
export const isHeaderSafe = (text: string) =>
  text.length <= MAX_SECRET_CHARS && /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/.test(text);

/**
 * Whether the origin may be told `email` (`ORIGIN_USER_HEADER`) as it is: an
 * address in printable ASCII that no reader takes for another. Outside ASCII,
 * an origin reads the header's UTF-8 bytes as Latin-1, or folds them
 * (U+212A KELVIN SIGN is "k"); a comma, a space, quotes, brackets or a
 * comment let a reader that splits lists or parses addresses take out
 * another address; a line break the runtime refuses in a header.
 */
export const isPlainAddress = (email: string) => email.length <= 320 && PLAIN_ADDRESS.test(email);

/** Whether `text` is a domain name as `ALLOWED_DOMAINS` holds them: ASCII, lower case, with a dot. */
export const isDomainName = (text: string) => DOMAIN.test(text);

const SECRET_TEXT = `must be printable ASCII (no line breaks), at most ${MAX_SECRET_CHARS} characters`;

/** A header the proxy sets on its requests to the origin: a name no other part of a request has. */
const originHeader = (mayBeCredential: boolean) =>
  v.pipe(
    v.string(),
    v.trim(),
    v.toLowerCase(),
    v.check((name) => notHeaderName(name) === undefined, "must be a header name, like X-API-Key"),
    v.check(
      (name) =>
        (mayBeCredential && (name === "authorization" || name === "cookie")) ||
        (unpassable(name) === undefined && !brokered(name)),
      "must be a header of the origin's own, not one of HTTP's, MCP's, Cloudflare's or the client's",
    ),
  );

/** The list settings' bounds: a var or secret holds at most 5 KiB on Cloudflare; these leave room. */
const LIST_BOUNDS = { maxEntries: 1000, maxChars: 64 * 1024 };

export const GATE_SETTINGS = {
  IDP_PROTOCOL: oneOf(IDP_PROTOCOLS, "oidc"),
  IDP_ISSUER: v.optional(
    v.pipe(
      httpUrl("must be a URL"),
      v.check(
        (url) => url.search === "" && url.hash === "",
        "must be the identity provider's issuer, like https://accounts.google.com (no query or fragment)",
      ),
      v.check(
        (url) => url.protocol === "https:" || isLoopbackHost(url.hostname),
        "must be an https:// URL (http:// only on localhost)",
      ),
    ),
  ),
  IDP_CLIENT_ID: secret,
  IDP_CLIENT_SECRET: secret,
  IDP_GROUPS_CLAIM: v.optional(
    v.pipe(
      v.string(),
      v.trim(),
      v.nonEmpty("must name a claim"),
      v.maxLength(256, "must be at most 256 characters"),
    ),
    "groups",
  ),
  ALLOWED_USERS: commaList("email addresses", LIST_BOUNDS, (entry) =>
    EMAIL.test(entry) ? undefined : "is not an email address",
  ),
  ALLOWED_DOMAINS: commaList("domain names", LIST_BOUNDS, (entry) =>
    DOMAIN.test(entry) ? undefined : "is not a domain name, like acme.com",
  ),
  ALLOWED_GROUPS: commaList("group names", { ...LIST_BOUNDS, keepCase: true }, (entry) =>
    entry.length > 256 ? "is longer than 256 characters" : undefined,
  ),
  ALLOWED_ORGS: commaList("GitHub organizations", LIST_BOUNDS, (entry) =>
    GITHUB_LOGIN.test(entry) ? undefined : "is not a GitHub organization's name",
  ),
  // Read as a header name is (lower case); the default as docs/configuration.md writes it.
  ORIGIN_AUTH_HEADER: v.optional(originHeader(true), "Authorization"),
  ORIGIN_AUTH_VALUE: v.optional(
    v.pipe(
      v.string(),
      v.check(
        (value) => value.split(SECRET_PLACE).length === 2,
        `must hold ${SECRET_PLACE} once, where the proxy puts ORIGIN_SECRET, like "Bearer ${SECRET_PLACE}"`,
      ),
      v.check(
        (value) => value.length <= 256 && /^[\x20-\x7e]*$/.test(value),
        "must be printable ASCII, at most 256 characters",
      ),
    ),
    `Bearer ${SECRET_PLACE}`,
  ),
  ORIGIN_SECRET: v.optional(
    v.pipe(
      v.unknown(),
      v.rawTransform(({ dataset, addIssue, NEVER }): SecretSource => {
        const { value } = dataset;
        if (isSecretsStoreSecret(value))
          return { kind: "store", store: value as SecretsStoreSecret };
        if (typeof value !== "string") {
          addIssue({ message: "must be a Worker secret or a Secrets Store binding" });
          return NEVER;
        }
        if (!isHeaderSafe(value.trim())) {
          addIssue({ message: SECRET_TEXT });
          return NEVER;
        }
        return { kind: "text", text: value.trim() };
      }),
    ),
  ),
  ORIGIN_USER_SECRETS: v.optional(
    v.pipe(
      v.unknown(),
      v.rawTransform(({ dataset, addIssue, NEVER }): UserSecrets => {
        const { value } = dataset;
        if (isKvNamespace(value)) return { kind: "kv", kv: value as KVNamespace };
        const map =
          typeof value === "string"
            ? userSecretMap(value)
            : `must be a KV namespace binding${isSecretsStoreSecret(value) ? " (a Secrets Store secret is one key, not one per user)" : ""}, or a Worker secret holding a JSON object of emails and keys`;
        if (typeof map !== "string") return { kind: "map", map };
        addIssue({ message: map });
        return NEVER;
      }),
    ),
  ),
  ORIGIN_USER_HEADER: v.optional(originHeader(false)),
  SIGN_IN_MAX_AGE_HOURS: v.optional(wholeNumber("hours", 1, 720), 24),
};

/**
 * `ORIGIN_USER_SECRETS` as a Worker secret: a JSON object from email to key.
 * A problem is told by the entry's place, never by its email or key.
 */
function userSecretMap(text: string): ReadonlyMap<string, string> | string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(withoutBom(text));
  } catch {
    return "must be JSON text: an object of emails and keys";
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    return "must be a JSON object of emails and keys";
  }
  const entries = Object.entries(parsed);
  if (entries.length > MAX_USER_SECRETS) return `must hold at most ${MAX_USER_SECRETS} keys`;
  // JSON.parse keeps the last of one key written twice, and emails are compared in any case: the
  // other key would be dropped without a word.
  if (typeof keyReadTwice(text, text.indexOf("{"), emailKey) === "string") {
    return "names one email address twice (in any case): write each once";
  }
  const map = new Map<string, string>();
  for (const [index, [email, key]] of entries.entries()) {
    const lower = emailKey(email);
    if (!EMAIL.test(lower))
      return `has an entry (number ${index + 1}) that is not an email address`;
    if (typeof key !== "string" || !isHeaderSafe(key.trim())) {
      return `has an entry (number ${index + 1}) whose key is not printable ASCII text`;
    }
    map.set(lower, key.trim());
  }
  return map;
}

export type GateVars = {
  AUTH_MODE: (typeof AUTH_MODES)[number];
  PASS_HEADERS: ReadonlySet<string>;
} & v.InferOutput<v.ObjectSchema<typeof GATE_SETTINGS, undefined>>;

/**
 * What gate mode's settings get wrong together, each by the setting to change;
 * none in other modes. `fine` says whether a setting is right in itself: a
 * check is made where every setting it reads is, so that a setting wrong in
 * itself hides none of the others' problems, and is not told twice.
 */
export function gateProblems(
  vars: GateVars,
  fine: (setting: keyof GateVars) => boolean = () => true,
): Array<[string, string]> {
  const all = (...settings: Array<keyof GateVars>) => settings.every(fine);
  if (!all("AUTH_MODE") || vars.AUTH_MODE !== "gate") return [];
  const problems: Array<[string, string]> = [];
  const protocol = all("IDP_PROTOCOL");
  const github = vars.IDP_PROTOCOL === "github";
  if (protocol && all("IDP_ISSUER") && vars.IDP_ISSUER === undefined && !github) {
    problems.push([
      "IDP_ISSUER",
      "is required with AUTH_MODE=gate: your identity provider's issuer URL, like https://accounts.google.com",
    ]);
  }
  if (all("IDP_CLIENT_ID") && vars.IDP_CLIENT_ID === undefined) {
    problems.push([
      "IDP_CLIENT_ID",
      "is required with AUTH_MODE=gate: the client ID of the proxy's app at your identity provider",
    ]);
  }
  if (protocol && all("IDP_CLIENT_SECRET") && github && vars.IDP_CLIENT_SECRET === undefined) {
    problems.push(["IDP_CLIENT_SECRET", "is required with IDP_PROTOCOL=github"]);
  }
  const lists = ["ALLOWED_USERS", "ALLOWED_DOMAINS", "ALLOWED_GROUPS", "ALLOWED_ORGS"] as const;
  if (all(...lists) && lists.every((list) => vars[list].size === 0)) {
    problems.push([
      "ALLOWED_USERS",
      "is required with AUTH_MODE=gate, or ALLOWED_DOMAINS, ALLOWED_GROUPS or ALLOWED_ORGS: with none, no one may sign in",
    ]);
  }
  if (protocol && all("ALLOWED_GROUPS") && github && vars.ALLOWED_GROUPS.size > 0) {
    problems.push(["ALLOWED_GROUPS", "is for OpenID Connect: with GitHub, use ALLOWED_ORGS"]);
  }
  if (protocol && all("ALLOWED_ORGS") && !github && vars.ALLOWED_ORGS.size > 0) {
    problems.push(["ALLOWED_ORGS", "needs IDP_PROTOCOL=github"]);
  }
  if (
    all("ORIGIN_SECRET", "ORIGIN_USER_SECRETS") &&
    vars.ORIGIN_SECRET === undefined &&
    vars.ORIGIN_USER_SECRETS === undefined
  ) {
    problems.push([
      "ORIGIN_SECRET",
      "is required with AUTH_MODE=gate (or ORIGIN_USER_SECRETS): the origin's key, as a Worker secret or a Secrets Store binding",
    ]);
  }
  if (!all("ORIGIN_AUTH_HEADER", "ORIGIN_USER_HEADER")) return problems;
  // Compared as servers that read `_` as `-` read them: `X_User_Email` would be the proxy's `X-User-Email`.
  const authHeader = dashed(vars.ORIGIN_AUTH_HEADER);
  const userHeader = vars.ORIGIN_USER_HEADER && dashed(vars.ORIGIN_USER_HEADER);
  if (userHeader === authHeader) {
    problems.push(["ORIGIN_USER_HEADER", "must not be ORIGIN_AUTH_HEADER"]);
  }
  const passed = all("PASS_HEADERS") ? [...vars.PASS_HEADERS] : [];
  const index = passed.findIndex(
    (name) =>
      dashed(name) === authHeader ||
      dashed(name) === userHeader ||
      headerKind(name) === "credential",
  );
  if (index >= 0) {
    problems.push([
      "PASS_HEADERS",
      `has an entry (number ${index + 1}) that carries a credential, which gate mode never passes on`,
    ]);
  }
  return problems;
}

/** Gate mode's part of the configuration, once `gateProblems` found none. */
export function gateAuthOf(vars: GateVars, bindings: SignInBindings): GateAuth {
  const [prefix = "", suffix = ""] = vars.ORIGIN_AUTH_VALUE.split(SECRET_PLACE);
  return {
    ...bindings,
    mode: "gate",
    idp: {
      protocol: vars.IDP_PROTOCOL,
      issuer: vars.IDP_ISSUER ?? new URL(GITHUB),
      clientId: vars.IDP_CLIENT_ID ?? "",
      clientSecret: vars.IDP_CLIENT_SECRET,
      groupsClaim: vars.IDP_GROUPS_CLAIM,
    },
    allowed: {
      users: vars.ALLOWED_USERS,
      domains: vars.ALLOWED_DOMAINS,
      groups: vars.ALLOWED_GROUPS,
      orgs: vars.ALLOWED_ORGS,
    },
    originAuth: { header: vars.ORIGIN_AUTH_HEADER, prefix, suffix },
    originSecret: vars.ORIGIN_SECRET,
    userSecrets: vars.ORIGIN_USER_SECRETS,
    userHeader: vars.ORIGIN_USER_HEADER,
    signInMaxAgeS: vars.SIGN_IN_MAX_AGE_HOURS * 3600,
  };
}

/** The bindings broker and gate mode each require, and how to add it. */
