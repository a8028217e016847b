/**
 * The proxy's settings, read from wrangler vars and secrets. This is the only
 * module that reads `env` for settings: everything else takes a `Config`.
 *
 * A missing or invalid setting is reported by name and never by value, since
 * `ORIGIN_URL` may carry a credential in its query string.
 */
import * as v from "valibot";
import { canonicalPath } from "./canonical-path";
import { MIN_NAME_CAP, PROFILE_NAMES, type ProfileName } from "./names/profiles";
import { brokered, headerKind, unpassable } from "./protocol/header-names";
import {
  CHANGE_MODES,
  CHANGE_SCOPES,
  ruleNamesProblem,
  type ToolPolicy,
  ToolRules,
  ToolRulesSetting,
} from "./rules/tool-rules";
import { type Profile, type ProfileLimits, profileOf } from "./schemas/profile";

/** A count given as a string (wrangler vars) or a number (TOML integers). */
const wholeNumber = (unit: string, minimum: number, maximum = Number.MAX_SAFE_INTEGER) => {
  const message = `must be a whole number of ${unit}`;
  return v.pipe(
    // An empty string is no number, although `Number("")` is 0.
    v.union([v.pipe(v.string(), v.trim(), v.nonEmpty(message)), v.number()], message),
    v.transform(Number),
    v.integer(message),
    v.minValue(
      minimum,
      `must be at least ${minimum} ${minimum === 1 ? unit.replace(/s$/, "") : unit}`,
    ),
    v.maxValue(maximum, `must be at most ${maximum} ${unit}`),
  );
};

/**
 * The largest `MAX_BODY_BYTES`: half of what an isolate's requests may hold
 * at once of what they read (transport/read-bounded.ts `MAX_HELD_BYTES`), so
 * that a body at the limit can be taken beside another.
 */
const MAX_BODY_LIMIT = 16 * 1024 * 1024;

/**
 * The largest `MAX_BATCH_MESSAGES`. Batches are protocol 2025-03-26's alone
 * (2025-06-18 removed them) and no MCP SDK's client sends them; each message
 * may cost a search, a validation or a listing named again.
 */
const MAX_BATCH_LIMIT = 256;

/**
 * The bounds of `MAX_LOCAL_ANSWER_BYTES`: at most the bound of one message the
 * proxy rewrites (transport/read-bounded.ts `MAX_REWRITE_BYTES`); at least
 * room for the short answer to every call of the largest batch
 * (rewrite/local-answers.ts), so that a batch is refused only for ids of
 * unusual length.
 */
const MIN_LOCAL_ANSWER_LIMIT = 128 * 1024;
const MAX_LOCAL_ANSWER_LIMIT = 16 * 1024 * 1024;

const picklist = <const T extends readonly [string, ...string[]]>(options: T) =>
  v.picklist(options, `must be one of ${options.join(", ")}`);

const oneOf = <const T extends readonly [string, ...string[]]>(options: T, fallback: T[number]) =>
  v.optional(picklist(options), fallback);

/** An absolute http(s) URL, as a `URL`. */
const httpUrl = (missing: string) =>
  v.pipe(
    v.string(missing),
    v.trim(),
    v.check((value) => URL.canParse(value), "must be an absolute http:// or https:// URL"),
    v.transform((value) => new URL(value)),
    v.check(
      (url) => url.protocol === "http:" || url.protocol === "https:",
      "must be an absolute http:// or https:// URL",
    ),
  );

/** An authorization server's issuer identifier (RFC 8414 §2): an http(s) URL with no query or fragment. */
const issuerUrl = v.optional(
  v.pipe(
    httpUrl("must be a URL"),
    v.check(
      (url) => url.search === "" && url.hash === "",
      "must be the authorization server's issuer, like https://auth.example.com (no query or fragment)",
    ),
  ),
);

/** The proxy's public origin: scheme, host and port, nothing more. */
const publicOrigin = v.optional(
  v.pipe(
    httpUrl("must be a URL"),
    v.check(
      (url) => url.pathname === "/" && url.search === "" && url.hash === "",
      "must be the proxy's public origin only, like https://mcp.example.com (no path)",
    ),
    v.transform((url) => url.origin),
  ),
);

/** Paths the proxy serves itself; `MCP_PATH` may be none of them, nor lie under one. */
const FIXED_ROUTES = ["/healthz", "/authorize", "/oauth", "/.well-known"];

