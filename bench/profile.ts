/**
 * `npm run bench:profile -- [proxy|bare] [ping|call]`: where a Worker's CPU
 * goes per request; `npm run bench:profile -- listing <state> [tools]`: where
 * a listing's goes in one state of the map (lib/listing-states.ts; `floor`,
 * the runtime's JSON alone), per listing, in the listing-cpu Worker. The Worker runs in workerd (bench/lib/workers.ts) with
 * its inspector open; a CPU profile is taken over the DevTools protocol while
 * autocannon sends a fixed number of requests, and the functions with the
 * most self time are printed, per request. Sampling costs time of its own, so
 * compare the proxy with the bare Worker (`bare`), not with absolute numbers.
 * `PROFILE_TOTALS=1` also prints the functions with the most total time;
 * `PROFILE_CALLERS=<name>` the callers of the functions whose name starts so,
 * by the time spent in them under each (the self-time list names a getter,
 * not who read it). `PROFILE_HEAP=1` prints what each function allocates
 * instead, per unit (V8's sampling heap profiler, objects collected since
 * included): what a listing leaves garbage collection to do.
 */
import autocannon from "autocannon";
import { MCP_HEADERS, openSession, send } from "./lib/mcp-session";
import {
  type LocalWorker,
  startListingCpu,
  startPassThrough,
  startProxy,
  withWorkers,
} from "./lib/workers";
import { ECHO_TOOL, proxiedName, startBenchOrigin } from "./origin/server";

process.env.CLOUDFLARE_CF_FETCH_ENABLED = "false";
process.env.WRANGLER_SEND_METRICS = "false";

const INSPECTOR_PORT = 9339;
const REQUESTS = 3_000;
const [which = "proxy", workload = "ping"] = process.argv.slice(2);

