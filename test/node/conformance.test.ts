/**
 * The official MCP conformance suite (server scenarios) against a fixture
 * origin built with the SDK, once directly and once through the proxy served
 * by wrangler over HTTP, for every protocol revision the installed suite has
 * server scenarios for. The proxy must pass every scenario the origin passes
 * on its own: it may not break what it does not rewrite.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readdir, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startConformanceOrigin } from "../fixtures/node/conformance-origin";
import { serveProxy } from "./serve-proxy";

const run = promisify(execFile);
const CLI = join("node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js");

interface Check {
  id: string;
  status: "SUCCESS" | "FAILURE" | "WARNING" | "INFO" | "SKIPPED";
  errorMessage?: string;
}

/** The revisions the installed suite has server scenarios for, from its own `list`. */
async function serverRevisions(): Promise<string[]> {
  const { stdout } = await run(process.execPath, [CLI, "list"]);
  const server = stdout.slice(0, stdout.indexOf("Client scenarios"));
  const revisions = [...server.matchAll(/\d{4}-\d{2}-\d{2}/g)].map(([revision]) => revision);
  return [...new Set(revisions)].sort();
}

/** Scenario → its checks, from the runner's output directory. */
async function runSuite(url: string, revision: string): Promise<Map<string, Check[]>> {
  const output = await mkdtemp(join(tmpdir(), "conformance-"));
  const args = ["server", "--url", url, "--suite", "all", "--spec-version", revision, "-o", output];
  await run(process.execPath, [CLI, ...args], {
    timeout: 240_000,
  }).catch(() => undefined); // a failing scenario makes it exit non-zero; the checks say which
  const results = new Map<string, Check[]>();
  for (const dir of await readdir(output)) {
    const checks: Check[] = JSON.parse(await readFile(join(output, dir, "checks.json"), "utf8"));
    const scenario = dir.replace(/^server-/, "").replace(/-\d{4}-\d{2}-\d{2}T.*$/, "");
    results.set(scenario, checks);
  }
  return results;
}

const passed = (checks: Check[]) => checks.every((check) => check.status !== "FAILURE");

let origin: Awaited<ReturnType<typeof startConformanceOrigin>>;
let proxy: Awaited<ReturnType<typeof serveProxy>>;

beforeAll(async () => {
  origin = await startConformanceOrigin();
  proxy = await serveProxy(origin.url.href);
});

afterAll(async () => {
  await proxy?.dispose();
  origin?.close();
});

const REVISIONS = await serverRevisions();

describe("MCP conformance suite, server scenarios", () => {
  it("has server scenarios for the revisions this test expects to run", () => {
    expect(REVISIONS).toEqual(["2025-06-18", "2025-11-25"]);
  });

  it.each(REVISIONS)(
    "%s: through the proxy, passes every scenario the origin passes directly",
    async (revision) => {
      const [direct, proxied] = await Promise.all([
        runSuite(origin.url.href, revision),
        runSuite(proxy.url.href, revision),
      ]);

      // The fixture implements every server scenario of the pinned suite.
      const passingDirectly = [...direct]
        .filter(([, checks]) => passed(checks))
        .map(([name]) => name);
      expect(direct.size).toBe(revision === "2025-06-18" ? 26 : 32);
      expect(passingDirectly).toEqual([...direct.keys()]);

      const report = passingDirectly.map((scenario) => {
        const failures = (proxied.get(scenario) ?? [{ id: "missing", status: "FAILURE" as const }])
          .filter((check) => check.status === "FAILURE")
          .map((check) => `${check.id}: ${check.errorMessage ?? ""}`);
        return { scenario, failures };
      });
      expect(report.filter((entry) => entry.failures.length > 0)).toEqual([]);
      console.log(
        `conformance ${revision}: ${passingDirectly.length} of ${direct.size} scenarios pass directly; all of them pass through the proxy`,
      );
    },
  );
});
