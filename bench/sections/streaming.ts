/**
 * Streaming: how long an event takes from the origin to the client, direct,
 * through the bare Worker and through the proxy; and the proxy's memory while
 * a 100 MB event stream passes through it.
 *
 * The origin runs in this process, so the time it sent each progress
 * notification and the time the client read it come from one clock. Memory is
 * the resident set of the Worker's workerd process, read from /proc while
 * the stream runs.
 */
import { EventSourceParserStream } from "eventsource-parser/stream";
import { openSession, send } from "../lib/mcp-session";
import { mark, mib, num, type SectionResult, type TargetCheck, table } from "../lib/report";
import { median, percentile, rotate } from "../lib/stats";
import { type LocalWorker, residentBytes, withWorkers } from "../lib/workers";
import { type BenchOrigin, ECHO_TOOL, proxiedName, TICK_TOOL } from "../origin/server";

const ROUNDS = 3;
const EVENTS_PER_RUN = 100;
const INTERVAL_MS = 10;
const STREAM_MB = 100;
const SAMPLE_EVERY_MS = 50;

interface Target {
  label: string;
  url: URL;
  tick: string;
}

/** One `tools/call` of the tick tool; returns the latency of each progress notification, in ms. */
async function eventLatencies(
  origin: BenchOrigin,
  target: Target,
  sessionId: string,
  token: string,
) {
  const response = await send(target.url, sessionId, {
    jsonrpc: "2.0",
    id: token,
    method: "tools/call",
    params: {
      name: target.tick,
      arguments: { count: EVENTS_PER_RUN, interval_ms: INTERVAL_MS },
      _meta: { progressToken: token },
    },
  });
  if (!response.body) throw new Error(`${target.label}: no body`);
  const latencies: number[] = [];
  const events = response.body
    .pipeThrough(new TextDecoderStream())
    .pipeThrough(new EventSourceParserStream());
  for await (const event of events) {
    const arrived = performance.now();
    const message = JSON.parse(event.data) as { method?: string; params?: { progress?: number } };
    if (message.method !== "notifications/progress") continue;
    const sent = origin.emitted.get(`${token}:${message.params?.progress}`);
    if (sent === undefined)
      throw new Error(`${target.label}: progress ${message.params?.progress} was never sent`);
    latencies.push(arrived - sent);
  }
  if (latencies.length !== EVENTS_PER_RUN) {
    throw new Error(`${target.label}: ${latencies.length} of ${EVENTS_PER_RUN} events arrived`);
  }
  return latencies;
}

interface StreamRun {
  /** Resident memory before the stream, after its first tenth, at its peak and at its end. */
  before: number;
  atTenth: number;
  peak: number;
  end: number;
  megabytesPerSecond: number;
}

/** Reads a 100 MB event stream through `url` while sampling the Worker's resident memory. */
async function streamOnce(
  url: URL,
  pid: number,
  sessionId: string,
  message: object,
  listingFirst: boolean,
): Promise<StreamRun> {
  const target = new URL(url);
  target.searchParams.set("firehose_mb", String(STREAM_MB));
  if (listingFirst) target.searchParams.set("firehose_listing", "");
  const before = residentBytes(pid);
  let peak = before;
  let atTenth: number | undefined;
  const sampler = setInterval(() => {
    peak = Math.max(peak, residentBytes(pid));
  }, SAMPLE_EVERY_MS);
  const started = performance.now();
  let bytes = 0;
  try {
    const response = await send(target, sessionId, message);
    if (!response.body || !response.headers.get("content-type")?.includes("text/event-stream")) {
      throw new Error(`answered ${response.status} ${response.headers.get("content-type")}`);
    }
    for await (const chunk of response.body) {
      bytes += chunk.byteLength;
      if (atTenth === undefined && bytes >= (STREAM_MB * 1e6) / 10) atTenth = residentBytes(pid);
    }
  } finally {
    clearInterval(sampler);
  }
  const seconds = (performance.now() - started) / 1000;
  const end = residentBytes(pid);
  // Re-emitted events are in canonical form (LF line ends), so a little shorter.
  if (bytes < 0.99 * STREAM_MB * 1e6) throw new Error(`only ${bytes} bytes arrived`);
  return {
    before,
    atTenth: atTenth ?? before,
    peak: Math.max(peak, end),
    end,
    megabytesPerSecond: bytes / 1e6 / seconds,
  };
}

