/**
 * Workers in the local Workers runtime (workerd), as they deploy: each script
 * is bundled by `wrangler deploy --dry-run` (the very bundle a deploy uploads)
 * and served by Miniflare from one workerd process on a 127.0.0.1 port, with
 * in-memory KV and no request log. Miniflare rather than `wrangler dev`: the
 * latter puts a second workerd process, its dev proxy, in front of every
 * Worker, and that hop would be measured too.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { convertV4MiniflareOptions, Miniflare } from "miniflare";
import { unstable_readConfig } from "wrangler";

export interface LocalWorker {
  /** The MCP endpoint. */
  url: URL;
  /** The workerd process, for memory readings. */
  pid: number;
  /** Log lines the Worker wrote, by their `event` field; warnings and errors go to stderr. */
  logEvents: Map<string, number>;
  dispose(): Promise<void>;
}

const config = unstable_readConfig({ config: "wrangler.toml" });

/** Bundles `entry` as `wrangler deploy` would; returns the bundle's path. */
async function bundle(entry: string): Promise<string> {
  const outdir = mkdtempSync(join(tmpdir(), "mcp-bench-"));
  await promisify(execFile)(
    process.execPath,
    ["node_modules/wrangler/bin/wrangler.js", "deploy", entry, "--dry-run", "--outdir", outdir],
    { env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "true" } },
  );
  return join(outdir, readdirSync(outdir).find((file) => file.endsWith(".js")) ?? "index.js");
}

/** This process's workerd children, by pid. */
function workerdChildren(): Set<number> {
  const pids = new Set<number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // `pid (comm) state ppid …`; comm may hold spaces, so read past its `)`.
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (comm === "workerd" && ppid === process.pid) pids.add(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return pids;
}

/**
 * Starts one Worker; call one at a time, so the new workerd process is the
 * Worker's. `inspectorPort`: serve the DevTools protocol there (bench/profile.ts).
 */
async function serve(
  entry: string,
  originUrl: string,
  inspectorPort?: number,
  /** Analytics Engine datasets to bind, by binding name (Miniflare's local ones write nowhere). */
  datasets?: Record<string, { dataset: string }>,
  /** Settings beside `ORIGIN_URL`. */
  vars: Record<string, string> = {},
): Promise<LocalWorker> {
  const scriptPath = await bundle(entry);
  const before = workerdChildren();
  const logEvents = new Map<string, number>();
  const miniflare = new Miniflare(
    convertV4MiniflareOptions({
      modules: true,
      scriptPath,
      modulesRoot: dirname(scriptPath),
      compatibilityDate: config.compatibility_date,
      compatibilityFlags: config.compatibility_flags,
      bindings: { ORIGIN_URL: originUrl, ...vars },
      kvNamespaces: ["TOOL_MAP"],
      ...(datasets ? { analyticsEngineDatasets: datasets } : {}),
      // As wrangler.toml binds it: new isolates answer a listing from KV (docs/tool-map.md).
      ...(config.version_metadata ? { versionMetadata: config.version_metadata.binding } : {}),
      host: "127.0.0.1",
      port: 0,
      cf: false,
      ...(inspectorPort === undefined ? {} : { inspectorPort }),
      handleStructuredLogs: ({ level, message }) => {
        if (level === "error" || level === "warn") process.stderr.write(`[worker] ${message}\n`);
        const event = /^\{"event":"([^"]+)"/.exec(message)?.[1] ?? level;
        logEvents.set(event, (logEvents.get(event) ?? 0) + 1);
      },
    }),
  );
  const url = await miniflare.ready;
  const started = [...workerdChildren()].filter((pid) => !before.has(pid));
  if (started.length !== 1)
    throw new Error(`expected 1 new workerd process, saw ${started.length}`);
  return {
    url: new URL("/mcp", url),
    pid: started[0] as number,
    logEvents,
    dispose: () => miniflare.dispose(),
  };
}

/** The proxy (src/index.ts), every setting at its default, in front of `originUrl`. */
export const startProxy = (originUrl: URL, inspectorPort?: number) =>
  serve(config.main ?? "src/index.ts", originUrl.href, inspectorPort);

/**
 * The proxy with the `CALLS` dataset bound: call analytics on
 * (docs/observability.md), as a tenant (`WRANGLER_ENV`, the points' index,
 * which `CALLS` needs beside it), with `vars` (`CALLS_ANSWER_SAMPLING_RATE`).
 */
export const startProxyWithCalls = (originUrl: URL, vars: Record<string, string> = {}) =>
  serve(
    config.main ?? "src/index.ts",
    originUrl.href,
    undefined,
    { CALLS: { dataset: "bench_calls" } },
    { WRANGLER_ENV: "bench", ...vars },
  );

/** A Worker that only forwards to the origin (workers/pass-through.ts). */
export const startPassThrough = (originUrl: URL, inspectorPort?: number) =>
  serve("bench/workers/pass-through.ts", originUrl.origin, inspectorPort);

/** The bare Worker, but a POST's body read whole before it is sent on (workers/body-reading.ts). */
export const startBodyReading = (originUrl: URL) =>
  serve("bench/workers/body-reading.ts", originUrl.origin);

/** A Worker whose every chunk JavaScript reads and writes, as the proxy's pump does (workers/javascript-pump.ts). */
export const startJavaScriptPump = (originUrl: URL) =>
  serve("bench/workers/javascript-pump.ts", originUrl.origin);

/** The core section's listings, run in workerd (workers/listing-cpu.ts); it talks to no origin. */
export const startListingCpu = (inspectorPort?: number) =>
  serve("bench/workers/listing-cpu.ts", "http://127.0.0.1/", inspectorPort);

/** The proxy with its KV operations counted (workers/kv-counting.ts). */
export const startKvCountingProxy = (originUrl: URL) =>
  serve("bench/workers/kv-counting.ts", originUrl.href);

type Start = () => Promise<LocalWorker>;

/**
 * Starts Workers one at a time (each is told from the others by the one new
 * workerd process it brings), hands them to `use`, and disposes of them after.
 */
export async function withWorkers<const S extends readonly Start[], T>(
  starts: S,
  use: (...workers: { [K in keyof S]: LocalWorker }) => Promise<T>,
): Promise<T> {
  const workers: LocalWorker[] = [];
  try {
    for (const start of starts) workers.push(await start());
    return await use(...(workers as { [K in keyof S]: LocalWorker }));
  } finally {
    await Promise.all(workers.map((worker) => worker.dispose()));
  }
}

/** Resident memory of a process, in bytes. */
export function residentBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = /^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1];
  if (kib === undefined) throw new Error(`no VmRSS for ${pid}`);
  return Number(kib) * 1024;
}

/**
 * CPU time a process has used, in nanoseconds: user and system time of every
 * thread (`/proc/<pid>/task/<tid>/schedstat`, whose first field is in ns).
 * Unlike wall time, it does not grow while the process waits for a core.
 */
export function cpuNanoseconds(pid: number): number {
  let total = 0;
  for (const thread of readdirSync(`/proc/${pid}/task`)) {
    try {
      total += Number(readFileSync(`/proc/${pid}/task/${thread}/schedstat`, "utf8").split(" ")[0]);
    } catch {
      // The thread ended while we looked.
    }
  }
  return total;
}
