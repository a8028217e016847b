/**
 * A request's KV reads are its own until they are done. When a client goes
 * away, the runtime cancels its request, and a read the request had under
 * way never settles: another request of the isolate that waited for it would
 * wait for good, and so would every request after it that found it there.
 * Here one request's reads (`kvHolding`) do not settle until the test
 * lets them; another request through the same isolate is answered meanwhile.
 */
import { waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { VALID_ARGUMENTS } from "../helpers/demo-calls";
import { DEMO_NAMES } from "../helpers/demo-names";
import { type KvOperation, kvHolding } from "../helpers/kv";
import { messagesOf, openSession, postJson, rpc } from "../helpers/mcp";
import { DEMO_ORIGIN, type Fetch, freshOrigin, PROXY_URL, viaProxy } from "../helpers/proxy";

/** The reads of a first listing (docs/tool-map.md's cost table), each held alone. */
const READS: Array<[string, (operation: KvOperation, key: string) => boolean]> = [
  ["the origin's map", (operation, key) => operation === "get" && key.endsWith(":map")],
  ["the answer remembered for the deployment", (_, key) => key.includes(":answer:")],
  ["the caller's own pins", (_, key) => key.includes(":pins:")],
  ["layout 1's names", (operation) => operation === "list"],
];

async function send(proxy: Fetch, session: Record<string, string>, method: string, params = {}) {
  const [message] = await messagesOf(
    await postJson(proxy, PROXY_URL, rpc(1, method, params), session),
  );
  return message as { result: Record<string, unknown> };
}

const CALL = { name: DEMO_NAMES["files.read"], arguments: VALID_ARGUMENTS["files.read"] ?? {} };

describe("a request whose KV read never ends, as when its client left", () => {
  it.each(READS)(
    "%s: another request's listing is answered and written meanwhile, the first's once it ends",
    async (_, held) => {
      const origin = freshOrigin(DEMO_ORIGIN);
      const app = createApp();
      const holding = kvHolding(env.TOOL_MAP, held);
      const left = viaProxy({ ORIGIN_URL: origin }, { app, kv: holding.kv });
      const contexts: ExecutionContext[] = [];
      const proxy = viaProxy({ ORIGIN_URL: origin }, { app, contexts });
      const session = await openSession(proxy, PROXY_URL);
      const abandoned = send(left, session, "tools/list");
      await holding.asked;
      const listed = await send(proxy, session, "tools/list");
      expect(listed.result.tools).toContainEqual(
        expect.objectContaining({ name: DEMO_NAMES["files.read"] }),
      );
      // And its work after the answer: the map, the answer and the pins it writes.
      await Promise.all(contexts.map((ctx) => waitOnExecutionContext(ctx)));
      expect((await send(proxy, session, "tools/call", CALL)).result).toHaveProperty(
        "structuredContent.tool",
        "files.read",
      );
      holding.release();
      expect((await abandoned).result).toEqual(listed.result);
    },
  );

  it("the map read for a call by its proxied name: another call is answered meanwhile", async () => {
    const origin = freshOrigin(DEMO_ORIGIN);
    const contexts: ExecutionContext[] = [];
    const lister = viaProxy({ ORIGIN_URL: origin }, { app: createApp(), contexts });
    await send(lister, await openSession(lister, PROXY_URL), "tools/list");
    await Promise.all(contexts.map((ctx) => waitOnExecutionContext(ctx)));
    // A new isolate, which knows the name from KV's map alone.
    const app = createApp();
    const holding = kvHolding(env.TOOL_MAP, (_, key) => key.endsWith(":map"));
    const left = viaProxy({ ORIGIN_URL: origin }, { app, kv: holding.kv });
    const proxy = viaProxy({ ORIGIN_URL: origin }, { app });
    const session = await openSession(proxy, PROXY_URL);
    const abandoned = send(left, session, "tools/call", CALL);
    await holding.asked;
    const called = await send(proxy, session, "tools/call", CALL);
    expect(called.result).toHaveProperty("structuredContent.tool", "files.read");
    holding.release();
    expect((await abandoned).result).toEqual(called.result);
  });
});

describe("a burst of requests to a cold isolate, each reading for itself", () => {
  it.each([
    ["the map, read for calls", ":map", "tools/call", CALL, {}],
    ["the remembered answer, read for listings", ":answer:", "tools/list", {}, {}],
    // Under hold, where no answer is remembered: each listing is named for its caller.
    [
      "a caller's own pins, read for listings",
      ":pins:",
      "tools/list",
      {},
      { TOOL_CHANGES: "hold" },
    ],
  ] as const)(
    "%s: two reads at once, not one a request; the others wait for them",
    async (_, key, method, params, vars) => {
      const origin = freshOrigin(DEMO_ORIGIN);
      const contexts: ExecutionContext[] = [];
      const lister = viaProxy({ ORIGIN_URL: origin, ...vars }, { app: createApp(), contexts });
      const listed = await send(lister, await openSession(lister, PROXY_URL), "tools/list");
      await Promise.all(contexts.map((ctx) => waitOnExecutionContext(ctx)));
      // A new isolate, whose reads of the value (megabytes for a large origin) wait until let go.
      let reads = 0;
      const holding = kvHolding(env.TOOL_MAP, (operation, name) => {
        const held = operation === "get" && name.includes(key);
        if (held) reads++;
        return held;
      });
      const proxy = viaProxy({ ORIGIN_URL: origin, ...vars }, { app: createApp(), kv: holding.kv });
      const session = await openSession(proxy, PROXY_URL);
      const burst = Array.from({ length: 8 }, () => send(proxy, session, method, params));
      // Two reads are held; the other requests wait for them, or read too (the count after says).
      for (let look = 0; look < 100 && reads < 2; look++) {
        await new Promise((waited) => setTimeout(waited, 20));
      }
      await new Promise((waited) => setTimeout(waited, 50));
      holding.release();
      for (const { result } of await Promise.all(burst)) {
        if (method === "tools/list") expect(result).toEqual(listed.result);
        else expect(result).toHaveProperty("structuredContent.tool", "files.read");
      }
      expect(reads).toBe(2);
    },
  );
});
