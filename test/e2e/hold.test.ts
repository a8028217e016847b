/**
 * `TOOL_CHANGES=hold` where it meets KV and what the proxy answers itself
 * (SECURITY.md, "Hidden tools stay hidden"; docs/rules.md, "What `hold`
 * catches, and what it cannot"; docs/tool-map.md, "Remembered answers"): a
 * held tool while KV fails, in search mode's `search_tools` and `call_tool`,
 * and no remembered answer kept from a listing that held a tool. The catalog
 * origin changes its first tool (test/helpers/changing-origin.ts); the SDK
 * clients of 2025-11-25 and 2026-07-28.
 */
import { env, waitOnExecutionContext } from "cloudflare:test";
import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernTransport,
} from "@modelcontextprotocol/client";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createApp, type Worker } from "../../src/app";
import { profileOf } from "../../src/schemas/profile";
import { toolMapScopes } from "../../src/toolmap/isolate-memory";
import { CHANGING_TOOL, changingOrigin, runAcceptCommand } from "../helpers/changing-origin";
import { clientsOfEachTest, EACH_WIRE, type TestClient, type ToolResult } from "../helpers/clients";
import { failingKv, kvFailingOnly } from "../helpers/kv";
import { captureLogs } from "../helpers/logs";
import { type Fetch, PROXY_URL, viaProxy } from "../helpers/proxy";

const connect = clientsOfEachTest();

afterEach(() => {
  vi.restoreAllMocks();
});

const HOLD = { TOOL_CHANGES: "hold" };

const named = async (client: TestClient) => (await client.listTools()).map((tool) => tool.name);

interface Found {
  name: string;
  description?: string;
}

const found = (result: ToolResult) =>
  (result.structuredContent as { tools?: Found[] } | undefined)?.tools ?? [];

describe.each(EACH_WIRE)("hold, protocol %s", (revision) => {
  /**
   * An isolate that listed the changing origin, and a way to reach it with
   * other KV (or as another isolate); after `change()`, the origin's change is
   * held there.
   */
  async function listedBeforeTheChange(tools = 5) {
    const { origin, change } = changingOrigin({ tools });
    const vars = { ORIGIN_URL: origin, ...HOLD };
    const app = createApp();
    const contexts: ExecutionContext[] = [];
    /** A client of `app` (or another isolate), with `kv` in place of TOOL_MAP. */
    const client = (kv?: KVNamespace, isolate: Worker = app) =>
      connect(revision, viaProxy(vars, { app: isolate, kv, contexts }));
    /** Waits for what the requests so far left to do in the background (KV writes). */
    const settled = () => Promise.all(contexts.splice(0).map((ctx) => waitOnExecutionContext(ctx)));
    const first = await client();
    const listed = await named(first);
    // The pins are in KV before the origin changes.
    await settled();
    return { origin, change, client, first, listed, settled };
  }

  it("keeps a held tool out of listings and refuses its calls while KV fails in the isolate that holds it", async () => {
    const { change, client, first, listed } = await listedBeforeTheChange();
    expect(listed).toContain(CHANGING_TOOL);
    await change();
    expect(await named(first)).not.toContain(CHANGING_TOOL);

    for (const kv of [failingKv(), kvFailingOnly(env.TOOL_MAP, "get")]) {
      const during = await client(kv);
      expect(await named(during)).not.toContain(CHANGING_TOOL);
      await expect(during.callTool(CHANGING_TOOL, { path: "a" })).rejects.toThrow(
        `Tool ${CHANGING_TOOL} is held`,
      );
    }
  });

  it("pins nothing in a new isolate while KV fails, so the change is held once KV answers again", async () => {
    const { change, client, listed } = await listedBeforeTheChange();
    expect(listed).toContain(CHANGING_TOOL);
    await change();
    const outage = createApp();
    // KV cannot be read: nothing is pinned or held anew (docs/rules.md), and nothing stored.
    const during = await client(failingKv(), outage);
    const shown = await during.listTools();
    expect(shown.find((tool) => tool.name === CHANGING_TOOL)?.description).toContain(
      "(changed 1 times)",
    );
    expect(await during.callTool(CHANGING_TOOL, { path: "a" })).toMatchObject({
      structuredContent: { tool: CHANGING_TOOL },
    });
    // Reads fail, writes would go through: the changed definition must not become the pin.
    const readsFail = await client(kvFailingOnly(env.TOOL_MAP, "get"), createApp());
    await readsFail.listTools();

    // KV answers again, in the isolate of the outage and in a new one: the change is held.
    for (const isolate of [outage, createApp()]) {
      const after = await client(undefined, isolate);
      expect(await named(after)).not.toContain(CHANGING_TOOL);
      await expect(after.callTool(CHANGING_TOOL, { path: "a" })).rejects.toThrow(
        `Tool ${CHANGING_TOOL} is held`,
      );
    }
  });

  it("search mode: a held tool is found by no search, counted in no total, and called through no call_tool, in a warm or a cold isolate", async () => {
    const { change, client, first } = await listedBeforeTheChange(300);
    const total = async (c: TestClient) =>
      /\((\d+) in all\)/.exec(String((await c.listTools())[0]?.description))?.[1];
    expect(await total(first)).toBe("300");
    await change();
    expect(await total(first)).toBe("299");

    const cold = await client(undefined, createApp());
    for (const searcher of [first, cold]) {
      const search = await searcher.callTool("search_tools", {
        query: "read text file",
        limit: 20,
      });
      // Its copies (`read_text_file_1`, …) are other tools, found as ever.
      expect(found(search).map((tool) => tool.name)).toContain(`${CHANGING_TOOL}_1`);
      expect(found(search).map((tool) => tool.name)).not.toContain(CHANGING_TOOL);
      expect(JSON.stringify(search)).not.toContain("(changed 1 times)");
      // call_tool's tool error, which the model reads (SEP-1303); a direct call's -32602.
      expect(
        await searcher.callTool("call_tool", { name: CHANGING_TOOL, arguments: { path: "a" } }),
      ).toMatchObject({
        isError: true,
        content: [
          { type: "text", text: expect.stringMatching(`^Tool ${CHANGING_TOOL} is held: `) },
        ],
      });
      await expect(searcher.callTool(CHANGING_TOOL, { path: "a" })).rejects.toThrow(
        `Tool ${CHANGING_TOOL} is held`,
      );
    }
  }, 30_000);

  it("remembers no answer from a listing that held a tool: the accepted change is listed again a minute on, in the same isolate", async () => {
    const logs = captureLogs();
    const { origin, change, first, listed } = await listedBeforeTheChange();
    expect(listed).toContain(CHANGING_TOOL);
    await change();
    // The same text twice: the second would be answered from memory, were the first remembered.
    expect(await named(first)).not.toContain(CHANGING_TOOL);
    expect(await named(first)).not.toContain(CHANGING_TOOL);
    const held = logs
      .events("tool_definition_changed")
      .findLast((line) => line.tool === CHANGING_TOOL);
    await runAcceptCommand(held, origin);

    // The isolate reads an accept key at most once a minute per held change.
    const now = Date.now();
    vi.spyOn(Date, "now").mockImplementation(() => now + 61_000);
    const tools = await first.listTools();
    expect(tools.find((tool) => tool.name === CHANGING_TOOL)?.description).toContain(
      "(changed 1 times)",
    );
    expect(logs.events("tool_definition_accepted")).toMatchObject([{ tool: CHANGING_TOOL }]);
  });

  it("keeps no answer in KV from a listing that held a tool, nor from one named while KV could not be read", async () => {
    const { origin, change, client, settled, listed } = await listedBeforeTheChange();
    expect(listed).toContain(CHANGING_TOOL);
    const { origin: scope } = await toolMapScopes(new URL(origin), profileOf("openai").names);
    const stored = async () => {
      await settled();
      const { keys } = await env.TOOL_MAP.list({ prefix: `${scope}:answer:` });
      return Promise.all(keys.map(async ({ name }) => [name, await env.TOOL_MAP.get(name)]));
    };
    // Not even the first listing, which held nothing: under hold an answer goes only to a caller
    // shown its very view in the isolate that keeps it, and KV keeps no view (before, it was
    // written, and read by every new isolate, for no one).
    expect(await stored()).toEqual([]);

    await change();
    // A new isolate would write its answer, another text: not one that held a tool.
    expect(await named(await client(undefined, createApp()))).not.toContain(CHANGING_TOOL);
    expect(await stored()).toEqual([]);

    // Nor one named while KV could not be read, though writes would go through.
    const unread = changingOrigin();
    const unreadScope = await toolMapScopes(new URL(unread.origin), profileOf("openai").names);
    const contexts: ExecutionContext[] = [];
    const blind = await connect(
      revision,
      viaProxy(
        { ORIGIN_URL: unread.origin, ...HOLD },
        { app: createApp(), kv: kvFailingOnly(env.TOOL_MAP, "get"), contexts },
      ),
    );
    expect(await named(blind)).toContain(CHANGING_TOOL);
    await Promise.all(contexts.map((ctx) => waitOnExecutionContext(ctx)));
    const written = await env.TOOL_MAP.list({ prefix: `${unreadScope.origin}:` });
    expect(written.keys).toEqual([]);
  });
});

