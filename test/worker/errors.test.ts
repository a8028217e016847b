/** Each row of docs/errors.md's table, through the proxy. */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createApp } from "../../src/app";
import { MAX_HELD_BYTES } from "../../src/transport/read-bounded";
import { captureLogs } from "../helpers/logs";
import { initialize, openSession, postJson, rpc } from "../helpers/mcp";
import {
  CLOSED_ORIGIN,
  freshOrigin,
  GATEWAY_ORIGIN,
  newTrace,
  PROXY_URL,
  receivedByOrigin,
  tenantEnv,
  viaProxy,
} from "../helpers/proxy";
import { scriptedOrigin } from "../helpers/scripted-origin";

const throughGateway = viaProxy({ ORIGIN_URL: `${GATEWAY_ORIGIN}/mcp` });

async function expectRefusedLocally(
  body: BodyInit,
  status: number,
  code: number,
  proxy = throughGateway,
) {
  const trace = newTrace();
  const response = await proxy(`${PROXY_URL}?trace=${trace}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body,
  });
  expect(response.status).toBe(status);
  const error = await response.json<{ id: unknown; error: { code: number; message: string } }>();
  expect(error).toMatchObject({ jsonrpc: "2.0", id: null, error: { code } });
  expect(await receivedByOrigin(trace)).toEqual([]);
  return error.error.message;
}

describe("an error whose request id is unknown, written as the request's revision prescribes", () => {
  it.each([
    ["no MCP-Protocol-Version (2025-03-26)", {}, { id: null }],
    ["2025-06-18", { "mcp-protocol-version": "2025-06-18" }, { id: null }],
    ["2025-11-25", { "mcp-protocol-version": "2025-11-25" }, {}],
    ["2026-07-28", { "mcp-protocol-version": "2026-07-28" }, {}],
  ])("%s", async (_, headers, id) => {
    const response = await throughGateway(PROXY_URL, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: "{",
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      jsonrpc: "2.0",
      ...id,
      error: { code: -32700, message: "Parse error: the body is not valid JSON" },
    });
  });
});

describe("malformed input is answered by the proxy, never forwarded", () => {
  it.each([
    ["truncated JSON", '{"jsonrpc":"2.0","id":1,'],
    ["plain text", "hello"],
    ["empty body", ""],
    ["invalid UTF-8", new Uint8Array([0x7b, 0xff, 0xfe, 0x7d])],
  ])("%s: 400 with -32700", async (_, body) => {
    const message = await expectRefusedLocally(body, 400, -32700);
    expect(message).toContain("not valid JSON");
  });

  it.each([
    ["an empty batch", "[]", "empty batch"],
    ["a number", "42", "not a JSON-RPC 2.0 message"],
    ["a string", '"tools/list"', "not a JSON-RPC 2.0 message"],
    ["the wrong version", '{"jsonrpc":"1.0","id":1,"method":"ping"}', "not a JSON-RPC 2.0 message"],
    ["no method, result or error", '{"jsonrpc":"2.0","id":1}', "not a JSON-RPC 2.0 message"],
    ["a null request id", '{"jsonrpc":"2.0","id":null,"method":"ping"}', "not a JSON-RPC"],
    ["a bad batch element", '[{"jsonrpc":"2.0","method":"x"}, 7]', "batch element 1"],
    // The proxy keeps what it does per request by id (a listing's first page, a call it answers
    // itself); a client matches answers by id as well, `"1"` as `1` (the TypeScript SDK's).
    [
      "two requests of one id in a batch",
      '[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"c"}}]',
      "batch elements 0 and 1 are requests of one id",
    ],
    [
      'requests of ids "7" and 7 in a batch',
      '[{"jsonrpc":"2.0","id":"7","method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","id":7,"method":"ping"}]',
      "batch elements 0 and 2 are requests of one id",
    ],
  ])("%s: 400 with -32600", async (_, body, says) => {
    const message = await expectRefusedLocally(body, 400, -32600);
    expect(message).toContain(says);
  });

  it("a body nested deeper than 512 levels: 400 with -32600, however its numbers are written", async () => {
    // Two levels are the message's own (the message and `params`).
    const nested = (levels: number, leaf: string) =>
      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":${"[".repeat(levels - 2)}${leaf}${"]".repeat(levels - 2)}}}`;
    // A number JSON.stringify writes otherwise (1.0) is read exactly, by another path.
    for (const leaf of ["1", "1.0"]) {
      for (const levels of [513, 100_000]) {
        expect(await expectRefusedLocally(nested(levels, leaf), 400, -32600)).toBe(
          "Invalid Request: the body nests deeper than 512 levels",
        );
      }
      const trace = newTrace();
      await throughGateway(`${PROXY_URL}?trace=${trace}`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
        },
        body: nested(512, leaf),
      });
      expect(await receivedByOrigin(trace)).toHaveLength(1);
    }
  });

  it("a body over MAX_BODY_BYTES gets 413, whether its length is declared or streamed", async () => {
    const proxy = viaProxy({ ORIGIN_URL: `${GATEWAY_ORIGIN}/mcp`, MAX_BODY_BYTES: "1024" });
    const big = JSON.stringify(
      rpc(1, "tools/call", { name: "x", arguments: { s: "a".repeat(2000) } }),
    );

    expect(await expectRefusedLocally(big, 413, -32600, proxy)).toContain("1024 bytes");

    const streamed = new ReadableStream({
      start(controller) {
        for (let i = 0; i < 10; i++)
          controller.enqueue(new TextEncoder().encode(big.slice(0, 200)));
        controller.close();
      },
    });
    expect(await expectRefusedLocally(streamed, 413, -32600, proxy)).toContain("1024 bytes");
  });

  it("a body of exactly MAX_BODY_BYTES is accepted", async () => {
    const body = JSON.stringify(rpc(1, "ping"));
    const proxy = viaProxy({ MAX_BODY_BYTES: String(body.length) });
    const response = await postJson(proxy, PROXY_URL, body);
    expect(response.status).not.toBe(413);
    await response.body?.cancel();
  });
});

