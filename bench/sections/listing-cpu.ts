/**
 * The core section's listings, text to text, in workerd (workers/listing-cpu.ts):
 * the CPU its process spends per listing, read from /proc over requests that
 * each run one state many times. The core section times the same code in Node,
 * whose JSON, WebCrypto (emulated in the calling thread there) and garbage
 * collector only approximate the runtime's; this is what a Worker is billed
 * for, and what a Free plan's 10 ms per request is measured against.
 */
import { LISTING_STATES, type ListingState, stateName } from "../lib/listing-states";
import { duration, num, type SectionResult, type TargetCheck, table } from "../lib/report";
import { median, rotate } from "../lib/stats";
import { cpuNanoseconds, type LocalWorker, withWorkers } from "../lib/workers";

const SIZES = [1_000, 10_000];
type Measured = ListingState | "floor";
const MEASURED: Measured[] = ["floor", ...(Object.keys(LISTING_STATES) as ListingState[])];
/** CPU of listings per request: long beside a request's own (under a millisecond). */
const WORK_MS = 60;
const REQUESTS = 5;
const ROUNDS = 5;
/** States that name, view and pin every tool: #53 asks 2.5 × the floor of them, 1.0 of the rest. */
const NAMES_EVERY_TOOL = new Set<Measured>(["first", "deploy", "caller"]);
/** Per-tool cost at 10,000 tools ÷ at 1,000 (#53). */
const LINEAR = 1.3;

async function listings(worker: LocalWorker, state: Measured, size: number, runs: number) {
  const url = new URL(worker.url);
  url.search = new URLSearchParams({ state, size: String(size), runs: String(runs) }).toString();
  const response = await fetch(url);
  if (!response.ok) throw new Error(`listing-cpu ${url.search}: ${response.status}`);
  await response.text();
}

/** The workerd process's CPU, in ms, for `requests` requests of `runs` listings each. */
async function cpuOf(
  worker: LocalWorker,
  state: Measured,
  size: number,
  runs: number,
  requests = 1,
) {
  const before = cpuNanoseconds(worker.pid);
  for (let request = 0; request < requests; request++) await listings(worker, state, size, runs);
  return (cpuNanoseconds(worker.pid) - before) / 1e6;
}

/**
 * CPU per listing in ms: `REQUESTS` requests of enough listings each to take
 * about `WORK_MS`. How many is found in two probes: a single listing's
 * request is mostly the request's own cost when the listing is cheap.
 */
async function cpuPerListing(worker: LocalWorker, state: Measured, size: number) {
  let runs = 1;
  for (let probe = 0; probe < 2; probe++) {
    const spent = await cpuOf(worker, state, size, runs);
    runs = Math.max(1, Math.round((runs * WORK_MS) / Math.max(spent, 0.01)));
  }
  return (await cpuOf(worker, state, size, runs, REQUESTS)) / (REQUESTS * runs);
}

export async function measureListingCpu(start: () => Promise<LocalWorker>): Promise<SectionResult> {
  const samples = new Map<string, number[]>();
  // A Worker per size: what one listing keeps alive (a 10,000-tool map holds some 50 MB) makes
  // every collection of the other's cost more, as it would not in an isolate serving one origin.
  for (const size of SIZES) {
    await withWorkers([start], async (worker) => {
      // The listing is made, and named once, by the Worker's first request for it.
      await listings(worker, "floor", size, 1);
      for (let round = 0; round < ROUNDS; round++) {
        for (const state of rotate(MEASURED, round)) {
          const key = `${state} ${size}`;
          samples.set(key, [...(samples.get(key) ?? []), await cpuPerListing(worker, state, size)]);
        }
      }
    });
  }
  return report((state, size) => median(samples.get(`${state} ${size}`) ?? []));
}

function report(at: (state: Measured, size: number) => number): SectionResult {
  const states = MEASURED.filter((state): state is ListingState => state !== "floor");
  const rows = SIZES.map((size) => [
    num(size),
    duration(at("floor", size)),
    ...states.map(
      (state) => `${duration(at(state, size))} (${num(at(state, size) / at("floor", size), 2)} ×)`,
    ),
  ]);
  const linearity = (state: Measured) => at(state, 10_000) / 10 / at(state, 1_000);
  rows.push([
    "per tool, 10,000 ÷ 1,000",
    num(linearity("floor"), 2),
    ...states.map((state) => num(linearity(state), 2)),
  ]);
  const markdown = [
    `CPU the workerd process spends per listing, text to text, in the states of the core section, each listing decoded afresh from the body's bytes (the floor's too): the median of ${ROUNDS} rounds of ${REQUESTS} requests, each running one state for about ${WORK_MS} ms (bench/workers/listing-cpu.ts). KV answers from memory there as well. This is the runtime a Worker is billed in, with its own JSON, WebCrypto and garbage collector. In brackets, ÷ the JSON floor measured the same way:`,
    "",
    table(["tools", "JSON floor", ...states.map(stateName)], rows),
  ].join("\n");
  // #53's targets, in the runtime: Node's JSON and WebCrypto only approximate it.
  const ratioTargets = states.map((state): TargetCheck => {
    const ratio = at(state, 1_000) / at("floor", 1_000);
    const goal = NAMES_EVERY_TOOL.has(state) ? 2.5 : 1;
    return {
      name: `a 1,000-tool listing in workerd, text to text, ÷ its JSON floor there, ${stateName(state)}`,
      goal: `≤ ${num(goal, 1)}`,
      measured: `${num(ratio, 2)} × (floor ${duration(at("floor", 1_000))})`,
      met: ratio <= goal,
    };
  });
  const linearTargets = states.map(
    (state): TargetCheck => ({
      name: `listing cost linear in tool count in workerd, text to text, ${stateName(state)}`,
      goal: `per-tool cost at 10,000 tools ≤ ${num(LINEAR, 1)} × at 1,000`,
      measured: `${num(linearity(state), 2)} × (the floor's own ${num(linearity("floor"), 2)} ×)`,
      met: linearity(state) <= LINEAR,
    }),
  );
  const targets = [...ratioTargets, ...linearTargets];
  return {
    title: "Listings in workerd",
    markdown,
    targets,
    data: Object.fromEntries(
      SIZES.flatMap((size) => MEASURED.map((state) => [`${state} ${size}`, at(state, size)])),
    ),
  };
}