/** Memory counts as flat when, after the first tenth, it grows by less than this while 90 MB more pass. */
const FLAT_BYTES = 8 * 2 ** 20;

interface MemoryCase {
  label: string;
  start: () => Promise<LocalWorker>;
  message: object;
  /** The stream opens with the listing the message asks for. */
  listingFirst?: boolean;
  /** JavaScript reads every chunk: the JavaScript floor's growth is shown beside it. */
  readByJavaScript?: boolean;
}

/** Three streams, one after the other, through a Worker that has served nothing else. */
async function streamThrice(memoryCase: MemoryCase, sessionId: string) {
  return withWorkers([memoryCase.start], async (worker) => {
    // The proxy learns the tool names first, as it would from any client.
    await (
      await send(worker.url, sessionId, { jsonrpc: "2.0", id: 1, method: "tools/list" })
    ).text();
    const streamed = () =>
      streamOnce(
        worker.url,
        worker.pid,
        sessionId,
        memoryCase.message,
        memoryCase.listingFirst ?? false,
      );
    const first = await streamed();
    const second = await streamed();
    const third = await streamed();
    return { ...memoryCase, first, second, third };
  }).catch((error) => {
    throw new Error(`${memoryCase.label}: ${error}`);
  });
}

export function measureStreaming(options: {
  origin: BenchOrigin;
  startPassThrough: () => Promise<LocalWorker>;
  startJavaScriptPump: () => Promise<LocalWorker>;
  startProxy: () => Promise<LocalWorker>;
}): Promise<SectionResult> {
  return withWorkers([options.startPassThrough, options.startProxy], (passThrough, proxy) =>
    measure(options, passThrough, proxy),
  );
}

