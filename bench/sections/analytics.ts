/**
 * What call analytics costs (docs/observability.md): workerd CPU per
 * `tools/call` through the proxy with the `CALLS` dataset bound ÷ the same
 * proxy without it, the call's answer in a JSON body and in an event stream.
 * With the binding the proxy builds a record, reads the answer of a sampled
 * share of requests as it passes (`CALLS_ANSWER_SAMPLING_RATE`, at its
 * default: the target's; and at 1, every answer, for what reading costs)
 * and writes a data point; Miniflare's local dataset takes the point and
 * writes it nowhere, as the runtime's hands it to Cloudflare after the
 * answer. CPU is read from /proc, as in the overhead section: waiting for a
 * core costs none, but a busy machine makes each instruction dearer, by
 * 10–30% from one run to the next on a shared 2-core VM. So the Workers of a
 * round are loaded at once, each with its own clients, and share whatever
 * the machine does meanwhile; and a second proxy without the binding (the
 * control) shows how far two identical Workers differ in such a round: a
 * ratio is worth as much as the control's spread says.
 */
import { load } from "../lib/load";
import { answerText, openSession, type ResponseMode, send } from "../lib/mcp-session";
import { mark, num, type SectionResult, type TargetCheck, table } from "../lib/report";
import { type Spread, spread } from "../lib/stats";
import { cpuNanoseconds, type LocalWorker, withWorkers } from "../lib/workers";
import { ECHO_TOOL, proxiedName } from "../origin/server";
import { CPU_CONNECTIONS, CPU_REQUESTS, repairedCall } from "./overhead";

/** Most CPU per call with the binding, as a multiple of without (the acceptance). */
const TARGET = 1.05;
const MODES: readonly ResponseMode[] = ["json", "sse"];
const MODE_LABELS: Record<ResponseMode, string> = {
  json: "`tools/call`, JSON answer",
  sse: "`tools/call`, event-stream answer",
};

type Variant = "without" | "with" | "everyAnswer" | "control";
const VARIANTS: readonly Variant[] = ["without", "with", "everyAnswer", "control"];
const LABELS: Record<Variant, string> = {
  without: "the proxy without the binding",
  with: "the proxy with the binding",
  everyAnswer: "the proxy with the binding, every answer read",
  control: "the control",
};

export function measureAnalytics(options: {
  originUrl: URL;
  startProxy: () => Promise<LocalWorker>;
  startProxyWithCalls: (vars?: Record<string, string>) => Promise<LocalWorker>;
  rounds: number;
}): Promise<SectionResult> {
  const { startProxy, startProxyWithCalls } = options;
  const readingEvery = () => startProxyWithCalls({ CALLS_ANSWER_SAMPLING_RATE: "1" });
  return withWorkers(
    [startProxy, startProxyWithCalls, readingEvery, startProxy],
    (without, withCalls, everyAnswer, control) =>
      measure(
        options.originUrl,
        { without, with: withCalls, everyAnswer, control },
        options.rounds,
      ),
  );
}

