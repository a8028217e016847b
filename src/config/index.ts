/**
 * The proxy's settings, read from wrangler vars and secrets. This is the only
 * module that reads `env` for settings: everything else takes a `Config`.
 *
 * A missing or invalid setting is reported by name and never by value, since
 * `ORIGIN_URL` may carry a credential in its query string.
 */

import * as v from "valibot";
import { closestName } from "../args/fix-it-text";
import { MIN_NAME_CAP, PROFILE_NAMES, type ProfileName } from "../names/profiles";
import {
  CHANGE_MODES,
  CHANGE_SCOPES,
  NO_RULES,
  ToolRules,
  ToolRulesSetting,
} from "../rules/tool-rules";
import { type Profile, profileOf } from "../schemas/profile";
import { acrossSettings } from "./across-settings";
import {
  AUTH_MODES,
  authOf,
  MIN_SIGN_IN_DAILY_WRITES,
  SIGN_IN_DAILY_WRITES,
  type SignInBudgetBinding,
  VALIDATION_MODES,
} from "./auth-modes";
import { type Config, type ConfigResult, problemOf } from "./config";
import { GATE_SETTINGS } from "./gate";
import {
  type AllowedHost,
  expectedOnly,
  hostList,
  httpUrl,
  issuerUrl,
  kvNamespace,
  MAX_BATCH_LIMIT,
  MAX_BODY_LIMIT,
  MAX_LOCAL_ANSWER_LIMIT,
  MIN_LOCAL_ANSWER_LIMIT,
  oneOf,
  passHeaders,
  path,
  picklist,
  publicOrigin,
  rate,
  secret,
  wholeNumber,
} from "./values";

export type {
  AllowLists,
  AuthMode,
  BrokerAuth,
  GateAuth,
  IdentityProvider,
  SecretSource,
  SignInAuth,
  SignInBindings,
  UserSecrets,
  ValidationMode,
} from "./auth-modes";
export { SIGN_IN_ONLY } from "./auth-modes";
export type { CallsSettings, Config, ConfigProblem, ConfigResult } from "./config";
export { isDomainName, isHeaderSafe, isPlainAddress } from "./gate";
export type { AllowedHost } from "./values";
export { emailKey, isLoopbackHost, lowerAscii } from "./values";

/**
 * `WRANGLER_ENV`: the `[env.NAME]` of wrangler.toml this deployment is (npm
 * run tenant writes it): what the commands the proxy logs name with `--env`,
 * and the index of its call analytics' data points (required with `CALLS`).
 */
const environmentName = v.optional(
  v.pipe(
    v.string(),
    v.trim(),
    v.regex(
      /^[A-Za-z0-9_-]{1,63}$/,
      "must be the name of this environment of wrangler.toml ([env.NAME]): letters, digits, - and _",
    ),
  ),
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

/**
 * The share of calls whose answer is read to tell `ok` from `tool_error`
 * when `CALLS_ANSWER_SAMPLING_RATE` is unset: reading every answer costs a
 * minimal call about 15% more CPU in event streams, and the binding 2–3%
 * whatever is read (docs/performance.md, "Call analytics"); a tenth of them
 * keeps it under 5%.
 */
export const DEFAULT_ANSWER_SAMPLING_RATE = 0.1;

const SettingsObject = v.object(
  {
    ORIGIN_URL: v.pipe(
      httpUrl(MISSING.ORIGIN_URL as string),
      v.check(
        (url) => url.hash === "",
        "must hold no #fragment: a fragment is never sent to the origin",
      ),
    ),
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
    OAUTH_KV: v.optional(kvNamespace()),
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
        (value) => typeof (value as Partial<SignInBudgetBinding> | null)?.getByName === "function",
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
    CALLS_ANSWER_SAMPLING_RATE: v.optional(rate(), DEFAULT_ANSWER_SAMPLING_RATE),
    WRANGLER_ENV: environmentName,
    CF_VERSION_METADATA: v.optional(
      v.custom<WorkerVersionMetadata>(
        (value) => typeof (value as Partial<WorkerVersionMetadata> | null)?.id === "string",
        "must be a version metadata binding ([version_metadata])",
      ),
    ),
  },
  missing,
);

export type Settings = v.InferOutput<typeof SettingsObject>;

/** Every setting and binding the Worker reads, by name: what docs/configuration.md documents. */
export const SETTINGS = SettingsObject.entries;

/**
 * The names `env` holds that no setting or binding is read by: a misspelled
 * setting (`ARGUMENT_VALIDATON`) would leave its default in force without a
 * word. Left to others: the runtime's own names (`__…`); wrangler's own
 * variables (`CLOUDFLARE_…`, `WRANGLER_…`), which `wrangler dev` hands the
 * Worker from a `.env` that holds them for wrangler; and `OAUTH_PROVIDER`,
 * the helpers workers-oauth-provider puts in `env` itself in broker and gate mode.
 */
function unreadNames(env: unknown): string[] {
  if (typeof env !== "object" || env === null) return [];
  return Object.entries(env)
    .filter(([name, value]) => value !== undefined && !Object.hasOwn(SETTINGS, name))
    .map(([name]) => name)
    .filter((name) => !/^(__|CLOUDFLARE_|WRANGLER_)|^OAUTH_PROVIDER$/.test(name));
}

const UNREAD = "is not a setting or binding the proxy reads (docs/configuration.md names each)";

/**
 * Why `name` is refused: not read, and, where a setting is two edits or fewer from it (case and
 * `-` for `_` aside: `argument_validation`, `MAX-TOOLS`), that setting, the one it was likely
 * meant to be. A name, never a value.
 */
function unreadProblem(name: string): string {
  const fold = (setting: string) => setting.toUpperCase().replaceAll("-", "_");
  const meant = closestName(name, Object.keys(SETTINGS), { fold, within: 2 });
  return meant === undefined ? UNREAD : `${UNREAD}; did you mean ${meant}?`;
}

function configFrom(vars: Settings): Config {
  return {
    originUrl: vars.ORIGIN_URL,
    mcpPath: vars.MCP_PATH,
    toolMapKv: vars.TOOL_MAP,
    // acrossSettings requires WRANGLER_ENV beside CALLS.
    calls:
      vars.CALLS && vars.WRANGLER_ENV !== undefined
        ? {
            dataset: vars.CALLS,
            answerSamplingRate: vars.CALLS_ANSWER_SAMPLING_RATE,
            environment: vars.WRANGLER_ENV,
          }
        : undefined,
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
      rules: vars.TOOL_RULES ? new ToolRules(vars.TOOL_RULES) : NO_RULES,
      changes: vars.TOOL_CHANGES,
      scope: vars.TOOL_CHANGES_SCOPE,
      environment: vars.WRANGLER_ENV,
    },
    argumentValidation: vars.ARGUMENT_VALIDATION,
    allowedHosts: vars.ALLOWED_HOSTS,
    publicOrigin: vars.PUBLIC_URL,
    auth: authOf(vars),
  };
}

