/**
 * The `tools_renamed` line says what name each tool got, once per name and
 * isolate (docs/logs.md): the line an engineer reads when a model calls a
 * tool by a name it no longer has after a deploy (docs/troubleshooting.md).
 * A new isolate reads the origin's tools from the map in KV before it names
 * a listing; the names it gives them there are its own, under its profile
 * and `NAME_MAX_LENGTH`, and its first listing of them says them.
 */
import { waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { Worker } from "../../src/app";
import { createApp } from "../../src/app";
import { NO_RULES } from "../../src/rules/tool-rules";
import { profileOf } from "../../src/schemas/profile";
import { ToolMapMemory, toolMapScopes } from "../../src/toolmap/isolate-memory";
import { ToolMap } from "../../src/toolmap/tool-map";
import { kvHolding } from "../helpers/kv";
import { writtenTools } from "../helpers/listing-digests";
import { captureLogs } from "../helpers/logs";
import { messagesOf, openSession, postJson, rpc } from "../helpers/mcp";
import { freshOrigin, GATEWAY_ORIGIN, PROXY_URL, viaProxy } from "../helpers/proxy";

const LONG = "analytics_reporting_service.generate_quarterly_revenue_summary_by_region";

/** One listing through `app` at `url`, its background writes (the map in KV) finished. */
async function listed(app: Worker, vars: Record<string, string>, url = PROXY_URL) {
  const contexts: ExecutionContext[] = [];
  const proxy = viaProxy(vars, { app, contexts });
  const session = await openSession(proxy, url);
  const [message] = await messagesOf(await postJson(proxy, url, rpc(1, "tools/list", {}), session));
  for (const context of contexts) await waitOnExecutionContext(context);
  return (message as { result: { tools: { name: string }[] } }).result.tools.map(
    ({ name }) => name,
  );
}

/** The renames the `tools_renamed` lines since `logs` began said, as `from -> to`. */
function said(logs: ReturnType<typeof captureLogs>): string[] {
  return logs
    .events("tools_renamed")
    .flatMap((line) =>
      (line.renames as { from: string; to: string }[]).map((r) => `${r.from} -> ${r.to}`),
    );
}

describe("tools_renamed", () => {
  it("is written by a new isolate whose names differ from the map's in KV: a deploy with another NAME_MAX_LENGTH", async () => {
    const origin = freshOrigin(GATEWAY_ORIGIN);
    const before = captureLogs();
    await listed(createApp(), { ORIGIN_URL: origin });
    // docs/names.md: the name under the default cap of 64.
    expect(said(before)).toContain(
      `${LONG} -> analytics_reporting_service_generate_quarterly_revenue_su_oshsl2`,
    );

    // The next deployment, at a cap of 40: a new isolate, the map in KV written by the one before.
    const after = captureLogs();
    const app = createApp();
    const names = await listed(app, { ORIGIN_URL: origin, NAME_MAX_LENGTH: "40" });
    // 40 - 7 characters of the sanitized name, then the fingerprint docs/names.md gives it.
    expect(names).toContain("analytics_reporting_service_gener_oshsl2");
    expect(said(after)).toContain(`${LONG} -> analytics_reporting_service_gener_oshsl2`);

    // Once per name and isolate: the same listing again says nothing new.
    const again = captureLogs();
    await listed(app, { ORIGIN_URL: origin, NAME_MAX_LENGTH: "40" });
    expect(said(again)).toEqual([]);
  });

  it("is written for a profile's names the first time an isolate that knows the tools lists them under it", async () => {
    const origin = freshOrigin(GATEWAY_ORIGIN);
    const app = createApp();
    await listed(app, { ORIGIN_URL: origin });
    const logs = captureLogs();
    const names = await listed(app, { ORIGIN_URL: origin }, `${PROXY_URL}/gemini`);
    // docs/names.md: under gemini a name may not start with a digit.
    expect(names).toContain("_21st_century_gc8iis");
    expect(said(logs)).toContain("21st_century -> _21st_century_gc8iis");
  });

  it("says a name once, though another listing of the isolate's comes while the first waits on KV", async () => {
    // A new deployment's first listing, large: it waits for its map's write before its line
    // (tool-map.ts), while another client's listing of the same tools is named meanwhile.
    const scopes = await toolMapScopes(
      new URL(`https://origin.example/mcp?map=${crypto.randomUUID()}`),
      profileOf("openai").names,
    );
    const memory = new ToolMapMemory();
    const open = (kv: KVNamespace) =>
      new ToolMap(kv, scopes, profileOf("openai"), memory, () => {}, {
        rules: NO_RULES,
        changes: "log",
        scope: "definition",
      });
    const tools = Array.from({ length: 300 }, (_, i) => ({
      name: `reports.tool_${i}`,
      description: `Tool ${i}.`,
      inputSchema: { type: "object", properties: { path: { type: "string" } } },
    }));
    const listed = () => writtenTools(JSON.stringify({ jsonrpc: "2.0", id: 1, result: { tools } }));
    const holding = kvHolding(
      env.TOOL_MAP,
      (operation, key) => operation === "put" && key.endsWith(":map"),
    );
    const logs = captureLogs();
    const first = open(holding.kv).nameListing(listed());
    await holding.asked;
    await open(env.TOOL_MAP).nameListing(listed());
    holding.release();
    await first;
    const renamed = said(logs).filter((rename) => rename.startsWith("reports.tool_0 -> "));
    expect(renamed).toHaveLength(1);
  });
});
