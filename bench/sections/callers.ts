/**
 * Callers section: what each caller's own listing costs an isolate's memory
 * (toolmap/caller-listings.ts). A hundred callers listed the same 200 tools
 * should cost about what one does (they share one view and its search
 * index); a hundred listed different ones cost a view each, which must stay
 * well under the isolate's 128 MB.
 *
 * Each caller lists through the proxy's own path (`rewriteJsonText`, as a
 * JSON body arrives) under `openai`, where 200 tools are over the ceiling
 * (search mode), then searches once, which builds its listing's index. The
 * heap is read after a full collection, before and after.
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { rewriteJsonText } from "../../src/rewrite/listing-answer";
import { profileOf } from "../../src/schemas/profile";
import { callerNamed } from "../../src/toolmap/callers";
import { ToolMapMemory } from "../../src/toolmap/isolate-memory";
import { ToolMap } from "../../src/toolmap/tool-map";
import { realisticListing, WHOLE_LISTING } from "../../support/listing";
import { LIST_IDS, policy, SCOPES } from "../lib/listing-states";
import { memoryKv } from "../lib/memory-kv";
import { mib, num, type SectionResult, table } from "../lib/report";

const CALLERS = 100;
const TOOLS = 200;
/**
 * What 100 different 200-tool listings in search mode may take: the views'
 * bound holds 60,000 such tool weights, 15,000 tools in search mode, so this
 * is about what callers' views can hold at most (docs/limits.md).
 */
const DIFFERENT_BOUND = 40 * 2 ** 20;

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

function heapUsed(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

/** A listing's answer as the origin sends it; `variant` writes each description for one caller. */
function answerText(variant?: number): string {
  const { tools } = realisticListing(TOOLS);
  const own =
    variant === undefined
      ? tools
      : tools.map((tool) => ({ ...tool, description: `${tool.description} (user ${variant})` }));
  return JSON.stringify({ jsonrpc: "2.0", id: 1, result: { tools: own } });
}

/** The heap that `callers` callers, each listing `textOf(caller)` and searching once, add to an isolate. */
async function heapOf(callers: number, textOf: (caller: number) => string): Promise<number> {
  const kv = memoryKv();
  const memory = new ToolMapMemory();
  const background: Promise<unknown>[] = [];
  const texts = Array.from({ length: callers }, (_, i) => textOf(i));
  const before = heapUsed();
  for (const [i, text] of texts.entries()) {
    const toolMap = new ToolMap(
      kv,
      SCOPES,
      profileOf("openai"),
      memory,
      (promise) => background.push(promise),
      policy,
      "bench",
      callerNamed(`caller ${i}`),
    );
    await rewriteJsonText(text, { listIds: LIST_IDS, toolMap, wholeListing: WHOLE_LISTING });
    (await toolMap.search())?.search("list invoices", 8);
    await Promise.all(background.splice(0));
  }
  const used = heapUsed() - before;
  // Kept alive until measured.
  if (memory === undefined || texts.length < 0) throw new Error("unreachable");
  return used;
}

export async function measureCallers(): Promise<SectionResult> {
  // What the first listings of a process make once (compiled and optimized code) is no caller's.
  await heapOf(CALLERS, () => answerText());
  const one = await heapOf(1, () => answerText());
  const same = await heapOf(CALLERS, () => answerText());
  const different = await heapOf(CALLERS, (caller) => answerText(caller));
  const sameRatio = same / one;
  return {
    title: "Callers: each caller's own listing, in an isolate's memory",
    markdown: [
      `Heap an isolate keeps for callers who each listed ${num(TOOLS)} tools under \`openai\` (over its ceiling: search mode) and searched once, after a full collection, in Node (the tool map's own memory included):`,
      "",
      table(
        ["callers", "heap kept"],
        [
          ["1", mib(one)],
          [`${CALLERS}, listed alike`, `${mib(same)} (${num(sameRatio, 2)} × one caller's)`],
          [`${CALLERS}, listed differently`, mib(different)],
        ],
      ),
    ].join("\n"),
    targets: [
      {
        name: `${CALLERS} callers listed alike ÷ one caller`,
        goal: "≤ 1.10",
        measured: num(sameRatio, 2),
        met: sameRatio <= 1.1,
      },
      {
        name: `${CALLERS} callers listed ${num(TOOLS)} different tools each`,
        goal: `< ${mib(DIFFERENT_BOUND)}`,
        measured: mib(different),
        met: different < DIFFERENT_BOUND,
      },
    ],
    data: { one, same, different, callers: CALLERS, tools: TOOLS },
  };
}