describe("origin failures", () => {
  it("unreachable origin: 502 with -32000 and the request's id", async () => {
    const proxy = viaProxy({ ORIGIN_URL: `${CLOSED_ORIGIN}/mcp` });
    const response = await postJson(proxy, PROXY_URL, rpc("req-9", "tools/list"));
    expect(response.status).toBe(502);
    expect(await response.json()).toMatchObject({
      jsonrpc: "2.0",
      id: "req-9",
      error: { code: -32000, message: expect.stringContaining("unreachable") },
    });
  });

  it("unreachable origin and a batch: one error per request, notifications get none", async () => {
    const proxy = viaProxy({ ORIGIN_URL: `${CLOSED_ORIGIN}/mcp` });
    const response = await postJson(proxy, PROXY_URL, [
      rpc(1, "tools/list"),
      { jsonrpc: "2.0", method: "notifications/initialized" },
      rpc(2, "ping"),
    ]);
    expect(response.status).toBe(502);
    const body = await response.json<{ id: number }[]>();
    expect(body.map((error) => error.id)).toEqual([1, 2]);
  });

  it("the request's id as the client wrote it, an integer past 2^53 too, in the proxy's own answers", async () => {
    // Python's and Go's clients read integer ids exactly: 12345678901234567000 answers no request.
    const post = (proxy: typeof throughGateway, body: string) =>
      proxy(PROXY_URL, { method: "POST", headers: { "content-type": "application/json" }, body });
    const unreachable = await post(
      viaProxy({ ORIGIN_URL: `${CLOSED_ORIGIN}/mcp` }),
      '{"jsonrpc":"2.0","id":12345678901234567891,"method":"ping"}',
    );
    expect(unreachable.status).toBe(502);
    expect(await unreachable.text()).toMatch(/^\{"jsonrpc":"2.0","id":12345678901234567891,/);
    const refused = await post(
      throughGateway,
      '[{"jsonrpc":"2.0","id":12345678901234567893,"method":"tools/call","params":{"name":"x","arguments":5}}]',
    );
    expect(await refused.text()).toMatch(/^\[\{"jsonrpc":"2.0","id":12345678901234567893,/);
  });

  it("a string id written with escapes comes back byte for byte in the proxy's own answers", async () => {
    // `"\u0036"` is the id "6" to JSON.parse; a client that matches answers by the text it sent
    // (or keeps the raw id) waits on an answer written `"6"`.
    const post = (proxy: typeof throughGateway, body: string) =>
      proxy(PROXY_URL, { method: "POST", headers: { "content-type": "application/json" }, body });
    const unreachable = await post(
      viaProxy({ ORIGIN_URL: `${CLOSED_ORIGIN}/mcp` }),
      '{"jsonrpc":"2.0","id":"\\u0036","method":"ping"}',
    );
    expect(unreachable.status).toBe(502);
    expect(await unreachable.text()).toMatch(/^\{"jsonrpc":"2.0","id":"\\u0036",/);
    const refused = await post(
      throughGateway,
      '[{"jsonrpc":"2.0","id":"a\\/\\u0031","method":"tools/call","params":{"name":"x","arguments":5}},' +
        '{"jsonrpc":"2.0","id":"\\u00e9","method":"tools/call","params":{"name":"y","arguments":5}}]',
    );
    const text = await refused.text();
    expect(text).toMatch(/^\[\{"jsonrpc":"2.0","id":"a\\\/\\u0031",/);
    expect(text).toContain(',{"jsonrpc":"2.0","id":"\\u00e9",');
  });

  it("unreachable origin on GET: 502 with id null", async () => {
    const proxy = viaProxy({ ORIGIN_URL: `${CLOSED_ORIGIN}/mcp` });
    const response = await proxy(PROXY_URL, { headers: { accept: "text/event-stream" } });
    expect(response.status).toBe(502);
    expect(await response.json()).toMatchObject({ id: null, error: { code: -32000 } });
  });

  it("origin slower than ORIGIN_TIMEOUT_MS: 504 with -32001 and the request's id", async () => {
    const proxy = viaProxy({
      ORIGIN_URL: `${GATEWAY_ORIGIN}/delay/5000/mcp`,
      ORIGIN_TIMEOUT_MS: "100",
    });
    const response = await postJson(proxy, PROXY_URL, rpc(77, "tools/list"));
    expect(response.status).toBe(504);
    expect(await response.json()).toMatchObject({
      id: 77,
      error: { code: -32001, message: expect.stringContaining("100 ms") },
    });
  });

  it("origin within ORIGIN_TIMEOUT_MS: answered normally", async () => {
    const proxy = viaProxy({
      ORIGIN_URL: `${GATEWAY_ORIGIN}/delay/50/mcp`,
      ORIGIN_TIMEOUT_MS: "5000",
    });
    const response = await postJson(proxy, PROXY_URL, initialize(1));
    expect(response.status).toBe(200);
    await response.body?.cancel();
  });

  it("origin body that cannot be decoded: 502 with the request's id, never a 500", async () => {
    const origin = `${GATEWAY_ORIGIN}/mislabeled/mcp?json`;
    const session = await openSession(
      viaProxy({ ORIGIN_URL: `${GATEWAY_ORIGIN}/mcp?json` }),
      PROXY_URL,
    );
    const response = await postJson(
      viaProxy({ ORIGIN_URL: origin }),
      PROXY_URL,
      rpc(31, "tools/list"),
      session,
    );
    expect(response.status).toBe(502);
    expect(await response.json()).toMatchObject({ id: 31, error: { code: -32000 } });
  });

  it("origin 401: status and body reach the client unchanged; the challenge names the proxy's metadata", async () => {
    const proxy = viaProxy({ ORIGIN_URL: `${GATEWAY_ORIGIN}/auth/mcp` });
    const response = await postJson(proxy, PROXY_URL, rpc(1, "tools/list"));
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toBe(
      'Bearer resource_metadata="http://proxy.test/.well-known/oauth-protected-resource/mcp"',
    );
    expect(await response.json()).toEqual({ error: "invalid_token" });
  });

  it.each([
    ["TOOL_CHANGES", "hold"],
    ["TOOL_RULES", JSON.stringify({ hideAnnotated: { destructiveHint: true } })],
  ])(
    "origin 401 to the listing a call under %s needs: the client is asked to sign in, not to try again",
    async (setting, value) => {
      // The rules can judge the call only from a listing, which the origin refused to the client's token.
      const proxy = viaProxy({
        ORIGIN_URL: `${GATEWAY_ORIGIN}/auth/mcp?map=${crypto.randomUUID()}`,
        [setting]: value,
      });
      const response = await postJson(
        proxy,
        PROXY_URL,
        rpc(1, "tools/call", { name: "files_read", arguments: { path: "a" } }),
        { authorization: "Bearer expired" },
      );
      expect(response.status).toBe(401);
      expect(response.headers.get("www-authenticate")).toBe(
        'Bearer resource_metadata="http://proxy.test/.well-known/oauth-protected-resource/mcp"',
      );
    },
  );

  it("origin 401 cleared by the client's Authorization header", async () => {
    const proxy = viaProxy({ ORIGIN_URL: `${GATEWAY_ORIGIN}/auth/mcp` });
    const response = await postJson(proxy, PROXY_URL, initialize(1), {
      authorization: "Bearer demo-token",
    });
    expect(response.status).toBe(200);
    await response.body?.cancel();
  });
});

describe("configuration", () => {
  it.each([
    [
      { ORIGIN_URL: undefined },
      "ORIGIN_URL is missing; set it to the full URL of the origin's MCP endpoint",
    ],
    [{ ORIGIN_URL: "not a url" }, "ORIGIN_URL must be an absolute http:// or https:// URL"],
    [
      { ORIGIN_URL: "ftp://files.example/mcp" },
      "ORIGIN_URL must be an absolute http:// or https:// URL",
    ],
    [{ MAX_BODY_BYTES: "lots" }, "MAX_BODY_BYTES must be a whole number of bytes"],
    [
      { MAX_BODY_BYTES: String(MAX_HELD_BYTES / 2 + 1) },
      `MAX_BODY_BYTES must be at most ${MAX_HELD_BYTES / 2} bytes`,
    ],
    [{ ORIGIN_TIMEOUT_MS: "0" }, "ORIGIN_TIMEOUT_MS must be at least 1 millisecond"],
    [{ MCP_PATH: "mcp" }, "MCP_PATH must start with /"],
    [
      { NAME_PROFILE: "claude" },
      "NAME_PROFILE must be one of openai, openai-strict, anthropic, bedrock, gemini, portable, mcp",
    ],
    [{ NAME_MAX_LENGTH: "11" }, "NAME_MAX_LENGTH must be at least 12 characters"],
    [{ ARGUMENT_VALIDATION: "strict" }, "ARGUMENT_VALIDATION must be one of off, warn, enforce"],
    [{ MAX_TOOLS: "1" }, "MAX_TOOLS must be at least 2 tools"],
    [
      { TOOL_RULES: '{"tools":{"files.read":{"fixed":[1]}}}' },
      'TOOL_RULES.tools["files.read"].fixed must be a table of argument = value',
    ],
    [{ TOOL_CHANGES: "block" }, "TOOL_CHANGES must be one of allow, log, hold"],
  ])("%o: 500 with -32603 naming the setting, and the log line why", async (vars, says) => {
    const logs = captureLogs();
    const response = await postJson(viaProxy(vars), PROXY_URL, rpc(1, "tools/list"));
    expect(response.status).toBe(500);
    const body = await response.json<{ error: { code: number; message: string } }>();
    expect(body).toMatchObject({ id: null, error: { code: -32603 } });
    const setting = /^[A-Z_]+/.exec(says)?.[0];
    expect(body.error.message).toBe(
      `Proxy misconfigured: ${setting} is invalid (the config_invalid log line says why)`,
    );
    const [line] = logs.events("config_invalid") as unknown as Array<{
      problems: Array<{ setting: string; problem: string }>;
    }>;
    logs.restore();
    expect(line?.problems.map(({ setting, problem }) => `${setting} ${problem}`)).toEqual([says]);
  });

  it("never shows the value of a setting, which may hold a credential", async () => {
    const secret = "s3cr3t-token";
    const response = await postJson(
      viaProxy({ ORIGIN_URL: `ftp://user:${secret}@files.example/mcp?key=${secret}` }),
      PROXY_URL,
      rpc(1, "tools/list"),
    );
    expect(response.status).toBe(500);
    expect(await response.text()).not.toContain(secret);
  });
});

describe("DNS-rebinding protection (ALLOWED_HOSTS)", () => {
  const local = viaProxy({
    ORIGIN_URL: `${GATEWAY_ORIGIN}/mcp`,
    ALLOWED_HOSTS: "localhost,127.0.0.1",
  });

  it.each([
    ["a foreign Host", "http://evil.example/mcp", {}, "host evil.example"],
    [
      "a foreign Origin",
      "http://localhost:8787/mcp",
      { origin: "http://evil.example" },
      "origin http://evil.example",
    ],
    [
      "the opaque Origin of a sandboxed frame or a file",
      "http://localhost:8787/mcp",
      { origin: "null" },
      "origin null",
    ],
    [
      "an allowed host's Origin on another port (another local app)",
      "http://localhost:8787/mcp",
      { origin: "http://localhost:9999" },
      "origin http://localhost:9999",
    ],
  ])("refuses %s with 403, without calling the origin", async (_, url, headers, says) => {
    const trace = newTrace();
    const response = await postJson(local, `${url}?trace=${trace}`, rpc(1, "ping"), headers);
    expect(response.status).toBe(403);
    expect(await response.json()).toMatchObject({
      error: { code: -32600, message: `Forbidden: ${says} is not in ALLOWED_HOSTS` },
    });
    expect(await receivedByOrigin(trace)).toEqual([]);
  });

  it("accepts an allowed host, with or without an Origin of its own port", async () => {
    const variants: Record<string, string>[] = [{}, { origin: "http://127.0.0.1:8787" }];
    for (const headers of variants) {
      const response = await local("http://127.0.0.1:8787/healthz", { headers });
      expect(response.status).toBe(200);
    }
  });

  it("accepts an Origin on another port where ALLOWED_HOSTS names that port", async () => {
    const withApp = viaProxy({
      ORIGIN_URL: `${GATEWAY_ORIGIN}/mcp`,
      ALLOWED_HOSTS: "localhost,localhost:6274",
    });
    const response = await withApp("http://localhost:8787/healthz", {
      headers: { origin: "http://localhost:6274" },
    });
    expect(response.status).toBe(200);
  });

  it("refuses a POST that is not JSON with 415, so a page cannot send one without a preflight", async () => {
    for (const contentType of ["text/plain", "application/x-www-form-urlencoded", ""]) {
      const trace = newTrace();
      const response = await local(`http://localhost:8787/mcp?trace=${trace}`, {
        method: "POST",
        headers: contentType ? { "content-type": contentType } : {},
        body: JSON.stringify(rpc(1, "ping")),
      });
      expect(response.status, contentType).toBe(415);
      expect(await response.json()).toMatchObject({
        error: {
          code: -32600,
          message:
            "Unsupported Media Type: a POST to the MCP endpoint has Content-Type: application/json",
        },
      });
      expect(await receivedByOrigin(trace)).toEqual([]);
    }
    const json = await postJson(local, "http://localhost:8787/mcp", rpc(1, "ping"), {
      "content-type": "Application/JSON; charset=utf-8",
    });
    expect(json.status).not.toBe(415);
    await json.body?.cancel();
  });

  it("refuses a POST body labeled with a Content-Encoding with 415: the proxy and the origin would read it two ways", async () => {
    // The proxy checks the bytes as they came; an origin that decodes the labeled coding first
    // (Express's json parser does) would act on other bytes than the ones checked.
    for (const encoding of ["gzip", "br", "deflate", "identity, gzip"]) {
      const trace = newTrace();
      const response = await local(`http://localhost:8787/mcp?trace=${trace}`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "content-encoding": encoding,
        },
        body: JSON.stringify(rpc(1, "ping")),
      });
      expect(response.status, encoding).toBe(415);
      expect(response.headers.get("accept-encoding"), encoding).toBe("identity");
      expect(await response.json()).toMatchObject({
        error: {
          code: -32600,
          message:
            "Unsupported Media Type: a POST to the MCP endpoint is sent uncompressed, with no Content-Encoding but identity",
        },
      });
      expect(await receivedByOrigin(trace)).toEqual([]);
    }
    const trace = newTrace();
    const identity = await postJson(
      local,
      `http://localhost:8787/mcp?trace=${trace}`,
      rpc(1, "ping"),
      {
        "content-encoding": "Identity",
      },
    );
    expect(identity.status).not.toBe(415);
    await identity.body?.cancel();
    expect(await receivedByOrigin(trace)).toHaveLength(1);
  });
});

describe("methods", () => {
  it.each(["PUT", "PATCH", "HEAD"])("%s on the endpoint: 405 with Allow", async (method) => {
    const response = await throughGateway(PROXY_URL, { method });
    expect(response.status).toBe(405);
    expect(response.headers.get("allow")).toBe("GET, POST, DELETE, OPTIONS");
    // HEAD's answer has no body.
    if (method !== "HEAD") {
      expect(await response.json()).toMatchObject({ error: { code: -32600 } });
    }
  });
});

const NOT_FOUND = "Not found: neither the MCP endpoint (MCP_PATH) nor a route of the proxy";

describe("paths the proxy does not serve", () => {
  it.each([
    ["a path beside the endpoint", "GET", "/mcpx", NOT_FOUND],
    ["a profile that is none", "POST", "/mcp/claude", NOT_FOUND],
    [
      "relay mode's consent page",
      "GET",
      "/authorize",
      "Sign-in pages exist in broker and gate mode only",
    ],
    [
      "relay mode's callback",
      "GET",
      "/oauth/callback",
      "Sign-in pages exist in broker and gate mode only",
    ],
    ["sign-out outside gate mode", "POST", "/oauth/sign-out", "Sign-out exists in gate mode only"],
  ])("%s: 404, the origin not called", async (_, method, path, error) => {
    const trace = newTrace();
    const response = await throughGateway(`http://proxy.test${path}?trace=${trace}`, { method });
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ error });
    expect(await receivedByOrigin(trace)).toEqual([]);
  });

  it("names the setting, never its value: a path an operator keeps to themselves is not told", async () => {
    const proxy = viaProxy({ MCP_PATH: "/private-7f3a9c/mcp" });
    for (const path of ["/mcp", "/", "/private-7f3a9c"]) {
      const response = await proxy(`http://proxy.test${path}`);
      expect(response.status).toBe(404);
      expect(await response.json()).toEqual({ error: NOT_FOUND });
    }
  });
});

describe("each failure the proxy answers is logged", () => {
  let logs: ReturnType<typeof captureLogs>;
  beforeEach(() => {
    logs = captureLogs();
  });
  afterEach(() => logs.restore());

  it("an origin that cannot be reached, or does not answer in time", async () => {
    await postJson(viaProxy({ ORIGIN_URL: `${CLOSED_ORIGIN}/mcp` }), PROXY_URL, rpc(1, "ping"));
    expect(logs.events("origin_unreachable")).toMatchObject([
      { origin: new URL(CLOSED_ORIGIN).host, method: "POST" },
    ]);
    const slow = viaProxy({
      ORIGIN_URL: `${GATEWAY_ORIGIN}/delay/5000/mcp`,
      ORIGIN_TIMEOUT_MS: "50",
    });
    await postJson(slow, PROXY_URL, rpc(2, "ping"));
    expect(logs.events("origin_timeout")).toMatchObject([{ method: "POST" }]);
  });

  it("an origin that cannot be reached: the runtime's message names it by its host, never ORIGIN_URL's path or query, which may hold a key", async () => {
    // workerd's fetch quotes the URL it was given ("Fetch API cannot load: …").
    const origin = `${CLOSED_ORIGIN}/t/KEY-IN-PATH/mcp?api_key=KEY-IN-QUERY`;
    const fetched = vi.spyOn(globalThis, "fetch").mockImplementation(async (input) => {
      throw new TypeError(`Fetch API cannot load: ${new Request(input).url} (or ${origin})`);
    });
    try {
      const response = await postJson(viaProxy({ ORIGIN_URL: origin }), PROXY_URL, rpc(1, "ping"));
      expect(response.status).toBe(502);
    } finally {
      fetched.mockRestore();
    }
    const { host, origin: named } = new URL(CLOSED_ORIGIN);
    expect(logs.events("origin_unreachable")).toEqual([
      {
        event: "origin_unreachable",
        origin: host,
        method: "POST",
        "mcp.method.name": "ping",
        detail: `Fetch API cannot load: ${named}/… (or ${named}/…)`,
      },
    ]);
    expect(JSON.stringify(logs.lines())).not.toContain("KEY-IN");
  });

  it("a call the origin does not answer in time, or cannot be reached for: the line names the call's tool and the time allowed", async () => {
    // `files.read`, illegal under `openai`: sent on as it came, no listing asked for first.
    const call = rpc(4, "tools/call", { name: "files.read", arguments: { path: "README.md" } });
    const slow = viaProxy({
      ORIGIN_URL: `${GATEWAY_ORIGIN}/delay/5000/mcp`,
      ORIGIN_TIMEOUT_MS: "50",
    });
    expect((await postJson(slow, PROXY_URL, call)).status).toBe(504);
    // The engineer paged for a tool that "sometimes does not work" finds its timeouts by its name.
    expect(logs.events("origin_timeout")).toEqual([
      {
        event: "origin_timeout",
        origin: new URL(GATEWAY_ORIGIN).host,
        method: "POST",
        "mcp.method.name": "tools/call",
        "gen_ai.tool.name": "files.read",
        detail: "no answer within 50 ms",
      },
    ]);
    const closed = viaProxy({ ORIGIN_URL: `${CLOSED_ORIGIN}/mcp` });
    expect((await postJson(closed, PROXY_URL, call)).status).toBe(502);
    expect(logs.events("origin_unreachable")).toEqual([
      {
        event: "origin_unreachable",
        origin: new URL(CLOSED_ORIGIN).host,
        method: "POST",
        "mcp.method.name": "tools/call",
        "gen_ai.tool.name": "files.read",
        detail: expect.any(String),
      },
    ]);
  });

  it("an origin that answers a call with its own 5xx: the answer as it came, and a line naming the call's tool", async () => {
    const host = new URL(GATEWAY_ORIGIN).host;
    // `files.read`, illegal under `openai`: sent on as it came, no listing asked for first.
    const call = rpc(5, "tools/call", { name: "files.read", arguments: { path: "SECRET-PATH" } });
    const broken = (status: number) =>
      viaProxy({ ORIGIN_URL: `${GATEWAY_ORIGIN}/status/${status}/mcp` });
    for (const status of [500, 502, 503]) {
      const response = await postJson(broken(status), PROXY_URL, call);
      expect(response.status).toBe(status);
      // The origin's body, unread and unchanged (test/fixtures/node/origin-gateway.ts `/status/`).
      expect(await response.text()).toBe(
        '{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"broken"}}',
      );
    }
    // Without call analytics, the engineer paged for a tool that "sometimes does not work" finds
    // its failures by its name, as its timeouts.
    expect(logs.events("origin_error")).toEqual(
      [500, 502, 503].map((status) => ({
        event: "origin_error",
        origin: host,
        method: "POST",
        status,
        "mcp.method.name": "tools/call",
        "gen_ai.tool.name": "files.read",
      })),
    );
    // A batch names no one method or tool; a GET, none.
    await postJson(broken(500), PROXY_URL, [call, rpc(6, "ping")]);
    await (
      await broken(504)(PROXY_URL, { headers: { accept: "text/event-stream" } })
    ).body?.cancel();
    expect(logs.events("origin_error").slice(3)).toEqual([
      { event: "origin_error", origin: host, method: "POST", status: 500 },
      { event: "origin_error", origin: host, method: "GET", status: 504 },
    ]);
    // A 4xx is the origin's word on the request (a session it no longer has, a client over its
    // rate), for the client to act on: no line (docs/logs.md).
    for (const status of [400, 404, 429]) {
      expect((await postJson(broken(status), PROXY_URL, call)).status).toBe(status);
    }
    expect(logs.events("origin_error")).toHaveLength(5);
    expect(JSON.stringify(logs.lines())).not.toContain("SECRET");
  });

  it("a sign-in discovery document the origin answers with its own 5xx: relayed as it came, and a line naming the document", async () => {
    const body = '{"error":"SECRET-BODY of the origin"}';
    const origin = await scriptedOrigin({
      "*": { status: 503, headers: [["Content-Type", "application/json"]], body },
    });
    const key = new URL(origin.originUrl).searchParams.get("script");
    const proxy = viaProxy({ ORIGIN_URL: origin.originUrl });
    const response = await proxy(
      `http://proxy.test/.well-known/oauth-authorization-server/tenant?script=${key}`,
    );
    // The origin's answer reaches the client unchanged: its status and its body.
    expect(response.status).toBe(503);
    expect(await response.text()).toBe(body);
    // The engineer whose clients "cannot sign in" finds the origin's failure, as on the MCP endpoint.
    expect(logs.events("origin_error")).toEqual([
      {
        event: "origin_error",
        origin: new URL(GATEWAY_ORIGIN).host,
        method: "GET",
        status: 503,
        document: "oauth-authorization-server",
      },
    ]);
    // A 4xx is the origin's word on the request: no line.
    await origin.change({ "*": { status: 404, headers: [], body: "" } });
    const missing = await proxy(`http://proxy.test/.well-known/openid-configuration?script=${key}`);
    expect(missing.status).toBe(404);
    await missing.body?.cancel();
    expect(logs.events("origin_error")).toHaveLength(1);
    expect(JSON.stringify(logs.lines())).not.toContain("SECRET");
  });

  it("an origin body that cannot be read", async () => {
    const session = await openSession(
      viaProxy({ ORIGIN_URL: `${GATEWAY_ORIGIN}/mcp?json` }),
      PROXY_URL,
    );
    const proxy = viaProxy({ ORIGIN_URL: `${GATEWAY_ORIGIN}/mislabeled/mcp?json` });
    await postJson(proxy, PROXY_URL, rpc(3, "tools/list"), session);
    expect(logs.events("origin_body_unreadable")).toMatchObject([{ status: 200 }]);
  });

  it("a setting that is wrong, by name and never by value", async () => {
    await postJson(viaProxy({ MAX_BODY_BYTES: "s3cret" }), PROXY_URL, rpc(1, "ping"));
    expect(logs.events("config_invalid")).toEqual([
      {
        event: "config_invalid",
        problems: [{ setting: "MAX_BODY_BYTES", problem: "must be a whole number of bytes" }],
      },
    ]);
  });

  it("a host, and a path, the proxy does not answer", async () => {
    const local = viaProxy({ ORIGIN_URL: `${GATEWAY_ORIGIN}/mcp`, ALLOWED_HOSTS: "localhost" });
    await postJson(local, "http://evil.example/mcp", rpc(1, "ping"));
    expect(logs.events("host_refused")).toEqual([
      { event: "host_refused", refused: "host evil.example" },
    ]);
    const response = await postJson(
      throughGateway,
      "http://proxy.test/mcp%2fgemini",
      rpc(1, "ping"),
    );
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      error: { code: -32600, message: expect.stringContaining("an encoded /, \\ or %") },
    });
    expect(logs.events("path_refused")).toEqual([
      { event: "path_refused", reason: "an encoded /, \\ or %" },
    ]);
  });

  it("a request refused before the origin sees it: what the client was told, and no value its body held", async () => {
    const proxy = viaProxy({
      ORIGIN_URL: `${GATEWAY_ORIGIN}/mcp`,
      MAX_BODY_BYTES: "4096",
      MAX_BATCH_MESSAGES: "4",
    });
    const call = rpc(1, "tools/call", { name: "files_read", arguments: { path: "SECRET-PATH" } });
    const send = (body: string, headers: Record<string, string> = {}) =>
      postJson(proxy, PROXY_URL, body, { "mcp-protocol-version": "2025-11-25", ...headers });
    const statuses = [
      await send(JSON.stringify(call).slice(0, -2)),
      await send(JSON.stringify(call), { "content-type": "text/plain" }),
      await send(JSON.stringify(Array.from({ length: 5 }, (_, i) => ({ ...call, id: i })))),
      await send(JSON.stringify({ ...call, params: { name: "SECRET-PATH".repeat(400) } })),
      await send(JSON.stringify(call), { "mcp-method": "tools/list" }),
    ].map((response) => response.status);
    expect(statuses).toEqual([400, 415, 400, 413, 400]);
    expect(logs.events("request_refused")).toEqual([
      {
        event: "request_refused",
        status: 400,
        code: -32700,
        reason: "Parse error: the body is not valid JSON",
      },
      {
        event: "request_refused",
        status: 415,
        code: -32600,
        reason:
          "Unsupported Media Type: a POST to the MCP endpoint has Content-Type: application/json",
      },
      {
        event: "request_refused",
        status: 400,
        code: -32600,
        reason:
          "Invalid Request: a batch holds at most 4 messages (MAX_BATCH_MESSAGES); this one holds 5",
      },
      {
        event: "request_refused",
        status: 413,
        code: -32600,
        reason: "Request body exceeds the limit of 4096 bytes",
      },
      {
        event: "request_refused",
        status: 400,
        code: -32020,
        reason: "Header mismatch: the Mcp-Method header does not match the request body",
      },
    ]);
    expect(JSON.stringify(logs.lines())).not.toContain("SECRET");
  });

  /** A proxy whose runtime refuses background work with `message`, and what it answered a first listing. */
  async function refusingWork(message: (origin: string) => string) {
    const origin = freshOrigin(undefined, "&json");
    // A runtime that refuses background work, so storing a first listing (answered as JSON,
    // renamed before the answer goes) throws where no code expects it to.
    const ctx = {
      waitUntil: () => {
        throw new Error(message(origin));
      },
      passThroughOnException: () => {},
      props: {},
    } as unknown as ExecutionContext;
    const session = await openSession(viaProxy({ ORIGIN_URL: origin }), PROXY_URL);
    const testEnv = tenantEnv({ ORIGIN_URL: origin, ALLOWED_HOSTS: "" });
    const app = createApp();
    const init = await app.fetch(
      new Request(PROXY_URL, {
        method: "POST",
        headers: {
          ...session,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
        },
        body: JSON.stringify(rpc(1, "tools/list")),
      }) as Parameters<typeof app.fetch>[0],
      testEnv,
      ctx,
    );
    return { init, origin };
  }

  it("a bug: 500 with -32603, and a line saying what failed", async () => {
    const { init } = await refusingWork(() => "waitUntil refused (test)");
    expect(init.status).toBe(500);
    expect(await init.json()).toMatchObject({
      error: { code: -32603, message: "Internal error in the proxy" },
    });
    expect(logs.events("internal_error")).toEqual([
      { event: "internal_error", error: "waitUntil refused (test)" },
    ]);
  });

  it("a bug whose message quotes ORIGIN_URL: the line names the origin by its host, never its path or query", async () => {
    const { init, origin } = await refusingWork((origin) => `refused for ${origin} (test)`);
    expect(init.status).toBe(500);
    const host = new URL(origin).host;
    expect(logs.events("internal_error")).toEqual([
      { event: "internal_error", error: `refused for http://${host}/… (test)` },
    ]);
    expect(JSON.stringify(logs.lines())).not.toContain(new URL(origin).search.slice(1, 20));
  });
});
