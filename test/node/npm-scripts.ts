/** The repository's npm scripts, run as an operator runs them, and what they print. */
import { spawnSync } from "node:child_process";
import { join } from "node:path";

export const ROOT = join(import.meta.dirname, "../..");

/** An npm script of the repository, as `npm run -s NAME -- ARGS` runs it. */
export function npmRun(script: string, args: string[], cwd = ROOT) {
  const run = spawnSync("npm", ["run", "-s", script, "--", ...args], {
    cwd,
    encoding: "utf8",
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false" },
  });
  return { status: run.status, out: `${run.stdout}${run.stderr}` };
}

/** What check said of each environment: its heading's verdict, and its lines. */
export function sections(out: string): Map<string, { verdict: string; lines: string[] }> {
  const found = new Map<string, { verdict: string; lines: string[] }>();
  let current: { verdict: string; lines: string[] } | undefined;
  for (const line of out.split("\n")) {
    const heading = /^\S+ (\[env\.[^\]]+\]|the top level \(local development\)): (.*)$/.exec(line);
    if (heading?.[1] && heading[2] !== undefined) {
      current = { verdict: heading[2], lines: [] };
      found.set(heading[1], current);
    } else if (current && line.startsWith("  ")) current.lines.push(line.trim());
  }
  return found;
}
