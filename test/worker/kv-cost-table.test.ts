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
import { messagesOf, openSession, postJson, rpc } from "../helpers/mcp";
import { DEMO_ORIGIN, freshOrigin, PROXY_URL, viaProxy } from "../helpers/proxy";

/** Isolates in front of one fresh origin, every KV operation counted; `list` a listing's. */
function countedIsolates(vars: Record<string, string> = {}) {
  const counted = countingKv(env.TOOL_MAP);
  const contexts: ExecutionContext[] = [];
  const origin = freshOrigin(DEMO_ORIGIN);
  const isolate = async () => {
    const proxy = viaProxy(
      { ORIGIN_URL: origin, ...vars },
      { app: createApp(), kv: counted.kv, contexts },
    );
    const session = await openSession(proxy, PROXY_URL);
    return async () => {
      counted.reset();
      const [message] = await messagesOf(
        await postJson(proxy, PROXY_URL, rpc(1, "tools/list"), session),
      );
      expect(message).toHaveProperty("result.tools");
      await Promise.all(contexts.splice(0).map((ctx) => waitOnExecutionContext(ctx)));
      return { ...counted.counts };
    };
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
});
