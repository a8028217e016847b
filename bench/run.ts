/**
 * `npm run bench`: what the proxy costs, measured against its floor, on this
 * machine, in one process, in about seven minutes. Writes bench/RESULTS.md and
 * bench/results.json. Tests never time anything; the targets live here.
 *
 *   npm run bench                    every section, results written
 *   npm run bench -- core kv         some sections, printed only
 *   BENCH_ROUNDS=3 BENCH_SECONDS=2   rounds and seconds per overhead run (5 and 1)
 *
 * Everything listens on 127.0.0.1. The origin of the overhead runs is a child
 * process, so the load generator does not share its event loop; the origin of
 * the streaming runs is in this process, so emission and arrival are timed on
 * one clock.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { describeMachine, type Machine } from "./lib/machine";
import { mark, type SectionResult, table } from "./lib/report";
import {
  startBodyReading,
  startJavaScriptPump,
  startKvCountingProxy,
  startListingCpu,
  startPassThrough,
  startProxy,
  startProxyWithCalls,
} from "./lib/workers";
import { startBenchOrigin } from "./origin/server";
import { measureAnalytics } from "./sections/analytics";
import { measureCallers } from "./sections/callers";
import { measureCore } from "./sections/core";
import { measureKv } from "./sections/kv";
import { measureListingCpu } from "./sections/listing-cpu";
import { measureOverhead } from "./sections/overhead";
import { measureSearch } from "./sections/search";
import { measureStreaming } from "./sections/streaming";

// Hermetic: no Request.cf download, no telemetry.
process.env.CLOUDFLARE_CF_FETCH_ENABLED = "false";
process.env.WRANGLER_SEND_METRICS = "false";

const SECTIONS = [
  "core",
  "listing-cpu",
  "callers",
  "search",
  "overhead",
  "analytics",
  "streaming",
  "kv",
] as const;
type Section = (typeof SECTIONS)[number];

const requested = process.argv.slice(2);
for (const name of requested) {
  if (!SECTIONS.includes(name as Section)) {
    throw new Error(`unknown section ${name}; choose from ${SECTIONS.join(", ")}`);
  }
}
const chosen = requested.length > 0 ? (requested as Section[]) : [...SECTIONS];
const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
const seconds = Number(process.env.BENCH_SECONDS ?? 1);

/** The bench origin in a child process; resolves once it listens. */
async function spawnOrigin(): Promise<{ url: URL; child: ChildProcess }> {
  const child = spawn(process.execPath, ["--import", "tsx", "bench/origin/main.ts"], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  for await (const line of lines)
    return { url: new URL((JSON.parse(line) as { url: string }).url), child };
  throw new Error("the bench origin exited before it listened");
}

async function runSection(name: Section): Promise<SectionResult> {
  const started = performance.now();
  process.stderr.write(`${name}…\n`);
  try {
    switch (name) {
      case "core":
        return await measureCore();
      case "callers":
        return await measureCallers();
      case "search":
        return await measureSearch();
      case "listing-cpu":
        return await measureListingCpu(startListingCpu);
      case "overhead":
      case "analytics":
      case "kv": {
        const origin = await spawnOrigin();
        try {
          if (name === "analytics") {
            return await measureAnalytics({
              originUrl: origin.url,
              startProxy: () => startProxy(origin.url),
              startProxyWithCalls: (vars) => startProxyWithCalls(origin.url, vars),
              rounds,
            });
          }
          return name === "kv"
            ? await measureKv(origin.url, () => startKvCountingProxy(origin.url))
            : await measureOverhead({
                originUrl: origin.url,
                startPassThrough: () => startPassThrough(origin.url),
                startBodyReading: () => startBodyReading(origin.url),
                startProxy: () => startProxy(origin.url),
                rounds,
                seconds,
              });
        } finally {
          origin.child.kill();
        }
      }
      case "streaming": {
        const origin = await startBenchOrigin();
        try {
          return await measureStreaming({
            origin,
            startPassThrough: () => startPassThrough(origin.url),
            startJavaScriptPump: () => startJavaScriptPump(origin.url),
            startProxy: () => startProxy(origin.url),
          });
        } finally {
          origin.close();
        }
      }
    }
  } finally {
    process.stderr.write(`${name}: ${((performance.now() - started) / 1000).toFixed(0)} s\n`);
  }
}

function render(machine: Machine, results: SectionResult[], totalSeconds: number): string {
  const targets = results.flatMap((result) => result.targets);
  const missed = targets.filter((target) => !target.met);
  return [
    "# Benchmark results",
    "",
    `Written by \`npm run bench\` (bench/run.ts) on ${machine.date.slice(0, 10)}, in ${Math.round(totalSeconds)} s; the same numbers are in [results.json](results.json).`,
    "",
    table(
      ["machine", ""],
      [
        ["CPU", `${machine.cpu}, ${machine.cores} cores, ${machine.memoryGiB} GiB`],
        ["commit", machine.commit],
        ...Object.entries(machine.versions).map(([name, version]) => [name, version]),
      ],
    ),
    "",
    "Everything ran on this one machine at once: load generator, origin and Workers share its cores, as they would not in production. Ratios taken within a run are what to read; absolute numbers only compare runs on the same machine.",
    "",
    "## Targets",
    "",
    missed.length === 0
      ? `All ${targets.length} targets met.`
      : `${targets.length - missed.length} of ${targets.length} targets met; missed: ${missed.map((t) => t.name).join("; ")}.`,
    "",
    table(
      ["target", "goal", "measured", ""],
      targets.map((target) => [target.name, target.goal, target.measured, mark(target.met)]),
    ),
    ...results.flatMap((result) => ["", `## ${result.title}`, "", result.markdown]),
    "",
  ].join("\n");
}

const started = performance.now();
const machine = describeMachine();
const results: SectionResult[] = [];
for (const name of chosen) results.push(await runSection(name));
const totalSeconds = (performance.now() - started) / 1000;
const markdown = render(machine, results, totalSeconds);

if (chosen.length === SECTIONS.length) {
  writeFileSync("bench/RESULTS.md", markdown);
  writeFileSync(
    "bench/results.json",
    `${JSON.stringify({ machine, totalSeconds, sections: results }, null, 2)}\n`,
  );
  process.stderr.write("wrote bench/RESULTS.md and bench/results.json\n");
} else {
  process.stdout.write(markdown);
}
