/**
 * A request's log lines past its budget (src/log.ts `withLogBudget`, docs/logs.md): what an
 * operator still reads of what matters, whatever the client made the request log first.
 */
import { waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { CHANGING_TOOL, changingOrigin, runAcceptCommand } from "../helpers/changing-origin";
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
