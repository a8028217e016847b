/**
 * `npm run check [-- --env NAME] [--var NAME:VALUE ...] [--secrets-file FILE] [--config PATH]`:
 * every setting and binding of one environment of wrangler.toml, or of all
 * of them, checked offline with the Worker's own parseConfig, and every
 * problem told at once with its path (docs/configuration.md, "Checking
 * settings"); with the secrets a `--secrets-file` uploads, theirs too.
 * Exits 1 when any environment has a problem.
 *
 * `npm run deploy` runs it first (`forDeploy`: a KV id that is still a
 * placeholder is then a problem), `npm run dev` on the top level.
 */
import {
  type AllowedHost,
  allowedHostsOf,
  originUrlOf,
  ownProblem,
  parseConfig,
  SETTINGS,
} from "../src/config";
import { shellWord } from "../src/toolmap/definition-pins";
import { argumentsOf, refuse, runCommand } from "./lib/command";
import {
  CONFIG_PATH,
  type Environment,
  environmentNames,
  labelOf,
  PLACEHOLDER_ID,
  readEnvironment,
} from "./lib/environments";
import { readSecretsFile, type SecretsFile } from "./lib/secrets-file";
import type { SharedBinding } from "./lib/shared-bindings";
import { printable } from "./lib/terminal";

export interface Finding {
  /** The setting's path (`TOOL_RULES.tools["a.b"].name`), a binding, or `wrangler.toml`. */
  setting: string;
  text: string;
}

export interface CheckResult {
  environment: Environment;
  problems: Finding[];
  /** What is fine for now and needs doing before a deploy, or what cannot be checked offline. */
  notes: Finding[];
}

/**
 * A stand-in for a secret, which is set with `wrangler secret put` and never
 * read here: one its own schema takes, so that what holds whatever it holds
 * (a setting only another `AUTH_MODE` reads) is told here. `ORIGIN_USER_SECRETS`
 * is JSON text (a table of users' keys).
 */
const standIn = (secret: string) => (secret === "ORIGIN_USER_SECRETS" ? "{}" : "secret");

/** The settings the docs have operators set with `wrangler secret put` (docs/configuration.md, sign-in.md). */
const SECRET_SETTINGS = new Set([
  "ORIGIN_URL",
  "UPSTREAM_CLIENT_ID",
  "UPSTREAM_CLIENT_SECRET",
  "IDP_CLIENT_ID",
  "IDP_CLIENT_SECRET",
  "ORIGIN_SECRET",
  "ORIGIN_USER_SECRETS",
]);

/**
 * The command that creates a tenant's KV namespace for `binding`, to paste: the environment's
 * name as wrangler.toml wrote it, which may hold `$(…)`, as one shell word.
 */
export const createNamespaceCommand = (binding: string, name: string | undefined) =>
  `npx wrangler kv namespace create ${binding}${name === undefined ? "" : ` --env ${shellWord(name)}`}`;

