/**
 * `npm run stats` (scripts/stats.ts) against a stand-in for the Analytics
 * Engine SQL API on 127.0.0.1: the queries it sends, each as
 * docs/observability.md prints it for pasting into a dashboard, with the
 * token, and the tables it prints, for the tenant's index (its
 * WRANGLER_ENV) or the origin's host of points written before. And the data
 * point layout the page documents is the one the Worker writes
 * (src/analytics/layout.ts).
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { statsQueries } from "../../scripts/stats-queries";
import { BLOBS, DOUBLES } from "../../src/analytics/layout";

const ROOT = join(import.meta.dirname, "../..");
const DOCS = readFileSync(join(ROOT, "docs/observability.md"), "utf8");
const ACCOUNT = "0123456789abcdef0123456789abcdef";
const TOKEN = "stats-test-token-5b1e";

interface Received {
  method: string;
  url: string;
  authorization: string | undefined;
  body: string;
}

/** A row of the tools query (`ANSWERS[0]`) for a tool called and judged so often, that never failed. */
const toolWithoutFailures = (tool: string, calls: string, judged: string) => ({
  tool,
  calls,
  judged,
  failed: "0",
  tool_errors: "0",
  repaired_failed: "0",
  tasks: "0",
  tasks_ended: "0",
  error_rate: 0,
});

/** The SQL API's answers, in the order the queries are sent, as `FORMAT JSON` writes them. */
const ANSWERS = [
  {
    meta: [
      "tool",
      "calls",
      "judged",
      "failed",
      "tool_errors",
      "repaired_failed",
      "tasks",
      "tasks_ended",
      "error_rate",
    ],
    data: [
      {
        tool: "files.read",
        calls: "1200",
        judged: "243",
        failed: "30",
        tool_errors: "24",
        repaired_failed: "20",
        tasks: "0",
        tasks_ended: "0",
        error_rate: 0.025,
      },
      {
        tool: "report.build",
        calls: "1040",
        judged: "1040",
        failed: "26",
        tool_errors: "21",
        repaired_failed: "0",
        tasks: "1040",
        tasks_ended: "1031",
        error_rate: 0.025,
      },
      {
        tool: "",
        calls: "4",
        judged: "4",
        failed: "4",
        tool_errors: "0",
        repaired_failed: "0",
        tasks: "0",
        tasks_ended: "0",
        error_rate: 1,
      },
    ],
  },
  {
    meta: ["client", "profile", "calls", "repaired", "repaired_share", "repairs"],
    data: [
      {
        client: "claude-ai",
        profile: "anthropic",
        calls: "900",
        repaired: "45",
        repaired_share: 0.05,
        repairs: "61",
      },
      {
        client: "evil\u001b[2Jclient",
        profile: "openai",
        calls: "300",
        repaired: "150",
        repaired_share: 0.5,
        repairs: "400",
      },
    ],
  },
  { meta: ["outcome", "reason", "tool", "calls"], data: [] },
  {
    meta: ["tool", "calls", "p50_ms", "p95_ms", "origin_p95_ms"],
    data: [{ tool: "files.read", calls: "1196", p50_ms: 41, p95_ms: 388.4, origin_p95_ms: 371 }],
  },
].map(({ meta, data }) => ({
  meta: meta.map((name) => ({ name, type: "String" })),
  data,
  rows: data.length,
}));

let server: Server | undefined;
afterEach(() => {
  server?.close();
  server = undefined;
});

/** The stand-in: records each request and answers the next of `answers` (or `status`). */
async function sqlApi(
  status = 200,
  answers = ANSWERS,
): Promise<{ base: string; received: Received[] }> {
  const received: Received[] = [];
  server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk) => {
      body += chunk;
    });
    request.on("end", () => {
      received.push({
        method: request.method ?? "",
        url: request.url ?? "",
        authorization: request.headers.authorization,
        body,
      });
      if (status !== 200) {
        response.writeHead(status, { "content-type": "application/json" });
        response.end(JSON.stringify({ errors: [{ message: "Authentication error" }] }));
        return;
      }
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify(answers[received.length - 1]));
    });
  });
  await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { base: `http://127.0.0.1:${port}/client/v4`, received };
}

