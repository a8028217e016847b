/**
 * Calls by another spelling (docs/names.md, "Calls by another spelling"): a
 * model that writes the tool's own name, drops the fingerprint or changes the
 * case still reaches the tool it means, the way a call by its listed name
 * does; a name nothing answers to gets the caller's closest names. The
 * origin lists per caller (test/fixtures/node/caller-origin.ts) and echoes
 * each call as it arrived.
 */
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { clientsOfEachTest, type ToolResult } from "../helpers/clients";
import { captureLogs } from "../helpers/logs";
import { CALLER_ORIGIN, type Fetch, PROXY_URL, viaProxy } from "../helpers/proxy";

const connect = clientsOfEachTest();

const TOOLS = [
  {
    name: "files.read",
    description: "Reads a file.",
    inputSchema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
  },
  {
    name: "opt.tool",
    description: "Takes an optional argument.",
    inputSchema: {
      type: "object",
      properties: { opt: { type: "string" }, keep: { type: "string" } },
    },
  },
];

async function callerOrigin(token: string, tools: readonly unknown[] = TOOLS) {
  const map = crypto.randomUUID();
  const response = await fetch(`${CALLER_ORIGIN}/__tools?map=${map}&caller=${token}`, {
    method: "POST",
    body: JSON.stringify(tools),
  });
  expect(response.status).toBe(204);
  return `${CALLER_ORIGIN}/mcp?map=${map}`;
}

const asCaller =
  (token: string, fetch: Fetch): Fetch =>
  (input, init) => {
    const headers = new Headers(init?.headers);
    headers.set("authorization", `Bearer ${token}`);
    return fetch(input, { ...init, headers });
  };

const echoed = (result: ToolResult) =>
  result.structuredContent as
    | { tool: string; arguments: Record<string, unknown>; caller: string }
    | undefined;

