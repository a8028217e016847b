/**
 * Call analytics of tools that run as tasks (docs/observability.md, "Tasks"):
 * a call answered with a task's creation is `task_created`, neither success
 * nor failure; the task's end, read by a later request of the same caller
 * (2025-11-25: `tasks/get`, `tasks/result`, `tasks/cancel`; 2026-07-28's tasks
 * extension: `tasks/get`, the result inline), writes one more point, for the
 * tool, once. Against the real task origin (SDK 1.x's task store) and, for
 * the extension, which no SDK here speaks, the scripted origin.
 */
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { CARRIED, onlyPoint, recordingDataset } from "../helpers/analytics-dataset";
import { ENVELOPE_2026, messagesOf, postJson, rpc, wireRequest } from "../helpers/mcp";
import { freshOrigin, PROXY_URL, TASK_ORIGIN, viaProxy } from "../helpers/proxy";
import { type ScriptedAnswer, scriptedOrigin } from "../helpers/scripted-origin";

type Revision = "2025-11-25" | "2026-07-28";

/**
 * A proxy with the dataset bound in front of `origin`, in an isolate of its
 * own (`createApp`): `ask` sends it one request of `revision` (of 2026-07-28
 * with `meta`, its `_meta`; with `headers` besides, a caller's credentials),
 * and takes the answer's message and the points written.
 */
function taskProxy(
  origin: string,
  revision: Revision,
  meta = {},
  vars: Record<string, string> = {},
) {
  const recording = recordingDataset();
  const app = createApp();
  const bindings = { ...recording.bindings, ...vars };
  const proxy = viaProxy({ ORIGIN_URL: origin }, { app, bindings, contexts: recording.contexts });
  return async (
    id: number,
    method: string,
    params: Record<string, unknown> = {},
    more: Record<string, string> = {},
  ) => {
    const { body, headers } = wireRequest(revision, id, method, params);
    const sent = revision === "2026-07-28" ? rpc(id, method, { ...params, _meta: meta }) : body;
    const response = await postJson(proxy, PROXY_URL, sent, { ...headers, ...more });
    const [message] = await messagesOf(response);
    const points = await recording.points();
    recording.clear();
    return { message, points };
  };
}

type Ask = ReturnType<typeof taskProxy>;

const taskIdOf = (message: unknown) =>
  (message as { result: { task: { taskId: string } } }).result.task.taskId;

/** `build_report` called as a task (2025-11-25) with `args`: its task's id, and the creation's points. */
async function startTask(ask: Ask, id: number, args: Record<string, unknown>, more = {}) {
  const created = await ask(
    id,
    "tools/call",
    { name: "build_report", arguments: { topic: "q3", ...args }, task: { ttl: 60_000 } },
    more,
  );
  expect(created.message).toHaveProperty("result.task.status", "working");
  return { taskId: taskIdOf(created.message), points: created.points };
}

