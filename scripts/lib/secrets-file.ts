/**
 * A `--secrets-file` as `wrangler deploy` reads it (wrangler's
 * parseBulkInputToObject): JSON, an object whose values are text (`null`:
 * left out), or else dotenv, whose names the environment wrangler runs in
 * sets too are uploaded with the environment's value. What it holds is
 * never printed: npm run check tells it by name (scripts/check.ts).
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { parseEnv } from "node:util";
import { SETTINGS } from "../../src/config";
import { type Environment, labelOf } from "./environments";

export interface SecretsFile {
  /** As the command was given it. */
  path: string;
  /** What wrangler would upload, by name, in the file's order. */
  values: Record<string, string>;
  /** Why wrangler would refuse the file, uploading nothing. */
  refused?: string;
  /** dotenv's names whose value the environment gives instead of the file. */
  fromEnvironment: string[];
  /**
   * dotenv's names whose value holds `$NAME` or `${NAME}`, which wrangler replaces
   * (dotenv-expand) with that variable of the environment or another of the file's, or nothing.
   */
  expanded: string[];
}

/** What dotenv-expand replaces: `$NAME` or `${…}`, unless a backslash comes first. */
const EXPANDED = /(?<!\\)\$(?:\{[^{}]+\}|[A-Za-z_])/;

/** The JSON type wrangler names a value by. */
const typeOf = (value: unknown) =>
  Array.isArray(value) ? "a list" : typeof value === "object" ? "an object" : `a ${typeof value}`;

/** The file at `path` (relative to where the command runs, as wrangler resolves it). */
export function readSecretsFile(
  path: string,
  environment: NodeJS.ProcessEnv = process.env,
): SecretsFile {
  const file: SecretsFile = { path, values: {}, fromEnvironment: [], expanded: [] };
  let text: string;
  try {
    text = readFileSync(resolve(path), "utf8");
  } catch (error) {
    file.refused = `cannot be read (${(error as NodeJS.ErrnoException).code ?? "error"})`;
    return file;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    // Not JSON: dotenv, as wrangler reads it then.
    const entries = Object.entries(parseEnv(text));
    if (entries.length === 0) {
      file.refused = "holds no NAME=value line, and is no JSON: wrangler deploy refuses it";
    }
    for (const [name, value = ""] of entries) {
      const given = environment[name];
      if (given !== undefined) file.fromEnvironment.push(name);
      else if (EXPANDED.test(value)) file.expanded.push(name);
      file.values[name] = given ?? value;
    }
    return file;
  }
  if (typeof json !== "object" || json === null) {
    file.refused = "is JSON but no object of names and values: wrangler deploy refuses it";
    return file;
  }
  for (const [name, value] of Object.entries(json)) {
    if (typeof value === "string") file.values[name] = value;
    else if (value !== null) {
      file.refused = `holds ${name} as ${typeOf(value)}: wrangler deploy takes text (a string) or null alone, and refuses the file`;
      file.values = {};
      return file;
    }
  }
  return file;
}

/** The settings the docs have operators set with `wrangler secret put` (docs/configuration.md, sign-in.md). */
export const SECRET_SETTINGS = new Set([
  "ORIGIN_URL",
  "UPSTREAM_CLIENT_ID",
  "UPSTREAM_CLIENT_SECRET",
  "IDP_CLIENT_ID",
  "IDP_CLIENT_SECRET",
  "ORIGIN_SECRET",
  "ORIGIN_USER_SECRETS",
]);

/** A problem or note of npm run check, at its setting's path. */
interface Told {
  setting: string;
  text: string;
}

/**
 * The secrets `file` uploads with a deploy of `environment`, set in `env` (what the Worker gets)
 * where each is a secret the proxy reads, so that parseConfig checks its value with the rest: a
 * name that is none, is set in wrangler.toml too, or is not declared is told, by name alone.
 */
export function uploadedSecrets(
  environment: Environment,
  file: SecretsFile,
  env: Record<string, unknown>,
  { problems, notes }: { problems: Told[]; notes: Told[] },
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
