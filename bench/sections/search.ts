/**
 * Search section: whether search mode finds the tool a model asks for
 * (toolmap/tool-search.ts), and what its answer costs the model's context.
 *
 * The tool listings of 13 real MCP servers (bench/data/search-listings.json,
 * 349 tools) are served as one origin's listing, under `openai` (its ceiling
 * is 128: search mode); each of the labelled queries
 * (bench/data/search-queries.json) is searched, and the rank of its tool in
 * the answer read: Recall@1 and Recall@5 (the tool first, or in the first
 * five), and the mean reciprocal rank over the first 20 (`MAX_LIMIT`; a tool
 * not among them counts 0). The queries were written before the ranking was
 * tuned, and half of them held out of the tuning: both halves are reported.
 *
 * The answer's size is that of `answerSearch`'s text, the part a model
 * reads, in tokens taken as characters ÷ 4, at the default limit (8) and at 5.
 *
 * Costs: the index built for, and one search of, 1,000 tools of these
 * listings (each listed three times, the copies named apart), in this process.
 * The core section times the same over the synthetic listing.
 */
import type { JsonRpcRequest } from "../../src/protocol/jsonrpc";
import { revisionOf } from "../../src/protocol/revision";
import { answerSearch } from "../../src/rewrite/search-mode";
import { profileOf } from "../../src/schemas/profile";
import { ToolSearch } from "../../src/toolmap/tool-search";
import { duration, num, type SectionResult, table } from "../lib/report";
import { type LabelledQuery, originListing, QUERIES, SERVERS } from "../lib/search-corpus";
import { median, percentile } from "../lib/stats";

const PROFILE = profileOf("openai");
const RANKED = 20;
const COST_SIZE = 1_000;
const REVISION = revisionOf(new Headers({ "mcp-protocol-version": "2025-11-25" }));

interface Scored {
  query: LabelledQuery;
  /** 1 for first; `undefined` when not among the first `RANKED`. */
  rank: number | undefined;
  /** Tokens of the answer's text at the default limit, and at 5. */
  tokens: number;
  tokensAt5: number;
}

interface Figures {
  queries: number;
  recall1: number;
  recall5: number;
  mrr: number;
  tokens: number;
  tokensAt5: number;
}

function figures(scored: readonly Scored[]): Figures {
  const n = scored.length;
  const share = (test: (rank: number) => boolean) =>
    scored.filter(({ rank }) => rank !== undefined && test(rank)).length / n;
  const mean = (value: (s: Scored) => number) => scored.reduce((sum, s) => sum + value(s), 0) / n;
  return {
    queries: n,
    recall1: share((rank) => rank === 1),
    recall5: share((rank) => rank <= 5),
    mrr: mean(({ rank }) => (rank === undefined ? 0 : 1 / rank)),
    tokens: mean(({ tokens }) => tokens),
    tokensAt5: mean(({ tokensAt5 }) => tokensAt5),
  };
}

/** Tokens of the text `search_tools` answers `query` with. */
function answerTokens(search: ToolSearch, query: string, limit?: number): number {
  const message = {
    jsonrpc: "2.0",
    id: 1,
    method: "tools/call",
    params: { name: "search_tools", arguments: { query, ...(limit ? { limit } : {}) } },
  } as JsonRpcRequest;
  const answer = answerSearch(message, search, REVISION, Number.POSITIVE_INFINITY).response as {
    result: { content: [{ text: string }] };
  };
  return answer.result.content[0].text.length / 4;
}

function score(): Scored[] {
  const { tools, originalOf } = originListing(PROFILE);
  const search = new ToolSearch(tools);
  return QUERIES.map((query) => {
    const wanted = new Set(
      [query.tool, ...(query.also ?? [])].map((t) => originalOf(query.server, t)),
    );
    const found = search.search(query.query, RANKED).findIndex((tool) => wanted.has(tool.original));
    return {
      query,
      rank: found < 0 ? undefined : found + 1,
      tokens: answerTokens(search, query.query),
      tokensAt5: answerTokens(search, query.query, 5),
    };
  });
}

/** Median ms of `run`, `rounds` times after `warm`. */
function timed(run: () => void, rounds: number, warm = 3): number[] {
  for (let i = 0; i < warm; i++) run();
  return Array.from({ length: rounds }, () => {
    const started = performance.now();
    run();
    return performance.now() - started;
  });
}

