/**
 * The proxy's own code alone, with tinybench, in this process before anything
 * else runs: a single-threaded call on an idle core, so wall time is its CPU time.
 *
 * - A `tools/list` answer renamed by the proxy's own listing path
 *   (`rewriteMessages` in rewrite/response.ts: `ToolMap.nameListing` plans the
 *   names and what to store, remembers them and hands the changes to KV; the
 *   result is renamed and the `tools_renamed` line serialized), and the same
 *   with the runtime's JSON around it (`rewriteJsonText`: the body parsed,
 *   renamed, serialized again). KV is answered from memory (bench/lib/memory-kv.ts),
 *   so its I/O is left out; the serialization of what is stored is not.
 * - Schema views and search mode (core-views.ts).
 * - One `tools/call` repaired as the proxy repairs it (`repairToolCall`: name
 *   restored, arguments recovered, coalesced, coerced and validated), its
 *   log line serialized.
 * - The event-stream transforms every streamed answer passes through.
 *
 * WebCrypto's digest (definition pins) runs in this thread, as workerd runs
 * it (lib/in-thread-digest.ts), not on Node's thread pool.
 */
import { unreadAddressee } from "../../src/protocol/jsonrpc";
import { revisionOf } from "../../src/protocol/revision";
import { rewriteResponse } from "../../src/rewrite/response";
import { repairToolCall } from "../../src/rewrite/tools-call";
import { ToolMapMemory } from "../../src/toolmap/isolate-memory";
import { rewriteEventStream } from "../../src/transport/event-rewrite";
import { watchEventStream } from "../../src/transport/event-watch";
import { ReadBudget } from "../../src/transport/read-bounded";
import { WHOLE_LISTING } from "../../support/listing";
import { digestInThread } from "../lib/in-thread-digest";
import {
  freshText,
  LIST_IDS,
  LISTING_STATES,
  type ListingCase,
  type ListingState,
  listingCase,
  openToolMap,
  renameOnce,
  stateName,
} from "../lib/listing-states";
import { compareNatively } from "../lib/native-compare";
import { REPAIR_CASES } from "../lib/repair-cases";
import {
  duration,
  mark,
  mib,
  num,
  type SectionResult,
  type TargetCheck,
  table,
} from "../lib/report";
import { pump, STREAM_BYTES } from "../lib/stream-cases";
import { faultsPer, freshPageCost, type Timed, type Timing, time } from "../lib/timing";
import { measureViews } from "./core-views";

const MCP_HEADERS = new Headers({ "mcp-protocol-version": "2025-11-25" });
const LISTING_SIZES = [10, 1_000, 10_000];

/**
 * A repeated listing in a JSON body, same isolate, from the body's bytes to
 * the answer's (`rewriteResponse`: compared with the remembered answer,
 * natively as in workerd, and answered as bytes), and, beside it, a
 * `Response` of the same bytes read back.
 */
async function fromBytes(c: ListingCase): Promise<Timed[]> {
  const memory = new ToolMapMemory();
  const background: Promise<unknown>[] = [];
  const answer = async () => {
    const response = await rewriteResponse(
      new Response(c.bytes, { headers: { "content-type": "application/json" } }),
      {
        listIds: LIST_IDS,
        wholeListing: WHOLE_LISTING,
        watchesListChanged: false,
        toolMap: openToolMap(c.storedKv, memory, background),
        addressee: { ...unreadAddressee(new Headers()), ids: [1] },
        reads: new ReadBudget(),
      },
    );
    return response.arrayBuffer();
  };
  await answer();
  await Promise.all(background);
  return [
    ["bytes", answer],
    ["bytes floor", () => new Response(c.bytes).arrayBuffer()],
  ];
}

export async function measureCore(): Promise<SectionResult> {
  // Log lines are serialized as in the proxy, but not printed.
  const log = console.log;
  console.log = () => {};
  const restoreDigest = digestInThread();
  const restoreCompare = compareNatively();
  try {
    return await measure();
  } finally {
    console.log = log;
    restoreDigest();
    restoreCompare();
  }
}

