/**
 * The tool map when Workers KV fails (docs/tool-map.md: when KV is stale or
 * failing), on each wire: a KV error counts as a miss, and requests still
 * succeed. KV fails as test/helpers/kv.ts makes it: every operation, or one
 * kind of them. What a failing KV does to `TOOL_CHANGES=hold` is in
 * hold.test.ts; to stored names, in test/worker/names.test.ts.
 */
import { waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { profileOf } from "../../src/schemas/profile";
import { toolMapScopes } from "../../src/toolmap/isolate-memory";
import { mapKey } from "../../src/toolmap/stored-map";
import { clientsOfEachTest, EACH_WIRE, type ToolResult } from "../helpers/clients";
import { VALID_ARGUMENTS } from "../helpers/demo-calls";
import { DEMO_NAMES } from "../helpers/demo-names";
import { failingKv, kvFailingOnly } from "../helpers/kv";
import { captureLogs } from "../helpers/logs";
import { freshOrigin, viaProxy } from "../helpers/proxy";

const connect = clientsOfEachTest();

const echoed = (result: ToolResult) =>
  result.structuredContent as { tool: string; arguments: Record<string, unknown> };

describe.each(EACH_WIRE)("KV failing, protocol %s", (revision) => {
  /** A client of a new isolate in front of `origin`, with `kv` in place of TOOL_MAP. */
  const isolate = (origin: string, kv?: KVNamespace) =>
    connect(revision, viaProxy({ ORIGIN_URL: origin }, { app: createApp(), kv }));

  it("every operation fails: names are handed out, and a new isolate's call reaches its tool", async () => {
    const origin = freshOrigin();
    const listed = await (await isolate(origin, failingKv())).listTools();
    expect(listed.map((tool) => tool.name)).toEqual(Object.values(DEMO_NAMES));
    const cold = await isolate(origin, failingKv());
    const called = await cold.callTool(
      DEMO_NAMES["scope:action"],
      VALID_ARGUMENTS["scope:action"] ?? {},
    );
    expect(echoed(called).tool).toBe("scope:action");
  });

  it("get fails: a new isolate's call lists the origin again and reaches the tool", async () => {
    const origin = freshOrigin();
    await (await isolate(origin)).listTools();
    const cold = await isolate(origin, kvFailingOnly(env.TOOL_MAP, "get"));
    const called = await cold.callTool(
      DEMO_NAMES["scope:action"],
      VALID_ARGUMENTS["scope:action"] ?? {},
    );
    expect(echoed(called).tool).toBe("scope:action");
  });

  it("a write KV refuses (429: one write a second to a key): the log says what was not stored, and the next isolate lists the origin and stores it", async () => {
    const origin = freshOrigin();
    // As the runtime refuses a second write to a key within a second, from another isolate.
    const refusing = new Proxy(env.TOOL_MAP, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver);
        if (property === "put") {
          return () => Promise.reject(new Error("KV PUT failed: 429 Too Many Requests"));
        }
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const contexts: ExecutionContext[] = [];
    const settled = () => Promise.all(contexts.splice(0).map((ctx) => waitOnExecutionContext(ctx)));
    const logs = captureLogs();
    const first = await connect(
      revision,
      viaProxy({ ORIGIN_URL: origin }, { app: createApp(), kv: refusing, contexts }),
    );
    await first.listTools();
    await settled();
    const refused = logs.events("kv_error");
    expect(refused.length).toBeGreaterThan(0);
    for (const line of refused) {
      expect(line).toMatchObject({
        op: "put",
        what: expect.any(String),
        error: expect.stringContaining("429"),
      });
    }
    // Which value each line is about: the origin's map, which the next isolate cannot read.
    expect(refused.map((line) => line.what)).toContain("map");
    logs.restore();

    const scope = (await toolMapScopes(new URL(origin), profileOf("openai").names)).origin;
    expect(await env.TOOL_MAP.get(mapKey(scope))).toBeNull();
    const next = await connect(
      revision,
      viaProxy({ ORIGIN_URL: origin }, { app: createApp(), contexts }),
    );
    const called = await next.callTool(
      DEMO_NAMES["scope:action"],
      VALID_ARGUMENTS["scope:action"] ?? {},
    );
    expect(echoed(called).tool).toBe("scope:action");
    await settled();
    expect(await env.TOOL_MAP.get(mapKey(scope))).not.toBeNull();
  });

  it("put fails: names are handed out and calls reach their tools from memory", async () => {
    const client = await isolate(freshOrigin(), kvFailingOnly(env.TOOL_MAP, "put"));
    expect((await client.listTools()).map((tool) => tool.name)).toContain(DEMO_NAMES["a/b"]);
    expect(echoed(await client.callTool(DEMO_NAMES["a/b"], {})).tool).toBe("a/b");
  });
});
