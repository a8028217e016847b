/**
 * `npm run tenant -- add NAME --origin URL [--auth relay|broker] [--profile P]
 * [--workers-dev SUBDOMAIN] [--host HOST ...]`: a complete `[env.NAME]` in
 * wrangler.toml (docs/configuration.md, "A tenant"): its vars, the hosts it
 * answers for, its KV namespaces (created with wrangler when it is logged in;
 * placeholders, and the commands that create them, when not) and, in broker
 * mode, its sign-in bindings. The section is checked (`npm run check`) before
 * it is written, and wrangler reads it without a warning.
 */
import { spawnSync } from "node:child_process";
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { experimental_readRawConfig } from "wrangler";
import { ownProblem } from "../src/config";
import { checkEnvironment, report } from "./check";
import { argumentsOf, readingConfig, refuse, runCommand } from "./lib/command";
import {
  CONFIG_PATH,
  createNamespaceCommand,
  environmentNames,
  PLACEHOLDER_ID,
  readEnvironment,
} from "./lib/environments";

export interface Tenant {
  name: string;
  /** The Worker's name: the top level's, `-NAME`. */
  worker: string;
  origin: string;
  auth: "relay" | "broker";
  profile: string | undefined;
  /** The account's workers.dev subdomain, when the tenant is served there. */
  workersDev: string | undefined;
  /** Custom domains the tenant is served at. */
  hosts: string[];
  /** The rate limit's `namespace_id`: unique in the account. */
  rateLimitId: number;
}

/** The KV bindings a tenant has, with what each is for. */
export const namespacesOf = (auth: Tenant["auth"]) =>
  auth === "broker" ? (["TOOL_MAP", "OAUTH_KV"] as const) : (["TOOL_MAP"] as const);

const quote = (text: string) => JSON.stringify(text);

/** The hosts the tenant answers for: its workers.dev name and its custom domains. */
export const hostsOf = ({ worker, workersDev, hosts }: Tenant) => [
  ...(workersDev === undefined ? [] : [`${worker}.${workersDev}.workers.dev`]),
  ...hosts,
];

/** The tenant's `[env.NAME]`, as TOML; `ids` are its KV namespace ids by binding. */
export function tenantSection(tenant: Tenant, ids: Record<string, string>): string {
  const { name, auth } = tenant;
  const lines = [
    `# Tenant ${name}, in ${auth} mode (written by npm run tenant -- add; docs/configuration.md).`,
    `[env.${name}]`,
    `name = ${quote(tenant.worker)}`,
    `workers_dev = ${tenant.workersDev !== undefined}`,
  ];
  if (tenant.hosts.length > 0) {
    const routes = tenant.hosts.map((host) => `{ pattern = ${quote(host)}, custom_domain = true }`);
    lines.push(`routes = [${routes.join(", ")}]`);
  }
  lines.push(
    "",
    `[env.${name}.vars]`,
    `ORIGIN_URL = ${quote(tenant.origin)}`,
    `ALLOWED_HOSTS = ${quote(hostsOf(tenant).join(","))}`,
    `WRANGLER_ENV = ${quote(name)}`,
  );
  if (tenant.profile !== undefined) lines.push(`PROFILE = ${quote(tenant.profile)}`);
  if (auth === "broker") lines.push(`AUTH_MODE = "broker"`);
  for (const binding of namespacesOf(auth)) {
    const id = ids[binding] ?? PLACEHOLDER_ID;
    lines.push(
      "",
      ...(id === PLACEHOLDER_ID
        ? [`# A placeholder: ${createNamespaceCommand(binding, name)}, then its id here.`]
        : []),
      `[[env.${name}.kv_namespaces]]`,
      `binding = ${quote(binding)}`,
      `id = ${quote(id)}`,
    );
  }
  lines.push("", `[env.${name}.version_metadata]`, `binding = "CF_VERSION_METADATA"`);
  if (auth === "broker") {
    lines.push(
      "",
      `[[env.${name}.ratelimits]]`,
      `name = "SIGN_IN_RATE_LIMIT"`,
      `namespace_id = ${quote(String(tenant.rateLimitId))}`,
      "simple = { limit = 30, period = 60 }",
      "",
      `[[env.${name}.durable_objects.bindings]]`,
      `name = "SIGN_IN_BUDGET"`,
      `class_name = "SignInBudget"`,
    );
  }
  return `\n${lines.join("\n")}\n`;
}

