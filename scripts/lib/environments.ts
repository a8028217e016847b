/**
 * An environment of wrangler.toml as the Worker would get it, read offline by
 * wrangler's own reading of the file (the one `wrangler deploy` makes): its
 * vars as they are, a stand-in for each binding with the methods the real one
 * has, and what wrangler warns about. `npm run check` runs the Worker's own
 * parseConfig (src/config/) on it, so a setting is checked here by being in
 * config/'s schema, and nowhere else.
 */
import { stripVTControlCharacters } from "node:util";
import {
  unstable_convertConfigBindingsToStartWorkerBindings as bindingsOf,
  experimental_readRawConfig,
  unstable_getVarsForDev,
  unstable_readConfig,
} from "wrangler";
import { shellWord } from "../../src/toolmap/definition-pins";
import { readingConfig } from "./command";
import { type SharedBinding, sharedBindings, workerOf } from "./shared-bindings";

export { PLACEHOLDER_ID } from "./shared-bindings";

export const CONFIG_PATH = "wrangler.toml";

/** What a binding of each kind answers to, as far as config/ looks: the real one's methods. */
const STAND_INS: Record<string, () => unknown> = {
  kv_namespace: () => ({ get() {}, getWithMetadata() {}, put() {}, list() {}, delete() {} }),
  ratelimit: () => ({ limit() {} }),
  durable_object_namespace: () => ({
    get() {},
    getByName() {},
    idFromName() {},
    idFromString() {},
    newUniqueId() {},
  }),
  version_metadata: () => ({ id: "00000000-0000-0000-0000-000000000000", tag: "", timestamp: "" }),
  analytics_engine: () => ({ writeDataPoint() {} }),
  service: () => ({ fetch() {} }),
  r2_bucket: () => ({ get() {}, put() {}, head() {}, list() {}, delete() {} }),
  d1: () => ({ prepare() {}, batch() {}, exec() {} }),
  queue: () => ({ send() {}, sendBatch() {} }),
  // ORIGIN_SECRET's other kind (docs/sign-in.md): a Secrets Store secret has `get` alone.
  secrets_store_secret: () => ({ get() {} }),
};

export interface Environment {
  /** `undefined`: the top level. */
  name: string | undefined;
  /** How a person reads which one: `[env.acme]`, or the top level. */
  label: string;
  /** The Worker's name in it. */
  worker: string | undefined;
  /** What wrangler reads in it and warns about, one item each; or why it could not read it. */
  warnings: string[];
  error: string | undefined;
  /** The `env` the Worker would get: vars as given, a stand-in for each binding. */
  env: Record<string, unknown>;
  /** The secrets it declares (`secrets.required`): set with `wrangler secret put`, not here. */
  secrets: string[];
  /** Its KV namespaces, by binding. */
  kvNamespaces: Array<{ binding: string; id: string | undefined }>;
  /** The other sections whose Worker has its Worker's name: a deploy of one replaces the other's. */
  sameWorker: string[];
  /** What it binds that another section binds too: a KV namespace, a rate limit, a Durable Object's class. */
  shared: SharedBinding[];
  /** The hosts its routes serve it at, in lower case; a route whose host has a wildcard is left out. */
  routeHosts: string[];
  /** Whether wrangler serves it at workers.dev: `workers_dev`, or, unset, when it has no routes. */
  workersDev: boolean;
  /** What `.dev.vars` (or `.env`) sets for `wrangler dev`, by name; read for the top level only. */
  devVars: string[];
  /** What it sets that `wrangler dev` leaves out: with `secrets` declared, all but those and the vars. */
  devVarsLeftOut: string[];
}

export const labelOf = (name: string | undefined) =>
  name === undefined ? "the top level (local development)" : `[env.${name}]`;

/** The environments wrangler.toml defines, the top level first. */
export function environmentNames(configPath = CONFIG_PATH): Array<string | undefined> {
  const { rawConfig } = readingConfig(configPath, () =>
    experimental_readRawConfig({ config: configPath }),
  );
  return [undefined, ...Object.keys(rawConfig.env ?? {})];
}

/**
 * The items of wrangler's warnings about one environment: its message is a
 * heading per environment, then one `- ` item per thing, continued indented.
 */
function warningItems(text: string): string[] {
  const items: string[] = [];
  for (const line of stripVTControlCharacters(text).split("\n")) {
    const item = /^ {6}- (.*)$/.exec(line);
    if (item?.[1] !== undefined) items.push(item[1]);
    else if (/^ {8}\S/.test(line) && items.length > 0) items.push(`${items.pop()} ${line.trim()}`);
  }
  if (items.length > 0) return items;
  // Another shape: the text itself, without wrangler's banner.
  const plain = stripVTControlCharacters(text)
    .replace(/^▲ \[WARNING\] /, "")
    .trim();
  return plain === "" ? [] : [plain];
}

/** wrangler's warning of the top level's vars a section leaves out: its head, then `- NAME` each. */
const VARS_LEFT_OUT =
  /^(The following vars exist at the top level, but not on "[^"]*"\. .*:)((?: - \S+)+)$/;

/**
 * `warning` without the vars it says a section leaves out that the section declares as secrets
 * (`secrets.required`): wrangler warns of each top-level var a section has not (vars are not
 * inherited), but a declared secret is that setting there, as a tenant's ORIGIN_URL with a key
 * is beside the top level's, which `npm run dev` uses (docs/configuration.md). None left: no warning.
 */