const path = v.optional(
  v.pipe(
    v.string(),
    v.trim(),
    v.startsWith("/", "must start with /"),
    v.regex(/^\/[^?#]*[^/?#]$/, "must be a plain path like /mcp: no query, no trailing /"),
    v.check((value) => {
      const canonical = canonicalPath(value);
      return canonical.kind === "canonical" && canonical.path === value;
    }, "must have one reading: no %-escapes of letters, digits or -._~, no . or .. or empty segments"),
    v.check(
      (value) => !FIXED_ROUTES.some((route) => value === route || value.startsWith(`${route}/`)),
      `must not be one of the proxy's own routes (${FIXED_ROUTES.join(", ")}) or under one`,
    ),
  ),
  "/mcp",
);

/** Whether `value` is a binding with `method` (a Secrets Store secret's or a KV namespace's `get`). */
const hasMethod = (value: unknown, method: string) =>
  typeof value === "object" &&
  value !== null &&
  typeof (value as Record<string, unknown>)[method] === "function";

const kvNamespace = (missing: string) =>
  v.custom<KVNamespace>((value) => hasMethod(value, "get"), missing);

const VALIDATION_MODES = ["off", "warn", "enforce"] as const;
export type ValidationMode = (typeof VALIDATION_MODES)[number];

const AUTH_MODES = ["relay", "broker", "gate"] as const;

/**
 * `SIGN_IN_DAILY_WRITES`' default: a quarter of the Free plan's 1,000 KV
 * writes a day, so a flood of sign-ins leaves the rest to the tool map,
 * grants and refreshes (docs/sign-in.md, "What sign-in costs").
 */
const SIGN_IN_DAILY_WRITES = 250;
/** One sign-in with a registration: the registration, the consent page and the Allow. */
const MIN_SIGN_IN_DAILY_WRITES = 3;

/** `SIGN_IN_BUDGET`: the Durable Object namespace that counts sign-in writes (auth/sign-in-budget.ts). */
type SignInBudgetBinding = NonNullable<Env["SIGN_IN_BUDGET"]>;

/** What the modes in which the proxy signs clients in itself (broker, gate) both need. */
export interface SignInBindings {
  /** `OAUTH_KV`: grants, the proxy's tokens (as hashes), sign-ins, the proxy's upstream client. */
  oauthKv: KVNamespace;
  /** `SIGN_IN_RATE_LIMIT`: sign-in requests per client address (auth/sign-in-limit.ts). */
  signInRateLimit: RateLimit;
  /** `SIGN_IN_BUDGET`: what counts the deployment's sign-in writes per UTC day. */
  signInBudget: SignInBudgetBinding;
  /** `SIGN_IN_DAILY_WRITES`: how many sign-in writes a UTC day allows, before anyone signed in. */
  signInDailyWrites: number;
  /** `PASS_HEADERS`: the client's headers the origin gets besides MCP's and the content's, lower case. */
  passHeaders: ReadonlySet<string>;
}

/** How clients sign in to an origin that needs it (docs/sign-in.md). */
export type AuthMode =
  | { mode: "relay" }
  | (SignInBindings & {
      mode: "broker";
      /**
       * `UPSTREAM_ISSUER`: the only authorization server the proxy signs in
       * at, whatever the origin's metadata names; `undefined`: the one it names.
       */
      upstreamIssuer: URL | undefined;
      /** The proxy's own client at the origin's authorization server, when the operator registered one. */
      upstreamClient: { id: string; secret: string | undefined } | undefined;
    })
  | GateAuth;

/** What broker mode has that relay mode does not. */
export type BrokerAuth = Extract<AuthMode, { mode: "broker" }>;
/** The modes in which the proxy is the authorization server for its own URL. */
export type SignInAuth = Exclude<AuthMode, { mode: "relay" }>;

const secret = v.optional(v.pipe(v.string(), v.trim(), v.nonEmpty("must not be empty")));

/** One `ALLOWED_HOSTS` entry: a hostname, and the one port it is allowed on when it names one. */
export interface AllowedHost {
  hostname: string;
  port?: string;
}

const HOST_ENTRY = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(?::(\d{1,5}))?$/;

const hostList = v.optional(
  v.pipe(
    v.string(),
    v.transform((value) =>
      value
        .split(",")
        .map((host) => host.trim().toLowerCase())
        .filter(Boolean),
    ),
    v.check(
      (entries) => entries.every((entry) => HOST_ENTRY.test(entry)),
      "must be hostnames or host:port pairs, separated by commas",
    ),
    v.transform((entries) =>
      entries.map((entry): AllowedHost => {
        const [, hostname = entry, port] = HOST_ENTRY.exec(entry) ?? [];
        return port === undefined ? { hostname } : { hostname, port };
      }),
    ),
  ),
  "",
);

/**
 * A comma-separated list, each entry trimmed (and lower-cased unless
 * `keepCase`), as a set; at most `maxEntries` entries in `maxChars`
 * characters. A problem with an entry is told by its place in the list,
 * never by what it says.
 */
function commaList(
  what: string,
  {
    maxEntries,
    maxChars,
    tooLong = `must be at most ${maxChars} characters`,
    keepCase = false,
  }: { maxEntries: number; maxChars: number; tooLong?: string; keepCase?: boolean },
  problemOf: (entry: string) => string | undefined,
) {
  return v.optional(
    v.pipe(
      v.string(`must be ${what} separated by commas`),
      v.maxLength(maxChars, tooLong),
      v.transform((value) =>
        value
          .split(",")
          .map((entry) => (keepCase ? entry.trim() : entry.trim().toLowerCase()))
          .filter(Boolean),
      ),
      v.maxLength(maxEntries, `must list at most ${maxEntries} ${what}`),
      v.rawCheck(({ dataset, addIssue }) => {
        if (!dataset.typed) return;
        for (const [index, entry] of dataset.value.entries()) {
          const problem = problemOf(entry);
          if (problem !== undefined) {
            addIssue({ message: `has an entry (number ${index + 1}) that ${problem}` });
            return;
          }
        }
      }),
      v.transform((entries): ReadonlySet<string> => new Set(entries)),
    ),
    "",
  );
}

/** `PASS_HEADERS`'s bounds: names, and characters a name. */
const MAX_PASS_HEADERS = 32;
const MAX_HEADER_NAME = 64;
/** RFC 9110 §5.1 `token`, in lower case: what a header name may be made of. */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9a-z]+$/;

/** Why `name` (lower case) is no header name; `undefined` when it is one. */
const notHeaderName = (name: string) =>
  name.length > MAX_HEADER_NAME
    ? `is longer than ${MAX_HEADER_NAME} characters`
    : !HEADER_NAME.test(name)
      ? "is not a header name (letters, digits and !#$%&'*+-.^_`|~)"
      : undefined;

/**
 * The headers broker and gate mode let through besides their own
 * (protocol/header-names.ts `brokered`): names, comma-separated, in any case.
 */
const passHeaders = commaList(
  "header names",
  {
    maxEntries: MAX_PASS_HEADERS,
    maxChars: MAX_PASS_HEADERS * (MAX_HEADER_NAME + 2),
    tooLong: `must list at most ${MAX_PASS_HEADERS} header names of at most ${MAX_HEADER_NAME} characters`,
  },
  (name) => notHeaderName(name) ?? unpassable(name),
);

// Gate mode (AUTH_MODE=gate, docs/sign-in.md "Gate mode"): the proxy signs
// users in at the operator's identity provider, lets in those the ALLOWED_*
// lists name, and adds the origin's key itself. Its settings, their checks
// across settings (`gateProblems`) and what they become (`gateAuthOf`).

/** An identity provider the proxy signs users in at. */
export interface IdentityProvider {
  /** `IDP_PROTOCOL`: OpenID Connect, or GitHub's OAuth and user API. */
  protocol: "oidc" | "github";
  /** `IDP_ISSUER`: the OpenID Connect issuer; for GitHub, its web host (github.com, or an Enterprise Server). */
  issuer: URL;
  /** `IDP_CLIENT_ID`, `IDP_CLIENT_SECRET`: the proxy's client there. */
  clientId: string;
  clientSecret: string | undefined;
  /** `IDP_GROUPS_CLAIM`: the ID token claim that lists the user's groups. */
  groupsClaim: string;
}

/** Who may connect: a user any list names is let in. All lower case, but groups (as the provider writes them). */
export interface AllowLists {
  users: ReadonlySet<string>;
  domains: ReadonlySet<string>;
  groups: ReadonlySet<string>;
  orgs: ReadonlySet<string>;
}

/** A secret: the Worker secret's text, or a Secrets Store binding, read when it is needed. */
export type SecretSource =
  | { kind: "text"; text: string }
  | { kind: "store"; store: SecretsStoreSecret };

/** Per-user keys by verified email (lower case): a KV namespace, or a map a Worker secret holds as JSON. */
export type UserSecrets =
  | { kind: "kv"; kv: KVNamespace }
  | { kind: "map"; map: ReadonlyMap<string, string> };

export interface GateAuth extends SignInBindings {
  mode: "gate";
  idp: IdentityProvider;
  allowed: AllowLists;
  /** `ORIGIN_AUTH_HEADER` (lower case) and `ORIGIN_AUTH_VALUE` around its `{secret}`. */
  originAuth: { header: string; prefix: string; suffix: string };
  /** `ORIGIN_SECRET`: the origin's key, for every user without one of their own. */
  originSecret: SecretSource | undefined;
  /** `ORIGIN_USER_SECRETS`: keys of their own for some users. */
  userSecrets: UserSecrets | undefined;
  /** `ORIGIN_USER_HEADER` (lower case): where the origin is told the user's verified email. */
  userHeader: string | undefined;
  /** `SIGN_IN_MAX_AGE_HOURS`, in seconds: how long a grant lasts before the user signs in again. */
  signInMaxAgeS: number;
}

const IDP_PROTOCOLS = ["oidc", "github"] as const;
const GITHUB = "https://github.com";
const SECRET_PLACE = "{secret}";
const MAX_SECRET_CHARS = 4096;
const MAX_USER_SECRETS = 10_000;
const LOOPBACK_HOST = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/;
const EMAIL = /^[^\s@,]+@[a-z0-9-]+(\.[a-z0-9-]+)+$/;
const DOMAIN = /^[a-z0-9-]+(\.[a-z0-9-]+)+$/;
const GITHUB_LOGIN = /^[a-z\d](?:[a-z\d]|-(?=[a-z\d])){0,38}$/;

/**
 * Whether `text` can stand in a header value as it is: printable ASCII, no
 * space at either end (the runtime would trim it). A secret read at request
 * time (Secrets Store, KV) is held to it too.
 */
export const isHeaderSafe = (text: string) =>
  text.length <= MAX_SECRET_CHARS && /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/.test(text);

const SECRET_TEXT = `must be printable ASCII (no line breaks), at most ${MAX_SECRET_CHARS} characters`;

/** A header the proxy sets on its requests to the origin: a name no other part of a request has. */
const originHeader = (mayBeCredential: boolean) =>
  v.optional(
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
    ),
  );

