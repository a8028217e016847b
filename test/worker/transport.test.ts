import { describe, expect, it, vi } from "vitest";
import packageJson from "../../package.json";
import { DEMO_NAMES } from "../helpers/demo-names";
import { captureLogs } from "../helpers/logs";
import { initialize, messagesOf, openSession, postJson, rpc } from "../helpers/mcp";
import {
  DEMO_ORIGIN,
  GATEWAY_ORIGIN,
  newTrace,
  PROXY_URL,
  receivedByOrigin,
  viaProxy,
} from "../helpers/proxy";
import { scriptedOrigin } from "../helpers/scripted-origin";

const throughGateway = viaProxy({ ORIGIN_URL: `${GATEWAY_ORIGIN}/mcp` });

describe("the MCP endpoint", () => {
  it("relays initialize and tool calls to the origin and back", async () => {
    const proxy = viaProxy();
    const session = await openSession(proxy, PROXY_URL);
    expect(session["mcp-session-id"]).toMatch(/^[0-9a-f]{64}$/);

    const response = await postJson(
      proxy,
      PROXY_URL,
      rpc(1, "tools/call", { name: "get-weather", arguments: { city: "Oslo" } }),
      session,
    );
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    const [message] = await messagesOf(response);
    expect(message).toMatchObject({
      id: 1,
      result: { structuredContent: { tool: "get-weather", arguments: { city: "Oslo" } } },
    });
  });

  it("forwards the body byte for byte and keeps the query string", async () => {
    const trace = newTrace();
    const body = `{ "jsonrpc" : "2.0", "id": "a-1",\n "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}} }`;
    const response = await postJson(throughGateway, `${PROXY_URL}?trace=${trace}&tenant=x`, body);
    expect(response.status).toBe(200);
    await response.body?.cancel();

    const [received] = await receivedByOrigin(trace);
    expect(received?.path).toBe(`/mcp?trace=${trace}&tenant=x`);
    expect(received?.body).toBe(body);
  });

  it.each([
    ["tenant", "tenant"],
    ["tenant", "Tenant"],
    ["tenant", "TENANT"],
    ["tenant", "tenant[]"],
    ["tenant", "tenant[0]"],
    ["tenant", "tenant%5B%5D"],
    ["tenant", "t%65nant"],
    ["user_id", "user.id"],
    ["user_id", "user+id"],
    // PHP reads a `[` that no `]` closes as `_`: `user[id` is `user_id`.
    ["user_id", "user[id"],
    ["user_id", "user%5Bid"],
    ["user_id", "USER[ID"],
  ])(
    "refuses a query parameter ORIGIN_URL sets (%s as %s): a client cannot change the operator's",
    async (set, sent) => {
      // Origins read a parameter given twice as the first, the last or both: Express, PHP, ASP.NET.
      const proxy = viaProxy({ ORIGIN_URL: `${GATEWAY_ORIGIN}/mcp?${set}=acme` });
      const trace = newTrace();
      const response = await postJson(
        proxy,
        `${PROXY_URL}?trace=${trace}&${sent}=globex`,
        initialize(1),
      );
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({
        error: { code: -32600, message: expect.stringContaining("ORIGIN_URL") },
      });
      expect(await receivedByOrigin(trace)).toEqual([]);
    },
  );

  it.each([
    [
      "a key written twice",
      '"method":"ping","method":"tools/call","params":{"name":"get-weather"}',
      "method",
    ],
    ["a key in another case", '"method":"ping","METHOD":"tools/call"', "METHOD"],
    [
      "a key in another case in params",
      '"method":"tools/call","params":{"name":"get-weather","Name":"hidden.tool"}',
      "Name",
    ],
    [
      "a key Go folds to another (ſ for s)",
      '"method":"tools/call","params":{"name":"get-weather"},"paramſ":{"name":"hidden.tool"}',
      "paramſ",
    ],
    [
      "a key with a NUL after it (the Go SDK 1.3.1–1.4.0 reads it as the key)",
      '"method":"tools/call","params":{"name":"get-weather","name\\u0000":"hidden.tool"}',
      "name\u0000",
    ],
    [
      "an argument written twice",
      '"method":"tools/call","params":{"name":"get-weather","arguments":{"city":"Oslo","city":"Paris"}}',
      "city",
    ],
  ])("refuses a body with %s: readers disagree on which counts", async (_, members, key) => {
    // JSON.parse keeps the last; some readers the first; Go's encoding/json any case of a field's name.
    const trace = newTrace();
    const response = await postJson(
      throughGateway,
      `${PROXY_URL}?trace=${trace}`,
      `{"jsonrpc":"2.0","id":1,${members}}`,
    );
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      error: { code: -32600, message: expect.stringContaining(JSON.stringify(key)) },
    });
    expect(await receivedByOrigin(trace)).toEqual([]);
  });

  it.each([
    ["tools/call", '{"name":"secret.admin","arguments":{}}'],
    ["tools/list", "{}"],
  ])(
    "refuses a %s written as a notification, which the proxy would pass unread",
    async (method, params) => {
      // Without an id the proxy neither renames nor refuses it, while an origin might still act on it.
      const trace = newTrace();
      const body = `{"jsonrpc":"2.0","method":"${method}","params":${params}}`;
      for (const sent of [body, `[${body}]`]) {
        const response = await postJson(throughGateway, `${PROXY_URL}?trace=${trace}`, sent);
        expect(response.status).toBe(400);
        expect(await response.json()).toMatchObject({
          error: { code: -32600, message: expect.stringContaining(`${method} is a request`) },
        });
      }
      expect(await receivedByOrigin(trace)).toEqual([]);
    },
  );

  it.each([
    [
      "Method",
      '"Method":"tools/call","Params":{"name":"secret.admin"},"error":{"code":0,"message":"x"}',
    ],
    ["METHOD", '"METHOD":"tools/call","params":{"name":"secret.admin"},"result":{}'],
    [
      "method\u0000",
      '"method\\u0000":"tools/call","params":{"name":"secret.admin"},"error":{"code":0,"message":"x"}',
    ],
    ["Params", '"method":"tools/call","Params":{"name":"secret.admin"}'],
  ])(
    "refuses a message with %s, which the proxy reads as no JSON-RPC member and lenient readers as one",
    async (key, members) => {
      // Read as an answer, it passed unread; the Go SDK before CVE-2026-27896's fix takes `Method`
      // for `method` and reads a message with a method as a request, and mcp-go one without a
      // `result`: a call to a tool the rules hide, or with arguments they fix, ran at the origin.
      const trace = newTrace();
      const body = `{"jsonrpc":"2.0","id":1,${members}}`;
      for (const sent of [body, `[{"jsonrpc":"2.0","id":7,"method":"ping"},${body}]`]) {
        const response = await postJson(throughGateway, `${PROXY_URL}?trace=${trace}`, sent);
        expect(response.status).toBe(400);
        expect(await response.json()).toMatchObject({
          error: { code: -32600, message: expect.stringContaining(JSON.stringify(key)) },
        });
      }
      expect(await receivedByOrigin(trace)).toEqual([]);
    },
  );

  it("refuses a body labeled with a charset other than UTF-8, which the origin may decode by it", async () => {
    const ping = async (contentType: string) => {
      const trace = newTrace();
      const response = await postJson(
        throughGateway,
        `${PROXY_URL}?trace=${trace}`,
        '{"jsonrpc":"2.0","id":1,"method":"ping"}',
        { "content-type": contentType },
      );
      const body = await response.text();
      return { status: response.status, body, received: await receivedByOrigin(trace) };
    };
    for (const contentType of [
      "application/json; charset=iso-8859-1",
      'application/json;charset="UTF-16"',
      "application/json; charset=utf-8; charset=latin1",
    ]) {
      const { status, body, received } = await ping(contentType);
      expect([status, received], contentType).toEqual([415, []]);
      expect(JSON.parse(body)).toMatchObject({
        error: { message: expect.stringContaining("UTF-8") },
      });
    }
    for (const contentType of [
      'application/json; charset="utf-8"',
      "application/json; Charset=UTF-8",
    ]) {
      expect((await ping(contentType)).received, contentType).toHaveLength(1);
    }
  });

  it.each([
    // The Encoding Standard's other names of UTF-8, which TextDecoder reads as UTF-8.
    "application/json; charset=unicode11utf8",
    "application/json; charset=unicode20utf8",
    "application/json; charset=X-Unicode20UTF8",
    // A parameter with no value (`charsets` is one letter past `charset`) names no charset.
    "application/json; charsets",
    "application/json; charsetx",
  ])("forwards a body whose Content-Type names no charset but UTF-8: %s", async (contentType) => {
    const trace = newTrace();
    const response = await postJson(
      throughGateway,
      `${PROXY_URL}?trace=${trace}`,
      '{"jsonrpc":"2.0","id":1,"method":"ping"}',
      { "content-type": contentType },
    );
    await response.body?.cancel();
    expect(response.status).not.toBe(415);
    expect(await receivedByOrigin(trace)).toHaveLength(1);
  });

  it("forwards a body whose objects each write a key once, in one case, as it came", async () => {
    const trace = newTrace();
    const body = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"Name":{}},"clientInfo":{"name":"t","version":"1"}}}`;
    const response = await postJson(throughGateway, `${PROXY_URL}?trace=${trace}`, body);
    expect(response.status).toBe(200);
    await response.body?.cancel();
    const [received] = await receivedByOrigin(trace);
    expect(received?.body).toBe(body);
  });

  it("adds the client's other query parameters to those ORIGIN_URL sets", async () => {
    const proxy = viaProxy({ ORIGIN_URL: `${GATEWAY_ORIGIN}/mcp?tenant=acme` });
    const trace = newTrace();
    const response = await postJson(proxy, `${PROXY_URL}?trace=${trace}&tenants=x`, initialize(1));
    expect(response.status).toBe(200);
    await response.body?.cancel();
    const [received] = await receivedByOrigin(trace);
    expect(received?.path).toBe(`/mcp?tenant=acme&trace=${trace}&tenants=x`);
  });

  it("adds the client's query as it was written, and keeps ORIGIN_URL's as the operator wrote it", async () => {
    // Read and written again as a form, `%20` was `+`, a bare `flag` was `flag=`, `/`, `:` and
    // `~` were escaped, `%2b` was `%2B`, and `%E9` (no UTF-8) was `%EF%BF%BD`: a signature over
    // the query, or a value in another encoding, no longer what was sent.
    const query = "q=x%20y&on&latin=%E9&u=/a:b~&s=%2b";
    for (const originQuery of ["", "?tenant=acme&key=a%20b&flag"]) {
      const proxy = viaProxy({ ORIGIN_URL: `${GATEWAY_ORIGIN}/mcp${originQuery}` });
      const trace = newTrace();
      const response = await postJson(proxy, `${PROXY_URL}?trace=${trace}&${query}`, initialize(1));
      expect(response.status).toBe(200);
      await response.body?.cancel();
      const [received] = await receivedByOrigin(trace);
      const operators = originQuery === "" ? "?" : `${originQuery}&`;
      expect(received?.path).toBe(`/mcp${operators}trace=${trace}&${query}`);
    }
  });

  it("escapes a `;` in the client's query: an origin that splits on it would read a parameter ORIGIN_URL sets", async () => {
    // Python before 3.9.2 and Go before 1.17 read `;` as `&`: `x=1;tenant=globex` sets `tenant`,
    // which the proxy, reading `&` alone, takes for part of `x`.
    const proxy = viaProxy({ ORIGIN_URL: `${GATEWAY_ORIGIN}/mcp?tenant=acme` });
    const trace = newTrace();
    const response = await postJson(
      proxy,
      `${PROXY_URL}?trace=${trace}&x=1;tenant=globex`,
      initialize(1),
    );
    expect(response.status).toBe(200);
    await response.body?.cancel();
    const [received] = await receivedByOrigin(trace);
    expect(received?.path).toBe(`/mcp?tenant=acme&trace=${trace}&x=1%3Btenant=globex`);
  });

  it("passes end-to-end headers to the origin and drops hop-by-hop ones", async () => {
    const trace = newTrace();
    const response = await postJson(throughGateway, `${PROXY_URL}?trace=${trace}`, initialize(1), {
      authorization: "Bearer abc.def",
      "mcp-protocol-version": "2025-11-25",
      "last-event-id": "evt-7",
      "x-tenant": "acme",
      connection: "x-per-hop",
      "x-per-hop": "1",
      "keep-alive": "timeout=5",
      "proxy-authorization": "Basic Zm9vOmJhcg==",
    });
    await response.body?.cancel();

    const [received] = await receivedByOrigin(trace);
    expect(received?.headers).toMatchObject({
      authorization: "Bearer abc.def",
      "mcp-protocol-version": "2025-11-25",
      "last-event-id": "evt-7",
      "x-tenant": "acme",
      accept: "application/json, text/event-stream",
    });
    expect(received?.headers).not.toHaveProperty("x-per-hop");
    expect(received?.headers).not.toHaveProperty("keep-alive");
    expect(received?.headers).not.toHaveProperty("proxy-authorization");
  });

  it("passes the origin's response headers back, Mcp-Session-Id included", async () => {
    const proxy = viaProxy();
    const response = await postJson(proxy, PROXY_URL, initialize(1));
    await response.body?.cancel();
    expect(response.headers.get("mcp-session-id")).toMatch(/^[0-9a-f]{64}$/);
    expect(response.headers.get("cache-control")).toBe("no-cache, no-transform");
  });

  it("answers an origin's redirect itself: its Location names ORIGIN_URL, and the key its query holds", async () => {
    // Starlette's answer for FastMCP mounted at /mcp/: the URL asked for, with a slash, query and all.
    const key = "sk_live_redirected";
    const proxy = viaProxy({ ORIGIN_URL: `${GATEWAY_ORIGIN}/slash/mcp?key=${key}` });
    const logs = captureLogs();
    const answers = [
      await postJson(proxy, PROXY_URL, initialize(7)),
      await proxy(PROXY_URL, { headers: { accept: "text/event-stream" } }),
      await proxy(PROXY_URL, { method: "DELETE" }),
    ];
    const bodies = [];
    for (const response of answers) {
      const text = await response.text();
      expect(response.status).toBe(502);
      expect(response.headers.has("location")).toBe(false);
      expect(text).not.toContain(key);
      expect(text).not.toContain("/slash/");
      bodies.push(JSON.parse(text));
    }
    expect(bodies[0]).toMatchObject({ id: 7, error: { code: -32000 } });
    const host = new URL(GATEWAY_ORIGIN).host;
    expect(logs.events("origin_redirected")).toEqual(
      Array(3).fill({ event: "origin_redirected", origin: host, status: 307, to: host }),
    );
    logs.restore();
  });

  it.each([600, 999])(
    "answers an origin's status %i itself, which no HTTP response may carry: a bad gateway, not an error of the proxy's",
    async (status) => {
      const proxy = viaProxy({ ORIGIN_URL: `${GATEWAY_ORIGIN}/status/${status}/mcp` });
      const logs = captureLogs();
      const answers = [
        await postJson(proxy, PROXY_URL, rpc(7, "tools/list")),
        await postJson(proxy, PROXY_URL, rpc(8, "ping")),
        await proxy(PROXY_URL, { headers: { accept: "text/event-stream" } }),
        await proxy(PROXY_URL, { method: "DELETE" }),
      ];
      const bodies = [];
      for (const response of answers) {
        expect(response.status).toBe(502);
        bodies.push(await response.json());
      }
      expect(bodies.slice(0, 2)).toMatchObject([
        { id: 7, error: { code: -32000, message: expect.stringContaining(`HTTP ${status}`) } },
        { id: 8, error: { code: -32000 } },
      ]);
      expect(logs.events("internal_error")).toEqual([]);
      expect(logs.events("origin_unreachable")).toHaveLength(4);
      logs.restore();
    },
  );

  it("leaves out the origin's headers that would speak for the proxy's whole host or domain", async () => {
    const proxy = viaProxy({ ORIGIN_URL: `${GATEWAY_ORIGIN}/host-headers/mcp` });
    const response = await postJson(proxy, PROXY_URL, initialize(1));
    await response.body?.cancel();
    expect(response.status).toBe(200);
    // Clear-Site-Data "cookies" clears the cookies of every host of the proxy's domain.
    expect(response.headers.has("clear-site-data")).toBe(false);
    expect(response.headers.has("alt-svc")).toBe(false);
    expect(response.headers.getSetCookie()).toEqual(["seen=1; Path=/"]);
    expect(response.headers.get("mcp-session-id")).toMatch(/^[0-9a-f]{64}$/);
  });

  it("drops what the origin's Connection lists, though it lists what no header is named", async () => {
    // `Headers.has` throws for a name that is no token: the answer was the proxy's own 500.
    const proxy = viaProxy({ ORIGIN_URL: `${GATEWAY_ORIGIN}/connection/mcp` });
    const response = await postJson(proxy, PROXY_URL, initialize(1));
    await response.body?.cancel();
    expect(response.status).toBe(200);
    expect(response.headers.has("x-hop")).toBe(false);
  });

  it("answers as the origin did though its reason phrase holds a tab, which RFC 9112 allows and a Response built anew refuses", async () => {
    // Each answer a Response the proxy builds anew from the origin's: a listing renamed, a header
    // left out, a cookie's Domain left out, a challenge naming the proxy's metadata.
    const origin = await scriptedOrigin({
      "tools/list": {
        status: 200,
        reason: "All\tgood",
        headers: [["Content-Type", "application/json"]],
        body: '{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"files.read","inputSchema":{"type":"object"}}]}}',
      },
      ping: {
        status: 200,
        reason: "All\tgood",
        headers: [
          ["Content-Type", "application/json"],
          ["Alt-Svc", 'h2=":443"'],
        ],
        body: '{"jsonrpc":"2.0","id":2,"result":{}}',
      },
      "notifications/initialized": {
        status: 202,
        reason: "Taken\tin",
        headers: [["Set-Cookie", "seen=1; Domain=proxy.test"]],
        body: "",
      },
      "*": {
        status: 401,
        reason: "Sign\tin",
        headers: [
          ["Content-Type", "application/json"],
          [
            "WWW-Authenticate",
            `Bearer resource_metadata="${GATEWAY_ORIGIN}/.well-known/oauth-protected-resource/mcp"`,
          ],
        ],
        body: '{"error":"invalid_token"}',
      },
    });
    const proxy = viaProxy({ ORIGIN_URL: origin.originUrl });
    const logs = captureLogs();
    const listed = await postJson(proxy, PROXY_URL, rpc(1, "tools/list"));
    expect(listed.status).toBe(200);
    expect(await listed.json()).toMatchObject({
      id: 1,
      result: { tools: [{ name: expect.stringMatching(/^files_read_/) }] },
    });
    const pinged = await postJson(proxy, PROXY_URL, rpc(2, "ping"));
    expect(pinged.status).toBe(200);
    expect(pinged.headers.has("alt-svc")).toBe(false);
    expect(await pinged.json()).toEqual({ jsonrpc: "2.0", id: 2, result: {} });
    const noted = await postJson(proxy, PROXY_URL, {
      jsonrpc: "2.0",
      method: "notifications/initialized",
    });
    expect(noted.status).toBe(202);
    expect(noted.headers.getSetCookie()).toEqual(["seen=1"]);
    const refused = await postJson(proxy, PROXY_URL, rpc(3, "resources/list"));
    expect(refused.status).toBe(401);
    expect(refused.headers.get("www-authenticate")).toBe(
      'Bearer resource_metadata="http://proxy.test/.well-known/oauth-protected-resource/mcp"',
    );
    expect(await refused.json()).toEqual({ error: "invalid_token" });
    expect(logs.events("internal_error")).toEqual([]);
    logs.restore();
  });

  it("relays GET (the server's stream) and DELETE (end of session)", async () => {
    const proxy = viaProxy();
    const session = await openSession(proxy, PROXY_URL);

    const stream = await proxy(PROXY_URL, {
      headers: { ...session, accept: "text/event-stream" },
    });
    expect(stream.status).toBe(200);
    expect(stream.headers.get("content-type")).toContain("text/event-stream");
    await stream.body?.cancel();

    const deleted = await proxy(PROXY_URL, { method: "DELETE", headers: session });
    expect(deleted.status).toBe(200);

    // The origin forgot the session: its 404 reaches the client as it is.
    const after = await postJson(proxy, PROXY_URL, rpc(2, "tools/list"), session);
    expect(after.status).toBe(404);
    expect(await after.json()).toMatchObject({ error: { message: "Session not found" } });
  });

  it("never talks to a host other than ORIGIN_URL's, whatever the request names", async () => {
    const trace = newTrace();
    const elsewhere = {
      host: "evil.example",
      "x-forwarded-host": "evil.example",
      "x-forwarded-proto": "https",
      forwarded: "host=evil.example;proto=https",
      origin: "http://evil.example",
      referer: "http://evil.example/mcp",
    };
    // Every request the proxy sends goes through the runtime's fetch, in this isolate.
    const outbound = vi.spyOn(globalThis, "fetch");
    let hosts: string[];
    try {
      const ping = await postJson(
        throughGateway,
        `http://evil.example/mcp?trace=${trace}`,
        rpc(1, "ping"),
        elsewhere,
      );
      await ping.body?.cancel();
      for (const [method, path] of [
        ["GET", "/mcp"],
        ["DELETE", "/mcp"],
        ["GET", "/.well-known/oauth-authorization-server"],
        ["GET", "/.well-known/openid-configuration/evil.example"],
      ]) {
        const response = await throughGateway(`http://evil.example${path}?trace=${trace}`, {
          method,
          headers: { ...elsewhere, accept: "application/json, text/event-stream" },
        });
        await response.body?.cancel();
      }
      hosts = outbound.mock.calls.map(
        ([input]) => new URL(input instanceof Request ? input.url : input).host,
      );
    } finally {
      outbound.mockRestore();
    }
    expect(hosts).toEqual(Array(5).fill(new URL(GATEWAY_ORIGIN).host));
    expect(await receivedByOrigin(trace)).toHaveLength(5);
  });
});

