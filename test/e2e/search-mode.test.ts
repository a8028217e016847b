/**
 * Search mode (docs/search-mode.md): an origin with more tools than the
 * profile's ceiling (OpenAI's 128) is listed as `search_tools` and
 * `call_tool`, and every one of its tools is still reachable, with its
 * arguments repaired as a direct call's are. The origin is the catalog
 * (test/fixtures/node/catalog-origin.ts: tools made from the schema corpus,
 * each call echoed as it arrived), with the SDK clients of 2025-11-25 and
 * 2026-07-28.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { createApp } from "../../src/app";
import { catalogTools } from "../fixtures/node/catalog-origin";
import { clientsOfEachTest, EACH_WIRE, type ToolResult } from "../helpers/clients";
import { DEMO_NAMES } from "../helpers/demo-names";
import { captureLogs } from "../helpers/logs";
import { messagesOf, openSession, postJson, rpc } from "../helpers/mcp";
import { CATALOG_ORIGIN, freshOrigin, GATEWAY_ORIGIN, PROXY_URL, viaProxy } from "../helpers/proxy";

const connect = clientsOfEachTest();

afterEach(() => {
  vi.restoreAllMocks();
});
/** The catalog with `tools` tools (more of its query after), in front of a fresh tool map. */
const catalog = (tools: number, query = "") =>
  freshOrigin(CATALOG_ORIGIN, `&tools=${tools}${query}`);

interface Found {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
}

const found = (result: ToolResult) =>
  (result.structuredContent as { tools: Found[] } | undefined)?.tools ?? [];

const echoed = (result: ToolResult) =>
  result.structuredContent as { tool: string; arguments: Record<string, unknown> };

/** Words a user would search for one catalog tool: its name and, for a copy, which. */
const queryFor = (description: string) =>
  description.replace(/ of [^,]*/, "").replace(/[_-]/g, " ");