/** The list settings' bounds: a var or secret holds at most 5 KiB on Cloudflare; these leave room. */
const LIST_BOUNDS = { maxEntries: 1000, maxChars: 64 * 1024 };

const GATE_SETTINGS = {
  IDP_PROTOCOL: oneOf(IDP_PROTOCOLS, "oidc"),
  IDP_ISSUER: v.optional(
    v.pipe(
      httpUrl("must be a URL"),
      v.check(
        (url) => url.search === "" && url.hash === "",
        "must be the identity provider's issuer, like https://accounts.google.com (no query or fragment)",
      ),
      v.check(
        (url) => url.protocol === "https:" || LOOPBACK_HOST.test(url.hostname),
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
  ORIGIN_AUTH_HEADER: originHeader(true),
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
        if (hasMethod(value, "get")) return { kind: "store", store: value as SecretsStoreSecret };
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
        if (hasMethod(value, "get")) return { kind: "kv", kv: value as KVNamespace };
        const map =
          typeof value === "string"
            ? userSecretMap(value)
            : "must be a KV namespace binding, or a Worker secret holding a JSON object of emails and keys";
        if (typeof map !== "string") return { kind: "map", map };
        addIssue({ message: map });
        return NEVER;
      }),
    ),
  ),
  ORIGIN_USER_HEADER: originHeader(false),
  SIGN_IN_MAX_AGE_HOURS: v.optional(wholeNumber("hours", 1, 720), 24),
};

