/**
 * What one client request can make the proxy do (docs/limits.md): a batch
 * holds at most `MAX_BATCH_MESSAGES` messages; the proxy reads the origin's
 * listing itself at most once per request (the rest of a first page, or a
 * listing for a call it cannot resolve), counted against the re-list limit,
 * so a request costs the origin at most `1 + MAX_PAGES` requests; and the
 * answers it writes itself take at most `MAX_LOCAL_ANSWER_BYTES` together.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { MAX_PAGES } from "../../src/toolmap/relist";
import { demoSession } from "../helpers/demo";
import { DEMO_NAMES } from "../helpers/demo-names";
import { captureLogs } from "../helpers/logs";
import { messagesOf, postJson, rpc } from "../helpers/mcp";
import { CATALOG_ORIGIN, type Fetch, freshOrigin, PROXY_URL, viaProxy } from "../helpers/proxy";

/** The demo origin's tools: at one a page, the first page and 12 more. */
const DEMO_TOOLS = Object.keys(DEMO_NAMES).length;
/** The listings of a batch: each made the proxy read the rest of its listing before. */
const LISTINGS = 4;
/** What the bound promises: the client's own request, and one listing read of `MAX_PAGES` pages. */
const ORIGIN_REQUESTS_BOUND = 1 + MAX_PAGES;

let logs: ReturnType<typeof captureLogs> | undefined;
afterEach(() => logs?.restore());

/** A batch of `count` requests made by `make`, ids 0 to count - 1. */
const batchOf = (count: number, make: (id: number) => unknown) =>
  Array.from({ length: count }, (_, id) => make(id));

/**
 * A demo session at one tool a page, behind the recording gateway:
 * `sentSince()` counts what reached the origin after it was opened.
 */
async function pagedDemo(vars: Record<string, string> = {}, query = "") {
  const demo = await demoSession({ query: `&page_size=1${query}`, vars });
  const opened = (await demo.received()).length;
  return { ...demo, sentSince: async () => (await demo.received()).length - opened };
}

type Listing = { id: number; result: { tools: { name: string }[]; nextCursor?: string } };

/** A request's envelope in protocol 2026-07-28, which the catalog origin answers in JSON. */
const META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
  "io.modelcontextprotocol/clientInfo": { name: "request-bounds-test", version: "1.0.0" },
};
const HEADERS_2026 = { "mcp-protocol-version": "2026-07-28" };

/** The first page of a listing through `proxy`, asked for in protocol 2026-07-28. */
async function listTools(proxy: Fetch, id: number | string): Promise<Listing> {
  const [message] = await messagesOf(
    await postJson(proxy, PROXY_URL, rpc(id, "tools/list", { _meta: META }), {
      ...HEADERS_2026,
      "mcp-method": "tools/list",
    }),
  );
  return message as unknown as Listing;
}

describe("MAX_BATCH_MESSAGES", () => {
  it("refuses a longer batch with -32600 before the origin sees any of it", async () => {
    const { proxy, session, sentSince } = await pagedDemo();
    const response = await postJson(
      proxy,
      PROXY_URL,
      batchOf(33, (id) => rpc(id, "ping")),
      session,
    );
    expect(response.status).toBe(400);
    // Its ids unread, as for any body refused before its messages are (2025-11-25: no id).
    expect(await response.json()).toEqual({
      jsonrpc: "2.0",
      error: {
        code: -32600,
        message:
          "Invalid Request: a batch holds at most 32 messages (MAX_BATCH_MESSAGES); this one holds 33",
      },
    });
    expect(await sentSince()).toBe(0);
    // At the limit, it goes on.
    const pings = await messagesOf(
      await postJson(
        proxy,
        PROXY_URL,
        batchOf(32, (id) => rpc(id, "ping")),
        session,
      ),
    );
    expect(pings).toHaveLength(32);
    expect(await sentSince()).toBe(1);
  });

  it("is the operator's to lower", async () => {
    const { proxy, session, sentSince } = await pagedDemo({ MAX_BATCH_MESSAGES: "2" });
    const response = await postJson(
      proxy,
      PROXY_URL,
      batchOf(3, (id) => rpc(id, "tools/list")),
      session,
    );
    expect(response.status).toBe(400);
    expect(JSON.stringify(await response.json())).toContain("at most 2 messages");
    expect(await sentSince()).toBe(0);
  });
});

