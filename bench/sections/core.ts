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
 * - Schema views (src/schemas/view.ts): every schema of a 1,000-tool listing
 *   viewed under each profile that adapts schemas, as a first listing or a
 *   new isolate pays for them, and a repeated listing under `gemini` (views
 *   from isolate memory) beside the same under `mcp` (no views at all).
 * - One `tools/call` repaired as the proxy repairs it (`repairToolCall`: name
 *   restored, arguments recovered, coalesced, coerced and validated), its
 *   log line serialized.
 * - The event-stream transforms every streamed answer passes through.
 *
 * WebCrypto's digest (definition pins) runs in this thread, as workerd runs
 * it (lib/in-thread-digest.ts), not on Node's thread pool.
 */
import type { ProfileName } from "../../src/names/profiles";
import { unreadAddressee } from "../../src/protocol/jsonrpc";
import { revisionOf } from "../../src/protocol/revision";
import { rewriteMessages } from "../../src/rewrite/listing-answer";
import { rewriteResponse } from "../../src/rewrite/response";
import { repairToolCall } from "../../src/rewrite/tools-call";
import { SCHEMA_PASSES } from "../../src/schemas/profile";
import { schemaView } from "../../src/schemas/view";
import { ToolMapMemory } from "../../src/toolmap/isolate-memory";
import { ToolSearch } from "../../src/toolmap/tool-search";
import { watchEventStream } from "../../src/transport/event-watch";
import { ReadBudget } from "../../src/transport/read-bounded";
import { rewriteEventStream } from "../../src/transport/sse";
import { realisticListing, WHOLE_LISTING } from "../../support/listing";
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

const MCP_HEADERS = new Headers({ "mcp-protocol-version": "2025-11-25" });
const VIEW_PROFILES = ["openai", "openai-strict", "anthropic", "gemini", "portable"] as const;
const VIEW_SIZE = 1_000;
const SEARCH_QUERY = "list invoices";
/**
 * A query of one-letter words: matched as the start of longer words, each
 * read the postings of every term it starts, and 8 of them most of the index
 * (before 9ff60c9: 4.5 times a query of words at 1,000 tools, 20 at 10,000).
 */
const SHORT_WORDS_QUERY = "s c p d g r t m";

/**
 * A root `anyOf` whose one branch requires `names` names, and an `allOf` of
 * two type lists of as many: each name looked up in a list of them made a
 * view's merge quadratic (2.5 s for 60,000 names before 8ff5d1a).
 */
const wideBranches = (names: number) => {
  const listed = Array.from({ length: names }, (_, i) => `n${i}`);
  return [
    { anyOf: [{ type: "object", required: listed }] },
    { allOf: [{ type: ["object", ...listed] }, { type: ["object", ...listed] }] },
  ];
};
const WIDE_NAMES = [6_000, 60_000] as const;

/**
 * A listing's page after its first, which shows every tool's schema whatever
 * the profile's ceiling: a whole listing of 1,000 tools under `gemini` is
 * search mode, which shows none (docs/search-mode.md).
 */
const LATER_PAGE = { isFirstPage: () => false, readRest: async () => [] };