/**
 * `ORIGIN_USER_SECRETS` as a Worker secret: a JSON object from email to key.
 * A problem is told by the entry's place, never by its email or key.
 */
function userSecretMap(text: string): ReadonlyMap<string, string> | string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return "must be JSON text: an object of emails and keys";
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    return "must be a JSON object of emails and keys";
  }
  const entries = Object.entries(parsed);
  if (entries.length > MAX_USER_SECRETS) return `must hold at most ${MAX_USER_SECRETS} keys`;
  const map = new Map<string, string>();
  for (const [index, [email, key]] of entries.entries()) {
    const lower = email.trim().toLowerCase();
    if (!EMAIL.test(lower))
      return `has an entry (number ${index + 1}) that is not an email address`;
    if (typeof key !== "string" || !isHeaderSafe(key.trim())) {
      return `has an entry (number ${index + 1}) whose key is not printable ASCII text`;
    }
    map.set(lower, key.trim());
  }
  return map;
}

type GateVars = {
  AUTH_MODE: (typeof AUTH_MODES)[number];
  PASS_HEADERS: ReadonlySet<string>;
} & v.InferOutput<v.ObjectSchema<typeof GATE_SETTINGS, undefined>>;

/** What gate mode's settings get wrong together, each by the setting to change; none in other modes. */
function gateProblems(vars: GateVars): Array<[string, string]> {
  if (vars.AUTH_MODE !== "gate") return [];
  const problems: Array<[string, string]> = [];
  const github = vars.IDP_PROTOCOL === "github";
  if (vars.IDP_ISSUER === undefined && !github) {
    problems.push([
      "IDP_ISSUER",
      "is required with AUTH_MODE=gate: your identity provider's issuer URL, like https://accounts.google.com",
    ]);
  }
  if (vars.IDP_CLIENT_ID === undefined) {
    problems.push([
      "IDP_CLIENT_ID",
      "is required with AUTH_MODE=gate: the client ID of the proxy's app at your identity provider",
    ]);
  }
  if (github && vars.IDP_CLIENT_SECRET === undefined) {
    problems.push(["IDP_CLIENT_SECRET", "is required with IDP_PROTOCOL=github"]);
  }
  const lists = [vars.ALLOWED_USERS, vars.ALLOWED_DOMAINS, vars.ALLOWED_GROUPS, vars.ALLOWED_ORGS];
  if (lists.every((list) => list.size === 0)) {
    problems.push([
      "ALLOWED_USERS",
      "is required with AUTH_MODE=gate, or ALLOWED_DOMAINS, ALLOWED_GROUPS or ALLOWED_ORGS: with none, no one may sign in",
    ]);
  }
  if (github && vars.ALLOWED_GROUPS.size > 0) {
    problems.push(["ALLOWED_GROUPS", "is for OpenID Connect: with GitHub, use ALLOWED_ORGS"]);
  }
  if (!github && vars.ALLOWED_ORGS.size > 0) {
    problems.push(["ALLOWED_ORGS", "needs IDP_PROTOCOL=github"]);
  }
  if (vars.ORIGIN_SECRET === undefined && vars.ORIGIN_USER_SECRETS === undefined) {
    problems.push([
      "ORIGIN_SECRET",
      "is required with AUTH_MODE=gate (or ORIGIN_USER_SECRETS): the origin's key, as a Worker secret or a Secrets Store binding",
    ]);
  }
  const authHeader = vars.ORIGIN_AUTH_HEADER ?? "authorization";
  if (vars.ORIGIN_USER_HEADER === authHeader) {
    problems.push(["ORIGIN_USER_HEADER", "must not be ORIGIN_AUTH_HEADER"]);
  }
  const passed = [...vars.PASS_HEADERS];
  const index = passed.findIndex(
    (name) =>
      name === authHeader || name === vars.ORIGIN_USER_HEADER || headerKind(name) === "credential",
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
function gateAuthOf(vars: GateVars, bindings: SignInBindings): GateAuth {
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
    originAuth: { header: vars.ORIGIN_AUTH_HEADER ?? "authorization", prefix, suffix },
    originSecret: vars.ORIGIN_SECRET,
    userSecrets: vars.ORIGIN_USER_SECRETS,
    userHeader: vars.ORIGIN_USER_HEADER,
    signInMaxAgeS: vars.SIGN_IN_MAX_AGE_HOURS * 3600,
  };
}

/** What an absent required setting is told, by name (wrangler leaves an unset var out of `env`). */
const MISSING: Record<string, string> = {
  ORIGIN_URL: "is missing; set it to the full URL of the origin's MCP endpoint",
  TOOL_MAP: "is missing: bind a KV namespace as TOOL_MAP",
};

const missing = (issue: v.BaseIssue<unknown>) => {
  const key = issue.path?.[0]?.key;
  return typeof key === "string" ? (MISSING[key] ?? "is missing") : "must be an object";
};

/** The mode `AUTH_MODE` names in a configuration being checked. */
const modeOf = (input: unknown) => (input as { AUTH_MODE?: string }).AUTH_MODE;

/** `AUTH_MODE` with what its mode needs, from settings the checks above passed. */
function authOf(
  vars: GateVars & {
    OAUTH_KV?: KVNamespace;
    SIGN_IN_RATE_LIMIT?: RateLimit;
    SIGN_IN_BUDGET?: SignInBudgetBinding;
    SIGN_IN_DAILY_WRITES: number;
    UPSTREAM_ISSUER?: URL;
    UPSTREAM_CLIENT_ID?: string;
    UPSTREAM_CLIENT_SECRET?: string;
  },
): AuthMode {
  if (
    vars.AUTH_MODE === "relay" ||
    !vars.OAUTH_KV ||
    !vars.SIGN_IN_RATE_LIMIT ||
    !vars.SIGN_IN_BUDGET
  )
    return { mode: "relay" };
  const bindings: SignInBindings = {
    oauthKv: vars.OAUTH_KV,
    signInRateLimit: vars.SIGN_IN_RATE_LIMIT,
    signInBudget: vars.SIGN_IN_BUDGET,
    signInDailyWrites: vars.SIGN_IN_DAILY_WRITES,
    passHeaders: vars.PASS_HEADERS,
  };
  if (vars.AUTH_MODE === "gate") return gateAuthOf(vars, bindings);
  return {
    ...bindings,
    mode: "broker",
    upstreamIssuer: vars.UPSTREAM_ISSUER,
    upstreamClient: vars.UPSTREAM_CLIENT_ID
      ? { id: vars.UPSTREAM_CLIENT_ID, secret: vars.UPSTREAM_CLIENT_SECRET }
      : undefined,
  };
}

const ConfigSchema = v.pipe(
  v.object(
    {
      ORIGIN_URL: httpUrl(MISSING.ORIGIN_URL as string),
      MCP_PATH: path,
      ORIGIN_TIMEOUT_MS: v.optional(wholeNumber("milliseconds", 1), 30_000),
      MAX_BODY_BYTES: v.optional(wholeNumber("bytes", 1, MAX_BODY_LIMIT), 4 * 1024 * 1024),
      MAX_BATCH_MESSAGES: v.optional(wholeNumber("messages", 1, MAX_BATCH_LIMIT), 32),
      MAX_LOCAL_ANSWER_BYTES: v.optional(
        wholeNumber("bytes", MIN_LOCAL_ANSWER_LIMIT, MAX_LOCAL_ANSWER_LIMIT),
        1024 * 1024,
      ),
      PROFILE: v.optional(picklist(PROFILE_NAMES)),
      // The earlier name of PROFILE, from when profiles governed names only.
      NAME_PROFILE: v.optional(picklist(PROFILE_NAMES)),
      NAME_MAX_LENGTH: v.optional(wholeNumber("characters", MIN_NAME_CAP)),
      // Search mode lists two tools: a lower ceiling could not be kept.
      MAX_TOOLS: v.optional(wholeNumber("tools", 2)),
      TOOL_RULES: ToolRulesSetting,
      TOOL_CHANGES: oneOf(CHANGE_MODES, "log"),
      TOOL_CHANGES_SCOPE: oneOf(CHANGE_SCOPES, "definition"),
      ARGUMENT_VALIDATION: oneOf(VALIDATION_MODES, "warn"),
      ALLOWED_HOSTS: hostList,
      PUBLIC_URL: publicOrigin,
      AUTH_MODE: oneOf(AUTH_MODES, "relay"),
      TOOL_MAP: kvNamespace(MISSING.TOOL_MAP as string),
      OAUTH_KV: v.optional(kvNamespace("must be a KV namespace binding")),
      SIGN_IN_RATE_LIMIT: v.optional(
        v.custom<RateLimit>(
          (value) =>
            typeof value === "object" &&
            value !== null &&
            typeof (value as Partial<RateLimit>).limit === "function",
          "must be a Workers Rate Limiting binding ([[ratelimits]])",
        ),
      ),
      SIGN_IN_BUDGET: v.optional(
        v.custom<SignInBudgetBinding>(
          (value) =>
            typeof (value as Partial<SignInBudgetBinding> | null)?.getByName === "function",
          "must be a Durable Object binding of the class SignInBudget",
        ),
      ),
      SIGN_IN_DAILY_WRITES: v.optional(
        wholeNumber("writes", MIN_SIGN_IN_DAILY_WRITES),
        SIGN_IN_DAILY_WRITES,
      ),
      UPSTREAM_ISSUER: issuerUrl,
      UPSTREAM_CLIENT_ID: secret,
      UPSTREAM_CLIENT_SECRET: secret,
      PASS_HEADERS: passHeaders,
      ...GATE_SETTINGS,
      CALLS: v.optional(
        v.custom<AnalyticsEngineDataset>(
          (value) =>
            typeof (value as Partial<AnalyticsEngineDataset> | null)?.writeDataPoint === "function",
          "must be a Workers Analytics Engine dataset binding ([[analytics_engine_datasets]])",
        ),
      ),
      CF_VERSION_METADATA: v.optional(
        v.custom<WorkerVersionMetadata>(
          (value) => typeof (value as Partial<WorkerVersionMetadata> | null)?.id === "string",
          "must be a version metadata binding ([version_metadata])",
        ),
      ),
    },
    missing,
  ),
  v.forward(
    v.check(
      (vars) => vars.AUTH_MODE === "relay" || vars.OAUTH_KV !== undefined,
      (issue) =>
        `is required with AUTH_MODE=${modeOf(issue.input)}: bind a KV namespace as OAUTH_KV`,
    ),
    ["OAUTH_KV"],
  ),
  v.forward(
    v.check(
      (vars) => vars.AUTH_MODE === "relay" || vars.SIGN_IN_RATE_LIMIT !== undefined,
      (issue) =>
        `is required with AUTH_MODE=${modeOf(issue.input)}: add a [[ratelimits]] binding named SIGN_IN_RATE_LIMIT`,
    ),
    ["SIGN_IN_RATE_LIMIT"],
  ),
  v.forward(
    v.check(
      (vars) => vars.AUTH_MODE === "relay" || vars.SIGN_IN_BUDGET !== undefined,
      (issue) =>
        `is required with AUTH_MODE=${modeOf(issue.input)}: bind the Durable Object class SignInBudget as SIGN_IN_BUDGET`,
    ),
    ["SIGN_IN_BUDGET"],
  ),
  v.forward(
    v.check(
      (vars) => vars.UPSTREAM_CLIENT_SECRET === undefined || vars.UPSTREAM_CLIENT_ID !== undefined,
      "needs UPSTREAM_CLIENT_ID beside it",
    ),
    ["UPSTREAM_CLIENT_SECRET"],
  ),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const vars = dataset.value;
    for (const [setting, message] of gateProblems(vars)) {
      const path = { type: "object", origin: "value", input: vars, key: setting } as const;
      addIssue({ message, path: [{ ...path, value: vars[setting as keyof typeof vars] }] });
    }
  }),
  v.transform(
    (vars): Config => ({
      originUrl: vars.ORIGIN_URL,
      mcpPath: vars.MCP_PATH,
      toolMapKv: vars.TOOL_MAP,
      calls: vars.CALLS,
      deployment: vars.CF_VERSION_METADATA?.id,
      originTimeoutMs: vars.ORIGIN_TIMEOUT_MS,
      maxBodyBytes: vars.MAX_BODY_BYTES,
      maxBatchMessages: vars.MAX_BATCH_MESSAGES,
      maxLocalAnswerBytes: vars.MAX_LOCAL_ANSWER_BYTES,
      profile: profileOf(vars.PROFILE ?? vars.NAME_PROFILE ?? "openai", {
        nameMaxLength: vars.NAME_MAX_LENGTH,
        maxTools: vars.MAX_TOOLS,
      }),
      profileLimits: { nameMaxLength: vars.NAME_MAX_LENGTH, maxTools: vars.MAX_TOOLS },
      policy: {
        rules: new ToolRules(vars.TOOL_RULES ?? { hide: [], only: [], tools: {} }),
        changes: vars.TOOL_CHANGES,
        scope: vars.TOOL_CHANGES_SCOPE,
      },
      argumentValidation: vars.ARGUMENT_VALIDATION,
      allowedHosts: vars.ALLOWED_HOSTS,
      publicOrigin: vars.PUBLIC_URL,
      auth: authOf(vars),
    }),
  ),
);

