/**
 * One tool whose members are of types MCP's `Tool` does not allow, in an
 * origin's listing, through the proxy served by wrangler to the clients of
 * the official SDKs (1.x; 2.x on 2025-11-25 and on 2026-07-28) and of the
 * Vercel AI SDK. Each client checks the whole `tools/list` result against
 * its schema of a tool and throws for the whole listing over one member of
 * one tool (a `description` written `null`, as Go's, Java's and hand-written
 * JavaScript servers write an unset field), so no tool of the origin could
 * be called. The proxy shows such a tool without what a client refuses
 * (docs/names.md, "What a listing shows"), and calls it as ever.
 *
 * The clients of 2025-11-25 are served by the SDK 1.x's low-level server
 * (test/fixtures/node/listing-origin.ts), which sends a listing as written:
 * the SDK 2.x server writes an output schema of no `type` again for them.
 */
import { createMCPClient } from "@ai-sdk/mcp";
import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernTransport,
} from "@modelcontextprotocol/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Tool } from "@modelcontextprotocol/server";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { serveEchoOrigin } from "../fixtures/node/echo-origin";
import { serveProxy } from "./serve-proxy";

/** A tool every client takes: each of its members reaches the client as the origin listed it. */
const GET = {
  name: "orders_get",
  title: "Get an order",
  description: "Get one order.",
  inputSchema: {
    type: "object",
    properties: { id: { type: "integer" } },
    required: ["id"],
  },
  outputSchema: {
    type: "object",
    properties: { status: { type: "string" } },
    required: ["status"],
  },
  annotations: { title: "Order", readOnlyHint: true, openWorldHint: false },
  icons: [{ src: "https://shop.example/order.png", mimeType: "image/png", sizes: ["48x48"] }],
  _meta: { "example.com/team": "orders" },
};

/** Go's `encoding/json` and Jackson write an unset string so; a call of it must still work. */
const FIND = {
  name: "orders.find",
  description: null,
  inputSchema: { type: "object", properties: { limit: { type: "integer" } } },
};

/** Every member MCP names of the wrong type, as a hand-written or generated server may list them. */
const COUNT = {
  name: "orders_count",
  title: 42,
  description: 42,
  inputSchema: { type: "object", properties: {} },
  annotations: { title: null, readOnlyHint: "yes", idempotentHint: true, destructiveHint: 0 },
  icons: [{ mimeType: "image/png" }],
  _meta: [],
  execution: { taskSupport: "always" },
};

/** Members of no object where MCP asks for one, and an output schema of no `type`. */
const EXPORT = {
  name: "orders_export",
  title: null,
  inputSchema: { type: "object" },
  outputSchema: { properties: { url: { type: "string" } } },
  annotations: null,
  icons: null,
  _meta: null,
  execution: null,
};

/** No input schema at all, as lenient origins list a tool without arguments. */
const PING = { name: "orders_ping", description: "Ping." };

/** An input schema as a hand-written server writes one: no root `type`, a property `true`. */
const MERGE = {
  name: "orders_merge",
  description: "Merge orders.",
  inputSchema: {
    properties: { into: { type: "integer" }, extra: true },
    required: ["into"],
  },
};

const TOOLS = [GET, FIND, COUNT, EXPORT, PING, MERGE];

/**
 * Entries of `tools` that are no tool, which every client refuses the whole listing over too:
 * listed by the SDK 1.x's server, which sends a listing as written (the SDK 2.x's refuses them).
 */
const NOT_TOOLS = [null, 7, "orders_list", { name: null, description: "?" }, { title: "no name" }];

/** What each client lists: every tool's members as the client parsed them. */
type Listed = Array<Record<string, unknown> & { name: string }>;

/** Which origin a client is served by: the SDK 1.x's (2025-11-25), or the SDK 2.x's. */
type Era = "2025" | "2026";

interface Connected {
  listTools(): Promise<Listed>;
  callTool(name: string, args: Record<string, unknown>): Promise<unknown>;
  close(): Promise<void>;
}

