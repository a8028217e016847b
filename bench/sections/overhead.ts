/**
 * Request overhead: the same workload sent to the origin directly, through a
 * bare pass-through Worker (the floor for any Worker proxy) and through the
 * proxy, at 1, 16 and 64 concurrent clients, with autocannon as the load
 * generator. Runs are interleaved (every round runs every cell once, the
 * three targets in a rotating order), so drift on a shared machine touches
 * all three alike; ratios are taken within a round, then the median and the
 * range across rounds are reported.
 */
import { load, type Run } from "../lib/load";
import { answerText, openSession, type ResponseMode, send } from "../lib/mcp-session";
import { mark, num, type SectionResult, type TargetCheck, table } from "../lib/report";
import { rotate, type Spread, spread } from "../lib/stats";
import { cpuNanoseconds, type LocalWorker, withWorkers } from "../lib/workers";
import { ECHO_TOOL, proxiedName } from "../origin/server";

const CONCURRENCY = [1, 16, 64];

interface Workload {
  label: string;
  mode: ResponseMode;
  /** `tools/call` of the echo tool, or `ping`. */
  call: boolean;
  /** Least throughput through the proxy, as a share of the bare Worker's. */
  target: number;
}

// Every workload keeps at least 95% of a bare Worker's throughput.
const WORKLOADS: Workload[] = [
  { label: "`tools/call`, JSON response", mode: "json", call: true, target: 0.95 },
  { label: "`tools/call`, event-stream response", mode: "sse", call: true, target: 0.95 },
  { label: "`ping` (not rewritten)", mode: "json", call: false, target: 0.95 },
];

type TargetName = "direct" | "passThrough" | "proxy";
const TARGET_LABELS: Record<TargetName, string> = {
  direct: "origin direct",
  passThrough: "bare Worker",
  proxy: "proxy",
};

interface Target {
  name: TargetName;
  url: URL;
  /** The echo tool's name as this target's clients know it. */
  echoName: string;
}

function message(workload: Workload, echoName: string, id: string | number) {
  return workload.call
    ? {
        jsonrpc: "2.0",
        id,
        method: "tools/call",
        params: { name: echoName, arguments: { text: "hello", count: 3 } },
      }
    : { jsonrpc: "2.0", id, method: "ping" };
}

/** One answer per target and workload, checked, so no run measures an error. */
async function checkAnswers(targets: Target[], sessions: Record<ResponseMode, string>) {
  for (const target of targets) {
    for (const workload of WORKLOADS) {
      const response = await send(
        target.url,
        sessions[workload.mode],
        message(workload, target.echoName, 1),
      );
      const text = await answerText(response);
      if (
        !response.ok ||
        !text.includes('"result"') ||
        (workload.call && !text.includes("hello"))
      ) {
        throw new Error(
          `${target.name} answered ${workload.label} with ${response.status}: ${text}`,
        );
      }
    }
  }
}

interface Cell {
  workload: Workload;
  concurrency: number;
  runs: Record<TargetName, Run[]>;
}

export function measureOverhead(options: {
  originUrl: URL;
  startPassThrough: () => Promise<LocalWorker>;
  startBodyReading: () => Promise<LocalWorker>;
  startProxy: () => Promise<LocalWorker>;
  rounds: number;
  seconds: number;
}): Promise<SectionResult> {
  return withWorkers(
    [options.startPassThrough, options.startBodyReading, options.startProxy],
    (passThrough, bodyReading, proxy) => measure({ ...options, passThrough, bodyReading, proxy }),
  );
}

async function measure(options: {
  originUrl: URL;
  passThrough: LocalWorker;
  bodyReading: LocalWorker;
  proxy: LocalWorker;
  rounds: number;
  seconds: number;
}): Promise<SectionResult> {
  const { originUrl, passThrough, bodyReading, proxy, rounds, seconds } = options;
  const sessions = {
    json: await openSession(originUrl, "json"),
    sse: await openSession(originUrl, "sse"),
  };
  const proxyEcho = proxiedName(ECHO_TOOL);
  const targets: Target[] = [
    { name: "direct", url: originUrl, echoName: ECHO_TOOL },
    { name: "passThrough", url: passThrough.url, echoName: ECHO_TOOL },
    { name: "proxy", url: proxy.url, echoName: proxyEcho },
  ];
  // The proxy learns its names from a listing, as it would from any client.
  await (
    await send(proxy.url, sessions.json, { jsonrpc: "2.0", id: 1, method: "tools/list" })
  ).text();
  await checkAnswers(targets, sessions);

  const body = (workload: Workload, target: Target) =>
    JSON.stringify(message(workload, target.echoName, "[<id>]"));
  for (const target of targets) {
    for (const workload of WORKLOADS)
      await load(target.url, sessions[workload.mode], body(workload, target), 16, { seconds: 1 });
  }
  const logsBefore = new Map(proxy.logEvents);

  const cells: Cell[] = WORKLOADS.flatMap((workload) =>
    CONCURRENCY.map((concurrency) => ({
      workload,
      concurrency,
      runs: { direct: [], passThrough: [], proxy: [] },
    })),
  );
  for (let round = 0; round < rounds; round++) {
    for (const [index, cell] of cells.entries()) {
      for (const target of rotate(targets, round + index)) {
        const run = await load(
          target.url,
          sessions[cell.workload.mode],
          body(cell.workload, target),
          cell.concurrency,
          { seconds },
        );
        cell.runs[target.name].push(run);
      }
    }
    process.stderr.write(`  overhead: round ${round + 1} of ${rounds} done\n`);
  }
  const cpu = await measureCpu(
    { passThrough, bodyReading, proxy },
    {
      passThrough: targets[1] as Target,
      bodyReading: { url: bodyReading.url, echoName: ECHO_TOOL },
      proxy: targets[2] as Target,
    },
    sessions.json,
    rounds,
  );
  const proxyCalls = cells
    .filter((cell) => cell.workload.call)
    .reduce((sum, cell) => sum + cell.runs.proxy.reduce((s, run) => s + run.count, 0), 0);
  const logLines = [...proxy.logEvents]
    .map(([event, count]) => [event, count - (logsBefore.get(event) ?? 0)] as const)
    .filter(([, count]) => count > 0);
  return report(cells, cpu, { rounds, seconds, logLines, proxyCalls });
}