/** `npm run stats -- ...args`, as a process, `token` its API token; its exit code and what it printed. */
function stats(base: string, args: string[], token = TOKEN) {
  const child = spawn(process.execPath, ["--import", "tsx", "scripts/stats.ts", ...args], {
    cwd: ROOT,
    env: {
      ...process.env,
      CLOUDFLARE_ACCOUNT_ID: ACCOUNT,
      CLOUDFLARE_API_TOKEN: token,
      CLOUDFLARE_API_BASE_URL: base,
      WRANGLER_SEND_METRICS: "false",
    },
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => {
    stdout += chunk;
  });
  child.stderr.on("data", (chunk) => {
    stderr += chunk;
  });
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

describe("npm run stats", () => {
  it("asks the documented questions of the env's dataset and tenant, and prints them as tables", async () => {
    const { base, received } = await sqlApi();
    const { code, stdout, stderr } = await stats(base, [
      "--env",
      "acme",
      "--since",
      "24h",
      "--dataset",
      "mcp_calls",
    ]);
    expect(stderr).toBe("");
    expect(code).toBe(0);

    // [env.acme]'s WRANGLER_ENV, the index its Worker writes.
    const queries = statsQueries({ dataset: "mcp_calls", index: "acme", interval: "'24' HOUR" });
    expect(received).toEqual(
      queries.map(({ sql }) => ({
        method: "POST",
        url: `/client/v4/accounts/${ACCOUNT}/analytics_engine/sql`,
        authorization: `Bearer ${TOKEN}`,
        body: sql,
      })),
    );
    // Ready to paste: each query is on the page as sent.
    for (const { sql } of queries) expect(DOCS).toContain(sql);

    expect(stdout).toBe(
      [
        "Call analytics of acme in mcp_calls, the last 24h",
        "",
        "Calls and error rate per tool",
        "  tool          calls  judged  failed  tool_errors  repaired_failed  tasks  tasks_ended  error_rate",
        "  files.read    1,200     243      30           24               20      0            0        2.5%",
        "  report.build  1,040   1,040      26           21                0  1,040        1,031        2.5%",
        "  (none)            4       4       4            0                0      0            0      100.0%",
        "",
        "Repairs per client and profile",
        "  client            profile  calls  repaired  repaired_share  repairs",
        "  claude-ai       anthropic    900        45            5.0%       61",
        "  evil\ufffd[2Jclient     openai    300       150           50.0%      400",
        "",
        "Refusals and holds",
        "  (no data points)",
        "",
        "Slowest tools by p95",
        "  tool        calls  p50_ms  p95_ms  origin_p95_ms",
        "  files.read  1,196   41 ms  388 ms         371 ms",
        "",
      ].join("\n"),
    );
  });

  it("shows a tool or a client named like a number by its name, and figures as figures", async () => {
    const named = ANSWERS.map((answer, i) => {
      if (i === 0) {
        const data = [toolWithoutFailures("2024", "5", "1")];
        return { ...answer, data, rows: data.length };
      }
      if (i === 1) {
        const data = [
          {
            client: "1e3",
            profile: "openai",
            calls: "3",
            repaired: "0",
            repaired_share: 0,
            repairs: "0",
          },
        ];
        return { ...answer, data, rows: data.length };
      }
      return answer;
    });
    const { base } = await sqlApi(200, named);
    const { code, stdout } = await stats(base, ["--env", "acme", "--dataset", "mcp_calls"]);
    expect(code).toBe(0);
    expect(stdout).toContain(
      "  2024      5       1       0            0                0      0            0        0.0%",
    );
    expect(stdout).toContain("  1e3      openai      3         0            0.0%        0");
  });

  it("shows a long name cut between characters, and says it was cut", async () => {
    // Two tools that differ past the 64 characters a cell shows, an emoji across the cut.
    const prefix = `${"a".repeat(62)}\u{1F600}`;
    const named = ANSWERS.map((answer, i) => {
      if (i !== 0) return answer;
      const data = ["read", "delete"].map((end) =>
        toolWithoutFailures(`${prefix}${end}`, "5", "5"),
      );
      return { ...answer, data, rows: data.length };
    });
    const { base } = await sqlApi(200, named);
    const { code, stdout } = await stats(base, ["--env", "acme", "--dataset", "mcp_calls"]);
    expect(code).toBe(0);
    const rows = stdout.split("\n").filter((line) => line.includes("aaaa"));
    expect(rows).toEqual([
      `  ${"a".repeat(62)}…      5       5       0            0                0      0            0        0.0%`,
      `  ${"a".repeat(62)}…      5       5       0            0                0      0            0        0.0%`,
    ]);
  });

  it("counts, per tool, the failed calls whose arguments the proxy changed", () => {
    // Whether a tool's failures are the calls the proxy repaired: its log lines then say how.
    const [perTool] = statsQueries({ dataset: "mcp_calls", index: "acme", interval: "'24' HOUR" });
    const column = perTool?.sql
      .split("\n")
      .find((line) => line.trimEnd().endsWith(" AS repaired_failed,"));
    expect(column).toContain("blob8 != ''");
    expect(column).toContain(
      "NOT IN ('ok', 'input_required', 'task_created', 'task_cancelled', 'unread', 'unsampled')",
    );
  });

  it("counts no call that goes on in its retry (input_required) or in a task (task_created), nor a task cancelled, among the failures", () => {
    const [perTool] = statsQueries({ dataset: "mcp_calls", index: "acme", interval: "'24' HOUR" });
    const failed = perTool?.sql.split("\n").find((line) => line.trimEnd().endsWith(" AS failed,"));
    const notFailed = /NOT IN \(([^)]*)\)/.exec(failed ?? "")?.[1]?.split(", ");
    expect(notFailed).toContain("'input_required'");
    // The tool runs on: its end, a point of its own, says how it went.
    expect(notFailed).toContain("'task_created'");
    // The client gave the task up: no failure of the tool, nor a success.
    expect(notFailed).toContain("'task_cancelled'");
    // A task that failed is a failure.
    expect(notFailed).not.toContain("'task_failed'");
  });

  it("counts the calls answered with a task's creation apart, each standing for as many as it does", () => {
    const [perTool] = statsQueries({ dataset: "mcp_calls", index: "acme", interval: "'24' HOUR" });
    const tasks = perTool?.sql.split("\n").find((line) => line.trimEnd().endsWith(" AS tasks,"));
    expect(tasks?.trim()).toBe(
      "SUM(_sample_interval * double7 * if(blob3 = 'task_created', 1, 0)) AS tasks,",
    );
  });

  it("reads the ends of tasks with their tool's calls: among its failures, counted apart, never as calls", () => {
    const [perTool] = statsQueries({ dataset: "mcp_calls", index: "acme", interval: "'24' HOUR" });
    const sql = perTool?.sql ?? "";
    const line = (column: string) =>
      sql
        .split("\n")
        .find((text) => text.trimEnd().endsWith(` AS ${column},`))
        ?.trim();
    expect(sql).toContain(
      "AND blob1 IN ('tools/call', 'tasks/get', 'tasks/result', 'tasks/cancel')",
    );
    expect(line("calls")).toBe("SUM(_sample_interval * if(blob1 = 'tools/call', 1, 0)) AS calls,");
    expect(line("tasks_ended")).toBe(
      "SUM(_sample_interval * double7 * if(blob1 != 'tools/call', 1, 0)) AS tasks_ended,",
    );
    // Of the calls alone: a task's end is the call's outcome, not one more call.
    expect(sql).toContain("/ SUM(_sample_interval * if(blob1 = 'tools/call', 1, 0)) AS error_rate");
  });

  it("with no data point at the tenant's index, says how to read those written before it", async () => {
    const empty = ANSWERS.map((answer) => ({ ...answer, data: [], rows: 0 }));
    const { base } = await sqlApi(200, empty);
    const { code, stdout } = await stats(base, ["--env", "acme", "--dataset", "mcp_calls"]);
    expect(code).toBe(0);
    expect(stdout).toContain(
      "Points written before their index was the tenant's are indexed by the origin's host, every tenant in front of it together: add --origin <ORIGIN_URL> to read those.",
    );
  });

  it("says what the API answered when it refuses, and never prints the token", async () => {
    const { base } = await sqlApi(403);
    const { code, stdout, stderr } = await stats(base, ["--env", "acme", "--dataset", "mcp_calls"]);
    expect(code).toBe(1);
    expect(stderr).toContain("Calls and error rate per tool: the SQL API answered 403");
    expect(stderr).toContain("Authentication error");
    expect(stdout + stderr).not.toContain(TOKEN);
  });

  it("says it could not reach the API, and why, without a stack trace or the token", async () => {
    // A port nothing listens on: the server closed before the command asks.
    const { base } = await sqlApi();
    await new Promise((closed) => server?.close(closed));
    const { code, stdout, stderr } = await stats(base, ["--env", "acme", "--dataset", "mcp_calls"]);
    expect(code).toBe(1);
    expect(stderr).toContain("Calls and error rate per tool: could not reach the SQL API at");
    expect(stderr).toContain("ECONNREFUSED");
    expect(stderr).not.toMatch(/^\s+at /m);
    expect(stdout + stderr).not.toContain(TOKEN);
  });

  it("refuses a token no header can carry without printing it, before asking anything", async () => {
    const { base, received } = await sqlApi();
    // A token file of two lines, read whole into the variable.
    const secret = "k9Qz-secret-part";
    const { code, stdout, stderr } = await stats(
      base,
      ["--env", "acme", "--dataset", "mcp_calls"],
      `${TOKEN}\n${secret}`,
    );
    expect(code).toBe(1);
    expect(stderr).toContain("CLOUDFLARE_API_TOKEN");
    expect(stdout + stderr).not.toContain(secret);
    expect(stdout + stderr).not.toContain(TOKEN);
    expect(stderr).not.toMatch(/^\s+at /m);
    expect(received).toEqual([]);
  });

  it("refuses a window it cannot read, and an environment without the dataset, before asking anything", async () => {
    const { base, received } = await sqlApi();
    const window = await stats(base, ["--since", "2w", "--dataset", "mcp_calls"]);
    expect(window.code).toBe(1);
    expect(window.stderr).toContain("--since takes minutes, hours or days");
    const unbound = await stats(base, ["--env", "acme"]);
    expect(unbound.code).toBe(1);
    expect(unbound.stderr).toContain("binds no CALLS dataset at [env.acme]");
    const nowhere = await stats(base, ["--env", "acme-typo"]);
    expect(nowhere.code).toBe(1);
    expect(nowhere.stderr).toContain('No environment found in configuration with name "acme-typo"');
    expect(nowhere.stderr).not.toMatch(/^\s+at /m);
    const unknown = await stats(base, ["--environment", "acme"]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("Usage: npm run stats [-- --env NAME]");
    expect(unknown.stderr).not.toMatch(/^\s+at /m);
    expect(received).toEqual([]);
  });
});

describe("npm run stats, a tenant whose ORIGIN_URL is a secret", () => {
  const scratch = mkdtempSync(join(tmpdir(), "stats-"));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));
  // A tenant whose ORIGIN_URL carries a key, set with wrangler secret put (docs/configuration.md);
  // and one whose section predates WRANGLER_ENV.
  const config = join(scratch, "wrangler.toml");
  writeFileSync(
    config,
    `name = "stats-test"
main = "${join(ROOT, "src/index.ts")}"
compatibility_date = "2026-11-01"

[env.keyed]
secrets = { required = ["ORIGIN_URL"] }
[env.keyed.vars]
WRANGLER_ENV = "keyed"
[[env.keyed.analytics_engine_datasets]]
binding = "CALLS"
dataset = "mcp_calls"

[env.unnamed]
secrets = { required = ["ORIGIN_URL"] }
[[env.unnamed.analytics_engine_datasets]]
binding = "CALLS"
dataset = "mcp_calls"

[env.hostile.vars]
WRANGLER_ENV = "hostile"
[[env.hostile.analytics_engine_datasets]]
binding = "CALLS"
dataset = "mcp\\u001b]0;pwned\\u0007\\u009b2J"
`,
  );

  it("queries by the tenant's name, without its ORIGIN_URL", async () => {
    const { base, received } = await sqlApi();
    const { code, stdout } = await stats(base, ["--config", config, "--env", "keyed"]);
    expect(code).toBe(0);
    expect(stdout).toContain("Call analytics of keyed in mcp_calls, the last 24h");
    expect(received.map(({ body }) => body)).toEqual(
      statsQueries({ dataset: "mcp_calls", index: "keyed", interval: "'24' HOUR" }).map(
        ({ sql }) => sql,
      ),
    );
  });

  it("reads the points written before by --origin's host alone, never its query", async () => {
    const { base, received } = await sqlApi();
    const { code, stdout } = await stats(base, [
      "--config",
      config,
      "--env",
      "keyed",
      "--origin",
      "https://mcp.keyed.example/mcp?api_key=k-51d2",
    ]);
    expect(code).toBe(0);
    expect(stdout).toContain(
      "Call analytics of mcp.keyed.example (the origin's host: points written before their index was the tenant's) in mcp_calls, the last 24h",
    );
    expect(received.map(({ body }) => body)).toEqual(
      statsQueries({ dataset: "mcp_calls", index: "mcp.keyed.example", interval: "'24' HOUR" }).map(
        ({ sql }) => sql,
      ),
    );
    expect(stdout + received.map(({ body }) => body).join("")).not.toContain("k-51d2");
  });

  it("queries a host with an underscore, as the Worker indexed it, and refuses one SQL could misread, saying why", async () => {
    const { base, received } = await sqlApi();
    const underscored = await stats(base, [
      "--config",
      config,
      "--env",
      "keyed",
      "--origin",
      "https://mcp_tools.keyed.example/mcp",
    ]);
    expect(underscored.stderr).toBe("");
    expect(underscored.code).toBe(0);
    expect(received[0]?.body).toContain("WHERE index1 = 'mcp_tools.keyed.example'");
    received.length = 0;
    // A host the URL parser takes with a quote in it: never put in the SQL.
    const quoted = await stats(base, [
      "--config",
      config,
      "--env",
      "keyed",
      "--origin",
      "https://x'or'1.example/mcp",
    ]);
    expect(quoted.code).toBe(1);
    expect(quoted.stderr).toContain("--origin's host x'or'1.example cannot be queried");
    expect(quoted.stderr).not.toMatch(/^\s+at /m);
    expect(received).toEqual([]);
  });

  it("refuses a dataset it cannot query without printing the terminal controls its name holds", async () => {
    const { base, received } = await sqlApi();
    const { code, stderr } = await stats(base, ["--config", config, "--env", "hostile"]);
    expect(code).toBe(1);
    // An escape that retitles the window (OSC 0), one that clears the screen (CSI, U+009B).
    expect(stderr).toContain(
      "the CALLS binding's dataset mcp\ufffd]0;pwned\ufffd\ufffd2J cannot be queried",
    );
    const controls = "[\\u0000-\\u0009\\u000b-\\u001f\\u007f-\\u009f]";
    expect(stderr).not.toMatch(new RegExp(controls));
    expect(received).toEqual([]);
  });

  it("says what to set for an environment without WRANGLER_ENV, before asking anything", async () => {
    const { base, received } = await sqlApi();
    const { code, stderr } = await stats(base, ["--config", config, "--env", "unnamed"]);
    expect(code).toBe(1);
    expect(stderr).toContain(
      `${config} sets no WRANGLER_ENV at [env.unnamed]: the Worker indexes its data points by it`,
    );
    expect(received).toEqual([]);
  });
});

describe("docs/observability.md", () => {
  it("documents the data point's blobs and doubles in the order the Worker writes them", () => {
    const rows = [...DOCS.matchAll(/^\| `(blob|double)(\d+)` \| `([^`]+)` \|/gm)];
    const documented = (kind: string) =>
      rows.filter((row) => row[1] === kind).map((row) => [Number(row[2]), row[3]]);
    expect(documented("blob")).toEqual(BLOBS.map((name, i) => [i + 1, name]));
    expect(documented("double")).toEqual(DOUBLES.map((name, i) => [i + 1, name]));
  });
});
