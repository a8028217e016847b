/** Where and with what the numbers were taken, for the head of the results. */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";

/** The installed version of a package, looked up in `node_modules` folders in order. */
function versionOf(name: string, folders = ["node_modules"]): string {
  for (const folder of folders) {
    try {
      const manifest = readFileSync(`${folder}/${name}/package.json`, "utf8");
      return (JSON.parse(manifest) as { version: string }).version;
    } catch {
      // Not installed there.
    }
  }
  return "unknown";
}

function commit(): string {
  try {
    const head = execFileSync("git", ["rev-parse", "--short", "HEAD"], { encoding: "utf8" }).trim();
    // The results of an earlier run are about to be replaced; they do not make the code dirty.
    const status = [
      "status",
      "--porcelain",
      "--",
      ".",
      ":!bench/RESULTS.md",
      ":!bench/results.json",
    ];
    const dirty = execFileSync("git", status, { encoding: "utf8" }).trim() !== "";
    return dirty ? `${head} with uncommitted changes` : head;
  } catch {
    return "unknown";
  }
}

export interface Machine {
  date: string;
  cpu: string;
  cores: number;
  memoryGiB: number;
  commit: string;
  versions: Record<string, string>;
}

export function describeMachine(): Machine {
  const cpuList = cpus();
  return {
    date: new Date().toISOString(),
    cpu: cpuList[0]?.model.trim() ?? "unknown",
    cores: cpuList.length,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    commit: commit(),
    versions: {
      node: process.versions.node,
      // The runtime Miniflare runs the Workers in.
      workerd: versionOf("workerd", ["node_modules/miniflare/node_modules", "node_modules"]),
      miniflare: versionOf("miniflare"),
      wrangler: versionOf("wrangler"),
      "@modelcontextprotocol/sdk": versionOf("@modelcontextprotocol/sdk"),
      autocannon: versionOf("autocannon"),
      tinybench: versionOf("tinybench"),
    },
  };
}
