/**
 * `npm run stats [-- --env NAME] [--since 24h] [--dataset NAME] [--origin URL]
 * [--config FILE]`:
 * the questions an operator asks first of call analytics (docs/observability.md),
 * put to the Analytics Engine SQL API for one tenant, printed as tables.
 *
 * The tenant is the wrangler environment `--env` names (the top level without
 * it): its `CALLS` binding's dataset (or `--dataset`), and its `WRANGLER_ENV`,
 * the data points' index. `--origin URL` reads the points written before
 * the index was the tenant's instead, indexed by the origin's host (every
 * tenant in front of that host together). Credentials come from the
 * environment, as wrangler reads them: `CLOUDFLARE_ACCOUNT_ID` and
 * `CLOUDFLARE_API_TOKEN` (a token with Account Analytics Read);
 * `CLOUDFLARE_API_BASE_URL` moves the API (tests). The token is sent to that
 * API only, and never printed.
 */
import { createRequire } from "node:module";
import type * as Wrangler from "wrangler";
import { hostIndex, tenantIndex } from "../src/analytics/layout";
import { cutMarked } from "../src/text-cut";
import { argumentsOf, readingConfig, refuse, runCommand } from "./lib/command";
import { printable } from "./lib/terminal";
import {
  intervalOf,
  isDatasetName,
  isFigure,
  isIndex,
  type StatsQuery,
  statsQueries,
} from "./stats-queries";

const USAGE =
  "Usage: npm run stats [-- --env NAME] [--since 24h] [--dataset NAME] [--origin URL] [--config FILE]\n" +
  "  --origin URL reads the points written before their index was the tenant's, by the origin's host";

/** Where the points written before the index was the tenant's are (docs/observability.md, "The index"). */
const EARLIER =
  "Points written before their index was the tenant's are indexed by the origin's host, every tenant in front of it together: add --origin <ORIGIN_URL> to read those.";

/** What an API token is written in: visible ASCII. */
const API_TOKEN = /^[\x21-\x7e]+$/;

interface Answer {
  meta: Array<{ name: string; type: string }>;
  data: Array<Record<string, unknown>>;
}

/** A value as a table shows it: counts with separators, shares as percents, times in ms. */
function cell(column: string, value: unknown): string {
  if (value === "" || value === null || value === undefined) return "(none)";
  const number = typeof value === "number" ? value : Number(value);
  if (!isFigure(column) || Number.isNaN(number)) {
    // What a client or an origin wrote: no terminal control sequence gets through, and a long
    // name is cut between characters, marked as cut (two that differ past the cut look alike).
    return cutMarked(printable(String(value)), 64);
  }
  if (column.endsWith("_rate") || column.endsWith("_share")) return `${(number * 100).toFixed(1)}%`;
  if (column.endsWith("_ms")) return `${Math.round(number).toLocaleString("en-US")} ms`;
  return Math.round(number).toLocaleString("en-US");
}

function table(answer: Answer): string {
  const columns = answer.meta.map((column) => column.name);
  if (answer.data.length === 0) return "  (no data points)";
  const rows = answer.data.map((row) => columns.map((column) => cell(column, row[column])));
  const widths = columns.map((column, i) =>
    Math.max(column.length, ...rows.map((row) => (row[i] as string).length)),
  );
  const line = (cells: string[]) =>
    `  ${cells
      .map((text, i) =>
        i === 0 ? text.padEnd(widths[i] as number) : text.padStart(widths[i] as number),
      )
      .join("  ")
      .trimEnd()}`;
  return [line(columns), ...rows.map(line)].join("\n");
}

async function ask(url: string, token: string, query: StatsQuery): Promise<Answer> {
  let response: Response;
  let text: string;
  try {
    response = await fetch(url, {
      method: "POST",
      headers: { authorization: `Bearer ${token}` },
      body: query.sql,
    });
    text = await response.text();
  } catch (error) {
    // fetch says only "fetch failed": why (no network, DNS, a refused connection) is its cause.
    const cause = (error as { cause?: unknown }).cause;
    const why = cause instanceof Error ? cause.message : String(error);
    return refuse(
      `${query.title}: could not reach the SQL API at ${new URL(url).origin}: ${printable(why)}`,
    );
  }
  if (!response.ok) {
    refuse(
      `${query.title}: the SQL API answered ${response.status}: ${printable(text.slice(0, 500))}`,
    );
  }
  try {
    return JSON.parse(text) as Answer;
  } catch {
    return refuse(
      `${query.title}: the SQL API answered something other than JSON: ${printable(text.slice(0, 200))}`,
    );
  }
}

