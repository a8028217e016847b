/**
 * Call analytics of tools that run as tasks (docs/observability.md,
 * "Outcomes"): a call answered with a task's creation is `task_created`,
 * neither success nor failure. Against the real task origin (SDK 1.x's task
 * store) and, for 2026-07-28's tasks extension, which no SDK here speaks, the
 * scripted origin.
 */
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { CARRIED, onlyPoint, recordingDataset } from "../helpers/analytics-dataset";
import { ENVELOPE_2026, messagesOf, postJson, rpc, wireRequest } from "../helpers/mcp";
import { freshOrigin, PROXY_URL, TASK_ORIGIN, viaProxy } from "../helpers/proxy";
import { scriptedOrigin } from "../helpers/scripted-origin";

describe("a call answered with a task's creation (tasks)", () => {
  /**
   * A proxy with the dataset bound in front of `origin`: a function that sends
   * it one request of `revision` (of 2026-07-28 with `meta`, its `_meta`), and
   * takes the answer's message and the points written.
   */
  function taskProxy(origin: string, revision: "2025-11-25" | "2026-07-28", meta = {}) {
    const recording = recordingDataset();
    const proxy = viaProxy(
      { ORIGIN_URL: origin },
      { app: createApp(), bindings: recording.bindings, contexts: recording.contexts },
    );
    return async (id: number, method: string, params: Record<string, unknown> = {}) => {
      const { body, headers } = wireRequest(revision, id, method, params);
      const sent = revision === "2026-07-28" ? rpc(id, method, { ...params, _meta: meta }) : body;
      const [message] = await messagesOf(await postJson(proxy, PROXY_URL, sent, headers));
      const points = await recording.points();
      recording.clear();
      return { message, points };
    };
  }

  it.each(CARRIED)(
    "protocol 2025-11-25, in %s: task_created, neither success nor failure; the task's result, read with tasks/result, writes no point",
    async (_, query) => {
      const ask = taskProxy(freshOrigin(TASK_ORIGIN, query), "2025-11-25");
      await ask(1, "tools/list");
      // The client asks for a task: the origin answers with its creation, no tool result yet.
      const created = await ask(2, "tools/call", {
        name: "build_report",
        arguments: { topic: "q3", fail: true },
        task: { ttl: 60_000 },
      });
      expect(created.message).toHaveProperty("result.task.status", "working");
      expect(created.message).not.toHaveProperty("result.content");
      expect(onlyPoint(created.points).blobs).toMatchObject({
        "gen_ai.tool.name": "build_report",
        outcome: "task_created",
        "error.type": "",
      });
      // The tool's result comes to tasks/result, a tool error here: no point says so.
      const { taskId } = (created.message as { result: { task: { taskId: string } } }).result.task;
      const result = await ask(3, "tasks/result", { taskId });
      expect(result.message).toHaveProperty("result.isError", true);
      expect(result.points).toEqual([]);
      // Called without a task, the tool answers with its result (which names the task, none).
      const atOnce = await ask(4, "tools/call", {
        name: "build_report",
        arguments: { topic: "q3" },
      });
      expect(atOnce.message).toHaveProperty("result.structuredContent.task", null);
      expect(onlyPoint(atOnce.points).blobs.outcome).toBe("ok");
      // Past the 64 KiB parsed (the task's status quotes the topic): judged by what it mentions,
      // a task's creation is not taken for a result...
      const long = "x".repeat(70 * 1024);
      const longCreated = await ask(5, "tools/call", {
        name: "build_report",
        arguments: { topic: long },
        task: {},
      });
      expect(longCreated.message).toHaveProperty("result.task.status", "working");
      expect(onlyPoint(longCreated.points).blobs.outcome).toBe("unread");
      // ...and a result that mentions a task, to a call that asked for none, still is one.
      const longAtOnce = await ask(6, "tools/call", {
        name: "build_report",
        arguments: { topic: long },
      });
      expect(longAtOnce.message).toHaveProperty("result.structuredContent.task", null);
      expect(onlyPoint(longAtOnce.points).blobs.outcome).toBe("ok");
    },
  );

  /** The tasks extension of 2026-07-28 (io.modelcontextprotocol/tasks), declared by the client. */
  const WITH_TASKS = {
    ...ENVELOPE_2026,
    "io.modelcontextprotocol/clientCapabilities": {
      extensions: { "io.modelcontextprotocol/tasks": {} },
    },
  };

  it.each([
    ["short", "", "task_created"],
    // Judged by what it mentions: not taken for a result.
    ["past the 64 KiB parsed", "x".repeat(70 * 1024), "unread"],
  ])(
    "protocol 2026-07-28, the tasks extension: a task's creation (resultType task), %s",
    async (_, status, outcome) => {
      const answer = (result: Record<string, unknown>) => ({
        status: 200,
        headers: [["Content-Type", "application/json"]] as [string, string][],
        body: `{"jsonrpc":"2.0","id":ID_MARK,"result":${JSON.stringify(result)}}`,
      });
      const origin = await scriptedOrigin(
        {
          "tools/list": answer({
            resultType: "complete",
            tools: [{ name: "build_report", inputSchema: { type: "object" } }],
          }),
          "tools/call": answer({
            resultType: "task",
            taskId: "786512e2-9e0d-44bd-8f29-789f320fe840",
            status: "working",
            statusMessage: `Building the report${status}`,
            createdAt: "2026-07-28T10:30:00Z",
            lastUpdatedAt: "2026-07-28T10:30:00Z",
            ttlMs: 60_000,
            pollIntervalMs: 5_000,
          }),
        },
        "ID_MARK",
      );
      const ask = taskProxy(origin.originUrl, "2026-07-28", WITH_TASKS);
      await ask(1, "tools/list");
      const created = await ask(2, "tools/call", { name: "build_report", arguments: {} });
      expect(created.message).toHaveProperty("result.resultType", "task");
      expect(onlyPoint(created.points).blobs).toMatchObject({
        "gen_ai.tool.name": "build_report",
        outcome,
        "error.type": "",
      });
    },
  );
});