/**
 * The configuration of `env`, or every problem with it at once: each setting
 * is read on its own, and a check across settings runs wherever those it
 * reads are fine. What the Worker runs on, and what `npm run check` reports.
 */
export function parseConfig(env: Env): ConfigResult {
  // Each setting stops at its first problem; every setting is read.
  const result = v.safeParse(SettingsObject, env, { abortPipeEarly: true, message: expectedOnly });
  const issues = result.issues ?? [];
  const problems = [
    ...issues.map((issue) => problemOf(issue.path?.map((item) => item.key) ?? [], issue.message)),
    ...acrossSettings(env, result.output, issues).map(([keys, problem]) =>
      problemOf(keys, problem),
    ),
    ...unreadNames(env).map((name) => ({
      ...problemOf([name], unreadProblem(name)),
      unread: true as const,
    })),
  ];
  if (result.success && problems.length === 0) {
    return { kind: "valid", config: configFrom(result.output) };
  }
  return { kind: "invalid", problems };
}

/**
 * `ORIGIN_URL` alone, as parseConfig reads it: what names the origin's tool
 * map in KV (npm run holds), whatever the other settings hold.
 */
export function originUrlOf(value: unknown): { url: URL } | { problem: string } {
  const result = v.safeParse(SETTINGS.ORIGIN_URL, value, {
    abortPipeEarly: true,
    message: expectedOnly,
  });
  return result.success ? { url: result.output } : { problem: result.issues[0].message };
}

/**
 * `ALLOWED_HOSTS` alone, as parseConfig reads it (empty: any host); `undefined` where it has a
 * problem of its own. What npm run check holds the hosts a deploy serves to, whatever the other
 * settings hold.
 */
export function allowedHostsOf(value: unknown): readonly AllowedHost[] | undefined {
  const result = v.safeParse(SETTINGS.ALLOWED_HOSTS, value, { abortPipeEarly: true });
  return result.success ? result.output : undefined;
}

/**
 * The problem `setting` has with `value` on its own, as parseConfig tells it;
 * `undefined` where it takes the value, or reads no setting of that name.
 * What npm run check leaves to the Worker of a declared secret, whose value
 * it never sees: that problem alone, and none it has with the other settings.
 */
export function ownProblem(setting: string, value: unknown): string | undefined {
  if (!Object.hasOwn(SETTINGS, setting)) return undefined;
  const schema = SETTINGS[setting as keyof typeof SETTINGS] as v.GenericSchema;
  const result = v.safeParse(schema, value, { abortPipeEarly: true, message: expectedOnly });
  return result.success ? undefined : result.issues[0].message;
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
