/**
 * A tool whose listing writes, beside what MCP names, a member the proxy
 * keeps for itself when it reads a listing from its text (`schemaJson`,
 * `written`, `readsOneWay`: where the text holds the schema and the tool).
 * Where the proxy parses a listing whole (its own re-list for a call it
 * cannot resolve; a client's listing answered with a batch of one, which no
 * SDK's server writes: scripted), the origin's members must not stand for
 * its own: the schema a call is repaired against and a definition pin
 * digests is the tool's `inputSchema`, whatever else the tool writes
 * (SECURITY.md, "Hidden tools stay hidden"; docs/rules.md, "Changed
 * definitions"). The origin is the SDK 1.x's, which sends such members as
 * the handler wrote them (test/fixtures/node/listing-origin.ts); the
 * client, the SDK 1.x's of 2025-11-25. Last, a schema that writes beside
 * its `$ref`s a member the validator keeps for itself (`__absolute_ref__`):
 * a reference is followed as JSON Schema reads it, and counted so
 * (SECURITY.md, "No single request can hurt the proxy or the origin";
 * docs/arguments.md, step 4).
 */
import { waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { clientsOfEachTest } from "../helpers/clients";
import { captureLogs } from "../helpers/logs";
import { messagesOf, postJson, rpc } from "../helpers/mcp";
import { LISTING_ORIGIN, PROXY_URL, viaProxy } from "../helpers/proxy";
import { type ScriptedAnswer, scriptedOrigin } from "../helpers/scripted-origin";

const connect = clientsOfEachTest();

/** The schema the origin writes a fake text of beside each tool. */
const FAKE = '{"type":"object"}';

/** The text of a tool that lists the fake schema. */
const WRITTEN = `{"name":"transfer","inputSchema":${FAKE}}`;

/** What the proxy reads a tool's schema and text from, where it reads a listing from its text. */
const FORGED = {
  schemaJson: { text: FAKE, span: [0, FAKE.length] },
  written: { text: WRITTEN, span: [0, WRITTEN.length] },
  readsOneWay: true,
  // What another reading may keep for itself: a method giving a member's JSON.
  json: { title: '"Transfer"' },
};

/** The same members, of types the proxy never gives them. */
const MISTYPED = { schemaJson: { text: 5, span: "all" }, written: 7, readsOneWay: "no", json: 5 };

/** `transfer`, its schema `properties`: an amount (an integer), and the rest; `members` beside. */
const transfer = (properties: Record<string, unknown>, members: Record<string, unknown>) => ({
  name: "transfer",
  description: "Moves money.",
  inputSchema: {
    type: "object",
    properties: { amount: { type: "integer" }, ...properties },
    required: ["amount"],
  },
  ...members,
});

/** An origin of the listing fixture's, of its own map, listing `tools` until `set` again. */
async function listingOrigin(tools: unknown[]) {
  const map = crypto.randomUUID();
  const set = async (listed: unknown[]) => {
    const response = await fetch(`${LISTING_ORIGIN}/__tools?map=${map}`, {
      method: "POST",
      body: JSON.stringify(listed),
    });
    if (response.status !== 204) throw new Error(`__tools: ${response.status}`);
  };
  await set(tools);
  return { origin: `${LISTING_ORIGIN}/mcp?map=${map}`, set };
}

describe.each([
  ["as MCP writes it", {}],
  ["beside members the proxy keeps for itself", FORGED],
  ["beside such members of other types", MISTYPED],
])("a tool the proxy lists itself, written %s", (_, members) => {
  it("is called with arguments repaired against its own inputSchema", async () => {
    const { origin } = await listingOrigin([transfer({}, members)]);
    // A new isolate does not know `transfer`: it lists the origin itself, its answer parsed whole.
    const client = await connect(
      "2025-11-25",
      viaProxy({ ORIGIN_URL: origin }, { app: createApp() }),
    );
    const result = await client.callTool("transfer", { amount: "512" });
    // The schema says integer: "512" is coerced (docs/arguments.md, step 3).
    expect(result.structuredContent).toEqual({ tool: "transfer", arguments: { amount: 512 } });
  });

  it("under TOOL_CHANGES=hold, is held where its inputSchema changed, and the change logged", async () => {
    const { origin, set } = await listingOrigin([transfer({}, members)]);
    const vars = { ORIGIN_URL: origin, TOOL_CHANGES: "hold" };
    const contexts: ExecutionContext[] = [];
    const settled = () => Promise.all(contexts.splice(0).map((ctx) => waitOnExecutionContext(ctx)));
    const first = await connect("2025-11-25", viaProxy(vars, { app: createApp(), contexts }));
    expect((await first.callTool("transfer", { amount: 5 })).structuredContent).toEqual({
      tool: "transfer",
      arguments: { amount: 5 },
    });
    await settled();

    // The rug pull: the same tool, its schema now asking where the money goes.
    await set([transfer({ to: { type: "string" } }, members)]);
    const logs = captureLogs();
    const next = await connect("2025-11-25", viaProxy(vars, { app: createApp(), contexts }));
    await expect(next.callTool("transfer", { amount: 5, to: "mallory" })).rejects.toThrow(
      "Tool transfer is held",
    );
    expect(logs.events("tool_definition_changed")).toMatchObject([
      { tool: "transfer", mode: "hold", changed: ["inputSchema"] },
    ]);
    logs.restore();
    await settled();
  });
});

/** A `tools/list` answer of `tools` as a batch of one, which the proxy parses whole. */
const batchOfOne = (tools: unknown[]): ScriptedAnswer => ({
  status: 200,
  headers: [["Content-Type", "application/json"]],
  body: JSON.stringify([{ jsonrpc: "2.0", id: "@ID@", result: { tools } }]),
});

describe.each([
  ["as MCP writes it", {}],
  ["beside members the proxy keeps for itself", FORGED],
  ["beside such members of other types", MISTYPED],
])("a client's listing answered with a batch of one, its tool written %s", (_, members) => {
  it("under TOOL_CHANGES=hold, is listed as the origin wrote it, and held where its inputSchema changed", async () => {
    const origin = await scriptedOrigin(
      { "tools/list": batchOfOne([transfer({}, members)]) },
      '"@ID@"',
    );
    const contexts: ExecutionContext[] = [];
    const proxy = viaProxy(
      { ORIGIN_URL: origin.originUrl, TOOL_CHANGES: "hold" },
      { app: createApp(), contexts },
    );
    const list = async () => {
      const response = await postJson(proxy, PROXY_URL, rpc(1, "tools/list"), {
        "mcp-protocol-version": "2025-11-25",
      });
      expect(response.status).toBe(200);
      const [message] = await messagesOf(response);
      await Promise.all(contexts.splice(0).map((ctx) => waitOnExecutionContext(ctx)));
      return (message as { result: { tools: unknown[] } }).result.tools;
    };
    // Every member as it came: what the proxy does not read, it carries.
    expect(await list()).toMatchObject([{ name: "transfer", ...members }]);

    await origin.change({
      "tools/list": batchOfOne([transfer({ to: { type: "string" } }, members)]),
    });
    const logs = captureLogs();
    expect(await list()).toEqual([]);
    expect(logs.events("tool_definition_changed")).toMatchObject([
      { tool: "transfer", mode: "hold", changed: ["inputSchema"] },
    ]);
    logs.restore();
  });
});

/**
 * A tree of tagged nodes (docs/arguments.md, step 4): both `oneOf` branches check the
 * children, so a chain of nodes is checked once per path to it, twice as often for each level
 * the client adds. Its `$ref`s name the node by its absolute URI, and write beside it `beside`.
 */
function taggedTree(beside: Record<string, unknown>) {
  const ref = { $ref: "https://tools.example/tree#/$defs/Node", ...beside };
  return {
    name: "tree",
    description: "Walks a tree.",
    inputSchema: {
      $id: "https://tools.example/tree",
      type: "object",
      properties: { count: { type: "integer" }, root: ref },
      $defs: {
        Node: {
          oneOf: ["a", "b"].map((kind) => ({
            type: "object",
            properties: { kind: { const: kind }, children: { type: "array", items: ref } },
            required: ["kind"],
          })),
        },
      },
    },
  };
}

const chain = (depth: number): unknown =>
  depth === 0 ? { kind: "a" } : { kind: "a", children: [chain(depth - 1)] };

describe.each([
  ["as JSON Schema writes it", {}],
  // @cfworker/json-schema writes where each `$ref` leads on its node, and trusts one there.
  ["beside a member the validator keeps for itself", { __absolute_ref__: "" }],
  ["beside such a member of another type", { __absolute_ref__: false }],
])("a tool whose schema's references are written %s", (_, beside) => {
  it("is called without its deep arguments checked past the validation budget", async () => {
    const { origin } = await listingOrigin([taggedTree(beside)]);
    const client = await connect(
      "2025-11-25",
      viaProxy({ ORIGIN_URL: origin }, { app: createApp() }),
    );
    expect((await client.listTools()).map((tool) => tool.name)).toEqual(["tree"]);
    const logs = captureLogs();
    // 16 levels: 2^16 paths, past 50,000 checks (docs/limits.md). `count` is coerced, so the
    // call's line is logged, with what validation made of it.
    const result = await client.callTool("tree", { count: "2", root: chain(16) });
    expect(result.structuredContent).toEqual({
      tool: "tree",
      arguments: { count: 2, root: chain(16) },
    });
    expect(logs.events("tool_call_repaired")).toMatchObject([
      { "gen_ai.tool.name": "tree", validation: "skipped" },
    ]);
    logs.restore();
  });
});
