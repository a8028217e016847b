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
