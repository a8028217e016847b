/**
 * The questions an operator asks first of call analytics, as Analytics
 * Engine SQL (docs/observability.md prints them for one tenant, ready to
 * paste into a dashboard): columns by their position in the data point
 * (src/analytics/layout.ts), every count weighted by `_sample_interval`, and
 * every count of what a call's answer said by the calls each outcome stands
 * for (`outcome.weight`: the proxy reads a sample of answers).
 */
import { blob, double, TASK_REQUESTS } from "../src/analytics/layout";

/** Which data points a query reads: a dataset, one tenant's index (or an origin's host, before it), a time window. */
export interface Scope {
  dataset: string;
  index: string;
  /** An SQL interval: `'24' HOUR`. */
  interval: string;
}

export interface StatsQuery {
  title: string;
  sql: string;
}

const DATASET = /^[A-Za-z0-9_]+$/;
/**
 * What an index is made of: a tenant's `WRANGLER_ENV` (letters, digits, `-`
 * and `_`), or the host of points written before it (`_` too: the Worker
 * takes an `ORIGIN_URL` with one). Nothing that could end an SQL string.
 */
const INDEX = /^[A-Za-z0-9._:[\]-]+$/;

/** Whether `dataset` is a name the queries can read from, bare. */
export const isDatasetName = (dataset: string) => DATASET.test(dataset);
/** Whether `index`, a tenant's name or an origin's host, can stand in the queries' SQL string. */
export const isIndex = (index: string) => INDEX.test(index);

/**
 * Whether the queries compute `column` (a count, a share, a duration), not
 * read it from a data point: a tool, client, profile, outcome or reason is
 * what an origin or a client wrote, a name even when it reads as a number.
 */
export const isFigure = (column: string) =>
  /^(calls|judged|failed|tool_errors|repaired_failed|tasks|tasks_ended|repaired|repairs)$|_(rate|share|ms)$/.test(
    column,
  );

/** `24h` → `'24' HOUR`; `undefined` for anything else. */
export function intervalOf(since: string): string | undefined {
  const match = /^(\d{1,4})([mhd])$/.exec(since);
  if (!match || Number(match[1]) === 0) return undefined;
  const unit = { m: "MINUTE", h: "HOUR", d: "DAY" }[match[2] as "m" | "h" | "d"];
  return `'${Number(match[1])}' ${unit}`;
}

const OUTCOME = blob("outcome");
const TOOL = blob("gen_ai.tool.name");
const METHOD = blob("mcp.method.name");
const WEIGHT = double("outcome.weight");
const COUNT = "SUM(_sample_interval)";
/**
 * Outcomes that are a failure of the call (`input_required` is a call that
 * goes on in its retry, `task_created` one that goes on in a task, whose end
 * is a point of its own, `task_cancelled` a task the client gave up, `unread`
 * one the proxy could not judge, `unsampled` one it did not).
 */
const FAILED = `${OUTCOME} NOT IN ('ok', 'input_required', 'task_created', 'task_cancelled', 'unread', 'unsampled')`;
/** A call's own point, not a task's end (whose method is the request of the task that read it). */
const CALL = `${METHOD} = 'tools/call'`;
const share = (condition: string) => `SUM(_sample_interval * if(${condition}, 1, 0))`;
/** The calls whose outcomes meet `condition`: each point's outcome stands for `outcome.weight` of them. */
const outcomes = (condition: string) =>
  `SUM(_sample_interval * ${WEIGHT} * if(${condition}, 1, 0))`;

export function statsQueries({ dataset, index, interval }: Scope): StatsQuery[] {
  if (!isDatasetName(dataset)) throw new Error(`not a dataset name: ${dataset}`);
  if (!isIndex(index)) throw new Error(`not an index: ${index}`);
  const where = (more: string) =>
    [
      `WHERE index1 = '${index}'`,
      `  AND timestamp > NOW() - INTERVAL ${interval}`,
      `  AND ${more}`,
    ].join("\n");
  const calls = where(CALL);
  const callsAndTaskEnds = where(
    `${METHOD} IN (${["tools/call", ...TASK_REQUESTS].map((method) => `'${method}'`).join(", ")})`,
  );
  return [
    {
      title: "Calls and error rate per tool",
      sql: `SELECT
  ${TOOL} AS tool,
  ${share(CALL)} AS calls,
  ${share(`${CALL} AND ${OUTCOME} != 'unsampled'`)} AS judged,
  ${outcomes(FAILED)} AS failed,
  ${outcomes(`${OUTCOME} = 'tool_error'`)} AS tool_errors,
  ${outcomes(`${FAILED} AND ${blob("repairs")} != ''`)} AS repaired_failed,
  ${outcomes(`${OUTCOME} = 'task_created'`)} AS tasks,
  ${outcomes(`${METHOD} != 'tools/call'`)} AS tasks_ended,
  ${outcomes(FAILED)} / ${share(CALL)} AS error_rate
FROM ${dataset}
${callsAndTaskEnds}
GROUP BY tool
ORDER BY calls DESC
LIMIT 25`,
    },
    {
      title: "Repairs per client and profile",
      sql: `SELECT
  ${blob("mcp.client.name")} AS client,
  ${blob("profile")} AS profile,
  ${COUNT} AS calls,
  ${share(`${double("repairs.count")} > 0`)} AS repaired,
  ${share(`${double("repairs.count")} > 0`)} / ${COUNT} AS repaired_share,
  SUM(_sample_interval * ${double("repairs.count")}) AS repairs
FROM ${dataset}
${calls}
GROUP BY client, profile
ORDER BY calls DESC
LIMIT 25`,
    },
    {
      title: "Refusals and holds",
      sql: `SELECT
  ${OUTCOME} AS outcome,
  ${blob("refusal")} AS reason,
  ${TOOL} AS tool,
  ${COUNT} AS calls
FROM ${dataset}
${where(`${OUTCOME} IN ('refused', 'held', 'hidden', 'invalid_arguments')`)}
GROUP BY outcome, reason, tool
ORDER BY calls DESC
LIMIT 25`,
    },
    {
      title: "Slowest tools by p95",
      sql: `SELECT
  ${TOOL} AS tool,
  SUM(_sample_interval * ${WEIGHT}) AS calls,
  quantileExactWeighted(0.5)(${double("duration.ms")}, _sample_interval) AS p50_ms,
  quantileExactWeighted(0.95)(${double("duration.ms")}, _sample_interval) AS p95_ms,
  quantileExactWeighted(0.95)(${double("origin.duration.ms")}, _sample_interval) AS origin_p95_ms
FROM ${dataset}
${where(`${METHOD} = 'tools/call' AND ${OUTCOME} IN ('ok', 'tool_error', 'rpc_error')`)}
GROUP BY tool
ORDER BY p95_ms DESC
LIMIT 10`,
    },
  ];
}
