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
import { type AllowedHost, allowedHostsOf, ownProblem, parseConfig, SETTINGS } from "../src/config";
import { argumentsOf, refuse, runCommand } from "./lib/command";
import {
  CONFIG_PATH,
  createNamespaceCommand,
  type Environment,
  environmentNames,
  labelOf,
  PLACEHOLDER_ID,
  readEnvironment,
} from "./lib/environments";
import {
  readSecretsFile,
  SECRET_SETTINGS,
  type SecretsFile,
  uploadedSecrets,
} from "./lib/secrets-file";
import { sharedFinding } from "./lib/shared-findings";
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
      // `MAX_TOOLS=5` would be a setting of that name, reported as one the proxy does not read.
      if (colon === -1 && entry.includes("="))
        refuse(`--var ${entry}: NAME:VALUE, as wrangler reads it (a colon, not =).`);
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
