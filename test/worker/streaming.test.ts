/** Responses stream through the proxy event by event; nothing is held back. */
import { describe, expect, it } from "vitest";
import { nextMessage, openSession, postJson, rpc, sseEvents } from "../helpers/mcp";
import { PROXY_URL, viaProxy } from "../helpers/proxy";

describe("event streams", () => {
  it("deliver the origin's first event while the origin still holds the stream open", async () => {
    const proxy = viaProxy();
    const session = await openSession(proxy, PROXY_URL);

    // `deploy:confirm` sends an elicitation request and waits for the answer
    // before it finishes its response. If the proxy buffered the stream, the
    // client would never see the question and the call would never end.
    const call = await postJson(
      proxy,
      PROXY_URL,
      rpc(1, "tools/call", { name: "deploy_confirm", arguments: { target: "prod" } }),
      session,
    );
    expect(call.headers.get("content-type")).toContain("text/event-stream");
    expect(call.headers.has("content-length")).toBe(false);
    const events = sseEvents(call);

    const question = await nextMessage(events);
    expect(question).toMatchObject({
      method: "elicitation/create",
      params: { message: "Deploy to prod?" },
    });

    const answer = await postJson(
      proxy,
      PROXY_URL,
      { jsonrpc: "2.0", id: question.id, result: { action: "accept", content: { confirm: true } } },
      session,
    );
    expect(answer.status).toBe(202);

    expect(await nextMessage(events)).toMatchObject({
      id: 1,
      result: {
        structuredContent: {
          tool: "deploy:confirm",
          answer: { action: "accept", content: { confirm: true } },
        },
      },
    });
  });

  it("deliver progress notifications in order before the result", async () => {
    const proxy = viaProxy();
    const session = await openSession(proxy, PROXY_URL);
    const call = await postJson(
      proxy,
      PROXY_URL,
      rpc(2, "tools/call", {
        name: "tasks_countdown",
        arguments: { steps: 3, delay_ms: 10 },
        _meta: { progressToken: "p-1" },
      }),
      session,
    );
    const events = sseEvents(call);
    const progress = [];
    for (let i = 0; i < 3; i++) progress.push(await nextMessage(events));
    expect(progress.map((message) => (message.params as { progress: number }).progress)).toEqual([
      1, 2, 3,
    ]);
    expect(await nextMessage(events)).toMatchObject({
      id: 2,
      result: { structuredContent: { tool: "tasks.countdown" } },
    });
  });
});
