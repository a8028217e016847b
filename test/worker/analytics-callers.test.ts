/**
 * Call analytics of two callers told apart by their credentials, one proxy
 * isolate (SECURITY.md, "What the proxy answers itself"): what the isolate
 * remembers for one caller's points (the client a 2025 session's
 * `initialize` named, the tasks its calls created) is another caller's to
 * neither overwrite nor push out.
 */
import { describe, expect, it } from "vitest";
import { MAX_TASKS } from "../../src/analytics/task-memory";
import { createApp } from "../../src/app";
import { onlyPoint, type Point, recordingDataset } from "../helpers/analytics-dataset";
import { DEMO_NAMES } from "../helpers/demo-names";
import { messagesOf, PROTOCOL_VERSION, postJson, rpc } from "../helpers/mcp";
import { freshOrigin, PROXY_URL, TASK_ORIGIN, viaProxy } from "../helpers/proxy";
import { scriptedOrigin } from "../helpers/scripted-origin";

const ID = '"@ID@"';
const json = (body: string) => ({
  status: 200,
  headers: [["Content-Type", "application/json"]] as [string, string][],
  body,
});

/**
 * A proxy with the dataset bound in front of an origin that numbers each user's sessions (it tells
 * users apart by their token): every user's first session is `1`. `open` opens one, initialized.
 */
async function numberedSessions() {
  // Alice's first session and mallory's are both `1`: each a session of its own, to the origin.
  const origin = await scriptedOrigin(
    {
      initialize: {
        ...json(
          `{"jsonrpc":"2.0","id":${ID},"result":{"protocolVersion":"${PROTOCOL_VERSION}","capabilities":{"tools":{}},"serverInfo":{"name":"origin","version":"1.0.0"}}}`,
        ),
        headers: [
          ["Content-Type", "application/json"],
          ["Mcp-Session-Id", "1"],
        ],
      },
      "notifications/initialized": { status: 202, headers: [], body: "" },
      "tools/list": json(
        `{"jsonrpc":"2.0","id":${ID},"result":{"tools":[{"name":"files.read","inputSchema":{"type":"object"}}]}}`,
      ),
      "tools/call": json(
        `{"jsonrpc":"2.0","id":${ID},"result":{"content":[{"type":"text","text":"read"}]}}`,
      ),
    },
    ID,
  );
  const recording = recordingDataset();
  const proxy = viaProxy(
    { ORIGIN_URL: origin.originUrl },
    { app: createApp(), bindings: recording.bindings, contexts: recording.contexts },
  );
  /** A 2025 session's `initialize`, as `token` with the client `client`, the proxy's URL with `query`. */
  const initialize = async (token: string, client: string, query = "") => {
    const init = rpc(0, "initialize", {
      protocolVersion: PROTOCOL_VERSION,
      capabilities: {},
      clientInfo: { name: client, version: "1.0.0" },
    });
    const response = await postJson(proxy, `${PROXY_URL}${query}`, init, {
      authorization: `Bearer ${token}`,
    });
    await messagesOf(response);
    return response;
  };
  const open = async (token: string, client: string) => {
    const credentials = { authorization: `Bearer ${token}` };
    const response = await initialize(token, client);
    const session = {
      ...credentials,
      "mcp-session-id": response.headers.get("mcp-session-id") ?? "",
      "mcp-protocol-version": PROTOCOL_VERSION,
    };
    const initialized = { jsonrpc: "2.0", method: "notifications/initialized" };
    await (await postJson(proxy, PROXY_URL, initialized, session)).body?.cancel();
    return session;
  };
  return { proxy, recording, initialize, open };
}