describe.each(EACH_WIRE)("protocol %s", (revision) => {
  it("lists 300 tools as search_tools and call_tool; each is found, called, and reaches the origin under its own name", async () => {
    const client = await connect(revision, viaProxy({ ORIGIN_URL: catalog(300) }));
    const listed = await client.listTools();
    expect(listed.map((tool) => tool.name)).toEqual(["search_tools", "call_tool"]);

    for (const tool of catalogTools(300)) {
      const search = await client.callTool("search_tools", {
        query: queryFor(tool.description ?? ""),
        limit: 20,
      });
      const match = found(search).find((candidate) => candidate.description === tool.description);
      expect(match, tool.name).toBeDefined();
      const called = await client.callTool("call_tool", {
        name: match?.name ?? "",
        arguments: {},
      });
      expect(echoed(called).tool).toBe(tool.name);
    }
  });

  it("repairs call_tool's arguments as a direct call's: key aliases, types, JSON text", async () => {
    const client = await connect(revision, viaProxy({ ORIGIN_URL: catalog(300) }));
    await client.listTools();
    const [match] = found(await client.callTool("search_tools", { query: "read text file" }));
    expect(match?.description).toBe("read_text_file of @modelcontextprotocol/server-filesystem");
    const called = await client.callTool("call_tool", {
      name: match?.name ?? "",
      // A model's slips: a key's case, a number as text, the arguments as JSON text.
      arguments: JSON.stringify({ Path: "notes.md", head: "10" }),
    });
    expect(echoed(called)).toEqual({
      tool: "read_text_file",
      arguments: { path: "notes.md", head: 10 },
    });
  });

  it("recovers call_tool's arguments wherever the model put them, as a direct call's", async () => {
    const client = await connect(revision, viaProxy({ ORIGIN_URL: catalog(300) }));
    await client.listTools();
    const [match] = found(await client.callTool("search_tools", { query: "read text file" }));
    const name = match?.name ?? "";
    // Beside `name` with an empty `arguments`, and under `args`: where a direct call finds them too.
    for (const sent of [
      { name, arguments: {}, path: "notes.md" },
      { name, args: { path: "notes.md" } },
      { name, path: "notes.md" },
    ]) {
      expect(echoed(await client.callTool("call_tool", sent))).toEqual({
        tool: "read_text_file",
        arguments: { path: "notes.md" },
      });
    }
  });

  it("answers a query with no words to look for as one of stop words: the first tools", async () => {
    const client = await connect(revision, viaProxy({ ORIGIN_URL: catalog(300) }));
    await client.listTools();
    const empty = found(await client.callTool("search_tools", { query: "", limit: 3 }));
    const stopWords = found(await client.callTool("search_tools", { query: "the of a", limit: 3 }));
    // The catalog's first three, in its order.
    expect(empty.map((tool) => tool.name)).toEqual([
      "read_text_file",
      "edit_file",
      "list_allowed_directories",
    ]);
    expect(stopWords.map((tool) => tool.name)).toEqual(empty.map((tool) => tool.name));
  });

  it("searches a long query's first 256 characters, and says that much of it, not the rest", async () => {
    const client = await connect(revision, viaProxy({ ORIGIN_URL: catalog(300) }));
    await client.listTools();
    const searched = `read text file ${"and so on ".repeat(30)}`.slice(0, 256);
    const result = await client.callTool("search_tools", {
      query: `${searched}${" and more".repeat(200_000)}`,
      limit: 3,
    });
    expect(result.isError).toBeFalsy();
    expect(found(result).map((tool) => tool.name)).toContain("read_text_file");
    const [heading] = String((result.content as Array<{ text: string }>)[0]?.text).split("\n");
    expect(heading).toBe(
      `3 of 300 tools match "${searched}…", best first. Call one with call_tool: {"name": <name>, "arguments": {…}}.`,
    );
  });

  it("says a long query's first characters without cutting one in two", async () => {
    const client = await connect(revision, viaProxy({ ORIGIN_URL: catalog(300) }));
    await client.listTools();
    // An emoji is two UTF-16 units: the 256th is its first half, which alone is no character.
    const before = `read text file ${"x".repeat(240)}`;
    expect(before).toHaveLength(255);
    const result = await client.callTool("search_tools", { query: `${before}😀 more`, limit: 1 });
    const [heading] = String((result.content as Array<{ text: string }>)[0]?.text).split("\n");
    expect(heading?.isWellFormed()).toBe(true);
    expect(heading).toContain(`"${before}…"`);
  });

  it("takes arguments written beside call_tool's name, and logs them recovered inline", async () => {
    const logs = captureLogs();
    const client = await connect(revision, viaProxy({ ORIGIN_URL: catalog(300) }));
    await client.listTools();
    const [match] = found(await client.callTool("search_tools", { query: "read text file" }));
    const called = await client.callTool("call_tool", {
      name: match?.name ?? "",
      path: "notes.md",
      head: "10",
    });
    expect(echoed(called)).toEqual({
      tool: "read_text_file",
      arguments: { path: "notes.md", head: 10 },
    });
    expect(logs.events("tool_call_repaired")).toEqual([
      expect.objectContaining({ "gen_ai.tool.name": "read_text_file", recovery: "inline" }),
    ]);
    logs.restore();
  });

  it("still calls a tool by its own name, as a client that kept names from elsewhere does", async () => {
    const client = await connect(revision, viaProxy({ ORIGIN_URL: catalog(300) }));
    await client.listTools();
    const called = await client.callTool("create_entities_3", { entities: [] });
    expect(echoed(called)).toEqual({ tool: "create_entities_3", arguments: { entities: [] } });
  });

  it("finds no tool the operator's rules hide, calls none, and finds the rest as the rules describe them", async () => {
    const rules = {
      hide: ["edit_file*"],
      tools: { read_text_file: { description: "Reads a text file of the repository." } },
    };
    const client = await connect(
      revision,
      viaProxy({ ORIGIN_URL: catalog(300), TOOL_RULES: JSON.stringify(rules) }),
    );
    const listed = await client.listTools();
    // The count the listing gives is of the tools the model can reach, as a search's.
    const count = /\((\d+) in all\)/.exec(String(listed[0]?.description))?.[1];
    const none = await client.callTool("search_tools", { query: "zzzz qqqq" });
    expect(JSON.stringify(none)).toContain(`No tool of ${count} matches`);
    // 300 less the six the rules hide: edit_file and its copies edit_file_1 to edit_file_5.
    expect(count).toBe("294");
    const search = await client.callTool("search_tools", { query: "edit file", limit: 20 });
    expect(found(search).map((tool) => tool.name)).not.toContain("edit_file");
    expect(JSON.stringify(search)).not.toMatch(/edit_file(_\d+)?\b/);
    for (const name of ["edit_file", "edit_file_2"]) {
      // call_tool's tool error, as for a name no tool has (SEP-1303); a direct call's -32602.
      const refused = await client.callTool("call_tool", { name, arguments: {} });
      expect(refused).toMatchObject({ isError: true });
      expect(refused.content[0]?.text).toMatch(
        new RegExp(`^Unknown tool: ${name}\\. Did you mean: `),
      );
      await expect(client.callTool(name, {})).rejects.toThrow(`Unknown tool: ${name}`);
    }
    const read = await client.callTool("search_tools", { query: "read text file", limit: 20 });
    const described = found(read).find((tool) => tool.name === "read_text_file");
    expect(described?.description).toBe("Reads a text file of the repository.");
  });

  it("lists 100 tools as they are: under the ceiling nothing changes", async () => {
    const client = await connect(revision, viaProxy({ ORIGIN_URL: catalog(100) }));
    const listed = await client.listTools();
    // The catalog's names are legal everywhere: each tool under its own, in the origin's order.
    expect(listed.map(({ name, description }) => ({ name, description }))).toEqual(
      catalogTools(100).map(({ name, description }) => ({ name, description })),
    );
  });
});