describe("hold, protocol 2026-07-28: the cache hints of a listing", () => {
  it("say private where the origin says public: what hold leaves out differs from caller to caller", async () => {
    const { origin, change } = changingOrigin({ tools: 3, cacheScope: "public" });
    const contexts: ExecutionContext[] = [];
    const proxy = viaProxy({ ORIGIN_URL: origin, ...HOLD }, { app: createApp(), contexts });
    /** A listing as the SDK 2.x client gets it, for the caller the origin knows by `token`. */
    const listFor = async (token: string) => {
      const client = new ModernClient(
        { name: "edge-rewriter-e2e", version: "1.0.0" },
        { versionNegotiation: { mode: { pin: "2026-07-28" } } },
      );
      const fetch: Fetch = (input, init) => {
        const request = new Request(input, init);
        request.headers.set("authorization", `Bearer ${token}`);
        return proxy(request);
      };
      await client.connect(new ModernTransport(new URL(PROXY_URL), { fetch }));
      const listing = await client.listTools();
      await client.close();
      await Promise.all(contexts.splice(0).map((ctx) => waitOnExecutionContext(ctx)));
      return listing;
    };

    expect((await listFor("ann")).tools.map((tool) => tool.name)).toContain(CHANGING_TOOL);
    await change();
    // A caller first listed after the change is shown it; the caller shown it before is held.
    const bob = await listFor("bob");
    const ann = await listFor("ann");
    expect(bob.tools.find((tool) => tool.name === CHANGING_TOOL)?.description).toContain(
      "(changed 1 times)",
    );
    expect(ann.tools.map((tool) => tool.name)).not.toContain(CHANGING_TOOL);
    // A shared cache that served Bob's listing to Ann would show her the change held for her.
    for (const listing of [ann, bob]) {
      expect(listing).toMatchObject({ ttlMs: 60_000, cacheScope: "private" });
    }
  });
});