export interface Config {
  originUrl: URL;
  mcpPath: string;
  /** `TOOL_MAP`: the tool map's KV namespace. */
  toolMapKv: KVNamespace;
  /** `CALLS`: the Analytics Engine dataset of call analytics, when bound (docs/observability.md). */
  calls: AnalyticsEngineDataset | undefined;
  /**
   * The deployed version's id (`CF_VERSION_METADATA`): what a listing
   * rewritten by another isolate is trusted to have been rewritten by.
   */
  deployment: string | undefined;
  originTimeoutMs: number;
  maxBodyBytes: number;
  /** `MAX_BATCH_MESSAGES`: the most messages a batch may hold (transport/post-body.ts). */
  maxBatchMessages: number;
  /**
   * `MAX_LOCAL_ANSWER_BYTES`: the most the proxy writes itself in answer to
   * one request, its answers together (rewrite/local-answers.ts).
   */
  maxLocalAnswerBytes: number;
  /** The profile at `MCP_PATH` (`PROFILE`, or `NAME_PROFILE`), with the limits in force. */
  profile: Profile;
  /** `NAME_MAX_LENGTH` and `MAX_TOOLS`: lower limits for every profile. */
  profileLimits: ProfileLimits;
  /** `TOOL_RULES` and `TOOL_CHANGES`: the operator's say over the tools (docs/rules.md). */
  policy: ToolPolicy;
  /** What to do with arguments that fail the tool's schema (`ARGUMENT_VALIDATION`). */
  argumentValidation: ValidationMode;
  /** Hosts the proxy answers for (`ALLOWED_HOSTS`); empty: any. */
  allowedHosts: readonly AllowedHost[];
  /** The origin clients reach the proxy at (`PUBLIC_URL`), when it is not the one requests arrive for. */
  publicOrigin: string | undefined;
  /** `AUTH_MODE`, with what broker mode needs. */
  auth: AuthMode;
}

