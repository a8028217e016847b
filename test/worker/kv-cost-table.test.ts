/**
 * docs/tool-map.md's cost table, counted through the proxy as it ships
 * (`TOOL_CHANGES=log`, the deployment's answer remembered in KV): each
 * request's KV operations, its work after the response (`waitUntil`)
 * included, on the real local namespace. tool-map-kv.test.ts counts the map's
 * own share at 10 to 5,000 tools.
 */
import { waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { countingKv } from "../../support/counting-kv";
import { changingOrigin } from "../helpers/changing-origin";
import { VALID_ARGUMENTS } from "../helpers/demo-calls";
import { DEMO_NAMES } from "../helpers/demo-names";
import { messagesOf, openSession, postJson, rpc } from "../helpers/mcp";
import { DEMO_ORIGIN, freshOrigin, PROXY_URL, viaProxy } from "../helpers/proxy";

/** Isolates in front of one fresh origin, every KV operation counted; `list` a listing's. */
function countedIsolates(vars: Record<string, string> = {}, origin = freshOrigin(DEMO_ORIGIN)) {
  const counted = countingKv(env.TOOL_MAP);
  const contexts: ExecutionContext[] = [];
  const isolate = async () => {
    const proxy = viaProxy(
      { ORIGIN_URL: origin, ...vars },
      { app: createApp(), kv: counted.kv, contexts },
    );
    const sessions = new Map<string, Awaited<ReturnType<typeof openSession>>>();
    /** One request's KV operations, its work after the response included. */
    const send = async (method: string, params?: Record<string, unknown>, url = PROXY_URL) => {
      if (!sessions.has(url)) sessions.set(url, await openSession(proxy, url));
      counted.reset();
      const [message] = await messagesOf(
        await postJson(proxy, url, rpc(1, method, params), sessions.get(url)),
      );
      expect(message).toHaveProperty("result");
      await Promise.all(contexts.splice(0).map((ctx) => waitOnExecutionContext(ctx)));
      return { message, counts: { ...counted.counts } };
    };
    const list = async (url = PROXY_URL) => {
      const { message, counts } = await send("tools/list", undefined, url);
      expect(message).toHaveProperty("result.tools");
      return counts;
    };
    const call = async (original: keyof typeof DEMO_NAMES) => {
      const { message, counts } = await send("tools/call", {
        name: DEMO_NAMES[original],
        arguments: VALID_ARGUMENTS[original] ?? {},
      });
      expect(message).toHaveProperty("result.structuredContent.tool", original);
      return counts;
    };
    return Object.assign(list, { list, call });
  };
  return { isolate };
}

describe("docs/tool-map.md's cost table, through the proxy", () => {
  it("a first listing of an origin, and the same listing again and in a new isolate", async () => {
    const { isolate } = countedIsolates();
    const list = await isolate();
    // The answer, the map, layout 1's names, the caller's own pins, and the map again before
    // the write that pins every tool (another isolate may have pinned one since).
    expect(await list()).toMatchObject({ get: 4, list: 1, put: 3 });
    expect(await list()).toMatchObject({ get: 0, list: 0, put: 0 });
    expect(await (await isolate())()).toMatchObject({ get: 1, list: 0, put: 0 });
  });

  it("a first listing under TOOL_CHANGES=hold, and the same caller's listings after it", async () => {
    const { isolate } = countedIsolates({ TOOL_CHANGES: "hold" });
    const list = await isolate();
    // As under log, but for the answer, which KV keeps for no one under hold (a remembered answer
    // goes only to a caller shown its view in this isolate); and the caller's own record, written
    // for a caller new to the proxy.
    expect(await list()).toMatchObject({ get: 3, list: 1, put: 3 });
    expect(await list()).toMatchObject({ get: 0, list: 0, put: 0 });
    // A new isolate: the map, and the caller's own pins.
    expect(await (await isolate())()).toMatchObject({ get: 2, list: 0, put: 0 });
  });

  it("a warm tools/call, and a cold isolate's", async () => {
    const { isolate } = countedIsolates();
    const warm = await isolate();
    await warm.list();
    expect(await warm.call("files.read")).toMatchObject({ get: 0, list: 0, put: 0 });
    // The map, the chunk with its schema, and the caller's own pins (`log`, as shipped), read for
    // the listing of theirs asked for first: the isolate holds none, and the schema the map holds
    // may be another caller's (SECURITY.md, "What the proxy answers itself").
    expect(await (await isolate()).call("files.read")).toMatchObject({ get: 3, list: 0, put: 0 });
  });

  it("the same listing at another profile URL", async () => {
    const { isolate } = countedIsolates();
    const one = await isolate();
    await one.list();
    // That profile's answer, read once and written; its earlier names, read once and recorded.
    expect(await one.list(`${PROXY_URL}/gemini`)).toMatchObject({ get: 1, list: 1, put: 2 });
    expect(await one.list(`${PROXY_URL}/gemini`)).toMatchObject({ get: 0, list: 0, put: 0 });
  });

  it("a listing whose definitions differ from the caller's own last pins, under log", async () => {
    const { origin, change } = changingOrigin();
    const { isolate } = countedIsolates({}, origin);
    const one = await isolate();
    await one.list();
    await change();
    // The caller's own pins; the answer, changed, is written at most once a minute.
    expect(await one.list()).toMatchObject({ get: 0, list: 0, put: 1 });
    await change();
    // Under log, a caller's pins once a minute per isolate at most.
    expect(await one.list()).toMatchObject({ get: 0, list: 0, put: 0 });
  });
});
