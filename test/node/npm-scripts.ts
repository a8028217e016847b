/** The repository's npm scripts, run as an operator runs them, and what they print. */
import { spawn, spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const ROOT = join(import.meta.dirname, "../..");

/** An npm script of the repository, as `npm run -s NAME -- ARGS` runs it. */
export function npmRun(script: string, args: string[], cwd = ROOT) {
  return shell("npm", ["run", "-s", script, "--", ...args], cwd);
}

/**
 * `npmRun` without blocking this process: for a script that talks to a server
 * this process serves (the proxy `serveProxy` starts answers from here).
 */
export function npmRunAsync(
  script: string,
  args: string[],
  cwd = ROOT,
): Promise<{ status: number | null; out: string }> {
  return npmRunLive(script, args, cwd).done;
}

/** A script while it runs: what it printed so far, as it prints it, and its end. */
export interface LiveRun {
  /** The first match of `pattern` in what it printed (stdout and stderr as they came), once there; rejects if it ends without. */
  printed(pattern: RegExp): Promise<RegExpExecArray>;
  done: Promise<{ status: number | null; out: string }>;
}

/** `npmRunAsync`, read while it runs: for a script that waits on what the test does next (a sign-in). */
export function npmRunLive(script: string, args: string[], cwd = ROOT): LiveRun {
  const child = spawn("npm", ["run", "-s", script, "--", ...args], { cwd, env: quietEnv() });
  let out = "";
  let ended = false;
  const watchers = new Set<() => void>();
  const take = (text: string) => {
    out += text;
    for (const watch of watchers) watch();
  };
  child.stdout.setEncoding("utf8").on("data", take);
  child.stderr.setEncoding("utf8").on("data", take);
  const done = new Promise<{ status: number | null; out: string }>((resolve) => {
    child.on("close", (status) => {
      ended = true;
      for (const watch of watchers) watch();
      resolve({ status, out });
    });
  });
  return {
    done,
    printed: (pattern) =>
      new Promise((resolve, reject) => {
        const watch = () => {
          const found = pattern.exec(out);
          if (found === null && !ended) return;
          watchers.delete(watch);
          if (found) resolve(found);
          else reject(new Error(`ended without printing ${pattern}:\n${out}`));
        };
        watchers.add(watch);
        watch();
      }),
  };
}

const quietEnv = () => ({
  ...process.env,
  WRANGLER_SEND_METRICS: "false",
  CLOUDFLARE_CF_FETCH_ENABLED: "false",
});

/** A command as an operator runs it in `cwd`: `npx …`, or `sh -c '…'` for a line pasted from a log. */
export function shell(command: string, args: string[], cwd = ROOT) {
  const run = spawnSync(command, args, {
    cwd,
    encoding: "utf8",
    env: quietEnv(),
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

/**
 * A scratch copy of the repository an operator works in: what the npm
 * scripts and wrangler read, with the installed node_modules linked.
 */
export function repoCopy(): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), "repo-"));
  for (const path of [
    "package.json",
    "wrangler.toml",
    "worker-configuration.d.ts",
    "tsconfig.json",
    "src",
    "scripts",
  ]) {
    cpSync(join(ROOT, path), join(dir, path), { recursive: true });
  }
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