interface ProfileNode {
  id: number;
  children?: number[];
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** A DevTools protocol session with the Worker's isolate (workerd names it `core:user:`). */
async function devtools(): Promise<(method: string, params?: object) => Promise<unknown>> {
  const targets = (await (await fetch(`http://127.0.0.1:${INSPECTOR_PORT}/json`)).json()) as Array<{
    title: string;
    webSocketDebuggerUrl: string;
  }>;
  const target = targets.find((candidate) => candidate.title.includes("core:user:"));
  if (!target) throw new Error("no user worker among the inspector's targets");
  const socket = new WebSocket(target.webSocketDebuggerUrl);
  await new Promise((resolve) => socket.addEventListener("open", resolve));
  const pending = new Map<number, (result: unknown) => void>();
  socket.addEventListener("message", (event) => {
    const message = JSON.parse(String(event.data)) as { id?: number; result?: unknown };
    if (message.id !== undefined) pending.get(message.id)?.(message.result);
  });
  let next = 0;
  return (method, params = {}) =>
    new Promise((resolve) => {
      const id = ++next;
      pending.set(id, resolve);
      socket.send(JSON.stringify({ id, method, params }));
    });
}

/** Profiles the Worker's isolate while `load` runs; prints the functions with the most self time, per `units`. */
async function profileWhile(load: () => Promise<unknown>, units: number, title: string) {
  const cdp = await devtools();
  await cdp("Profiler.enable");
  await cdp("Profiler.setSamplingInterval", { interval: 50 });
  await cdp("Profiler.start");
  await load();
  const { profile } = (await cdp("Profiler.stop")) as { profile: Profile };

  const byNode = new Map<number, number>();
  profile.samples.forEach((node, i) => {
    byNode.set(node, (byNode.get(node) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const nameOf = ({ callFrame }: ProfileNode) => {
    const where = callFrame.url
      ? ` ${callFrame.url.split("/").pop()}:${callFrame.lineNumber + 1}`
      : "";
    return `${callFrame.functionName || "(anonymous)"}${where}`;
  };
  const self = new Map<string, number>();
  // Total time: a node's own and its callees', counted once per function however deep it recurses.
  const total = new Map<string, number>();
  const visit = (node: ProfileNode, open: Set<string>): number => {
    const name = nameOf(node);
    let spent = byNode.get(node.id) ?? 0;
    self.set(name, (self.get(name) ?? 0) + spent);
    const inner = new Set(open).add(name);
    for (const child of node.children ?? []) {
      const callee = nodes.get(child);
      if (callee) spent += visit(callee, inner);
    }
    if (!open.has(name)) total.set(name, (total.get(name) ?? 0) + spent);
    return spent;
  };
  const root = profile.nodes[0];
  if (root) visit(root, new Set());
  const rows = [...self].sort((a, b) => b[1] - a[1]).slice(0, 40);
  process.stdout.write(`${title}: self and total time per unit, µs (bundle lines)\n`);
  for (const [name, micros] of rows) {
    const all = total.get(name) ?? micros;
    process.stdout.write(
      `${(micros / units).toFixed(1).padStart(8)} ${(all / units).toFixed(1).padStart(8)}  ${name}\n`,
    );
  }
  const wanted = process.env.PROFILE_CALLERS;
  if (wanted) {
    const parents = new Map<number, ProfileNode>();
    for (const node of profile.nodes)
      for (const child of node.children ?? []) parents.set(child, node);
    const byCaller = new Map<string, number>();
    const spentUnder = (node: ProfileNode): number =>
      (byNode.get(node.id) ?? 0) +
      (node.children ?? []).reduce((sum, child) => {
        const callee = nodes.get(child);
        return sum + (callee ? spentUnder(callee) : 0);
      }, 0);
    for (const node of profile.nodes) {
      if (!nameOf(node).startsWith(wanted)) continue;
      const parent = parents.get(node.id);
      const caller = parent ? nameOf(parent) : "(root)";
      byCaller.set(caller, (byCaller.get(caller) ?? 0) + spentUnder(node));
    }
    process.stdout.write(`callers of ${wanted}:\n`);
    for (const [name, micros] of [...byCaller].sort((a, b) => b[1] - a[1]).slice(0, 20)) {
      process.stdout.write(`${(micros / units).toFixed(1).padStart(8)}  ${name}\n`);
    }
  }
  if (process.env.PROFILE_TOTALS) {
    process.stdout.write("by total time:\n");
    for (const [name, micros] of [...total].sort((a, b) => b[1] - a[1]).slice(0, 60)) {
      process.stdout.write(`${(micros / units).toFixed(1).padStart(8)}  ${name}\n`);
    }
  }
}

interface HeapNode {
  callFrame: ProfileNode["callFrame"];
  selfSize: number;
  children: HeapNode[];
}

/** Samples the isolate's allocations while `load` runs; prints the functions that allocate most, per `units`. */
async function allocationsWhile(load: () => Promise<unknown>, units: number, title: string) {
  const cdp = await devtools();
  await cdp("HeapProfiler.enable");
  await cdp("HeapProfiler.startSampling", {
    samplingInterval: 512,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  await load();
  const { profile } = (await cdp("HeapProfiler.stopSampling")) as { profile: { head: HeapNode } };
  const self = new Map<string, number>();
  let all = 0;
  // A builtin (`set`, `join`) is named with the function that called it.
  const visit = (node: HeapNode, caller: string) => {
    const { functionName, url, lineNumber } = node.callFrame;
    const where = url ? ` ${url.split("/").pop()}:${lineNumber + 1}` : "";
    const own = `${functionName || "(anonymous)"}${where}`;
    const name = url ? own : `${own} ← ${caller}`;
    self.set(name, (self.get(name) ?? 0) + node.selfSize);
    all += node.selfSize;
    for (const child of node.children) visit(child, url ? own : caller);
  };
  visit(profile.head, "(root)");
  const kib = (bytes: number) => (bytes / units / 1024).toFixed(1).padStart(8);
  process.stdout.write(
    `${title}: KiB allocated per unit, ${kib(all).trim()} in all (bundle lines)\n`,
  );
  for (const [name, bytes] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 40)) {
    process.stdout.write(`${kib(bytes)}  ${name}\n`);
  }
}

/** `runs` listings of `tools` tools in `state`, in the listing-cpu Worker. */
async function listings(worker: LocalWorker, state: string, tools: string, runs: number) {
  const url = new URL(worker.url);
  url.search = new URLSearchParams({ state, size: tools, runs: String(runs) }).toString();
  const response = await fetch(url);
  if (!response.ok) throw new Error(`listing-cpu ${url.search}: ${response.status}`);
  await response.text();
}

if (which === "listing") {
  const state = workload === "ping" ? "first" : workload;
  const tools = process.argv[4] ?? "1000";
  const runs = 100;
  await withWorkers([() => startListingCpu(INSPECTOR_PORT)], async (worker) => {
    await listings(worker, state, tools, 10);
    await (process.env.PROFILE_HEAP ? allocationsWhile : profileWhile)(
      () => listings(worker, state, tools, runs),
      runs,
      `listing, ${state}, ${tools} tools, per listing`,
    );
  });
  process.exit(0);
}

const origin = await startBenchOrigin();
const start = which === "bare" ? startPassThrough : startProxy;
await withWorkers([() => start(origin.url, INSPECTOR_PORT)], async (worker) => {
  const session = await openSession(origin.url, "json");
  await (await send(worker.url, session, { jsonrpc: "2.0", id: 1, method: "tools/list" })).text();
  const echo = which === "bare" ? ECHO_TOOL : proxiedName(ECHO_TOOL);
  const message =
    workload === "ping"
      ? { jsonrpc: "2.0", id: "[<id>]", method: "ping" }
      : {
          jsonrpc: "2.0",
          id: "[<id>]",
          method: "tools/call",
          params: { name: echo, arguments: { text: "hello", count: "3" } },
        };
  const load = () =>
    new Promise((resolve, reject) =>
      autocannon(
        {
          url: worker.url.href,
          method: "POST",
          headers: { ...MCP_HEADERS, "mcp-session-id": session },
          body: JSON.stringify(message),
          idReplacement: true,
          connections: 8,
          amount: REQUESTS,
        },
        (error, result) => (error ? reject(error) : resolve(result)),
      ),
    );
  await load();
  await profileWhile(load, REQUESTS, `${which}, ${workload}, per request`);
});
origin.close();