/** Polls `tasks/get` as SDK 1.x's client does until the task ends: the last answer, and every point written. */
async function pollToEnd(ask: Ask, taskId: string, firstId: number) {
  const points = [];
  for (let id = firstId; id < firstId + 200; id++) {
    const polled = await ask(id, "tasks/get", { taskId });
    points.push(...polled.points);
    const status = (polled.message as { result?: { status?: string } }).result?.status;
    if (status !== "working") return { status, points };
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error("the task never ended");
}

describe("a call answered with a task's creation, protocol 2025-11-25 (SDK 1.x's task origin)", () => {
  it.each(CARRIED)(
    "in %s: task_created; the task polled to its end, its result read with tasks/result writes the tool's outcome, once",
    async (_, query) => {
      const ask = taskProxy(freshOrigin(TASK_ORIGIN, query), "2025-11-25");
      await ask(1, "tools/list");
      // The client asks for a task: the origin answers with its creation, no tool result yet.
      const asked = Date.now();
      const created = await startTask(ask, 2, { fail: true });
      expect(onlyPoint(created.points).blobs).toMatchObject({
        "mcp.method.name": "tools/call",
        "gen_ai.tool.name": "build_report",
        outcome: "task_created",
        "error.type": "",
      });
      // Polled until it completed: no result yet, no point.
      const polled = await pollToEnd(ask, created.taskId, 3);
      expect(polled).toEqual({ status: "completed", points: [] });
      // The tool's result comes to tasks/result, a tool error here: a point for the tool says so.
      const result = await ask(300, "tasks/result", { taskId: created.taskId });
      const answered = Date.now();
      expect(result.message).toHaveProperty("result.isError", true);
      const ended = onlyPoint(result.points);
      expect(ended.blobs).toMatchObject({
        "mcp.method.name": "tasks/result",
        "gen_ai.tool.name": "build_report",
        outcome: "tool_error",
        "error.type": "tool_error",
        validation: "valid",
        resolution: "listed",
      });
      expect(ended.doubles["outcome.weight"]).toBe(1);
      // From the creation's answer to the result's, as the proxy read each: within the exchange.
      // Not "at least the 50 ms the report took": an event stream's copy is read after the client
      // has it, and on a busy machine so late that the creation is read well into the task.
      expect(ended.doubles["task.duration.ms"]).toBeGreaterThan(0);
      expect(ended.doubles["task.duration.ms"]).toBeLessThanOrEqual(answered - asked);
      expect(JSON.stringify(ended)).not.toContain(created.taskId);
      // Read again: the same end, written once.
      const again = await ask(301, "tasks/result", { taskId: created.taskId });
      expect(again.message).toHaveProperty("result.isError", true);
      expect(again.points).toEqual([]);
      expect((await ask(302, "tasks/get", { taskId: created.taskId })).points).toEqual([]);
    },
  );

  it("a task whose tool works: ok, read with tasks/result at once (it waits for the end)", async () => {
    const ask = taskProxy(freshOrigin(TASK_ORIGIN), "2025-11-25");
    const { taskId } = await startTask(ask, 1, {});
    const result = await ask(2, "tasks/result", { taskId });
    expect(result.message).toHaveProperty("result.structuredContent.task", taskId);
    expect(onlyPoint(result.points).blobs).toMatchObject({
      "mcp.method.name": "tasks/result",
      "gen_ai.tool.name": "build_report",
      outcome: "ok",
      "error.type": "",
    });
  });

  it("a task that fails: task_failed, a failure, from the tasks/get that says so; its result read after writes nothing", async () => {
    const ask = taskProxy(freshOrigin(TASK_ORIGIN), "2025-11-25");
    const { taskId } = await startTask(ask, 1, { crash: true });
    // SDK 1.x's client stops there: it reads no result of a failed task.
    const polled = await pollToEnd(ask, taskId, 2);
    expect(polled.status).toBe("failed");
    expect(onlyPoint(polled.points).blobs).toMatchObject({
      "mcp.method.name": "tasks/get",
      "gen_ai.tool.name": "build_report",
      outcome: "task_failed",
      "error.type": "task_failed",
    });
    const result = await ask(300, "tasks/result", { taskId });
    expect(result.message).toHaveProperty("result.isError", true);
    expect(result.points).toEqual([]);
  });

  it("a task the client cancels: task_cancelled, from tasks/cancel's answer; polled after, nothing more", async () => {
    const ask = taskProxy(freshOrigin(TASK_ORIGIN), "2025-11-25");
    const { taskId } = await startTask(ask, 1, { slow: true });
    const cancelled = await ask(2, "tasks/cancel", { taskId });
    expect(cancelled.message).toHaveProperty("result.status", "cancelled");
    expect(onlyPoint(cancelled.points).blobs).toMatchObject({
      "mcp.method.name": "tasks/cancel",
      "gen_ai.tool.name": "build_report",
      outcome: "task_cancelled",
      "error.type": "",
    });
    const polled = await ask(3, "tasks/get", { taskId });
    expect(polled.message).toHaveProperty("result.status", "cancelled");
    expect(polled.points).toEqual([]);
  });

  it("another caller's poll of the task writes nothing, nor a poll in an isolate that did not see it created; its own caller's does", async () => {
    const origin = freshOrigin(TASK_ORIGIN);
    const ask = taskProxy(origin, "2025-11-25");
    const alice = { authorization: "Bearer alice-token" };
    const { taskId } = await startTask(ask, 1, {}, alice);
    // The origin answers anyone who has the id (this one checks no one): the proxy writes nothing.
    const mallory = await ask(2, "tasks/result", { taskId }, { authorization: "Bearer mallory" });
    expect(mallory.message).toHaveProperty("result.structuredContent.task", taskId);
    expect(mallory.points).toEqual([]);
    const elsewhere = await taskProxy(origin, "2025-11-25")(3, "tasks/result", { taskId }, alice);
    expect(elsewhere.message).toHaveProperty("result.structuredContent.task", taskId);
    expect(elsewhere.points).toEqual([]);
    // The caller is their credentials, sessions aside: a task outlives the session that made it.
    const own = await ask(4, "tasks/result", { taskId }, { ...alice, "mcp-session-id": "later" });
    expect(onlyPoint(own.points).blobs.outcome).toBe("ok");
  });

  it("half the answers read: a task's end is read whenever its creation was, and stands for as many calls", async () => {
    const ask = taskProxy(
      freshOrigin(TASK_ORIGIN),
      "2025-11-25",
      {},
      {
        CALLS_ANSWER_SAMPLING_RATE: "0.5",
      },
    );
    const seen = new Set<string>();
    for (let i = 0; i < 16; i++) {
      const { taskId, points } = await startTask(ask, 2 * i, {});
      const creation = onlyPoint(points);
      seen.add(creation.blobs.outcome);
      const result = await ask(2 * i + 1, "tasks/result", { taskId });
      if (creation.blobs.outcome === "unsampled") {
        // No task remembered: its end is counted nowhere, as its creation's outcome.
        expect(result.points).toEqual([]);
        continue;
      }
      expect(creation.blobs.outcome).toBe("task_created");
      expect(creation.doubles["outcome.weight"]).toBe(2);
      // Whatever this request's own draw: the remembered task's answer is read.
      const ended = onlyPoint(result.points);
      expect(ended.blobs.outcome).toBe("ok");
      expect(ended.doubles["outcome.weight"]).toBe(2);
    }
    // 16 fair draws all alike: a chance of 1 in 32,768.
    expect([...seen].sort()).toEqual(["task_created", "unsampled"]);
  });

  it.each(CARRIED)(
    "in %s, past the 64 KiB parsed: a task's creation is not taken for a result, and a result that mentions a task still is one",
    async (_, query) => {
      const ask = taskProxy(freshOrigin(TASK_ORIGIN, query), "2025-11-25");
      await ask(1, "tools/list");
      // Called without a task, the tool answers with its result (which names the task, none).
      const atOnce = await ask(2, "tools/call", {
        name: "build_report",
        arguments: { topic: "q3" },
      });
      expect(atOnce.message).toHaveProperty("result.structuredContent.task", null);
      expect(onlyPoint(atOnce.points).blobs.outcome).toBe("ok");
      // The task's status quotes the topic: judged by what it mentions.
      const long = "x".repeat(70 * 1024);
      const longCreated = await ask(3, "tools/call", {
        name: "build_report",
        arguments: { topic: long },
        task: {},
      });
      expect(longCreated.message).toHaveProperty("result.task.status", "working");
      expect(onlyPoint(longCreated.points).blobs.outcome).toBe("unread");
      const longAtOnce = await ask(4, "tools/call", {
        name: "build_report",
        arguments: { topic: long },
      });
      expect(longAtOnce.message).toHaveProperty("result.structuredContent.task", null);
      expect(onlyPoint(longAtOnce.points).blobs.outcome).toBe("ok");
    },
  );
});

describe("a call answered with a task's creation, 2026-07-28's tasks extension", () => {
  /** The tasks extension (io.modelcontextprotocol/tasks), declared by the client. */
  const WITH_TASKS = {
    ...ENVELOPE_2026,
    "io.modelcontextprotocol/clientCapabilities": {
      extensions: { "io.modelcontextprotocol/tasks": {} },
    },
  };
  const TASK_ID = "786512e2-9e0d-44bd-8f29-789f320fe840";
  const answer = (result: Record<string, unknown>): ScriptedAnswer => ({
    status: 200,
    headers: [["Content-Type", "application/json"]],
    body: `{"jsonrpc":"2.0","id":ID_MARK,"result":${JSON.stringify(result)}}`,
  });
  /** The task as the extension's tasks/get and its creation write it. */
  const task = (status: string, more: Record<string, unknown> = {}) => ({
    taskId: TASK_ID,
    status,
    createdAt: "2026-07-28T10:30:00Z",
    lastUpdatedAt: "2026-07-28T10:30:00Z",
    ttlMs: 60_000,
    pollIntervalMs: 5_000,
    ...more,
  });
  /** The origin, listing build_report and answering its call with a task whose statusMessage is `status`. */
  const taskOrigin = (statusMessage = "Building the report") =>
    scriptedOrigin(
      {
        "tools/list": answer({
          resultType: "complete",
          tools: [{ name: "build_report", inputSchema: { type: "object" } }],
        }),
        "tools/call": answer({ resultType: "task", ...task("working", { statusMessage }) }),
        "tasks/get": answer({ resultType: "complete", ...task("working") }),
      },
      "ID_MARK",
    );

  it.each([
    ["short", "", "task_created"],
    // Judged by what it mentions: not taken for a result.
    ["past the 64 KiB parsed", "x".repeat(70 * 1024), "unread"],
  ])("a task's creation (resultType task), %s", async (_, status, outcome) => {
    const origin = await taskOrigin(`Building the report${status}`);
    const ask = taskProxy(origin.originUrl, "2026-07-28", WITH_TASKS);
    await ask(1, "tools/list");
    const created = await ask(2, "tools/call", { name: "build_report", arguments: {} });
    expect(created.message).toHaveProperty("result.resultType", "task");
    expect(onlyPoint(created.points).blobs).toMatchObject({
      "gen_ai.tool.name": "build_report",
      outcome,
      "error.type": "",
    });
  });

  it.each([
    [
      "completed, its result a tool error",
      task("completed", { result: { content: [], isError: true } }),
      "tool_error",
      "tool_error",
    ],
    ["completed, its result a result", task("completed", { result: { content: [] } }), "ok", ""],
    [
      "failed, a JSON-RPC error",
      task("failed", { error: { code: -32603, message: "API rate limit exceeded" } }),
      "rpc_error",
      "-32603",
    ],
    ["cancelled", task("cancelled"), "task_cancelled", ""],
  ])(
    "polled with tasks/get until it ended %s: one point for the tool",
    async (_, ended, outcome, errorType) => {
      const origin = await taskOrigin();
      const ask = taskProxy(origin.originUrl, "2026-07-28", WITH_TASKS);
      await ask(1, "tools/list");
      const created = await ask(2, "tools/call", { name: "build_report", arguments: {} });
      expect(onlyPoint(created.points).blobs.outcome).toBe("task_created");
      const working = await ask(3, "tasks/get", { taskId: TASK_ID });
      expect(working.message).toHaveProperty("result.status", "working");
      expect(working.points).toEqual([]);
      await origin.change({ "tasks/get": answer({ resultType: "complete", ...ended }) });
      const done = await ask(4, "tasks/get", { taskId: TASK_ID });
      expect(done.message).toHaveProperty("result.status", ended.status);
      expect(onlyPoint(done.points).blobs).toMatchObject({
        "mcp.method.name": "tasks/get",
        "gen_ai.tool.name": "build_report",
        outcome,
        "error.type": errorType,
        "mcp.protocol.version": "2026-07-28",
      });
      // Polled again: the same end, written once.
      expect((await ask(5, "tasks/get", { taskId: TASK_ID })).points).toEqual([]);
    },
  );
});
