/**
 * KV behavior: how many Workers KV reads and writes each kind of request
 * costs, counted (not timed) on the real local KV binding of the proxy
 * (workers/kv-counting.ts), from a brand-new deployment on.
 *
 * A cold isolate is played by starting over with empty isolate memory while
 * KV keeps what it holds, as a new isolate of the same deployment would.
 * Writes go out in `waitUntil`; they are counted when made.
 */
import { openSession, send } from "../lib/mcp-session";
import { mark, type SectionResult, type TargetCheck, table } from "../lib/report";
import { type LocalWorker, withWorkers } from "../lib/workers";
import { ECHO_TOOL, proxiedName } from "../origin/server";

interface Counts {
  get: number;
  list: number;
  put: number;
  delete: number;
  getWithMetadata: number;
}

interface Step {
  request: string;
  state: string;
  /** Starts from empty isolate memory first. */
  coldIsolate?: boolean;
  message: object;
  /** What the row must show, if it has a target. */
  target?: { goal: string; met: (reads: number, writes: number) => boolean };
}

const list = { jsonrpc: "2.0", id: 1, method: "tools/list" };
const callEcho = {
  jsonrpc: "2.0",
  id: 2,
  method: "tools/call",
  params: { name: proxiedName(ECHO_TOOL), arguments: { text: "hello" } },
};
const callUnknown = {
  jsonrpc: "2.0",
  id: 3,
  method: "tools/call",
  params: { name: "no_such_tool", arguments: {} },
};

/** From a new deployment on: each row's state is what the rows before it left. */
const DEPLOYMENT: Step[][] = [
  [
    {
      request: "`tools/list`",
      state: "first ever: KV empty, cold isolate",
      message: list,
      target: { goal: "≤ 3 writes", met: (_reads, writes) => writes <= 3 },
    },
    {
      request: "`tools/list`",
      state: "repeated, warm isolate",
      message: list,
      target: { goal: "0 writes", met: (_reads, writes) => writes === 0 },
    },
    {
      request: "`tools/list`",
      state: "cold isolate of the same deployment: the answer in KV",
      coldIsolate: true,
      message: list,
      target: { goal: "1 read, 0 writes", met: (reads, writes) => reads === 1 && writes === 0 },
    },
    {
      request: "`tools/call`",
      state: "cold isolate, map in KV",
      coldIsolate: true,
      message: callEcho,
      target: { goal: "≤ 3 reads", met: (reads) => reads <= 3 },
    },
    {
      request: "`tools/call`",
      state: "warm isolate",
      message: callEcho,
      target: { goal: "0 reads", met: (reads) => reads === 0 },
    },
    { request: "`tools/call` of a name never listed", state: "warm isolate", message: callUnknown },
  ],
  // A second new deployment, whose first request is a call: the proxy asks the origin for its tools.
  [
    {
      request: "`tools/call`",
      state: "first ever: KV empty, nothing listed yet",
      message: callEcho,
    },
  ],
];

async function counted(worker: LocalWorker, sessionId: string, step: Step): Promise<Counts> {
  await (await fetch(new URL("/__bench/kv", worker.url))).body?.cancel();
  if (step.coldIsolate)
    await fetch(new URL("/__bench/cold-isolate", worker.url), { method: "POST" });
  const answer = await (await send(worker.url, sessionId, step.message)).text();
  if (!answer.includes('"result"')) throw new Error(`${step.request}: ${answer}`);
  return (await (await fetch(new URL("/__bench/kv", worker.url))).json()) as Counts;
}

/** How many tools the origin lists, and how many of them the proxy renames. */
async function listingShape(originUrl: URL, sessionId: string) {
  const answer = await (await send(originUrl, sessionId, list)).json();
  const names = (answer as { result: { tools: Array<{ name: string }> } }).result.tools.map(
    (tool) => tool.name,
  );
  return {
    tools: names.length,
    illegal: names.filter((name) => !/^[A-Za-z0-9_-]{1,64}$/.test(name)).length,
  };
}

export async function measureKv(
  originUrl: URL,
  startProxy: () => Promise<LocalWorker>,
): Promise<SectionResult> {
  const sessionId = await openSession(originUrl, "json");
  const shape = await listingShape(originUrl, sessionId);
  const rows: Array<Step & { counts: Counts }> = [];
  for (const steps of DEPLOYMENT) {
    await withWorkers([startProxy], async (worker) => {
      for (const step of steps)
        rows.push({ ...step, counts: await counted(worker, sessionId, step) });
    });
  }

  const targets: TargetCheck[] = [];
  const tableRows = rows.map(({ request, state, counts, target }) => {
    const reads = counts.get + counts.getWithMetadata + counts.list;
    const writes = counts.put + counts.delete;
    let verdict = "—";
    if (target) {
      const met = target.met(reads, writes);
      targets.push({
        name: `KV, ${request.replaceAll("`", "")}, ${state}`,
        goal: target.goal,
        measured: `${reads} reads, ${writes} writes`,
        met,
      });
      verdict = `${target.goal} ${mark(met)}`;
    }
    return [
      request,
      state,
      `${reads} (${counts.get} get, ${counts.list} list)`,
      String(writes),
      verdict,
    ];
  });
  const markdown = [
    `KV operations per request, counted on the proxy's real local KV binding. The origin lists ${shape.tools} tools, ${shape.illegal} of them with names OpenAI rejects.`,
    "",
    table(["request", "state", "KV reads", "KV writes", "target"], tableRows),
    "",
    "Layout 2 keeps one map and one schema store per origin, so these counts are the same for 10 tools as for 5,000 (test/worker/tool-map-kv.test.ts asserts them at each size): a first listing writes the schemas and the map, looking once for names an earlier layout stored (one `list`); a cold isolate reads the map, and the chunk holding a schema when a call needs it. A name never listed also has the proxy ask the origin for its `tools/list`, at most once a minute per caller and session and 30 times a minute per isolate (docs/names.md): that is what a client that calls a removed tool costs.",
  ].join("\n");
  return { title: "KV behavior", markdown, targets, data: { listing: shape, rows } };
}
