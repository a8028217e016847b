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
import { unpassable } from "./protocol/header-names";
import {
  CHANGE_MODES,
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

const kvNamespace = (missing: string) =>
  v.custom<KVNamespace>(
    (value) =>
      typeof value === "object" &&
      value !== null &&
      typeof (value as KVNamespace).get === "function",
    missing,
  );

const VALIDATION_MODES = ["off", "warn", "enforce"] as const;
export type ValidationMode = (typeof VALIDATION_MODES)[number];

const AUTH_MODES = ["relay", "broker"] as const;

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

/** How clients sign in to an origin that needs it (docs/sign-in.md). */
export type AuthMode =
  | { mode: "relay" }
  | {
      mode: "broker";
      /** `OAUTH_KV`: grants, the proxy's tokens (as hashes), sign-ins, the proxy's upstream client. */
      oauthKv: KVNamespace;
      /** `SIGN_IN_RATE_LIMIT`: sign-in requests per client address (auth/sign-in-limit.ts). */
      signInRateLimit: RateLimit;
      /** `SIGN_IN_BUDGET`: what counts the deployment's sign-in writes per UTC day. */
      signInBudget: SignInBudgetBinding;
      /** `SIGN_IN_DAILY_WRITES`: how many sign-in writes a UTC day allows, before anyone signed in. */
      signInDailyWrites: number;
      /**
       * `UPSTREAM_ISSUER`: the only authorization server the proxy signs in
       * at, whatever the origin's metadata names; `undefined`: the one it names.
       */
      upstreamIssuer: URL | undefined;
      /** The proxy's own client at the origin's authorization server, when the operator registered one. */
      upstreamClient: { id: string; secret: string | undefined } | undefined;
      /** `PASS_HEADERS`: the client's headers the origin gets besides MCP's and the content's, lower case. */
      passHeaders: ReadonlySet<string>;
    };

/** What broker mode has that relay mode does not. */
export type BrokerAuth = Extract<AuthMode, { mode: "broker" }>;

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

/** `PASS_HEADERS`'s bounds: names, and characters a name. */
const MAX_PASS_HEADERS = 32;
const MAX_HEADER_NAME = 64;
/** RFC 9110 §5.1 `token`, in lower case: what a header name may be made of. */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9a-z]+$/;

/**
 * The headers broker mode lets through besides its own (protocol/header-names.ts
 * `brokered`): names, comma-separated, in any case. A problem is told by the
 * entry's place in the list, never by what it says.
 */
const passHeaders = v.optional(
  v.pipe(
    v.string("must be header names separated by commas"),
    v.maxLength(
      MAX_PASS_HEADERS * (MAX_HEADER_NAME + 2),
      `must list at most ${MAX_PASS_HEADERS} header names of at most ${MAX_HEADER_NAME} characters`,
    ),
    v.transform((value) =>
      value
        .split(",")
        .map((name) => name.trim().toLowerCase())
        .filter(Boolean),
    ),
    v.maxLength(MAX_PASS_HEADERS, `must list at most ${MAX_PASS_HEADERS} header names`),
    v.rawCheck(({ dataset, addIssue }) => {
      if (!dataset.typed) return;
      for (const [index, name] of dataset.value.entries()) {
        const problem =
          name.length > MAX_HEADER_NAME
            ? `is longer than ${MAX_HEADER_NAME} characters`
            : !HEADER_NAME.test(name)
              ? "is not a header name (letters, digits and !#$%&'*+-.^_`|~)"
              : unpassable(name);
        if (problem !== undefined) {
          addIssue({ message: `has an entry (number ${index + 1}) that ${problem}` });
          return;
        }
      }
    }),
    v.transform((names): ReadonlySet<string> => new Set(names)),
  ),
  "",
);

/** What an absent required setting is told, by name (wrangler leaves an unset var out of `env`). */
const MISSING: Record<string, string> = {
  ORIGIN_URL: "is missing; set it to the full URL of the origin's MCP endpoint",
  TOOL_MAP: "is missing: bind a KV namespace as TOOL_MAP",
};