/** The next rate limit namespace id: past every one the file names, from 7001. */
function nextRateLimitId(configPath: string): number {
  const { rawConfig } = readingConfig(configPath, () =>
    experimental_readRawConfig({ config: configPath }),
  );
  const ids = [rawConfig, ...Object.values(rawConfig.env ?? {})].flatMap((env) =>
    (env.ratelimits ?? []).map((limit: { namespace_id?: unknown }) => Number(limit.namespace_id)),
  );
  return Math.max(7000, ...ids.filter(Number.isInteger)) + 1;
}

/** wrangler, as the npm scripts run it; its output, or `undefined` when it failed. */
function wrangler(args: string[]): string | undefined {
  const run = spawnSync("wrangler", args, { encoding: "utf8" });
  return run.status === 0 ? `${run.stdout}${run.stderr}` : undefined;
}

const loggedIn = () => /"loggedIn":\s*true/.test(wrangler(["whoami", "--json"]) ?? "");

/** One DNS label: lower-case letters, digits and dashes, neither first nor last. */
const LABEL = "[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?";
/** A worker name wrangler and workers.dev take: one label. */
const WORKER_NAME = new RegExp(`^${LABEL}$`);
/** A custom domain: labels joined by dots; no empty label, none at either end. */
const HOST = new RegExp(`^${LABEL}(?:\\.${LABEL})+$`);

const USAGE =
  "Usage: npm run tenant -- add NAME --origin URL [--auth relay|broker] [--profile PROFILE] [--workers-dev SUBDOMAIN] [--host HOST ...]";