/** The clients, each connected to `url`. */
const CLIENTS: Record<string, [Era, (url: URL) => Promise<Connected>]> = {
  "the SDK 1.x client": [
    "2025",
    async (url) => {
      const client = new Client({ name: "misshapen", version: "1.0.0" });
      await client.connect(new StreamableHTTPClientTransport(url));
      return {
        listTools: async () => (await client.listTools()).tools as Listed,
        callTool: (name, args) => client.callTool({ name, arguments: args }),
        close: () => client.close(),
      };
    },
  ],
  ...Object.fromEntries(
    (["legacy", { pin: "2026-07-28" }] as const).map((mode) => [
      `the SDK 2.x client on ${mode === "legacy" ? "2025-11-25" : mode.pin}`,
      [
        mode === "legacy" ? "2025" : "2026",
        async (url: URL): Promise<Connected> => {
          const client = new ModernClient(
            { name: "misshapen", version: "1.0.0" },
            { versionNegotiation: { mode } },
          );
          await client.connect(new ModernTransport(url));
          return {
            listTools: async () => (await client.listTools()).tools as Listed,
            callTool: (name, args) => client.callTool({ name, arguments: args }),
            close: () => client.close(),
          };
        },
      ],
    ]),
  ),
  "the Vercel AI SDK's client": [
    "2026",
    async (url) => {
      const client = await createMCPClient({ transport: { type: "http", url: url.href } });
      return {
        listTools: async () => (await client.listTools()).tools as unknown as Listed,
        callTool: (name, args) => client.callTool({ name, arguments: args }),
        close: () => client.close(),
      };
    },
  ],
};

let origin: Awaited<ReturnType<typeof serveEchoOrigin>>;
const proxies: Partial<Record<Era, Awaited<ReturnType<typeof serveProxy>>>> = {};

beforeAll(async () => {
  origin = await serveEchoOrigin("shop", TOOLS as unknown as Tool[]);
  proxies["2026"] = await serveProxy(origin.url.href);
  const listing = inject("listingOrigin");
  const map = crypto.randomUUID();
  const set = await fetch(`${listing}/__tools?map=${map}`, {
    method: "POST",
    body: JSON.stringify([...TOOLS, ...NOT_TOOLS]),
  });
  expect(set.status).toBe(204);
  proxies["2025"] = await serveProxy(`${listing}/mcp?map=${map}`);
});

afterAll(async () => {
  await proxies["2025"]?.dispose();
  await proxies["2026"]?.dispose();
  origin?.close();
});

/** A tool by its origin's name: as it is, or as a profile renames it (`orders.find` → `orders_find_<hash>`). */
const byName = (tools: Listed, name: string) =>
  tools.find((tool) => tool.name === name || tool.name.startsWith(`${name.replace(".", "_")}_`));

describe.each(Object.keys(CLIENTS))("%s", (label) => {
  const [era, connect] = CLIENTS[label] as [Era, (url: URL) => Promise<Connected>];

  it.each(["", "/mcp"])(
    "at /mcp%s lists every tool, each without what it refuses, and no entry that is no tool",
    async (path) => {
      const client = await connect(new URL(`${proxies[era]?.url.href}${path}`));
      try {
        const tools = await client.listTools();
        expect(tools).toHaveLength(TOOLS.length);
        for (const { name } of TOOLS) expect(byName(tools, name)).toBeDefined();

        // The well-formed tool as the origin listed it, member for member.
        const { name: _, ...get } = GET;
        expect(byName(tools, GET.name)).toMatchObject(get);

        expect(byName(tools, FIND.name)).not.toHaveProperty("description");
        const count = byName(tools, COUNT.name);
        for (const member of ["title", "description", "icons", "_meta"]) {
          expect(count).not.toHaveProperty(member);
        }
        // Of the annotations, the hint of its type; of `execution`, nothing.
        expect(count?.annotations).toEqual({ idempotentHint: true });
        expect(count).not.toHaveProperty("execution.taskSupport");
        const exported = byName(tools, EXPORT.name);
        for (const member of ["title", "annotations", "icons", "_meta", "execution"]) {
          expect(exported).not.toHaveProperty(member);
        }
        // An output schema of no `type: "object"`, which the SDK 1.x client and 2.x's on 2025-11-25 refuse.
        expect(exported).not.toHaveProperty("outputSchema");
        expect(byName(tools, PING.name)?.inputSchema).toMatchObject({ type: "object" });
        expect(byName(tools, MERGE.name)?.inputSchema).toMatchObject({
          type: "object",
          properties: { into: { type: "integer" }, extra: {} },
          required: ["into"],
        });

        // Its call reaches the origin by its own name, its arguments repaired.
        const find = byName(tools, FIND.name)?.name as string;
        expect(find).toEqual(path === "" ? expect.stringMatching(/^orders_find_/) : FIND.name);
        const called = (await client.callTool(find, { limit: "5" })) as {
          content: Array<{ text: string }>;
        };
        expect(JSON.parse(called.content[0]?.text ?? "")).toEqual({
          tool: FIND.name,
          arguments: { limit: 5 },
        });
      } finally {
        await client.close();
      }
    },
  );
});