describe("the client a 2025 session's initialize named", () => {
  it("is the caller's own: another caller given the same session id does not rename it", async () => {
    const { proxy, recording, open } = await numberedSessions();
    const alice = await open("alice", "alice-app");
    const mallory = await open("mallory", "mallory-app");
    expect(mallory["mcp-session-id"]).toBe(alice["mcp-session-id"]);
    recording.clear();

    const call = rpc(1, "tools/call", { name: DEMO_NAMES["files.read"], arguments: {} });
    await messagesOf(await postJson(proxy, PROXY_URL, call, alice));
    expect(onlyPoint(await recording.points()).blobs).toMatchObject({
      "mcp.client.name": "alice-app",
      "client.source": "initialize",
    });
  });

  it("is not pushed out by one token's sessions, however many it opens", async () => {
    const { proxy, recording, initialize, open } = await numberedSessions();
    const alice = await open("alice", "alice-app");
    // More sessions than the isolate remembers clients of (4,096), each another caller: one token,
    // a query parameter the origin ignores (the session id the origin gives is always `1`).
    for (let from = 0; from < 4_100; from += 50) {
      await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          initialize("mallory", "mallory-app", `?n=${from + i}`),
        ),
      );
    }
    recording.clear();
    const call = rpc(1, "tools/call", { name: DEMO_NAMES["files.read"], arguments: {} });
    await messagesOf(await postJson(proxy, PROXY_URL, call, alice));
    expect(onlyPoint(await recording.points()).blobs).toMatchObject({
      "mcp.client.name": "alice-app",
      "client.source": "initialize",
    });
  }, 120_000);
});

/** A proxy with the dataset bound in front of SDK 1.x's task origin: one request, its message and points. */
function taskProxy() {
  const recording = recordingDataset();
  const proxy = viaProxy(
    { ORIGIN_URL: freshOrigin(TASK_ORIGIN) },
    { app: createApp(), bindings: recording.bindings, contexts: recording.contexts },
  );
  return async (
    id: number,
    method: string,
    params: Record<string, unknown>,
    credentials: Record<string, string>,
    query = "",
  ): Promise<{ message: Record<string, unknown> | undefined; points: Point[] }> => {
    const response = await postJson(proxy, `${PROXY_URL}${query}`, rpc(id, method, params), {
      "mcp-protocol-version": PROTOCOL_VERSION,
      ...credentials,
    });
    const [message] = await messagesOf(response);
    const points = await recording.points();
    recording.clear();
    return { message, points };
  };
}

const taskIdOf = (message: unknown) =>
  (message as { result: { task: { taskId: string } } }).result.task.taskId;

/** `build_report` called as a task. */
const report = () => ({ name: "build_report", arguments: { topic: "q3" }, task: { ttl: 60_000 } });

describe("the tasks a caller's calls created", () => {
  it("are not pushed out by another client making up a caller (a cookie) for each of 256 tasks", async () => {
    const ask = taskProxy();
    const alice = { authorization: "Bearer alice" };
    await ask(1, "tools/list", {}, alice);
    const created = await ask(2, "tools/call", report(), alice);
    const taskId = taskIdOf(created.message);
    // Mallory's one token, and a cookie of her own making on each call: a caller each, to the proxy.
    for (let i = 0; i < 256; i++) {
      const made = await ask(10 + i, "tools/call", report(), {
        authorization: "Bearer mallory",
        cookie: `made-up=${i}`,
      });
      expect(made.message).toHaveProperty("result.task.status", "working");
    }
    let status = "working";
    for (let id = 300; status === "working" && id < 500; id++) {
      const polled = await ask(id, "tasks/get", { taskId }, alice);
      status = (polled.message as { result: { status: string } }).result.status;
      if (status === "working") await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const ended = await ask(600, "tasks/result", { taskId }, alice);
    expect(onlyPoint(ended.points).blobs).toMatchObject({
      "mcp.method.name": "tasks/result",
      "gen_ai.tool.name": "build_report",
    });
  }, 120_000);

  it("are not pushed out by one token's tasks, made by as many callers as the isolate holds tasks", async () => {
    const ask = taskProxy();
    const alice = { authorization: "Bearer alice" };
    const created = await ask(1, "tools/call", report(), alice);
    const taskId = taskIdOf(created.message);
    // Mallory's one token, and a query parameter the origin ignores: a caller each, one source.
    for (let from = 0; from < MAX_TASKS; from += 64) {
      await Promise.all(
        Array.from({ length: 64 }, async (_, i) => {
          const made = await ask(
            10,
            "tools/call",
            report(),
            { authorization: "Bearer mallory" },
            `?n=${from + i}`,
          );
          expect(made.message).toHaveProperty("result.task.status", "working");
        }),
      );
    }
    const ended = await ask(2, "tasks/result", { taskId }, alice);
    expect(onlyPoint(ended.points).blobs).toMatchObject({
      "mcp.method.name": "tasks/result",
      "gen_ai.tool.name": "build_report",
    });
  }, 120_000);
});