function costs() {
  const copies = Math.ceil(COST_SIZE / originListing(PROFILE).tools.length);
  const tools = originListing(PROFILE, copies).tools.slice(0, COST_SIZE);
  const first = QUERIES[0]?.query ?? "";
  const builds = timed(() => new ToolSearch(tools).search(first, 8), 30);
  const search = new ToolSearch(tools);
  search.search(first, 8);
  // Each query's own time, the median of its runs: queries differ more than runs do.
  const perQuery = QUERIES.map(({ query }) =>
    median(timed(() => search.search(query, 8), 5, 1)),
  ).sort((a, b) => a - b);
  return {
    tools: tools.length,
    copies,
    build: median(builds),
    buildP99: percentile(
      [...builds].sort((a, b) => a - b),
      99,
    ),
    search: median(perQuery),
    searchP99: percentile(perQuery, 99),
  };
}

const ratio = (value: number) => num(value, 2);

function row(label: string, f: Figures): string[] {
  return [
    label,
    num(f.queries),
    ratio(f.recall1),
    ratio(f.recall5),
    ratio(f.mrr),
    num(f.tokens),
    num(f.tokensAt5),
  ];
}

export async function measureSearch(): Promise<SectionResult> {
  const scored = score();
  const whole = figures(scored);
  const halves = (["tune", "held-out"] as const).map(
    (half) => [half, figures(scored.filter((s) => s.query.half === half))] as const,
  );
  const perServer = SERVERS.map(
    (server) => [server, figures(scored.filter((s) => s.query.server === server.key))] as const,
  );
  const cost = costs();
  const missed = scored.filter((s) => s.rank !== 1);
  const head = ["queries", "", "Recall@1", "Recall@5", "MRR", "tokens (8)", "tokens (5)"];
  const markdown = [
    `${num(SERVERS.reduce((n, s) => n + s.tools.length, 0))} tools of ${SERVERS.length} real MCP servers served as one origin's listing under \`openai\` (search mode), and ${num(QUERIES.length)} queries written as a model asks for a tool, each labelled with its tool (bench/data/). Recall@k: the share of queries whose tool is among the first k; MRR: mean reciprocal rank over the first ${RANKED}; tokens: the answer's text at the default limit (8) and at 5, characters ÷ 4, mean per query.`,
    "",
    table(head, [
      row("all", whole),
      ...halves.map(([half, f]) => row(half === "tune" ? "tuned on" : "held out", f)),
    ]),
    "",
    "Per server (its queries, searched over the whole listing):",
    "",
    table(
      ["server", ...head.slice(1)],
      perServer.map(([server, f]) => row(`${server.package} ${server.version}`, f)),
    ),
    "",
    `Queries whose tool was not first (${missed.length}): rank, query, tool.`,
    "",
    table(
      ["rank", "query", "tool"],
      missed.map(({ rank, query }) => [
        rank === undefined ? `> ${RANKED}` : String(rank),
        `\`${query.query}\``,
        `${query.server} \`${query.tool}\``,
      ]),
    ),
    "",
    `Costs over ${num(cost.tools)} tools of these listings (each listed up to ${cost.copies} times), in this process:`,
    "",
    table(
      ["what", "median / p99"],
      [
        [
          "build the index, and search once",
          `${duration(cost.build)} / ${duration(cost.buildP99)}`,
        ],
        [
          "one search (each query's median, over the queries)",
          `${duration(cost.search)} / ${duration(cost.searchP99)}`,
        ],
      ],
    ),
  ].join("\n");
  return {
    title: "Search: finding the tool a model asks for",
    markdown,
    targets: [
      {
        name: `search: Recall@5 over ${num(QUERIES.length)} labelled queries of real listings`,
        goal: "≥ 0.95",
        measured: ratio(whole.recall5),
        met: whole.recall5 >= 0.95,
      },
      {
        name: `search: Recall@1 over ${num(QUERIES.length)} labelled queries of real listings`,
        goal: "≥ 0.75",
        measured: ratio(whole.recall1),
        met: whole.recall1 >= 0.75,
      },
      {
        name: `search: one search of ${num(cost.tools)} tools of real listings`,
        goal: "< 0.5 ms CPU",
        measured: duration(cost.search),
        met: cost.search < 0.5,
      },
    ],
    data: {
      whole,
      halves: Object.fromEntries(halves),
      servers: Object.fromEntries(perServer.map(([server, f]) => [server.key, f])),
      missed: missed.map(({ rank, query }) => ({ rank, ...query })),
      cost,
    },
  };
}