const missing = (issue: v.BaseIssue<unknown>) => {
  const key = issue.path?.[0]?.key;
  return typeof key === "string" ? (MISSING[key] ?? "is missing") : "must be an object";
};

const ConfigSchema = v.pipe(
  v.object(
    {
      ORIGIN_URL: httpUrl(MISSING.ORIGIN_URL as string),
      MCP_PATH: path,
      ORIGIN_TIMEOUT_MS: v.optional(wholeNumber("milliseconds", 1), 30_000),
      MAX_BODY_BYTES: v.optional(wholeNumber("bytes", 1, MAX_BODY_LIMIT), 4 * 1024 * 1024),
      PROFILE: v.optional(picklist(PROFILE_NAMES)),
      // The earlier name of PROFILE, from when profiles governed names only.
      NAME_PROFILE: v.optional(picklist(PROFILE_NAMES)),
      NAME_MAX_LENGTH: v.optional(wholeNumber("characters", MIN_NAME_CAP)),
      // Search mode lists two tools: a lower ceiling could not be kept.
      MAX_TOOLS: v.optional(wholeNumber("tools", 2)),
      TOOL_RULES: ToolRulesSetting,
      TOOL_CHANGES: oneOf(CHANGE_MODES, "log"),
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
      (vars) => vars.AUTH_MODE !== "broker" || vars.OAUTH_KV !== undefined,
      "is required with AUTH_MODE=broker: bind a KV namespace as OAUTH_KV",
    ),
    ["OAUTH_KV"],
  ),
  v.forward(
    v.check(
      (vars) => vars.AUTH_MODE !== "broker" || vars.SIGN_IN_RATE_LIMIT !== undefined,
      "is required with AUTH_MODE=broker: add a [[ratelimits]] binding named SIGN_IN_RATE_LIMIT",
    ),
    ["SIGN_IN_RATE_LIMIT"],
  ),
  v.forward(
    v.check(
      (vars) => vars.AUTH_MODE !== "broker" || vars.SIGN_IN_BUDGET !== undefined,
      "is required with AUTH_MODE=broker: bind the Durable Object class SignInBudget as SIGN_IN_BUDGET",
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
  v.transform(
    (vars): Config => ({
      originUrl: vars.ORIGIN_URL,
      mcpPath: vars.MCP_PATH,
      toolMapKv: vars.TOOL_MAP,
      calls: vars.CALLS,
      deployment: vars.CF_VERSION_METADATA?.id,
      originTimeoutMs: vars.ORIGIN_TIMEOUT_MS,
      maxBodyBytes: vars.MAX_BODY_BYTES,
      profile: profileOf(vars.PROFILE ?? vars.NAME_PROFILE ?? "openai", {
        nameMaxLength: vars.NAME_MAX_LENGTH,
        maxTools: vars.MAX_TOOLS,
      }),
      profileLimits: { nameMaxLength: vars.NAME_MAX_LENGTH, maxTools: vars.MAX_TOOLS },
      policy: {
        rules: new ToolRules(vars.TOOL_RULES ?? { hide: [], only: [], tools: {} }),
        changes: vars.TOOL_CHANGES,
      },
      argumentValidation: vars.ARGUMENT_VALIDATION,
      allowedHosts: vars.ALLOWED_HOSTS,
      publicOrigin: vars.PUBLIC_URL,
      auth:
        vars.AUTH_MODE === "broker" &&
        vars.OAUTH_KV &&
        vars.SIGN_IN_RATE_LIMIT &&
        vars.SIGN_IN_BUDGET
          ? {
              mode: "broker",
              oauthKv: vars.OAUTH_KV,
              signInRateLimit: vars.SIGN_IN_RATE_LIMIT,
              signInBudget: vars.SIGN_IN_BUDGET,
              signInDailyWrites: vars.SIGN_IN_DAILY_WRITES,
              upstreamIssuer: vars.UPSTREAM_ISSUER,
              upstreamClient: vars.UPSTREAM_CLIENT_ID
                ? { id: vars.UPSTREAM_CLIENT_ID, secret: vars.UPSTREAM_CLIENT_SECRET }
                : undefined,
              passHeaders: vars.PASS_HEADERS,
            }
          : { mode: "relay" },
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