async function main() {
  const { values } = argumentsOf(
    {
      options: {
        env: { type: "string" },
        since: { type: "string", default: "24h" },
        dataset: { type: "string" },
        origin: { type: "string" },
        config: { type: "string", default: "wrangler.toml" },
      },
    },
    USAGE,
  );
  const since = values.since ?? "24h";
  const configPath = values.config ?? "wrangler.toml";
  const interval = intervalOf(since);
  if (!interval) refuse(`--since takes minutes, hours or days: 30m, 24h, 7d\n${USAGE}`);

  // Wrangler's advice on the file (vars an environment does not inherit, …) is not this command's.
  process.env.WRANGLER_LOG ??= "error";
  // Through require: tsx's import hooks read wrangler's 15 MB bundle again (1.5 s more CPU a start).
  const { unstable_readConfig } = createRequire(import.meta.url)("wrangler") as typeof Wrangler;
  const config = readingConfig(configPath, () =>
    unstable_readConfig({ config: configPath, env: values.env }),
  );
  const where = values.env ? `[env.${values.env}]` : "the top level";
  const datasets: Array<{ binding: string; dataset?: string }> = config.analytics_engine_datasets;
  const binding = datasets.find((bound) => bound.binding === "CALLS");
  const dataset = values.dataset ?? binding?.dataset ?? binding?.binding;
  if (!dataset) {
    refuse(
      `${configPath} binds no CALLS dataset at ${where}: bind one (docs/observability.md) or pass --dataset NAME`,
    );
  }
  const index = indexOf(
    values.origin,
    config.vars.WRANGLER_ENV,
    `${configPath} sets no WRANGLER_ENV at ${where}`,
  );
  if (!isDatasetName(dataset)) {
    const which = values.dataset === undefined ? `the CALLS binding's dataset` : "--dataset";
    // A name from wrangler.toml: no terminal control sequence of it gets through.
    refuse(
      `${which} ${printable(dataset)} cannot be queried: this command reads names of letters, digits and _`,
    );
  }
  const account = process.env.CLOUDFLARE_ACCOUNT_ID;
  const token = process.env.CLOUDFLARE_API_TOKEN?.trim();
  if (!account || !token) {
    refuse(
      "Set CLOUDFLARE_ACCOUNT_ID and CLOUDFLARE_API_TOKEN (a token with Account Analytics Read)",
    );
  }
  // fetch refuses a header value with a line break by quoting it: the token would be printed.
  if (!API_TOKEN.test(token)) {
    refuse(
      "CLOUDFLARE_API_TOKEN holds what no API token does (a line break, a space, a character beyond ASCII): set it to the token alone",
    );
  }
  const base = process.env.CLOUDFLARE_API_BASE_URL ?? "https://api.cloudflare.com/client/v4";
  const url = `${base}/accounts/${encodeURIComponent(account)}/analytics_engine/sql`;

  const whose =
    values.origin === undefined
      ? index
      : `${index} (the origin's host: points written before their index was the tenant's)`;
  process.stdout.write(`Call analytics of ${whose} in ${dataset}, the last ${since}\n`);
  let points = 0;
  for (const query of statsQueries({ dataset, index, interval })) {
    const answer = await ask(url, token, query);
    points += answer.data.length;
    process.stdout.write(`\n${query.title}\n${table(answer)}\n`);
  }
  if (points === 0 && values.origin === undefined) process.stdout.write(`\n${EARLIER}\n`);
}

/**
 * The index the queries read: the tenant's `WRANGLER_ENV`, or with
 * `--origin` the host of the points written before; `unset`: what is told
 * when the environment has no `WRANGLER_ENV`.
 */
function indexOf(origin: string | undefined, environment: unknown, unset: string): string {
  if (origin !== undefined) {
    if (!URL.canParse(origin)) refuse("--origin is no URL");
    const host = hostIndex(new URL(origin));
    if (!isIndex(host)) {
      refuse(`--origin's host ${host} cannot be queried: it is no host name or address`);
    }
    return host;
  }
  if (typeof environment !== "string" || environment === "") {
    refuse(`${unset}: the Worker indexes its data points by it (npm run check says what to set)`);
  }
  const index = tenantIndex(environment);
  if (!isIndex(index)) {
    refuse(`WRANGLER_ENV ${printable(index)} cannot be queried: npm run check says why`);
  }
  return index;
}

await runCommand(main);