describe("the proxy's own listing reads: one per request", () => {
  it.each([
    ["an event stream", ""],
    ["JSON", "&json"],
  ])(
    "reads the rest of a listing once for every first tools/list page of a batch (%s)",
    async (_, query) => {
      const { proxy, session, sentSince } = await pagedDemo({}, query);
      const listings = (await messagesOf(
        await postJson(
          proxy,
          PROXY_URL,
          batchOf(LISTINGS, (id) => rpc(id, "tools/list")),
          session,
        ),
      )) as unknown as Listing[];
      // The batch, and the 12 pages after the first read once: not 12 for each listing.
      const sent = await sentSince();
      expect(sent).toBe(1 + (DEMO_TOOLS - 1));
      expect(sent).toBeLessThanOrEqual(ORIGIN_REQUESTS_BOUND);
      expect(listings).toHaveLength(LISTINGS);
      for (const listing of listings) {
        expect(listing.result.tools.map((tool) => tool.name)).toEqual([DEMO_NAMES["unity/health"]]);
        expect(listing.result.nextCursor).toBe("1");
      }
    },
  );

  it("shares it with a call the map cannot resolve: the listings of that request go page by page", async () => {
    logs = captureLogs();
    const { proxy, session, sentSince } = await pagedDemo();
    const answers = await messagesOf(
      await postJson(
        proxy,
        PROXY_URL,
        [
          rpc("call", "tools/call", { name: DEMO_NAMES["files.read"], arguments: { path: "a" } }),
          ...batchOf(LISTINGS, (id) => rpc(id, "tools/list")),
        ],
        session,
      ),
    );
    // The call's listing (13 pages from the first), then the batch: no read of the rest.
    expect(await sentSince()).toBe(DEMO_TOOLS + 1);
    expect(answers.find((answer) => answer.id === "call")).toMatchObject({
      result: { structuredContent: { tool: "files.read", arguments: { path: "a" } } },
    });
    expect(answers.filter((answer) => answer.id !== "call")).toHaveLength(LISTINGS);
    expect(logs.events("relist_failed")).toEqual([]);
  });

  it("lists the origin once for a batch of calls to as many different unknown names", async () => {
    const { proxy, session, sentSince } = await pagedDemo({ MAX_BATCH_MESSAGES: "256" });
    const calls = batchOf(256, (id) =>
      rpc(id, "tools/call", { name: `unknown_tool_${id}`, arguments: {} }),
    );
    await messagesOf(await postJson(proxy, PROXY_URL, calls, session));
    // The batch, and one listing of 13 pages from the first: not one listing per name.
    const sent = await sentSince();
    expect(sent).toBe(1 + DEMO_TOOLS);
    expect(sent).toBeLessThanOrEqual(ORIGIN_REQUESTS_BOUND);
  });

  it("counts reading the rest against the re-list limit: past it, a listing is named page by page", async () => {
    logs = captureLogs();
    // Over a ceiling of 2, on two pages.
    const proxy = viaProxy(
      { ORIGIN_URL: freshOrigin(CATALOG_ORIGIN, "&tools=4&page_size=2"), MAX_TOOLS: "2" },
      { app: createApp() },
    );
    // 30 a minute per isolate and profile (toolmap/profile-names.ts MAX_RELISTS), all of them to
    // requests without credentials: one source, with the isolate's whole bound.
    for (let id = 0; id < 30; id++) {
      expect((await listTools(proxy, id)).result.tools.map((tool) => tool.name)).toEqual([
        "search_tools",
        "call_tool",
      ]);
    }
    expect(logs.events("relist_limited")).toEqual([]);
    const limited = await listTools(proxy, 30);
    expect(limited.result.tools).toHaveLength(2);
    expect(limited.result.nextCursor).toBe("2");
    expect(logs.events("relist_limited")).toEqual([
      { event: "relist_limited", profile: "openai", per: "isolate", limit: 30 },
    ]);
  });
});

