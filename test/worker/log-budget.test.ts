/**
 * A request's log lines past its budget (src/log.ts `withLogBudget`, docs/logs.md): what an
 * operator still reads of what matters, whatever the client made the request log first.
 */
import { waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { CHANGING_TOOL, changingOrigin, runAcceptCommand } from "../helpers/changing-origin";
import { demoSession } from "../helpers/demo";
import { DEMO_NAMES } from "../helpers/demo-names";
import { captureLogs } from "../helpers/logs";
import { messagesOf, openSession, postJson, rpc } from "../helpers/mcp";
import { PROXY_URL, viaProxy } from "../helpers/proxy";

describe("a held change first shown past the request's budget", () => {
  // A held change is logged once per isolate, with the command that accepts it. A batch whose
  // calls spent the request's budget before its listing showed the change had that line written
  // short (no `accept`, its pin cut to 64 characters), and no later request wrote it again.
  it("is logged with the command that accepts it", async () => {
    const { origin, change } = changingOrigin();
    const contexts: ExecutionContext[] = [];
    const app = createApp();
    const proxy = () =>
      viaProxy(
        { ORIGIN_URL: origin, TOOL_CHANGES: "hold", MAX_BATCH_MESSAGES: "100" },
        { app, contexts },
      );
    const session = { ...(await openSession(proxy(), PROXY_URL)), cookie: "who=ann" };
    await messagesOf(await postJson(proxy(), PROXY_URL, rpc(1, "tools/list"), session));
    await Promise.all(contexts.splice(0).map((ctx) => waitOnExecutionContext(ctx)));
    await change();

    // Calls of another tool, each naming 100 long keys it does not declare: a long line each,
    // then short ones past the budget, which they take too.
    const unknown = Object.fromEntries(
      Array.from({ length: 100 }, (_, i) => [`${"column_".repeat(30)}${i}`, i]),
    );
    const calls = Array.from({ length: 99 }, (_, id) =>
      rpc(id, "tools/call", {
        name: "search_files",
        arguments: { path: "a", pattern: "b", ...unknown },
      }),
    );
    const logs = captureLogs();
    await messagesOf(
      await postJson(proxy(), PROXY_URL, [...calls, rpc("list", "tools/list")], {
        ...session,
        "mcp-protocol-version": "2025-03-26",
      }),
    );
    await Promise.all(contexts.splice(0).map((ctx) => waitOnExecutionContext(ctx)));
    expect(logs.lines().some((line) => line.log_budget === "spent")).toBe(true);
    const [held] = logs.events("tool_definition_changed");
    logs.restore();
    expect(held).toMatchObject({ tool: CHANGING_TOOL, mode: "hold" });
    await runAcceptCommand(held, origin);
    // Another isolate reads the acceptance: the tool is listed again.
    const accepted = viaProxy({ ORIGIN_URL: origin, TOOL_CHANGES: "hold" }, { app: createApp() });
    const [listing] = await messagesOf(
      await postJson(accepted, PROXY_URL, rpc(1, "tools/list"), session),
    );
    expect(listing).toMatchObject({
      result: { tools: expect.arrayContaining([expect.objectContaining({ name: CHANGING_TOOL })]) },
    });
  });
});

describe("a batch at MAX_BATCH_MESSAGES' ceiling", () => {
  // Workers Logs keeps the first 256 KB of an invocation's lines. Past the budget a line's strings
  // were cut to 64 characters, but a control character is written as six (`\u0001`): 247 calls
  // refused for names a client padded so wrote 304 KB after 9 long lines, and the lines of the
  // last 80 or so were never recorded.
  it("stays within what Workers Logs keeps, every call's line written, whatever its names", async () => {
    const { proxy, session } = await demoSession({ vars: { MAX_BATCH_MESSAGES: "256" } });
    await messagesOf(await postJson(proxy, PROXY_URL, rpc("list", "tools/list"), session));
    const filters = Object.fromEntries(
      Array.from({ length: 100 }, (_, i) => [`${"column_".repeat(30)}${i}`, i]),
    );
    const name = DEMO_NAMES["reports.query"];
    // 9 calls whose repairs log a long line each, then calls of a name no tool has, padded.
    const batch = Array.from({ length: 256 }, (_, id) =>
      id < 9
        ? rpc(id, "tools/call", { name, arguments: { limit: 5, filters } })
        : rpc(id, "tools/call", { name: `${name}x${"\u0001".repeat(100)}`, arguments: {} }),
    );
    const logs = captureLogs();
    await postJson(proxy, PROXY_URL, batch, { ...session, "mcp-protocol-version": "2025-03-26" });
    const lines = logs.lines();
    logs.restore();
    const bytes = lines.reduce(
      (sum, line) => sum + new TextEncoder().encode(`${JSON.stringify(line)}\n`).byteLength,
      0,
    );
    expect(bytes).toBeLessThan(256_000);
    expect(lines.filter((line) => line.event === "tool_call_refused")).toHaveLength(247);
  });
});