describe.each(EACH_WIRE)("search mode, protocol %s", (revision) => {
  it("counts every page: a paginated listing over the ceiling is read to the end and served in search mode", async () => {
    const logs = captureLogs();
    const proxy = viaProxy({ ORIGIN_URL: catalog(300, "&page_size=100") });
    const client = await connect(revision, proxy);
    const listed = await client.listTools();
    expect(listed.map((tool) => tool.name)).toEqual(["search_tools", "call_tool"]);
    expect(logs.events("tools_search_mode")).toEqual([
      { event: "tools_search_mode", profile: "openai", tools: 300, ceiling: 128 },
    ]);
    const search = await client.callTool("search_tools", { query: "kubectl get copy 4" });
    expect(found(search).map((tool) => tool.description)).toContain(
      "kubectl_get of mcp-server-kubernetes, copy 4",
    );
  });

  it("is lowered by MAX_TOOLS, and is the provider's at each profile URL", async () => {
    const lowered = await connect(revision, viaProxy({ ORIGIN_URL: catalog(51), MAX_TOOLS: "40" }));
    expect((await lowered.listTools()).map((tool) => tool.name)).toEqual([
      "search_tools",
      "call_tool",
    ]);
    const origin = catalog(129);
    expect(
      await connect(revision, viaProxy({ ORIGIN_URL: origin }), `${PROXY_URL}/anthropic`).then(
        (c) => c.listTools(),
      ),
    ).toHaveLength(129);
    const gemini = await connect(revision, viaProxy({ ORIGIN_URL: origin }), `${PROXY_URL}/gemini`);
    expect((await gemini.listTools()).map((tool) => tool.name)).toEqual([
      "search_tools",
      "call_tool",
    ]);
  });

  it("shows each tool a search finds with its schema as the profile views it, the operator's fixed arguments left out", async () => {
    const rules = JSON.stringify({ tools: { read_text_file: { fixed: { head: 10 } } } });
    const viewed = async (profile: string) => {
      const settings = { ORIGIN_URL: catalog(300), TOOL_RULES: rules };
      const client = await connect(revision, viaProxy(settings), `${PROXY_URL}/${profile}`);
      await client.listTools();
      const search = await client.callTool("search_tools", { query: "read text file" });
      return found(search).find((tool) => tool.description?.startsWith("read_text_file "));
    };
    // The origin's schema: `path`, `tail` and `head`, only `path` required, closed.
    const strict = await viewed("openai-strict");
    expect(Object.keys(strict?.inputSchema.properties ?? {})).toEqual(["path", "tail"]);
    expect(strict?.inputSchema.required).toEqual(["path", "tail"]);
    const gemini = await viewed("gemini");
    expect(Object.keys(gemini?.inputSchema.properties ?? {})).toEqual(["path", "tail"]);
    expect(gemini?.inputSchema).not.toHaveProperty("additionalProperties");
  });

  it("serves a cold isolate's search and call from the origin's listing, asked for again", async () => {
    const origin = catalog(300);
    const warm = await connect(revision, viaProxy({ ORIGIN_URL: origin }));
    await warm.listTools();
    const cold = await connect(revision, viaProxy({ ORIGIN_URL: origin }, { app: createApp() }));
    const [match] = found(await cold.callTool("search_tools", { query: "brave web search" }));
    expect(match?.description).toBe(
      "brave_web_search of @modelcontextprotocol/server-brave-search",
    );
    const another = await connect(revision, viaProxy({ ORIGIN_URL: origin }, { app: createApp() }));
    const called = await another.callTool("call_tool", {
      name: match?.name ?? "",
      arguments: { query: "edge proxies" },
    });
    expect(echoed(called)).toEqual({
      tool: "brave_web_search",
      arguments: { query: "edge proxies" },
    });
  });

  it("answers what call_tool carries and cannot call with its tool error, which the model reads: the names it meant, arguments to fix", async () => {
    const client = await connect(revision, viaProxy({ ORIGIN_URL: catalog(300) }));
    await client.listTools();
    // MCP 2025-11-25 (SEP-1303): input validation errors are the tool's, not the protocol's.
    const misnamed = await client.callTool("call_tool", { name: "read_txt_file", arguments: {} });
    expect(misnamed).toMatchObject({ isError: true, content: [{ type: "text" }] });
    expect(misnamed.content[0]?.text).toMatch(
      /^Unknown tool: read_txt_file\. Did you mean: read_text_file[,?]/,
    );
    const unshaped = await client.callTool("call_tool", { name: "read_text_file", arguments: 5 });
    expect(unshaped).toMatchObject({
      isError: true,
      content: [
        { type: "text", text: "Invalid params: `arguments` must be an object, not integer" },
      ],
    });
    // Called directly, a name the server has no tool of is a protocol error, as ever.
    await expect(client.callTool("read_txt_file", {})).rejects.toThrow(
      "Unknown tool: read_txt_file. Did you mean: read_text_file",
    );
  });

  it("answers a search or call without what it needs with a tool error the model can act on", async () => {
    const client = await connect(revision, viaProxy({ ORIGIN_URL: catalog(300) }));
    await client.listTools();
    const search = await client.callTool("search_tools", {});
    expect(search).toMatchObject({
      isError: true,
      content: [{ type: "text", text: expect.stringContaining("needs a `query`") }],
    });
    const call = await client.callTool("call_tool", { arguments: {} });
    expect(call).toMatchObject({
      isError: true,
      content: [{ type: "text", text: expect.stringContaining("needs `name`") }],
    });
  });
});

