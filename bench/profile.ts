/**
 * `npm run bench:profile -- [proxy|bare] [ping|call]`: where a Worker's CPU
 * goes per request. The Worker runs in workerd (bench/lib/workers.ts) with
 * its inspector open; a CPU profile is taken over the DevTools protocol while
 * autocannon sends a fixed number of requests, and the functions with the
 * most self time are printed, per request. Sampling costs time of its own, so
 * compare the proxy with the bare Worker (`bare`), not with absolute numbers.
 */
import autocannon from "autocannon";
import { MCP_HEADERS, openSession, send } from "./lib/mcp-session";
import { startPassThrough, startProxy, withWorkers } from "./lib/workers";
import { ECHO_TOOL, proxiedName, startBenchOrigin } from "./origin/server";

process.env.CLOUDFLARE_CF_FETCH_ENABLED = "false";
process.env.WRANGLER_SEND_METRICS = "false";

const INSPECTOR_PORT = 9339;
const REQUESTS = 3_000;
const [which = "proxy", workload = "ping"] = process.argv.slice(2);

interface ProfileNode {
  id: number;
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
  const self = new Map<string, number>();
  for (const { id, callFrame } of profile.nodes) {
    const where = callFrame.url
      ? ` ${callFrame.url.split("/").pop()}:${callFrame.lineNumber + 1}`
      : "";
    const name = `${callFrame.functionName || "(anonymous)"}${where}`;
    self.set(name, (self.get(name) ?? 0) + (byNode.get(id) ?? 0));
  }
  const rows = [...self].sort((a, b) => b[1] - a[1]).slice(0, 30);
  process.stdout.write(`${which}, ${workload}: self time per request, µs (bundle lines)\n`);
  for (const [name, micros] of rows) {
    process.stdout.write(`${(micros / REQUESTS).toFixed(1).padStart(8)}  ${name}\n`);
  }
});
origin.close();