export function checkEnvironment(
  environment: Environment,
  {
    forDeploy = false,
    dryRun = false,
    local = false,
    secrets,
  }: {
    forDeploy?: boolean;
    dryRun?: boolean;
    /** As `wrangler dev --env NAME` runs it, on this machine: no route or workers.dev serves it. */
    local?: boolean;
    /** What `wrangler deploy --secrets-file` uploads with it. */
    secrets?: SecretsFile;
  } = {},
): CheckResult {
  const { name } = environment;
  const result: CheckResult = { environment, problems: [], notes: [] };
  const problem = (setting: string, text: string) => result.problems.push({ setting, text });
  const note = (setting: string, text: string) => result.notes.push({ setting, text });
  if (environment.error !== undefined) {
    problem("wrangler.toml", environment.error);
    return result;
  }
  if (forDeploy && name === undefined) {
    problem(
      "wrangler.toml",
      "the top level is the local development setup and is never deployed: deploy a tenant with --env NAME (npm run tenant -- add NAME --origin URL writes one)",
    );
  }
  for (const warning of environment.warnings)
    problem("wrangler.toml", `wrangler warns: ${warning}`);
  // A deploy replaces the Worker of that name: the other tenant's host would run these settings,
  // with the secrets set for it (its ORIGIN_SECRET sent to this ORIGIN_URL, say).
  for (const other of environment.sameWorker) {
    problem(
      "name",
      `${environment.worker} is also the Worker of [env.${other}]: a deploy of either replaces the other's, whose secrets it keeps and sends where its own settings say; give each section a name of its own`,
    );
  }

  const env = { ...environment.env };
  const uploaded = secrets ? uploadedSecrets(environment, secrets, env, result) : new Set();
  const origin =
    environment.secrets.includes("ORIGIN_URL") && !uploaded.has("ORIGIN_URL")
      ? { secret: true as const }
      : { url: env.ORIGIN_URL };
  for (const shared of environment.shared) {
    const told = sharedFinding(shared, name as string, origin);
    if (told?.kind === "problem") problem(shared.path, told.text);
    else if (told?.kind === "note") note(shared.path, told.text);
  }

  // A tenant's declared secrets are set at Cloudflare; the top level's are what .dev.vars sets,
  // read with it: wrangler dev starts the Worker without one it does not set (and warns).
  const unset = environment.secrets.filter((secret) => !(secret in env));
  for (const secret of name === undefined ? [] : unset) env[secret] = standIn(secret);
  const config = parseConfig(env as unknown as Env);
  if (config.kind === "invalid") {
    for (const { setting, path, problem: text } of config.problems) {
      // Of a declared secret, only what its own value decides is left to the Worker: one no setting
      // reads, or one only another AUTH_MODE reads, is refused whatever it holds, and told here.
      const declared =
        environment.secrets.includes(setting) &&
        !uploaded.has(setting) &&
        env[setting] === standIn(setting);
      if (uploaded.has(setting)) {
        // Told by its name and place, as every problem of a secret is: never with what it holds.
        problem(path, `${text} (as ${secrets?.path} sets it)`);
      } else if (declared && path === setting && text === ownProblem(setting, standIn(setting))) {
        note(setting, "is a secret: checked when the Worker starts, never here");
      } else if (
        SECRET_SETTINGS.has(setting) &&
        !(setting in env) &&
        !environment.secrets.includes(setting)
      ) {
        // A secret put at Cloudflare is not in wrangler.toml: only a declared one is known to be set.
        const section = name === undefined ? "the top level" : `[env.${name}]`;
        problem(
          path,
          `${text}; if it is a secret (wrangler secret put), declare it in ${section}: secrets = { required = ["${setting}"] }`,
        );
      } else problem(path, text);
    }
  }

  // Read alone: a mistake in another setting hides no host left out.
  const allowedHosts = allowedHostsOf(env.ALLOWED_HOSTS);
  if (name !== undefined && !local && allowedHosts !== undefined) {
    for (const text of unservedHosts(environment, allowedHosts)) {
      problem("ALLOWED_HOSTS", text);
    }
  }
  if (name === undefined) {
    for (const secret of unset.filter((secret) => Object.hasOwn(SETTINGS, secret))) {
      problem(
        secret,
        "is a declared secret that .dev.vars does not set: wrangler dev starts the Worker without it",
      );
    }
  }
  if (environment.devVars.length > 0) {
    note(
      ".dev.vars",
      `sets ${[...environment.devVars].sort().join(", ")} for local development (wrangler dev reads it): checked with them`,
    );
  }
  // The setting it was meant to be keeps its default under wrangler dev, without a word. Another
  // name left out (wrangler's own CLOUDFLARE_…, which a .env holds for wrangler) reaches no one.
  for (const setting of [...environment.devVarsLeftOut].sort()) {
    if (!Object.hasOwn(SETTINGS, setting)) continue;
    problem(
      setting,
      "is set in .dev.vars, which wrangler dev leaves out: with secrets declared, it passes on from there only those and the vars they override; declare it (secrets = { required = [...] }) or set it in [vars]",
    );
  }
  if (name !== undefined) {
    const wranglerEnv = environment.env.WRANGLER_ENV;
    if (wranglerEnv !== name) {
      problem(
        "WRANGLER_ENV",
        `${wranglerEnv === undefined ? "is missing" : "names another environment"}: set it to "${name}" in [env.${name}.vars], so that the commands the proxy logs (npm run holds -- accept …) name this one`,
      );
    }
  }
  for (const { binding, id } of environment.kvNamespaces) {
    const create = `create it with \`${createNamespaceCommand(binding, name)}\` and put the id it prints in wrangler.toml`;
    if (id === PLACEHOLDER_ID) {
      if (forDeploy && !dryRun)
        problem(binding, `has a placeholder for its namespace id: ${create}`);
      else note(binding, `has a placeholder for its namespace id; before a deploy, ${create}`);
    } else if (forDeploy && !dryRun && name !== undefined && !/^[0-9a-f]{32}$/.test(id ?? "")) {
      problem(binding, `has no namespace id of your account: ${create}`);
    }
  }
  return result;
}

/**
 * The secrets `file` uploads with a deploy of `environment`, set in `env` (what the Worker gets)
 * where each is a secret the proxy reads, so that parseConfig checks its value with the rest: a
 * name that is none, is set in wrangler.toml too, or is not declared is told, by name alone.
 */