function withoutDeclaredSecrets(warning: string, secrets: readonly string[]): string[] {
  const [, head, list] = VARS_LEFT_OUT.exec(warning) ?? [];
  if (head === undefined || list === undefined) return [warning];
  const left = list.split(" - ").filter((name) => name !== "" && !secrets.includes(name));
  return left.length === 0 ? [] : [`${head}${left.map((name) => ` - ${name}`).join("")}`];
}

/** What wrangler prints while `read` runs, as warnings (its logger writes them with console.warn). */
function catchingWarnings<T>(read: () => T): { value: T; warnings: string[] } {
  const warnings: string[] = [];
  const warn = console.warn;
  console.warn = (...args: unknown[]) => warnings.push(...warningItems(args.join(" ")));
  try {
    return { value: read(), warnings };
  } finally {
    console.warn = warn;
  }
}

/**
 * Environment `name` of `configPath` as the Worker would get it, with
 * `vars` (`--var NAME:VALUE`) set on top, as wrangler sets them. The top
 * level, which only `wrangler dev` runs, gets what `.dev.vars` (or `.env`)
 * beside the file sets, as wrangler dev reads it: the local values of its
 * secrets, and of any var they override (where it declares its secrets,
 * only of those). A tenant's secrets are at Cloudflare, and never read here.
 */
export function readEnvironment(
  name: string | undefined,
  {
    configPath = CONFIG_PATH,
    vars = {},
    served = {},
  }: {
    configPath?: string;
    vars?: Record<string, string>;
    /** `wrangler deploy --routes` (in place of the file's) and `--domains` (beside them). */
    served?: { routes?: string[]; domains?: string[] };
  } = {},
): Environment {
  const environment: Environment = {
    name,
    label: labelOf(name),
    worker: undefined,
    warnings: [],
    error: undefined,
    env: {},
    secrets: [],
    kvNamespaces: [],
    sameWorker: [],
    shared: [],
    routeHosts: [],
    workersDev: false,
    devVars: [],
    devVarsLeftOut: [],
  };
  let config: ReturnType<typeof unstable_readConfig>;
  try {
    const read = catchingWarnings(() =>
      unstable_readConfig({ config: configPath, env: name }, { hideWarnings: false }),
    );
    config = read.value;
    environment.warnings = read.warnings;
  } catch (error) {
    environment.error = stripVTControlCharacters(
      error instanceof Error ? error.message : String(error),
    );
    return environment;
  }
  environment.worker = config.name;
  environment.secrets = config.secrets?.required ?? [];
  environment.warnings = environment.warnings.flatMap((warning) =>
    withoutDeclaredSecrets(warning, environment.secrets),
  );
  if (name !== undefined) {
    // The other sections, as the file writes them: whose Worker is this one, what they bind too.
    const { rawConfig } = experimental_readRawConfig({ config: configPath });
    environment.sameWorker = Object.keys(rawConfig.env ?? {}).filter(
      (other) => other !== name && workerOf(rawConfig, other) === config.name,
    );
    environment.shared = sharedBindings(rawConfig, name);
  }
  // As wrangler deploy reads them (resolveRoutes): --routes in place of the file's, --domains added.
  const routes = [
    ...(served.routes ?? config.routes ?? (config.route === undefined ? [] : [config.route])),
    ...(served.domains ?? []),
  ];
  environment.routeHosts = routes.flatMap((route) => {
    const pattern = typeof route === "string" ? route : route.pattern;
    const host =
      pattern
        .replace(/^[a-z]+:\/\//i, "")
        .split("/")[0]
        ?.toLowerCase() ?? "";
    return host === "" || host.includes("*") ? [] : [host];
  });
  // As wrangler deploy decides it (getSubdomainValues).
  environment.workersDev = config.workers_dev ?? routes.length === 0;
  // What wrangler's types leave opaque: every binding has its kind, vars their value.
  const bindings = (bindingsOf(config) ?? {}) as Record<
    string,
    { type: string; value?: unknown; id?: string }
  >;
  for (const [binding, value] of Object.entries(bindings)) {
    if (value.type === "plain_text" || value.type === "json" || value.type === "secret_text") {
      environment.env[binding] = value.value;
    } else {
      environment.env[binding] = STAND_INS[value.type]?.() ?? {};
    }
    if (value.type === "kv_namespace") {
      environment.kvNamespaces.push({ binding, id: value.id });
    }
  }
  if (name === undefined) {
    // As wrangler dev reads them: given the vars and the declared secrets, it keeps of the file
    // (`secret_text`) only those and the vars they override, where any secret is declared.
    const local = unstable_getVarsForDev(
      configPath,
      undefined,
      config.vars,
      name,
      true,
      config.secrets,
    );
    for (const [setting, binding] of Object.entries(local)) {
      if (binding.type !== "secret_text") continue;
      environment.env[setting] = binding.value;
      environment.devVars.push(setting);
    }
    const written = unstable_getVarsForDev(configPath, undefined, {}, name, true);
    environment.devVarsLeftOut = Object.keys(written).filter(
      (setting) => !environment.devVars.includes(setting),
    );
  }
  Object.assign(environment.env, vars);
  return environment;
}

/**
 * The command that creates a tenant's KV namespace for `binding`, to paste: the environment's
 * name as wrangler.toml wrote it, which may hold `$(…)`, as one shell word.
 */
export const createNamespaceCommand = (binding: string, name: string | undefined) =>
  `npx wrangler kv namespace create ${binding}${name === undefined ? "" : ` --env ${shellWord(name)}`}`;