export const CPU_REQUESTS = 2_000;
export const CPU_CONNECTIONS = 8;

/** A call of the echo tool whose `count` the proxy repairs (sent as text), for autocannon's ids. */
export const repairedCall = (echoName: string) => ({
  jsonrpc: "2.0",
  id: "[<id>]",
  method: "tools/call",
  params: { name: echoName, arguments: { text: "hello", count: "3" } },
});

interface CpuWorkload {
  label: string;
  message: (echoName: string) => object;
  /** Most CPU per request through the proxy, as a multiple of the bare Worker's. */
  target: number;
}

const CPU_WORKLOADS: CpuWorkload[] = [
  {
    label: "`ping`",
    message: () => ({ jsonrpc: "2.0", id: "[<id>]", method: "ping" }),
    target: 1.2,
  },
  {
    label: "`tools/call`, renamed and repaired (`count` sent as text)",
    message: repairedCall,
    target: 1.5,
  },
];

/** Whose CPU is measured: the bare Worker, the same reading each POST's body first, the proxy. */
type CpuTarget = "passThrough" | "bodyReading" | "proxy";
const CPU_TARGETS: readonly CpuTarget[] = ["passThrough", "bodyReading", "proxy"];

type CpuCell = { workload: CpuWorkload } & {
  /** µs of workerd CPU per request, one per round. */
  [name in CpuTarget]: number[];
};

/**
 * CPU the workerd process of each Worker spends per request: its user and
 * system time (every thread) over a fixed number of requests. A measure that
 * survives a noisy machine, unlike throughput: waiting for a core costs no CPU.
 */
async function measureCpu(
  workers: Record<CpuTarget, LocalWorker>,
  targets: Record<CpuTarget, Omit<Target, "name">>,
  sessionId: string,
  rounds: number,
): Promise<CpuCell[]> {
  const cells: CpuCell[] = CPU_WORKLOADS.map((workload) => ({
    workload,
    passThrough: [],
    bodyReading: [],
    proxy: [],
  }));
  for (let round = 0; round < rounds; round++) {
    for (const cell of cells) {
      for (const name of rotate(CPU_TARGETS, round)) {
        const target = targets[name];
        const body = JSON.stringify(cell.workload.message(target.echoName));
        const before = cpuNanoseconds(workers[name].pid);
        const run = await load(target.url, sessionId, body, CPU_CONNECTIONS, {
          amount: CPU_REQUESTS,
        });
        if (run.failed > 0) throw new Error(`${name}: ${run.failed} failed requests`);
        cell[name].push((cpuNanoseconds(workers[name].pid) - before) / CPU_REQUESTS / 1000);
      }
    }
  }
  return cells;
}

/** The proxy's throughput over another target's, run by run within each round. */
const proxyOver = (cell: Cell, other: TargetName): Spread =>
  spread(cell.runs.proxy.map((run, i) => run.rps / (cell.runs[other][i] as Run).rps));
const ratioText = (s: Spread) => `${num(s.median, 2)} (${num(s.min, 2)}–${num(s.max, 2)})`;
const medianOf = (runs: Run[], key: keyof Run) => spread(runs.map((run) => run[key])).median;