function uploadedSecrets(
  environment: Environment,
  file: SecretsFile,
  env: Record<string, unknown>,
  { problems, notes }: Pick<CheckResult, "problems" | "notes">,
): Set<string> {
  const uploaded = new Set<string>();
  if (file.refused !== undefined) {
    problems.push({ setting: file.path, text: file.refused });
    return uploaded;
  }
  const sets = `is set by ${file.path}`;
  const { name: section } = environment;
  for (const name of Object.keys(file.values).sort()) {
    if (!SECRET_SETTINGS.has(name)) {
      const vars = section === undefined ? "[vars]" : `[env.${section}.vars]`;
      problems.push({
        setting: name,
        text: Object.hasOwn(SETTINGS, name)
          ? `${sets}, and is a setting, not a secret: set it in ${vars}, where npm run check reads it (a secret stays at Cloudflare, unseen here, after every deploy)`
          : `${sets}, and is not a secret the proxy reads (${[...SECRET_SETTINGS].join(", ")}): wrangler deploy would upload it to the Worker all the same; leave it out of the file`,
      });
      continue;
    }
    // wrangler uploads the file's in place of the var, and the secret stays: Cloudflare refuses a
    // var and a secret of one name (10053), so a later deploy of the var fails.
    if (name in environment.env) {
      problems.push({
        setting: name,
        text: `${sets}, and by wrangler.toml or --var too: in this deploy the file's value replaces that, and then stays at Cloudflare as a secret, which a later deploy's var of the name cannot replace; set it in one place`,
      });
    }
    if (!environment.secrets.includes(name)) {
      problems.push({
        setting: name,
        text: `${sets}, and not declared: declare it in ${labelOf(section)}: secrets = { required = ["${name}"] }, so that npm run check and npm run deploy know it is set at Cloudflare, where it stays after this deploy`,
      });
    }
    env[name] = file.values[name];
    uploaded.add(name);
  }
  if (uploaded.size > 0) {
    notes.push({
      setting: file.path,
      text: `sets ${[...uploaded].join(", ")} for this deploy: checked with them`,
    });
  }
  for (const name of file.fromEnvironment.filter((name) => uploaded.has(name))) {
    notes.push({
      setting: name,
      text: "is set in the environment too, and wrangler deploy uploads that value, not the file's: checked with it",
    });
  }
  for (const name of file.expanded.filter((name) => uploaded.has(name))) {
    notes.push({
      setting: name,
      text: "holds a $ in the file that wrangler deploy reads as a variable's name ($NAME) and replaces with that variable of the environment (or nothing): checked as the file writes it; write \\$ for a $ of the secret's own, or write the file as JSON",
    });
  }
  return uploaded;
}

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
function sharedFinding(
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

/**
 * The hosts a deploy serves a tenant at that its `ALLOWED_HOSTS` leaves out, each told: the
 * Worker refuses every request there with 403, and only the file knows where it is served. A
 * host is allowed by an entry without a port, or on the port a deployed Worker is reached on.
 */
function unservedHosts(environment: Environment, allowed: readonly AllowedHost[]): string[] {
  if (allowed.length === 0) return [];
  const fix = "every request there would be refused with 403; add it";
  const allows = (host: (hostname: string) => boolean) =>
    allowed.some(({ hostname, port }) => host(hostname) && [undefined, "443", "80"].includes(port));
  const told = environment.routeHosts
    .filter((route) => !allows((hostname) => hostname === route))
    .map(
      (route) => `leaves out ${route}, where a route of this environment serves the Worker: ${fix}`,
    );
  const workersDev = `${environment.worker}.`;
  if (
    environment.workersDev &&
    !allows((hostname) => hostname.startsWith(workersDev) && hostname.endsWith(".workers.dev"))
  ) {
    told.push(
      `leaves out ${workersDev}<your subdomain>.workers.dev, where wrangler serves the Worker (workers_dev is true, or unset without routes): ${fix}, or set workers_dev = false`,
    );
  }
  return [...new Set(told)];
}

/**
 * What wrangler.toml wrote (an environment's name, a rule's tool, a setting's value) as one
 * line of the report: a line break in it would print a line of its own (`  ok`), and an escape
 * would reach the terminal, to retitle it or clear what was said above (scripts/lib/terminal.ts).
 */
const oneLine = (text: string) => printable(text.replace(/\r?\n\s*/g, " "));

/** The result as a person reads it: a line for the environment, one per problem and note. */
export function report({ environment, problems, notes }: CheckResult, configPath: string): string {
  const count = problems.length;
  const lines = [
    `${configPath} ${oneLine(environment.label)}: ${count === 0 ? "ok" : `${count} problem${count === 1 ? "" : "s"}`}`,
    ...problems.map(({ setting, text }) => `  ${oneLine(setting)}: ${oneLine(text)}`),
    ...notes.map(({ setting, text }) => `  note: ${oneLine(setting)} ${oneLine(text)}`),
  ];
  return lines.join("\n");
}

const USAGE =
  "Usage: npm run check [-- --env NAME] [--var NAME:VALUE ...] [--secrets-file FILE] [--config PATH]";

/**
 * The values of `--name VALUE`, `--name=VALUE` and `-n VALUE` in `args`, as
 * wrangler reads them: an `array` option (`--var`) takes every word after it
 * up to the next option, so `--var A:1 B:2` sets both.
 */
export function valuesOf(
  args: readonly string[],
  name: string,
  { short, array = false }: { short?: string; array?: boolean } = {},
): string[] {
  const found: string[] = [];
  for (let index = 0; index < args.length; index++) {
    const arg = args[index] as string;
    if (arg.startsWith(`--${name}=`)) found.push(arg.slice(name.length + 3));
    else if (arg === `--${name}` || (short && arg === `-${short}`)) {
      if (index + 1 >= args.length) continue;
      found.push(args[++index] as string);
    } else continue;
    while (array && index + 1 < args.length && !(args[index + 1] as string).startsWith("-")) {
      found.push(args[++index] as string);
    }
  }
  return found;
}

/** `--var NAME:VALUE`s, as wrangler reads them (the first colon splits). */
export function varsOf(values: readonly string[] = []): Record<string, string> {
  return Object.fromEntries(
    values.map((entry) => {
      const colon = entry.indexOf(":");
      return colon === -1 ? [entry, ""] : [entry.slice(0, colon), entry.slice(colon + 1)];
    }),
  );
}

/** Checks the environments asked for and prints what it found; whether all are clean. */
export function runCheck(options: {
  configPath?: string;
  /** One environment (`undefined` in the list: the top level); all when not given. */
  only?: Array<string | undefined>;
  vars?: Record<string, string>;
  /** Where `wrangler deploy --routes`, `--domains` serve it, besides or instead of the file's routes. */
  served?: { routes?: string[]; domains?: string[] };
  /** `--secrets-file`: what wrangler deploy uploads with it besides. */
  secretsFile?: string;
  forDeploy?: boolean;
  dryRun?: boolean;
}): boolean {
  const { configPath = CONFIG_PATH, vars, served, secretsFile, forDeploy, dryRun } = options;
  const secrets = secretsFile === undefined ? undefined : readSecretsFile(secretsFile);
  const defined = environmentNames(configPath);
  let clean = true;
  for (const name of options.only ?? defined) {
    if (!defined.includes(name)) {
      console.log(
        `${configPath} ${labelOf(name)}: no such environment (npm run tenant -- add ${name} writes one)`,
      );
      clean = false;
      continue;
    }
    const result = checkEnvironment(readEnvironment(name, { configPath, vars, served }), {
      forDeploy,
      dryRun,
      secrets,
    });
    console.log(report(result, configPath));
    clean &&= result.problems.length === 0;
  }
  return clean;
}

/** `npm run check -- …argv`: whether every environment it checked is clean. */
export function check(argv: string[]): boolean {
  const { values, positionals } = argumentsOf(
    {
      args: argv,
      allowPositionals: true,
      options: {
        env: { type: "string", short: "e" },
        "top-level": { type: "boolean" },
        var: { type: "string", multiple: true },
        "secrets-file": { type: "string" },
        config: { type: "string", short: "c" },
      },
    },
    USAGE,
  );
  // Read as `wrangler deploy --var` reads them, as npm run deploy checks them: `--var A:1 B:2`.
  const vars = valuesOf(argv, "var", { array: true });
  const stray = positionals.find((word) => !vars.includes(word));
  if (stray !== undefined) refuse(`${stray}: no option takes this word.\n${USAGE}`);
  const only = values["top-level"]
    ? [undefined]
    : values.env === undefined
      ? undefined
      : [values.env];
  // What a deploy of one tenant uploads (npm run deploy -- --env NAME --secrets-file FILE).
  const secretsFile = values["secrets-file"];
  if (secretsFile !== undefined && values.env === undefined) {
    refuse(`--secrets-file is one tenant's: give --env NAME.\n${USAGE}`);
  }
  return runCheck({ configPath: values.config, only, vars: varsOf(vars), secretsFile });
}

if (import.meta.main) {
  await runCommand(() => {
    process.exitCode = check(process.argv.slice(2)) ? 0 : 1;
  });
}