async function measure(
  originUrl: URL,
  workers: Record<Variant, LocalWorker>,
  rounds: number,
): Promise<SectionResult> {
  const sessions = {
    json: await openSession(originUrl, "json"),
    sse: await openSession(originUrl, "sse"),
  };
  const body = JSON.stringify(repairedCall(proxiedName(ECHO_TOOL)));
  for (const variant of VARIANTS) {
    const { url } = workers[variant];
    // Each proxy learns its names from a listing, as from any client; then one call is checked.
    await (await send(url, sessions.json, { jsonrpc: "2.0", id: 1, method: "tools/list" })).text();
    for (const mode of MODES) {
      const response = await send(url, sessions[mode], JSON.parse(body.replace('"[<id>]"', "2")));
      const text = await answerText(response);
      if (!response.ok || !text.includes("hello")) {
        throw new Error(`${LABELS[variant]} answered ${response.status}: ${text}`);
      }
      // Warm-up, not measured.
      await load(url, sessions[mode], body, CPU_CONNECTIONS, { amount: CPU_REQUESTS / 4 });
    }
  }

  /** µs of workerd CPU per call, per mode and variant, one per round. */
  const cpu = Object.fromEntries(
    MODES.map((mode) => [
      mode,
      {
        without: [] as number[],
        with: [] as number[],
        everyAnswer: [] as number[],
        control: [] as number[],
      },
    ]),
  ) as Record<ResponseMode, Record<Variant, number[]>>;
  const run = async (variant: Variant, mode: ResponseMode) => {
    const worker = workers[variant];
    const before = cpuNanoseconds(worker.pid);
    const { failed } = await load(worker.url, sessions[mode], body, CPU_CONNECTIONS, {
      amount: CPU_REQUESTS,
    });
    if (failed > 0) throw new Error(`${LABELS[variant]}: ${failed} failed requests`);
    cpu[mode][variant].push((cpuNanoseconds(worker.pid) - before) / CPU_REQUESTS / 1000);
  };
  for (let round = 0; round < rounds; round++) {
    for (const mode of MODES) await Promise.all(VARIANTS.map((variant) => run(variant, mode)));
    process.stderr.write(`  analytics: round ${round + 1} of ${rounds} done\n`);
  }
  /** Per round, `variant`'s CPU ÷ the proxy's without the binding. */
  const ratios = (mode: ResponseMode, variant: Variant): Spread =>
    spread(cpu[mode][variant].map((us, i) => us / (cpu[mode].without[i] as number)));

  const targets: TargetCheck[] = [];
  const rows = MODES.map((mode) => {
    const ratio = ratios(mode, "with");
    const every = ratios(mode, "everyAnswer");
    const control = ratios(mode, "control");
    const met = ratio.median <= TARGET;
    targets.push({
      name: `workerd CPU per request with call analytics, ${MODE_LABELS[mode]}`,
      goal: `with the CALLS binding ≤ ${num(TARGET, 2)} × without`,
      measured: `${num(ratio.median, 3)} ×`,
      met,
    });
    return [
      MODE_LABELS[mode],
      `${num(spread(cpu[mode].without).median, 1)} µs`,
      `${num(spread(cpu[mode].with).median, 1)} µs`,
      `${num(ratio.median, 3)} (${num(ratio.min, 3)}–${num(ratio.max, 3)})`,
      `${num(every.median, 3)} (${num(every.min, 3)}–${num(every.max, 3)})`,
      `${num(control.median, 3)} (${num(control.min, 3)}–${num(control.max, 3)})`,
      `≤ ${num(TARGET, 2)} ${mark(met)}`,
    ];
  });
  const markdown = [
    `CPU the proxy's workerd process spends per \`tools/call\` (the echo tool, renamed and its \`count\` repaired), ${num(CPU_REQUESTS)} calls at ${CPU_CONNECTIONS} clients per Worker and round, the Workers of a round loaded at once, median of ${rounds} rounds; with the \`CALLS\` dataset bound (\`CALLS_ANSWER_SAMPLING_RATE\` at its default, then at 1) ÷ without, and the control (a second proxy without it) ÷ without, as median (lowest–highest) of the per-round ratios:`,
    "",
    table(
      [
        "workload",
        "without",
        "with `CALLS`",
        "with ÷ without",
        "every answer read ÷ without",
        "control ÷ without",
        "target",
      ],
      rows,
    ),
    "",
    "With the binding the proxy builds the call's record, reads the answers of a sampled share of requests as they pass (a JSON body to its end, an event stream until the call's response) and writes one data point, which Miniflare's local dataset drops. The target is the default's; reading every answer is the choice of an operator who sets the rate to 1.",
  ].join("\n");
  return { title: "Call analytics", markdown, targets, data: { cpu } };
}