/** A repeated listing in a warm isolate under `profile`, as a later page: names and views from memory. */
async function warmListing(profile: ProfileName) {
  const { body, storedKv, warmMemory } = await listingCase(VIEW_SIZE, profile);
  const parsed = [JSON.parse(body), JSON.parse(body)];
  let turn = 0;
  return () =>
    rewriteMessages(parsed[turn++ % 2], {
      listIds: LIST_IDS,
      toolMap: openToolMap(storedKv, warmMemory, [], profile),
      wholeListing: LATER_PAGE,
    });
}

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
  const schemas = realisticListing(VIEW_SIZE).tools.map((tool) => tool.inputSchema);
  const viewTimes = await time(
    [
      ...VIEW_PROFILES.map(
        (profile): Timed => [
          `view ${profile}`,
          () => {
            for (const schema of schemas) schemaView(schema, SCHEMA_PASSES[profile]);
          },
        ],
      ),
      ["repeated gemini", await warmListing("gemini")],
      ["repeated mcp", await warmListing("mcp")],
    ],
    { time: 600, iterations: 10 },
  );
  const searchable = realisticListing(VIEW_SIZE).tools.map((tool) => ({
    name: tool.name,
    original: tool.name,
    description: tool.description,
    inputSchema: tool.inputSchema,
  }));
  const built = new ToolSearch(searchable);
  built.search(SEARCH_QUERY, 8);
  const searchTimes = await time(
    [
      // The index is built at a listing's first search: build plus that search.
      ["build", () => new ToolSearch(searchable).search(SEARCH_QUERY, 8)],
      ["search", () => built.search(SEARCH_QUERY, 8)],
      ["short words", () => built.search(SHORT_WORDS_QUERY, 8)],
    ],
    { time: 500, iterations: 10 },
  );
  const wideTimes = await time(
    WIDE_NAMES.map((names): Timed => {
      const schemas = wideBranches(names);
      return [
        `${names}`,
        () => {
          for (const schema of schemas) schemaView(schema, SCHEMA_PASSES.openai);
        },
      ];
    }),
    { time: 500, iterations: 5 },
  );
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
  const viewedAt = (name: string) => (viewTimes.get(name) as Timing).p50;
  const firstViews = Math.max(...VIEW_PROFILES.map((profile) => viewedAt(`view ${profile}`)));
  targets.push({
    name: "schema views of a 1,000-tool listing, first listing or new isolate (slowest profile)",
    goal: "< 3 ms CPU",
    measured: duration(firstViews),
    met: firstViews < 3,
  });
  const repeatedViews = viewedAt("repeated gemini") - viewedAt("repeated mcp");
  targets.push({
    name: "schema views of a 1,000-tool listing, repeated in the same isolate (gemini − mcp)",
    goal: "< 1 ms CPU",
    measured: duration(Math.max(0, repeatedViews)),
    met: repeatedViews < 1,
  });
  const searchedIn = (name: string) => (searchTimes.get(name) as Timing).p50;
  targets.push(
    {
      name: `search mode: index a ${num(VIEW_SIZE)}-tool listing, once per listing and isolate`,
      goal: "< 5 ms CPU",
      measured: duration(searchedIn("build")),
      met: searchedIn("build") < 5,
    },
    {
      name: `search mode: one search of ${num(VIEW_SIZE)} tools`,
      goal: "< 0.5 ms CPU",
      measured: duration(searchedIn("search")),
      met: searchedIn("search") < 0.5,
    },
    {
      name: `search mode: a query of 8 one-letter words ÷ one of words, ${num(VIEW_SIZE)} tools`,
      goal: "≤ 2",
      measured: `${num(searchedIn("short words") / searchedIn("search"), 2)} × (${duration(searchedIn("short words"))})`,
      met: searchedIn("short words") / searchedIn("search") <= 2,
    },
  );
  const [fewer, more] = WIDE_NAMES.map(
    (names) => (wideTimes.get(`${names}`) as Timing).p50 / names,
  );
  const wideRatio = (more as number) / (fewer as number);
  targets.push({
    name: `schema views: a branch merge's cost per name it reads, at ${num(WIDE_NAMES[1])} ÷ at ${num(WIDE_NAMES[0])}`,
    goal: "≤ 2",
    measured: `${num(wideRatio, 2)} × (${duration((wideTimes.get(`${WIDE_NAMES[1]}`) as Timing).p50)} for ${num(WIDE_NAMES[1])})`,
    met: wideRatio <= 2,
  });
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
    "Renaming a `tools/list` answer on the proxy's own path (`rewriteMessages`): name the listing (`ToolMap.nameListing`: plan names and what to store, pin definitions (`TOOL_CHANGES=log`, the default), remember them, serialize what goes to KV), rename the result, serialize the `tools_renamed` log line. KV answers from memory, so its I/O (and the decoding of what it reads) is not counted. The listing is realistic (support/listing.ts): half the names illegal for OpenAI, one in twenty colliding. Five states of the map:",
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
        "first listing",
        "repeated, same isolate",
        "repeated, same isolate, no answer remembered",
        "repeated, new isolate",
        "repeated, new deployment",
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
    `Schema views of the same ${num(VIEW_SIZE)}-tool listing. A first listing, or the first in a new isolate, views every schema once (\`schemaView\` over all of them, per profile); a repeated listing takes the views from isolate memory, so its cost is the \`gemini\` listing beside the same listing under \`mcp\`, which views nothing (the whole path, renaming only, same isolate; each a later page, which shows every schema where a whole listing of as many tools would be search mode):`,
    "",
    table(
      ["what", "median / p99"],
      [
        ...VIEW_PROFILES.map((profile) => [
          `view ${num(VIEW_SIZE)} schemas, \`${profile}\``,
          `${duration(viewedAt(`view ${profile}`))} / ${duration((viewTimes.get(`view ${profile}`) as Timing).p99)}`,
        ]),
        ["repeated listing, `gemini`", duration(viewedAt("repeated gemini"))],
        ["repeated listing, `mcp`", duration(viewedAt("repeated mcp"))],
      ],
    ),
    "",
    `Search mode over the same ${num(VIEW_SIZE)} tools (\`ToolSearch\`, MiniSearch): the index built with a listing's first search, and one search (\`${SEARCH_QUERY}\`, 8 results) once it is built:`,
    "",
    table(
      ["what", "median / p99"],
      ["build", "search", "short words"].map((name) => [
        name === "build"
          ? "build the index, and search once"
          : name === "search"
            ? "one search"
            : `one search of 8 one-letter words (\`${SHORT_WORDS_QUERY}\`)`,
        `${duration(searchedIn(name))} / ${duration((searchTimes.get(name) as Timing).p99)}`,
      ]),
    ),
    "",
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
      views: Object.fromEntries(viewTimes),
      search: Object.fromEntries(searchTimes),
      repair: Object.fromEntries(repairTimes),
      streams: Object.fromEntries(streamTimes),
    },
  };
}