function report(
  cells: Cell[],
  cpu: CpuCell[],
  context: {
    rounds: number;
    seconds: number;
    logLines: (readonly [string, number])[];
    proxyCalls: number;
  },
): SectionResult {
  const targets: TargetCheck[] = [];
  const throughput = cells.map((cell) => {
    const { workload } = cell;
    const overPassThrough = proxyOver(cell, "passThrough");
    const met = overPassThrough.median >= workload.target;
    targets.push({
      name: `throughput, ${workload.label}, ${cell.concurrency} client${cell.concurrency > 1 ? "s" : ""}`,
      goal: `proxy ≥ ${workload.target * 100}% of bare Worker`,
      measured: `${num(overPassThrough.median * 100, 0)}%`,
      met,
    });
    return [
      workload.label,
      String(cell.concurrency),
      ...(["direct", "passThrough", "proxy"] as const).map((name) =>
        num(medianOf(cell.runs[name], "rps")),
      ),
      ratioText(overPassThrough),
      ratioText(proxyOver(cell, "direct")),
      `≥ ${num(workload.target, 2)} ${mark(met)}`,
    ];
  });
  const latency = cells.map((cell) => [
    cell.workload.label,
    String(cell.concurrency),
    ...(["direct", "passThrough", "proxy"] as const).map(
      (name) =>
        `${num(medianOf(cell.runs[name], "p50"), 2)} / ${num(medianOf(cell.runs[name], "p99"), 2)}`,
    ),
    num(medianOf(cell.runs.proxy, "p50") - medianOf(cell.runs.passThrough, "p50"), 2),
  ]);
  const failed = cells.reduce(
    (sum, cell) =>
      sum +
      Object.values(cell.runs)
        .flat()
        .reduce((s, run) => s + run.failed, 0),
    0,
  );

  const cpuRows = cpu.map((cell) => {
    const proxyOverCpu = (other: CpuTarget) =>
      spread(cell.proxy.map((us, i) => us / (cell[other][i] as number)));
    const ratio = proxyOverCpu("passThrough");
    const overReading = proxyOverCpu("bodyReading");
    const met = ratio.median <= cell.workload.target;
    targets.push({
      name: `workerd CPU per request, ${cell.workload.label}`,
      goal: `proxy ≤ ${num(cell.workload.target, 1)} × bare Worker`,
      measured: `${num(ratio.median, 2)} × (${num(overReading.median, 2)} × a Worker that reads the body)`,
      met,
    });
    return [
      cell.workload.label,
      ...CPU_TARGETS.map((name) => `${num(spread(cell[name]).median, 1)} µs`),
      ratioText(ratio),
      ratioText(overReading),
      `≤ ${num(cell.workload.target, 1)} ${mark(met)}`,
    ];
  });
  const head = ["workload", "clients", ...Object.values(TARGET_LABELS)];
  const markdown = [
    `Requests per second (median of ${context.rounds} interleaved runs of ${context.seconds} s each) and the ratio of the proxy's throughput to the bare Worker's and to the origin's, as median (lowest–highest) of the per-round ratios.`,
    "",
    table([...head, "proxy ÷ bare", "proxy ÷ direct", "target"], throughput),
    "",
    "Latency, p50 / p99 in ms (median over the rounds), and what the proxy adds to the bare Worker's p50:",
    "",
    table([...head, "proxy − bare p50"], latency),
    "",
    `Failed requests (errors, timeouts, non-2xx) in all runs: ${failed}.`,
    "",
    `CPU the Worker's workerd process spends per request (user and system time of all its threads, from /proc, over ${num(CPU_REQUESTS)} requests at ${CPU_CONNECTIONS} clients, median of ${context.rounds} rounds), proxy ÷ bare Worker as median (lowest–highest) of the per-round ratios. Waiting for a core costs no CPU, so this holds on a busy machine where throughput does not:`,
    "",
    table(
      [
        "workload",
        "bare Worker",
        "bare Worker, body read",
        "proxy",
        "proxy ÷ bare",
        "proxy ÷ body read",
        "target",
      ],
      cpuRows,
    ),
    "",
    "The bare Worker hands the client's body to `fetch` as a stream; the proxy must read it to check it (transport/post-body.ts) before it calls the origin. *Body read* is the bare Worker reading each POST's body whole (`arrayBuffer()`) and sending its bytes on (bench/workers/body-reading.ts): the floor for any Worker that looks at a request first.",
    "",
    "Where the proxy's time goes, beyond the bare Worker's (`npm run bench:profile` shows it function by function): for every POST it reads the whole body, parses and validates it before it calls the origin, and runs its routing; for a `tools/call` it also restores the name, repairs and validates the arguments, serializes the body again and, for a repaired call, writes one log line. Its answers are the origin's own responses, as the bare Worker's are. Locally both Workers are also four to five times slower than the origin direct: every request crosses workerd, which shares two cores with the load generator and the origin.",
    `Log lines the proxy wrote during the runs: ${context.logLines.map(([event, count]) => `\`${event}\` × ${num(count)}`).join(", ") || "none"} (${num(context.proxyCalls)} \`tools/call\` requests went through it).`,
  ].join("\n");
  const data = cells.map((cell) => ({
    workload: cell.workload.label,
    concurrency: cell.concurrency,
    runs: cell.runs,
    proxyOverPassThrough: proxyOver(cell, "passThrough"),
    proxyOverDirect: proxyOver(cell, "direct"),
  }));
  return {
    title: "Request overhead",
    markdown,
    targets,
    data: { cells: data, failed, cpu },
  };
}