describe("TOOL_RULES' globs against a name a client writes", () => {
  it("are matched at no cost that grows with the name: a call naming no tool by a megabyte is answered at once", async () => {
    const { proxy, session } = await demoSession({
      vars: { TOOL_RULES: JSON.stringify({ hide: ["*delete*"] }) },
    });
    await postJson(proxy, PROXY_URL, rpc(1, "tools/list"), session);
    // The glob's regular expression backtracks over each `delete` for each one before it: matched
    // against the whole name, this call took a minute of CPU (128 KB of it, a second).
    const name = `${"delete".repeat(170_000)}/x`;
    const call = rpc(2, "tools/call", { name, arguments: {} });
    const [answer] = await messagesOf(await postJson(proxy, PROXY_URL, call, session));
    expect(answer).toMatchObject({ error: { message: `Unknown tool: ${name}` } });
  });
});

describe("MAX_LOCAL_ANSWER_BYTES", () => {
  const LIMIT = 128 * 1024;
  /** A catalog of 300 tools in search mode, listed once by this caller. */
  async function searchMode() {
    const proxy = viaProxy({
      ORIGIN_URL: freshOrigin(CATALOG_ORIGIN, "&tools=300"),
      MAX_BATCH_MESSAGES: "256",
      MAX_LOCAL_ANSWER_BYTES: String(LIMIT),
    });
    expect((await listTools(proxy, "list")).result.tools).toHaveLength(2);
    return proxy;
  }
  const search = (id: number | string, query: string) =>
    rpc(id, "tools/call", {
      _meta: META,
      name: "search_tools",
      arguments: { query, limit: 20 },
    });

  type ToolAnswer = {
    id: number;
    result: {
      content: { text: string }[];
      isError?: boolean;
      structuredContent?: { tools: unknown[] };
      resultType?: string;
    };
  };

  it("answers a batch of searches within it: those past it get a short tool error naming it", async () => {
    logs = captureLogs();
    const proxy = await searchMode();
    const response = await postJson(
      proxy,
      PROXY_URL,
      batchOf(256, (id) => search(id, "file")),
      HEADERS_2026,
    );
    const text = await response.text();
    expect(new TextEncoder().encode(text).byteLength).toBeLessThanOrEqual(LIMIT);
    const answers = JSON.parse(text) as ToolAnswer[];
    expect(answers.map((answer) => answer.id)).toEqual(batchOf(256, (id) => id));
    const full = answers.filter((answer) => answer.result.structuredContent);
    const cut = answers.filter((answer) => answer.result.isError);
    expect(full.length).toBeGreaterThan(0);
    expect(cut.length).toBeGreaterThan(0);
    expect(full.length + cut.length).toBe(256);
    for (const answer of full) expect(answer.result.structuredContent?.tools).toHaveLength(20);
    for (const answer of cut) {
      expect(answer.result).toEqual({
        content: [
          {
            type: "text",
            text: `This answer would pass the ${LIMIT} bytes the proxy writes itself in answer to one request (MAX_LOCAL_ANSWER_BYTES): send fewer calls at once, or ask for less (a lower limit).`,
          },
        ],
        isError: true,
        resultType: "complete",
      });
    }
    expect(logs.events("local_answers_over_limit")).toEqual([
      { event: "local_answers_over_limit", limit: LIMIT, cut: cut.length },
    ]);
  });

  it("refuses a batch whose calls it could not answer within it even briefly, before the origin sees it", async () => {
    const { proxy, session, sentSince } = await pagedDemo({
      MAX_BATCH_MESSAGES: "256",
      MAX_LOCAL_ANSWER_BYTES: String(LIMIT),
    });
    // Ids of 1,000 characters: the short errors of 256 calls alone would pass 128 KiB.
    const response = await postJson(
      proxy,
      PROXY_URL,
      batchOf(256, (id) =>
        rpc(`${id}`.padStart(1000, "0"), "tools/call", { name: DEMO_NAMES["files.read"] }),
      ),
      session,
    );
    expect(response.status).toBe(400);
    const error = await response.json<{ id?: unknown; error: { code: number; message: string } }>();
    // One error with no id: one per id would be what the limit keeps from being written.
    expect(error.id).toBeUndefined();
    expect(error.error.code).toBe(-32600);
    expect(error.error.message).toContain("MAX_LOCAL_ANSWER_BYTES");
    expect(await sentSince()).toBe(0);
  });
});