async function measure(): Promise<SectionResult> {
  const listings = await Promise.all(LISTING_SIZES.map((size) => listingCase(size)));
  const states = Object.keys(LISTING_STATES) as ListingState[];
  let turn = 0;
  const listingTimes = await time(
    listings.flatMap((c) => [
      // The floor: the same text through the runtime's JSON, parsed and written again.
      [`floor ${c.size}`, () => JSON.stringify(JSON.parse(c.body))] as Timed,
      ...states.flatMap((state) =>
        [false, true].map(
          (json): Timed => [
            `${state}${json ? " json" : ""} ${c.size}`,
            () => renameOnce(c, state, json, turn++),
            json ? () => freshText(c, state) : undefined,
          ],
        ),
      ),
    ]),
    { time: 600, iterations: 10 },
  );
  const thousand = listings.find((c) => c.size === 1_000) as ListingCase;
  const bytesTimes = await time(await fromBytes(thousand), { time: 600, iterations: 10 });
  const bytesAt = (name: string) => bytesTimes.get(name) as Timing;
  // Fresh memory per 1,000-tool listing, text to text, by the name of its timing.
  const faults = new Map<string, number>([
    ["floor 1000", await faultsPer(() => JSON.stringify(JSON.parse(thousand.body)), 20)],
  ]);
  for (const state of states) {
    const listing = () => renameOnce(thousand, state, true, turn++);
    const fresh = await faultsPer(listing, 20, () => freshText(thousand, state));
    faults.set(`${state} json 1000`, fresh);
  }
  const pageCost = freshPageCost();
  const views = await measureViews();
  const repairTimes = await time(
    REPAIR_CASES.map((c) => [
      c.label,
      () => repairToolCall(c.message, c.resolve, "warn", revisionOf(MCP_HEADERS, c.message)),
    ]),
    { time: 500, iterations: 64 },
  );
  const streamTimes = await time(
    [
      [
        "rewrite",
        () =>
          pump(
            rewriteEventStream({
              rewrite: () => undefined,
              mayMatter: (text) => text.includes('"tools"'),
              maxEventChars: 1 << 24,
            }),
          ),
      ],
      [
        "watch",
        () => pump(watchEventStream("notifications/tools/list_changed", () => {}, 1 << 16)),
      ],
    ],
    { time: 500, iterations: 10 },
  );

  const targets: TargetCheck[] = [];
  const at = (name: string) => listingTimes.get(name) as Timing;
  const perTool = (state: string, size: number) => at(`${state} ${size}`).p50 / size;
  for (const state of Object.keys(LISTING_STATES) as ListingState[]) {
    const label = stateName(state);
    const ms = at(`${state} 1000`).p50;
    targets.push({
      name: `rename a 1,000-tool listing, ${label}`,
      goal: "< 2 ms CPU",
      measured: duration(ms),
      met: ms < 2,
    });
    const withJson = at(`${state} json 1000`).p50;
    targets.push({
      name: `rename a 1,000-tool listing with the runtime's JSON, ${label}`,
      goal: "< 5 ms CPU",
      measured: duration(withJson),
      met: withJson < 5,
    });
    const ratio = withJson / at("floor 1000").p50;
    targets.push({
      name: `a 1,000-tool listing, text to text, ÷ the JSON floor (parse + stringify), ${label}`,
      goal: "≤ 1.0",
      measured: `${num(ratio, 2)} × (floor ${duration(at("floor 1000").p50)})`,
      met: ratio <= 1,
    });
    for (const [path, measured] of [
      ["", state],
      [", text to text", `${state} json`],
    ] as const) {
      const growth = perTool(measured, 10_000) / perTool(measured, 1_000);
      targets.push({
        name: `listing cost linear in tool count${path}, ${label}`,
        goal: "per-tool cost at 10,000 tools ≤ 1.2 × at 1,000",
        measured: `${num(growth, 2)} ×`,
        met: growth <= 1.2,
      });
    }
  }
  // The whole path of a repeated listing in a JSON body, as workerd runs it: bytes in, bytes out.
  const fromBody = bytesAt("bytes").p50;
  const fromBodyRatio = fromBody / at("floor 1000").p50;
  targets.push({
    name: "a 1,000-tool listing in a JSON body, from its bytes to the answer's, repeated, same isolate",
    goal: "< 2 ms CPU and ≤ 1.0 × the JSON floor",
    measured: `${duration(fromBody)}, ${num(fromBodyRatio, 2)} × (floor ${duration(at("floor 1000").p50)})`,
    met: fromBody < 2 && fromBodyRatio <= 1,
  });
  targets.push(...views.targets);
  for (const c of REPAIR_CASES) {
    const goalMs = c.typical ? 0.05 : c.goalMs;
    if (goalMs === undefined) continue;
    const ms = (repairTimes.get(c.label) as Timing).p50;
    targets.push({
      name: `repair one \`tools/call\`, ${c.label}`,
      goal: c.typical ? "< 50 µs" : `< ${goalMs} ms`,
      measured: duration(ms),
      met: ms < goalMs,
    });
  }

  const faultCost = (name: string) => (faults.get(name) ?? 0) * pageCost;
  const cell = (name: string) => `${duration(at(name).p50)} / ${duration(at(name).p99)}`;
  const listingRows = listings.flatMap((c) =>
    [false, true].map((json) => [
      num(c.size),
      `${num(c.body.length / 1e6, 2)} MB`,
      json ? "with the runtime's JSON" : "renaming only",
      ...states.map((state) => cell(`${state}${json ? " json" : ""} ${c.size}`)),
      duration(at(`warm${json ? " json" : ""} ${c.size}`).p50 / c.size),
      json ? cell(`floor ${c.size}`) : "—",
    ]),
  );
  const repairRows = REPAIR_CASES.map((c) => {
    const t = repairTimes.get(c.label) as Timing;
    const goalMs = c.typical ? 0.05 : c.goalMs;
    return [
      c.label,
      `${num(JSON.stringify(c.message.params).length)} B`,
      `${duration(t.p50)} / ${duration(t.p99)}`,
      goalMs === undefined
        ? "—"
        : `${c.typical ? "< 50 µs" : `< ${goalMs} ms`} ${mark(t.p50 < goalMs)}`,
    ];
  });
  const streamRows = [
    [
      "`rewriteEventStream` (a stream that may carry a `tools/list` answer: events found in the bytes; only one that may hold a listing is parsed)",
      "rewrite",
    ],
    [
      "`watchEventStream` (the GET and `subscriptions/listen` streams: bytes passed on, scanned for `list_changed`)",
      "watch",
    ],
  ].map(([label, key]) => {
    const t = streamTimes.get(key as string) as Timing;
    return [label as string, `${num(STREAM_BYTES / 1e6 / (t.p50 / 1000))} MB/s`];
  });

  const markdown = [
    "Median / p99 time per operation (tinybench, Node, one core, nothing else running). Workers bill CPU time, and a Free-plan request gets 10 ms of it.",
    "",
    "Renaming a `tools/list` answer on the proxy's own path (`rewriteMessages`): name the listing (`ToolMap.nameListing`: plan names and what to store, pin definitions (`TOOL_CHANGES=log`, the default), remember them, serialize what goes to KV), rename the result, serialize the `tools_renamed` log line. KV answers from memory, so its I/O (and the decoding of what it reads) is not counted. The listing is realistic (support/listing.ts): half the names illegal for OpenAI, one in twenty colliding. Six states of the map:",
    "",
    ...Object.values(LISTING_STATES).map((description) => `- *${description.replace(": ", "*: ")}`),
    "",
    "\"With the runtime's JSON\" is the same from the body's text to the text sent on (`rewriteJsonText`: for the text last rewritten, id aside, the remembered answer; else the listing read from its text, named, and written by copying the origin's text for what stays as it came), as for an answer in a JSON body or in one event. The JSON floor is that text through `JSON.parse` and `JSON.stringify` alone.",
    "",
    table(
      [
        "tools",
        "answer",
        "measured",
        ...states.map(stateName),
        "per tool (same isolate)",
        "JSON floor",
      ],
      listingRows,
    ),
    "",
    `From the body's bytes to the answer's, as a JSON body arrives and leaves (\`rewriteResponse\`, 1,000 tools, repeated in the same isolate): the body is compared with the remembered answer as bytes (natively, as workerd does: bench/lib/native-compare.ts) and the remembered bytes are sent, neither decoded nor encoded: ${duration(bytesAt("bytes").p50)} / ${duration(bytesAt("bytes").p99)}, beside ${duration(bytesAt("bytes floor").p50)} / ${duration(bytesAt("bytes floor").p99)} for a \`Response\` of the same bytes read back.`,
    "",
    `Fresh memory per 1,000-tool listing, text to text: the pages the kernel maps for it (minor page faults of the process, 4 KiB each, over 20 listings), and what they cost at ${duration(pageCost)} a page here (16 MiB written freshly mapped, less written again). On a virtual machine a fault costs far more than on bare metal; the rest of a listing's time is work:`,
    "",
    table(
      ["", "JSON floor", ...states.map(stateName)],
      [
        ["fresh memory", (name: string) => mib((faults.get(name) ?? 0) * 4096)] as const,
        ["its cost here", (name: string) => duration(faultCost(name))] as const,
        [
          "share of the median time",
          (name: string) => `${num((faultCost(name) / at(name).p50) * 100)}%`,
        ] as const,
      ].map(([row, value]) => [row, ...[...faults.keys()].map(value)]),
    ),
    "",
    ...views.markdown,
    "Repairing one `tools/call` (`repairToolCall`, validation on, as by default):",
    "",
    table(["call", "params", "median / p99", "target"], repairRows),
    "",
    `Event-stream transforms, ${num(STREAM_BYTES / 1e6, 1)} MB of 500-byte events per run:`,
    "",
    table(["transform", "throughput"], streamRows),
  ].join("\n");
  return {
    title: "Core cost",
    markdown,
    targets,
    data: {
      listing: Object.fromEntries(listingTimes),
      fromBytes: Object.fromEntries(bytesTimes),
      freshPages: { faults: Object.fromEntries(faults), msPerPage: pageCost },
      ...views.data,
      repair: Object.fromEntries(repairTimes),
      streams: Object.fromEntries(streamTimes),
    },
  };
}