export type ConfigResult =
  | { kind: "valid"; config: Config }
  | { kind: "invalid"; setting: string; problem: string };

/** A setting's path as an operator reads it: `TOOL_RULES.tools["catering.invoice"].name`. */
function settingPath(keys: readonly unknown[]): string {
  return keys
    .map((key, index) => {
      if (typeof key === "number") return `[${key}]`;
      const text = String(key);
      if (/^[A-Za-z_$][\w$]*$/.test(text)) return index === 0 ? text : `.${text}`;
      return `[${JSON.stringify(text)}]`;
    })
    .join("");
}

export function parseConfig(env: Env): ConfigResult {
  const result = v.safeParse(ConfigSchema, env);
  if (!result.success) {
    const [issue] = result.issues;
    const keys = issue.path?.map((item) => item.key) ?? [];
    return {
      kind: "invalid",
      setting: keys.length > 0 ? settingPath(keys) : "configuration",
      problem: issue.message,
    };
  }
  const config = result.output;
  const names = PROFILE_NAMES.map((name) => profileOf(name, config.profileLimits).names);
  const problem = ruleNamesProblem(config.policy.rules, names);
  if (problem) {
    return {
      kind: "invalid",
      setting: settingPath(["TOOL_RULES", ...problem[0]]),
      problem: problem[1],
    };
  }
  return { kind: "valid", config };
}

const configs = new WeakMap<Env, ConfigResult>();

/**
 * The configuration of `env`, parsed the first time this isolate sees that
 * object: workerd hands one `env` to every request of an isolate, and its
 * values cannot change while the isolate lives (a new deploy is a new isolate).
 */
export function configOf(env: Env): ConfigResult {
  let result = configs.get(env);
  if (!result) {
    result = parseConfig(env);
    configs.set(env, result);
  }
  return result;
}

/**
 * The profile a request to `path` asks for: the default at `MCP_PATH`, another
 * at `MCP_PATH/<profile>`; `undefined` when `path` is not an MCP endpoint.
 */
export function profileAt(config: Config, path: string): Profile | undefined {
  if (path === config.mcpPath) return config.profile;
  const base = config.mcpPath.endsWith("/") ? config.mcpPath : `${config.mcpPath}/`;
  if (!path.startsWith(base)) return undefined;
  const name = path.slice(base.length);
  return (PROFILE_NAMES as readonly string[]).includes(name)
    ? profileOf(name as ProfileName, config.profileLimits)
    : undefined;
}