describe("a client that accepts encodings the runtime does not decode", () => {
  // Python's httpx asks for zstd where zstandard is installed, and servers that compress prefer
  // it (Caddy's `encode`): an answer in it is one the proxy cannot read, and would not rename.
  it.each(["zstd", "zstd, gzip, deflate", "deflate, zstd;q=0.9"])(
    "with Accept-Encoding: %s has its listing renamed",
    async (acceptEncoding) => {
      const proxy = viaProxy({
        ORIGIN_URL: `${GATEWAY_ORIGIN}/zstd/mcp?map=${crypto.randomUUID()}`,
      });
      const session = await openSession(proxy, PROXY_URL);
      const response = await postJson(proxy, PROXY_URL, rpc(1, "tools/list"), {
        ...session,
        "accept-encoding": acceptEncoding,
      });
      const [answer] = await messagesOf(response);
      const names = (answer as { result: { tools: { name: string }[] } }).result.tools.map(
        (tool) => tool.name,
      );
      expect(names).toContain(DEMO_NAMES["files.read"]);
      expect(names).not.toContain("files.read");
    },
  );
});

describe("other routes", () => {
  it("answers /healthz locally with the origin host and version", async () => {
    const response = await viaProxy()("http://proxy.test/healthz");
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      status: "ok",
      origin: new URL(DEMO_ORIGIN).host,
      version: packageJson.version,
    });
  });

  /** A GET of `path` through the proxy: its status, and what the origin received. */
  async function wellKnown(path: string) {
    const trace = newTrace();
    const response = await throughGateway(`http://proxy.test${path}?trace=${trace}`);
    await response.body?.cancel();
    return { status: response.status, trace, received: await receivedByOrigin(trace) };
  }

  it("answers no other /.well-known/ document from the origin: it would speak for the proxy's host", async () => {
    // A CA's domain validation, app links and server cards are the host's own claims.
    for (const path of [
      "/.well-known/acme-challenge/token",
      "/.well-known/pki-validation/fileauth.txt",
      "/.well-known/assetlinks.json",
      "/.well-known/mcp/server-card.json",
      "/.well-known/oauth-authorization-serverx",
    ]) {
      const { status, received } = await wellKnown(path);
      expect([status, received], path).toEqual([404, []]);
    }
  });

  it("forwards the sign-in discovery documents to the origin's host, path and query kept", async () => {
    for (const path of [
      "/.well-known/oauth-authorization-server",
      "/.well-known/openid-configuration",
      "/.well-known/oauth-protected-resource/elsewhere",
      "/.well-known/openid-configuration/tenant",
    ]) {
      const { trace, received } = await wellKnown(path);
      expect(received[0]?.path).toBe(`${path}?trace=${trace}`);
    }
  });

  it("relays no path an origin reads as another: `..;` is `..` to Tomcat, Jetty and Spring", async () => {
    // Relayed, `/.well-known/openid-configuration/..;/..;/admin` reached the origin's `/admin`.
    for (const path of [
      "/.well-known/openid-configuration/..;/..;/admin",
      "/.well-known/oauth-authorization-server/.;x/doc",
      "/.well-known/openid-configuration/..%3B/..%3b/admin",
      "/.well-known/openid-configuration/%2e%2e;jsessionid=1/acme-challenge/token",
    ]) {
      const { status, received } = await wellKnown(path);
      expect([status, received], path).toEqual([400, []]);
    }
  });

  it("relays a sign-in discovery document to a HEAD though its reason phrase holds a tab", async () => {
    // Hono answers a HEAD with the GET's answer made anew, which `Response` refused: the Worker threw.
    const origin = await scriptedOrigin({
      "*": {
        status: 200,
        reason: "All\tgood",
        headers: [["Content-Type", "application/json"]],
        body: '{"issuer":"http://127.0.0.1"}',
        // No Connection header, which the proxy would leave out, and so make the answer anew.
        http10: true,
      },
    });
    const key = new URL(origin.originUrl).searchParams.get("script");
    const proxy = viaProxy({ ORIGIN_URL: origin.originUrl });
    const response = await proxy(
      `http://proxy.test/.well-known/oauth-authorization-server?script=${key}`,
      { method: "HEAD" },
    );
    expect(response.status).toBe(200);
    expect((await origin.received()).map((r) => r.method)).toEqual(["HEAD"]);
  });

  it("answers 404 with JSON for any other path, without calling the origin", async () => {
    const trace = newTrace();
    const response = await throughGateway(`http://proxy.test/other?trace=${trace}`);
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({
      error: "Not found: neither the MCP endpoint (MCP_PATH) nor a route of the proxy",
    });
    expect(await receivedByOrigin(trace)).toEqual([]);
  });

  it("serves the endpoint on MCP_PATH", async () => {
    const proxy = viaProxy({ MCP_PATH: "/tenant/acme/mcp" });
    const session = await openSession(proxy, "http://proxy.test/tenant/acme/mcp");
    expect(session["mcp-session-id"]).toMatch(/^[0-9a-f]{64}$/);
    expect((await proxy(PROXY_URL)).status).toBe(404);
  });
});