describe("search mode, on the wire as a 2025-era session writes it", () => {
  it("leaves a paginated listing under it as the origin paged it, cursors and all", async () => {
    const proxy = viaProxy({ ORIGIN_URL: catalog(100, "&page_size=30") });
    const session = await openSession(proxy, PROXY_URL);
    const names: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const [message] = await messagesOf(
        await postJson(
          proxy,
          PROXY_URL,
          rpc(pages, "tools/list", cursor ? { cursor } : {}),
          session,
        ),
      );
      const result = (message as { result: { tools: Found[]; nextCursor?: string } }).result;
      names.push(...result.tools.map((tool) => tool.name));
      cursor = result.nextCursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(4);
    expect(names).toEqual(catalogTools(100).map((tool) => tool.name));
  });

  it("refuses search_tools and call_tool whose arguments are no object as a direct call's (-32602), not as a missing query or name", async () => {
    const proxy = viaProxy({ ORIGIN_URL: catalog(300) });
    const session = await openSession(proxy, PROXY_URL);
    await postJson(proxy, PROXY_URL, rpc("list", "tools/list"), session);
    const cases = [
      ["search_tools", 5, "`arguments` must be an object, not integer", "integer"],
      [
        "search_tools",
        "read a file",
        "`arguments` must be an object, not a string that is not a JSON object",
        "text_not_json_object",
      ],
      ["call_tool", ["read_text_file"], "`arguments` must be an object, not array", "array"],
      [
        "call_tool",
        '{"name": "read_text_file"',
        "`arguments` must be an object, not a string that is not a JSON object",
        "text_not_json_object",
      ],
    ] as const;
    const logs = captureLogs();
    for (const [name, args, reason] of cases) {
      const [answer] = await messagesOf(
        await postJson(proxy, PROXY_URL, rpc(1, "tools/call", { name, arguments: args }), session),
      );
      expect(answer).toEqual({
        jsonrpc: "2.0",
        id: 1,
        error: { code: -32602, message: `Invalid params: ${reason}` },
      });
    }
    // Each line says what the client was told was no object, as a direct call's does.
    expect(
      logs
        .events("tool_call_refused")
        .map(({ reason, member, malformed }) => [reason, member, malformed]),
    ).toEqual(cases.map(([, , , code]) => ["malformed_arguments", "arguments", code]));
    logs.restore();
  });

  it("refuses call_tool and search_tools whose arguments, sent as JSON text, write a key beside another of another case, with the tool's error", async () => {
    // The body's one reading (SECURITY.md) never saw inside the text: the call reached the origin
    // with both keys, which the proxy repaired by one and an origin that ignores case reads by
    // the other (Go's encoding/json takes the last). What call_tool carries is its input: the
    // refusal is its tool error (SEP-1303), which the model reads.
    const proxy = viaProxy({ ORIGIN_URL: catalog(300) });
    const session = await openSession(proxy, PROXY_URL);
    await postJson(proxy, PROXY_URL, rpc("list", "tools/list"), session);
    const reason = (key: string) =>
      `Invalid params: the arguments write the key "${key}" beside another that differs at most in case; JSON readers differ on which counts`;
    for (const [tool, carried, key] of [
      [
        "call_tool",
        { name: "read_text_file", arguments: { path: "notes.md", Path: "/etc/passwd" } },
        "Path",
      ],
      [
        "call_tool",
        { name: "read_text_file", arguments: { path: "notes.md" }, NAME: "edit_file" },
        "NAME",
      ],
      // The carried call's own arguments as JSON text, and search_tools' as call_tool's are.
      [
        "call_tool",
        { name: "read_text_file", arguments: '{"path":"a","note":"x","NOTE":"y"}' },
        "NOTE",
      ],
      ["search_tools", '{"query":"read","Query":"delete"}', "Query"],
    ] as const) {
      const text = typeof carried === "string" ? carried : JSON.stringify(carried);
      // Its own arguments as `args` written as JSON text are read as `arguments` are (recover.ts).
      for (const member of ["arguments", "args"]) {
        const sent = { name: tool, [member]: text };
        const [answer] = await messagesOf(
          await postJson(proxy, PROXY_URL, rpc(1, "tools/call", sent), session),
        );
        expect(answer, member).toEqual({
          jsonrpc: "2.0",
          id: 1,
          result: { content: [{ type: "text", text: reason(key) }], isError: true },
        });
      }
    }
  });

  it("answers call_tool carrying a tool the rules hide as one no tool has, byte for byte", async () => {
    // The catalog's 300th tool, hidden from a listing of 300, and never listed in one of 299:
    // both callers are shown the same 299 tools.
    const last = catalogTools(300).at(-1)?.name ?? "";
    const rules = JSON.stringify({ hide: [`exact:${last}`] });
    const answers: string[] = [];
    for (const tools of [300, 299]) {
      const proxy = viaProxy({ ORIGIN_URL: catalog(tools), TOOL_RULES: rules });
      const session = await openSession(proxy, PROXY_URL);
      await postJson(proxy, PROXY_URL, rpc("list", "tools/list"), session);
      const call = rpc(1, "tools/call", { name: "call_tool", arguments: { name: last } });
      answers.push(await (await postJson(proxy, PROXY_URL, call, session)).text());
    }
    const [hidden, unlisted] = answers;
    expect(JSON.parse(hidden ?? "")).toMatchObject({
      result: {
        isError: true,
        content: [{ text: expect.stringContaining(`Unknown tool: ${last}. Did you mean: `) }],
      },
    });
    expect(hidden).toBe(unlisted);
  });

  it("relay mode: answers a search only from what the origin listed the searcher", async () => {
    const trace = crypto.randomUUID();
    const proxy = viaProxy(
      { ORIGIN_URL: freshOrigin(`${GATEWAY_ORIGIN}/auth`, `&trace=${trace}`), MAX_TOOLS: "2" },
      { app: createApp() },
    );
    const session = await openSession(proxy, PROXY_URL, { authorization: "Bearer demo-token" });
    const [listing] = await messagesOf(
      await postJson(proxy, PROXY_URL, rpc("list", "tools/list"), session),
    );
    expect(listing).toMatchObject({
      result: { tools: [{ name: "search_tools" }, { name: "call_tool" }] },
    });
    const search = rpc("search", "tools/call", {
      name: "search_tools",
      arguments: { query: "read file" },
    });

    // Without the origin's word for them, callers learn nothing from the proxy: the origin's 401.
    const { authorization: _, ...anonymous } = session;
    for (const headers of [anonymous, { ...session, authorization: "Bearer guessed" }]) {
      const refused = await postJson(proxy, PROXY_URL, search, headers);
      expect(refused.status).toBe(401);
      expect(await refused.text()).not.toContain(DEMO_NAMES["files.read"]);
    }

    const [answer] = await messagesOf(await postJson(proxy, PROXY_URL, search, session));
    expect(JSON.stringify(answer)).toContain(DEMO_NAMES["files.read"]);
  });
});

describe("the proxy's own listing of the origin (a cold call, or the pages after a first)", () => {
  it.each([
    ["JSON", ""],
    ["event streams", "&sse"],
  ])(
    "reads a paginated listing no further than 16 MiB in all, as one message, and says so (%s)",
    async (_, sse) => {
      const logs = captureLogs();
      // About 18 MB in three pages: the proxy, asked for a tool it does not know, lists the origin itself.
      const cold = await connect(
        "2026-07-28",
        viaProxy({ ORIGIN_URL: catalog(12_000, `&page_size=4000${sse}`) }, { app: createApp() }),
      );
      const called = await cold.callTool("kubectl_get_7", { resourceType: "pods" });
      expect((called.structuredContent as { tool: string }).tool).toBe("kubectl_get_7");
      expect(logs.events("relist_failed")).toEqual([
        expect.objectContaining({
          status: "no tools/list result",
          detail: "Error: the listing is over 16777216 bytes in all",
        }),
      ]);
    },
  );
});