describe.each(["2025-11-25", "2026-07-28"] as const)("protocol %s", (revision) => {
  it("reaches the tool a model means by its own name, in another case, or without its fingerprint", async () => {
    const proxy = viaProxy({ ORIGIN_URL: await callerOrigin("ann") }, { app: createApp() });
    const client = await connect(revision, asCaller("ann", proxy));
    const listed = (await client.listTools()).map((tool) => tool.name);
    const read = listed.find((name) => name.startsWith("files_read_")) ?? "";
    expect(read).toMatch(/^files_read_[0-9a-z]{6}$/);

    const logs = captureLogs();
    for (const name of ["files.read", "files_read", read.toUpperCase(), "Files.Read"]) {
      expect(echoed(await client.callTool(name, { path: "a.md" })), name).toEqual({
        tool: "files.read",
        arguments: { path: "a.md" },
        caller: "ann",
      });
    }
    expect(logs.events("tool_call_repaired").map((line) => line.nameRead)).toEqual([
      "original",
      "repaired",
      "repaired",
      "repaired",
    ]);
    logs.restore();
  });

  it("reaches a tool by its snake_case, camelCase or PascalCase spelling, where one tool answers to it", async () => {
    const cased = [
      { ...TOOLS[0], name: "GetWeather" },
      { ...TOOLS[0], name: "fetch_page" },
    ];
    const proxy = viaProxy({ ORIGIN_URL: await callerOrigin("ann", cased) }, { app: createApp() });
    const client = await connect(revision, asCaller("ann", proxy));
    expect((await client.listTools()).map((tool) => tool.name)).toEqual([
      "GetWeather",
      "fetch_page",
    ]);
    const calls = [
      ...["get_weather", "getWeather", "GET_WEATHER", "get-weather"].map((name) => [
        name,
        "GetWeather",
      ]),
      ...["fetchPage", "FetchPage", "FETCH_PAGE"].map((name) => [name, "fetch_page"]),
    ];
    for (const [name, tool] of calls) {
      expect(echoed(await client.callTool(name ?? "", { path: "a.md" })), name).toEqual({
        tool,
        arguments: { path: "a.md" },
        caller: "ann",
      });
    }
    // Where two tools answer to the spelling, it names neither: the model is offered both.
    const both = [...cased, { ...TOOLS[0], name: "get_weather" }];
    const twice = viaProxy({ ORIGIN_URL: await callerOrigin("ann", both) }, { app: createApp() });
    const other = await connect(revision, asCaller("ann", twice));
    expect(await other.listTools()).toHaveLength(3);
    await expect(other.callTool("getWeather", { path: "a.md" })).rejects.toThrow(
      /Did you mean: (GetWeather, get_weather|get_weather, GetWeather)\?/,
    );
    expect(echoed(await other.callTool("get_weather", { path: "a.md" }))?.tool).toBe("get_weather");
  });

  it("reaches a tool called by its own name, where tools that sanitize alike answer to its spelling too", async () => {
    const alike = ["a/b", "a.b", "a:b"].map((name) => ({ ...TOOLS[0], name }));
    const proxy = viaProxy({ ORIGIN_URL: await callerOrigin("ann", alike) }, { app: createApp() });
    const client = await connect(revision, asCaller("ann", proxy));
    expect(await client.listTools()).toHaveLength(3);
    for (const name of ["a/b", "a.b", "a:b"]) {
      expect(echoed(await client.callTool(name, { path: "a.md" })), name).toEqual({
        tool: name,
        arguments: { path: "a.md" },
        caller: "ann",
      });
    }
    // Another spelling that all three answer to names none of them.
    await expect(client.callTool("A_B", { path: "a.md" })).rejects.toThrow(/Did you mean/);
  });

  it("reaches the tool another spelling means in an isolate new to the caller, where the rules refuse calls", async () => {
    const origin = await callerOrigin("ann");
    const rules = JSON.stringify({ hide: ["*delete*"] });
    for (const name of ["Files.Read", "files_read", "FILES_READ"]) {
      // A fresh isolate for each: the caller's listing is asked for by the call itself.
      const proxy = viaProxy({ ORIGIN_URL: origin, TOOL_RULES: rules }, { app: createApp() });
      const client = await connect(revision, asCaller("ann", proxy));
      expect(echoed(await client.callTool(name, { path: "a.md" })), name).toEqual({
        tool: "files.read",
        arguments: { path: "a.md" },
        caller: "ann",
      });
    }
  });

  it("answers a name nothing answers to with the caller's closest names, and calls nothing", async () => {
    const proxy = viaProxy({ ORIGIN_URL: await callerOrigin("ann") }, { app: createApp() });
    const client = await connect(revision, asCaller("ann", proxy));
    const listed = (await client.listTools()).map((tool) => tool.name);
    const read = listed.find((name) => name.startsWith("files_read_")) ?? "";
    await expect(client.callTool("files_wirte", { path: "a.md" })).rejects.toThrow(
      new RegExp(`Unknown tool: files_wirte\\. Did you mean: ${read}`),
    );
  });

  it("tells the log which tool an old listing's name stood for, where the origin renamed it since, and the names the model was offered", async () => {
    const origin = await callerOrigin("ann");
    const proxy = viaProxy({ ORIGIN_URL: origin }, { app: createApp() });
    const client = await connect(revision, asCaller("ann", proxy));
    const before = (await client.listTools()).map((tool) => tool.name);
    const read = before.find((name) => name.startsWith("files_read_")) ?? "";
    // The origin renames files.read; the client lists again, its model calls from the old listing.
    const renamed = [{ ...TOOLS[0], name: "files.read_file" }, TOOLS[1]];
    const reset = await fetch(`${origin.replace("/mcp?", "/__tools?")}&caller=ann`, {
      method: "POST",
      body: JSON.stringify(renamed),
    });
    expect(reset.status).toBe(204);
    const after = (await client.listTools()).map((tool) => tool.name);
    const readFile = after.find((name) => name.startsWith("files_read_file_")) ?? "";
    expect(readFile).toMatch(/^files_read_file_[0-9a-z]{6}$/);

    const logs = captureLogs();
    await expect(client.callTool(read, { path: "a.md" })).rejects.toThrow(
      `Unknown tool: ${read}. Did you mean: ${readFile}`,
    );
    // The line says what the client was told, and that the name was the proxy's for files.read,
    // which the caller's listing no longer shows: the origin renamed or removed it.
    expect(logs.events("tool_call_refused")).toEqual([
      expect.objectContaining({
        name: read,
        reason: "unknown",
        handedOutFor: "files.read",
        closest: [readFile],
      }),
    ]);
    logs.restore();
  });

  it("tells the log which tool an old listing's name stood for, where the origin removed it since and the origin answers the call", async () => {
    const origin = await callerOrigin("ann");
    const proxy = viaProxy({ ORIGIN_URL: origin }, { app: createApp() });
    const client = await connect(revision, asCaller("ann", proxy));
    const read = (await client.listTools()).find((tool) => tool.name.startsWith("files_read_"));
    expect(read?.name).toMatch(/^files_read_[0-9a-z]{6}$/);
    // The origin removes files.read; the client lists again, its model calls from the old listing.
    const reset = await fetch(`${origin.replace("/mcp?", "/__tools?")}&caller=ann`, {
      method: "POST",
      body: JSON.stringify([TOOLS[1]]),
    });
    expect(reset.status).toBe(204);
    const after = (await client.listTools()).map((tool) => tool.name);
    expect(after).toHaveLength(1);
    expect(after[0]).toMatch(/^opt_tool_[0-9a-z]{6}$/);

    const logs = captureLogs();
    // No name of theirs is alike: the call goes on as it came, and the origin answers it.
    await client.callTool(read?.name ?? "", { path: "a.md" }).catch(() => undefined);
    // Its one line says the name was the proxy's for files.read, which the origin no longer lists.
    expect(logs.events("tool_unknown")).toEqual([
      {
        event: "tool_unknown",
        name: read?.name,
        handedOutFor: "files.read",
        // The caller's listing was read for the call: the origin no longer lists files.read.
        relisted: true,
        forwarded: "as_called",
      },
    ]);
    logs.restore();
  });

  it("says a name the map does not know was forwarded as called, which is no failure where the origin has the tool", async () => {
    const proxy = viaProxy({ ORIGIN_URL: await callerOrigin("ann") }, { app: createApp() });
    const client = await connect(revision, asCaller("ann", proxy));
    const logs = captureLogs();
    // The tool's own name, illegal under `openai`, from a client this isolate has read no listing
    // of: the map does not know it, the call goes on as it came, and the origin's tool answers it.
    const result = await client.callTool("files.read", { path: "a.md" });
    expect(result.isError).toBeFalsy();
    expect(echoed(result)).toEqual({
      tool: "files.read",
      arguments: { path: "a.md" },
      caller: "ann",
    });
    // The engineer who reads the line alone reads that it went on, not that it failed.
    expect(logs.events("tool_unknown")).toEqual([
      // Illegal under `openai`: no name the proxy handed out, so no listing was asked for.
      { event: "tool_unknown", name: "files.read", relisted: false, forwarded: "as_called" },
    ]);
    logs.restore();
  });

  it("undoes the strict view for a call by the tool's own name as for its listed name", async () => {
    const origin = await callerOrigin("ann");
    const proxy = viaProxy({ ORIGIN_URL: origin }, { app: createApp() });
    const client = await connect(revision, asCaller("ann", proxy), `${PROXY_URL}/openai-strict`);
    const [, listed] = await client.listTools();
    // Strict mode asks for every property, an optional one as nullable: the model sends null.
    expect(listed?.inputSchema).toMatchObject({ required: ["opt", "keep"] });
    for (const name of [listed?.name ?? "", "opt.tool"]) {
      expect(echoed(await client.callTool(name, { opt: null, keep: "k" })), name).toEqual({
        tool: "opt.tool",
        arguments: { keep: "k" },
        caller: "ann",
      });
    }
  });
});