async function measure(
  {
    origin,
    startPassThrough,
    startJavaScriptPump,
    startProxy,
  }: Parameters<typeof measureStreaming>[0],
  passThrough: LocalWorker,
  proxy: LocalWorker,
): Promise<SectionResult> {
  const sessionId = await openSession(origin.url, "sse");
  await (await send(proxy.url, sessionId, { jsonrpc: "2.0", id: 1, method: "tools/list" })).text();

  const targets: Target[] = [
    { label: "origin direct", url: origin.url, tick: TICK_TOOL },
    { label: "bare Worker", url: passThrough.url, tick: TICK_TOOL },
    { label: "proxy", url: proxy.url, tick: proxiedName(TICK_TOOL) },
  ];
  const latencies = new Map<string, number[]>(targets.map((target) => [target.label, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const target of rotate(targets, round)) {
      const token = `${target.label}-${round}`;
      latencies
        .get(target.label)
        ?.push(...(await eventLatencies(origin, target, sessionId, token)));
    }
  }
  const stats = new Map(
    [...latencies].map(([label, values]) => {
      const sorted = [...values].sort((a, b) => a - b);
      return [
        label,
        {
          p50: median(sorted),
          p99: percentile(sorted, 99),
          max: sorted.at(-1) ?? 0,
          count: sorted.length,
        },
      ];
    }),
  );
  const direct = stats.get("origin direct") as { p50: number; p99: number };
  const viaProxy = stats.get("proxy") as { p50: number; p99: number };
  const added = viaProxy.p50 - direct.p50;

  const callEcho = (name: string) => ({
    jsonrpc: "2.0",
    id: 1,
    method: "tools/call",
    params: { name, arguments: { text: "x" } },
  });
  const memory = [];
  for (const memoryCase of [
    { label: "bare Worker", start: startPassThrough, message: callEcho("bench.echo") },
    {
      label:
        "JavaScript floor (every chunk read and written by the proxy's pump, no event looked for)",
      start: startJavaScriptPump,
      message: callEcho("bench.echo"),
    },
    {
      label: "proxy, answer to a `tools/call` (the origin's own body)",
      start: startProxy,
      message: callEcho(proxiedName(ECHO_TOOL)),
    },
    {
      label: "proxy, answer to a `tools/list` (events found in the bytes, none of them a listing)",
      start: startProxy,
      message: { jsonrpc: "2.0", id: 1, method: "tools/list" },
      readByJavaScript: true,
    },
    {
      label:
        "proxy, answer to a `tools/list` that carries the listing first (the rest handed to the runtime)",
      start: startProxy,
      message: { jsonrpc: "2.0", id: 1, method: "tools/list" },
      listingFirst: true,
    },
  ]) {
    memory.push(await streamThrice(memoryCase, sessionId));
  }

  const growthOf = (run: { first: StreamRun }) => run.first.peak - run.first.atTenth;
  const floor = memory.find((run) => run.start === startJavaScriptPump);
  const floorGrowth = floor ? growthOf(floor) : Number.NaN;
  const checks: TargetCheck[] = [
    {
      name: "event latency through the proxy, added to direct (p50)",
      goal: "≤ 1 ms",
      measured: `${num(added, 2)} ms`,
      met: added <= 1,
    },
    ...memory
      .filter((run) => run.label.startsWith("proxy"))
      .map((run) => {
        const growth = growthOf(run);
        return {
          name: `memory flat over a ${STREAM_MB} MB stream, ${run.label.replace(/ \(.*\)$/, "")}`,
          goal: `grows < ${mib(FLAT_BYTES)} after the first 10 MB`,
          measured: run.readByJavaScript
            ? `${mib(growth)} (JavaScript floor ${mib(floorGrowth)})`
            : mib(growth),
          met: growth < FLAT_BYTES,
        };
      }),
  ];

  const markdown = [
    `Time from the origin sending a progress notification to the client reading it, in ms: ${ROUNDS} runs per target of ${EVENTS_PER_RUN} events ${INTERVAL_MS} ms apart, interleaved.`,
    "",
    table(
      ["path", "events", "p50", "p99", "max"],
      targets.map(({ label }) => {
        const s = stats.get(label) as { p50: number; p99: number; max: number; count: number };
        return [label, String(s.count), num(s.p50, 3), num(s.p99, 3), num(s.max, 3)];
      }),
    ),
    "",
    `The proxy adds ${num(added, 3)} ms at the median (${num(viaProxy.p99 - direct.p99, 3)} ms at p99) to the direct path; target ≤ 1 ms ${mark(added <= 1)}.`,
    "",
    `Resident memory of the Worker's workerd process while a ${STREAM_MB} MB event stream of progress notifications (test/fixtures/firehose.ts: events of up to 1 KB, in chunks cut at random places) passes, sampled every ${SAMPLE_EVERY_MS} ms. Each path gets a Worker that has served nothing else, and two more ${STREAM_MB} MB streams right after the first, to tell memory that keeps growing from memory that levels off:`,
    "",
    table(
      [
        "path",
        "before",
        "after 10 MB",
        "peak",
        "growth after 10 MB",
        "peak, 2nd stream",
        "peak, 3rd stream",
        "throughput",
      ],
      memory.map(({ label, first, second, third }) => [
        label,
        mib(first.before),
        mib(first.atTenth),
        mib(first.peak),
        mib(first.peak - first.atTenth),
        mib(second.peak),
        mib(third.peak),
        `${num(first.megabytesPerSecond)} MB/s`,
      ]),
    ),
    "",
    `Flat means the resident set grows by less than ${mib(FLAT_BYTES)} while the last 90 MB pass: a proxy that held on to what it streamed would grow by about 90 MB.`,
    "",
    "An answer to a `tools/call` is the origin's own body, handed to the runtime as the bare Worker hands it. A stream that may carry a listing is read chunk by chunk by JavaScript (src/transport/hand-off.ts), which finds its events, until every listing asked for is answered; from then on the rest is handed to the runtime and no JavaScript sees it. The JavaScript floor is that same pump with nothing looked for: what the resident set of a local workerd, which has no memory limit, grows by while JavaScript reads a stream at all, before it levels off (compare the peaks of the later streams). Throughput while JavaScript reads is bounded by the per-chunk work.",
  ].join("\n");
  return {
    title: "Streaming",
    markdown,
    targets: checks,
    data: { latency: Object.fromEntries(stats), memory },
  };
}