export function add(argv: string[]): void {
  const { values, positionals } = argumentsOf(
    {
      args: argv,
      allowPositionals: true,
      options: {
        origin: { type: "string" },
        auth: { type: "string", default: "relay" },
        profile: { type: "string" },
        "workers-dev": { type: "string" },
        host: { type: "string", multiple: true, default: [] },
        config: { type: "string", short: "c", default: CONFIG_PATH },
      },
    },
    USAGE,
  );
  const [name, ...rest] = positionals;
  const configPath = values.config;
  if (name === undefined || rest.length > 0) refuse(USAGE);
  const { rawConfig } = readingConfig(configPath, () =>
    experimental_readRawConfig({ config: configPath }),
  );
  const worker = `${rawConfig.name ?? "mcp-edge-rewriter"}-${name}`;
  const hosts = values.host.map((host) => host.trim().toLowerCase());
  const workersDev = values["workers-dev"]?.trim().toLowerCase();

  // Every mistake of the command at once: the arguments', then the section's, where one can be written.
  const mistakes: string[] = [];
  const exists = environmentNames(configPath).includes(name);
  if (exists) mistakes.push(`${configPath} has [env.${name}] already.`);
  const named = WORKER_NAME.test(worker);
  if (!named) {
    mistakes.push(
      `${worker}: a tenant's name is lower-case letters, digits and dashes, and short enough for a worker name of 63 characters.`,
    );
  }
  if (values.origin === undefined)
    mistakes.push("--origin URL: the full URL of the origin's MCP endpoint.");
  const auth = values.auth === "relay" || values.auth === "broker" ? values.auth : undefined;
  if (auth === undefined) {
    mistakes.push(
      '--auth is relay or broker; gate mode is written with --auth broker, then AUTH_MODE = "gate" (docs/sign-in.md, "Gate mode").',
    );
  }
  // Each is a host ALLOWED_HOSTS lists: one no request has would refuse every request with 403.
  if (workersDev !== undefined && !WORKER_NAME.test(workersDev)) {
    mistakes.push(
      "--workers-dev takes your account's workers.dev subdomain alone, letters, digits and dashes: acme-corp for acme-corp.workers.dev.",
    );
  }
  if (hosts.some((host) => !HOST.test(host))) {
    mistakes.push(
      "--host takes a host name, like mcp.acme.example: labels of letters, digits and dashes, joined by dots.",
    );
  }
  if (workersDev === undefined && hosts.length === 0) {
    mistakes.push(
      "Say where the tenant is served: --workers-dev SUBDOMAIN (your account's workers.dev subdomain, as the dashboard's Workers page shows it) and/or --host HOST (a custom domain). ALLOWED_HOSTS lists them.",
    );
  }
  // Checked with what the arguments give that can be written: the hosts that are hosts, relay mode
  // for an --auth that is neither.
  const tenant: Tenant = {
    name,
    worker,
    origin: values.origin ?? "",
    auth: auth ?? "relay",
    profile: values.profile,
    workersDev: workersDev !== undefined && WORKER_NAME.test(workersDev) ? workersDev : undefined,
    hosts: hosts.filter((host) => HOST.test(host)),
    rateLimitId: nextRateLimitId(configPath),
  };

  // Checked with placeholders first: nothing is created for a tenant that could not be written.
  const before = readFileSync(configPath, "utf8");
  if (!exists && named && values.origin !== undefined) {
    appendFileSync(configPath, tenantSection(tenant, {}));
    const checked = checkEnvironment(readEnvironment(name, { configPath }));
    // Its notes (a namespace to create before a deploy) are steps for a section that, refused,
    // is not written: only its problems are told.
    if (checked.problems.length > 0) mistakes.push(report({ ...checked, notes: [] }, configPath));
    if (mistakes.length > 0) writeFileSync(configPath, before);
  } else {
    // No section to check whole: what the options set is checked alone, told by option and setting.
    const options = [
      ["--origin", "ORIGIN_URL", values.origin],
      ["--profile", "PROFILE", values.profile],
    ] as const;
    for (const [option, setting, value] of options) {
      const problem = value === undefined ? undefined : ownProblem(setting, value);
      if (problem !== undefined) mistakes.push(`${option} (${setting}) ${problem}.`);
    }
  }
  if (mistakes.length > 0) refuse(`${mistakes.join("\n")}\n\nNothing written.`);

  const ids: Record<string, string> = {};
  if (loggedIn()) {
    for (const binding of namespacesOf(tenant.auth)) {
      const created = wrangler([
        ...["kv", "namespace", "create", binding, "--env", name],
        ...["--config", configPath],
      ]);
      const id = /\b([0-9a-f]{32})\b/.exec(created ?? "")?.[1];
      if (id) ids[binding] = id;
      else console.log(`Could not create ${binding}'s namespace; its id is a placeholder.`);
    }
    writeFileSync(configPath, before + tenantSection(tenant, ids));
  }
  // The Env type follows wrangler.toml (npm run typecheck says when it does not).
  if (configPath === CONFIG_PATH) wrangler(["types", "--strict-vars=false"]);

  console.log(`Added [env.${name}] to ${configPath}.\n`);
  console.log(report(checkEnvironment(readEnvironment(name, { configPath })), configPath));
  const missing = namespacesOf(tenant.auth).filter((binding) => ids[binding] === undefined);
  console.log("\nNext:");
  for (const binding of missing) {
    console.log(`  ${createNamespaceCommand(binding, name)}   # then its id in [env.${name}]`);
  }
  // A key in the query belongs in a secret, not in a file kept in git; the query itself is not shown.
  if (URL.canParse(tenant.origin) && new URL(tenant.origin).search !== "") {
    console.log(
      `  # ORIGIN_URL has a query: if it holds a key, keep it out of ${configPath}: npx wrangler secret put ORIGIN_URL --env ${name}, remove it from [env.${name}.vars], and read what the key then does (docs/configuration.md)`,
    );
  }
  console.log(`  npm run deploy -- --env ${name}`);
  for (const host of hostsOf(tenant)) console.log(`  curl https://${host}/readyz`);
}

if (import.meta.main) {
  const [command, ...argv] = process.argv.slice(2);
  await runCommand(() => {
    if (command === "add") return add(argv);
    // No command, or another: the usage, after what parseArgs says of what was given (`--help`
    // asks for the usage alone).
    argumentsOf({}, USAGE);
    refuse(USAGE);
  });
}
