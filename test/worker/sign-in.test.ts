/**
 * Relay-mode sign-in, piece by piece, against origins that publish their
 * metadata in different places (test/fixtures/node/metadata-origins.ts): the
 * challenges the client sees, and the protected-resource metadata the proxy
 * serves in the origin's stead.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { createApp } from "../../src/app";
import { FAILING_WORDS, metadataDocument } from "../fixtures/metadata-documents";
import { captureLogs } from "../helpers/logs";
import { postJson, rpc } from "../helpers/mcp";
import { GATEWAY_ORIGIN, METADATA_ORIGINS, PROXY_URL, viaProxy } from "../helpers/proxy";
import { scriptedOrigin } from "../helpers/scripted-origin";
import { metadataUrlsReadBySdks } from "../helpers/sdk-challenge-readers";

afterEach(() => {
  vi.restoreAllMocks();
});

type Variant = keyof typeof METADATA_ORIGINS;

/** A proxy in front of one metadata origin, as a fresh isolate. */
function proxyFor(variant: Variant, vars: Record<string, string> = {}) {
  const origin = METADATA_ORIGINS[variant];
  const proxy = viaProxy({ ORIGIN_URL: `${origin}/v1/mcp`, ...vars }, { app: createApp() });
  return { origin, proxy };
}

const metadata = (proxy: ReturnType<typeof viaProxy>, path = "/mcp", init?: RequestInit) =>
  proxy(`http://proxy.test/.well-known/oauth-protected-resource${path}`, init);

const hits = async (origin: string) => (await fetch(`${origin}/__hits`)).json<number>();
/** Every request the origin served, its MCP endpoint's included. */
const requests = async (origin: string) => (await fetch(`${origin}/__requests`)).json<number>();

describe("the origin's challenges, on the way to the client", () => {
  it("point resource_metadata at the proxy and keep every other parameter and scheme as sent", async () => {
    const { origin, proxy } = proxyFor("insertion");
    const response = await postJson(proxy, PROXY_URL, rpc(1, "tools/list"));
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toBe(
      'Bearer realm="mcp, v1", resource_metadata="http://proxy.test/.well-known/oauth-protected-resource/mcp", scope="files:read"',
    );
    expect(await response.json()).toEqual({ error: "invalid_token" });
    // The origin's own challenge named a location of its own: the proxy fetched that one.
    expect(await (await metadata(proxy)).json()).toEqual({
      ...metadataDocument(origin, "advertised"),
      resource: "http://proxy.test/mcp",
    });
  });

  it("leave the metadata every client is served to the challenge of a request with no credentials, not one another caller's token drew", async () => {
    const { origin, proxy } = proxyFor("tenants");
    // A client's first request, as every SDK's: no token, and the origin names its own document.
    const first = await postJson(proxy, PROXY_URL, rpc(1, "tools/list"));
    expect(first.status).toBe(401);
    await first.body?.cancel();
    // Mallory's token draws a challenge naming her tenant's document, which may name her own
    // authorization server: alice's client would sign in there.
    const mallory = await postJson(proxy, PROXY_URL, rpc(1, "tools/list"), {
      authorization: "Bearer mallory",
    });
    expect(mallory.headers.get("www-authenticate")).toContain(
      'resource_metadata="http://proxy.test/.well-known/oauth-protected-resource/mcp"',
    );
    await mallory.body?.cancel();
    // Alice's client, signing in, reads the proxy's metadata: the origin's own, as it told her.
    expect(await (await metadata(proxy)).json()).toEqual({
      ...metadataDocument(origin, "advertised"),
      resource: "http://proxy.test/mcp",
    });
  });

  it("leave the metadata every client is served to the proxy's own ask, not a challenge to a request whose credential the proxy does not know for one", async () => {
    // Mallory's key in a header of the origin's own (relay mode passes every header on), or a
    // session the origin began with her token: to the proxy's header table, no credential.
    const drawn: Record<string, string>[] = [
      { "mcp-session-id": "mallory" },
      { "x-auth-token": "mallory" },
    ];
    for (const headers of drawn) {
      const { origin, proxy } = proxyFor("tenants");
      const mallory = await postJson(proxy, PROXY_URL, rpc(1, "tools/list"), headers);
      expect(mallory.status).toBe(401);
      await mallory.body?.cancel();
      // Alice's client, signing in, reads the proxy's metadata: the origin's own, not her tenant's.
      expect(await (await metadata(proxy)).json(), JSON.stringify(headers)).toEqual({
        ...metadataDocument(origin, "advertised"),
        resource: "http://proxy.test/mcp",
      });
    }
  });

  it("pass a challenge naming another host on unrewritten, log it, and never fetch from there", async () => {
    const log = vi.spyOn(console, "log");
    const { origin, proxy } = proxyFor("foreign");
    const response = await postJson(proxy, PROXY_URL, rpc(1, "tools/list"));
    expect(response.headers.get("www-authenticate")).toBe(
      'Bearer resource_metadata="https://evil.example/.well-known/oauth-protected-resource/v1/mcp", error="invalid_request"',
    );
    const lines = log.mock.calls.map(([line]) => JSON.parse(String(line)));
    expect(lines).toContainEqual({
      event: "auth_metadata_foreign_host",
      origin: new URL(origin).host,
      named: "evil.example",
    });
    expect(await (await metadata(proxy)).json()).toMatchObject({
      resource_name: "published at insertion",
      resource: "http://proxy.test/mcp",
    });
  });

  /** The origin's challenge, pointed at the proxy; then the proxy's metadata, which is `document` of the origin's. */
  async function servesNamed(variant: Variant, document: string) {
    const { origin, proxy } = proxyFor(variant);
    const response = await postJson(proxy, PROXY_URL, rpc(1, "tools/list"));
    expect(response.headers.get("www-authenticate")).toBe(
      'Bearer resource_metadata="http://proxy.test/.well-known/oauth-protected-resource/mcp"',
    );
    const served = await metadata(proxy);
    expect(served.status).toBe(200);
    expect(await served.json()).toEqual({
      ...metadataDocument(origin, document),
      resource: "http://proxy.test/mcp",
    });
  }

  it("fetch the metadata a challenge names on the origin's host at ORIGIN_URL's scheme, never the challenge's", async () => {
    // The origin's host at another scheme (an http origin naming https, as an https one may
    // name http behind a TLS terminator): fetched at ORIGIN_URL's, not in clear text.
    await servesNamed("scheme", "advertised");
  });

  it("fetch the metadata a challenge names on the origin's host there, though its path starts with //", async () => {
    const origin = METADATA_ORIGINS.doubled;
    const network = globalThis.fetch;
    // Any other host is refused at once: the test needs no DNS to see where the proxy went.
    const outbound = vi.spyOn(globalThis, "fetch").mockImplementation((input, init) => {
      const url = new URL(input instanceof Request ? input.url : input);
      return url.origin === origin
        ? network(input, init)
        : Promise.reject(new TypeError(`fetch to ${url.host} refused by the test`));
    });
    await servesNamed("doubled", "doubled");
    const hosts = outbound.mock.calls.map(
      ([input]) => new URL(input instanceof Request ? input.url : input).host,
    );
    expect(new Set(hosts)).toEqual(new Set([new URL(origin).host]));
  });

  it("leave the SDK clients no resource_metadata to read but the proxy's: none in another parameter's name or value, nor past what the proxy could read", async () => {
    const at = `${GATEWAY_ORIGIN}/.well-known/oauth-protected-resource/mcp`;
    const evil = "https://evil.example/.well-known/oauth-protected-resource/mcp";
    const proxied = "http://proxy.test/.well-known/oauth-protected-resource/mcp";
    // Each: the origin's challenge, what the proxy's begins with, and whether a client reads the
    // proxy's metadata from it (else none: it asks the proxy's host at RFC 9728's location).
    for (const [challenge, kept, named] of [
      // In another parameter's value.
      [`Bearer realm="resource_metadata=${evil}", resource_metadata="${at}"`, "Bearer", true],
      [
        `Bearer error="invalid_token", error_description="see resource_metadata=${evil}", resource_metadata="${at}"`,
        'Bearer error="invalid_token"',
        true,
      ],
      // A parameter whose name ends in it.
      [`Bearer xresource_metadata="${evil}", resource_metadata="${at}"`, "Bearer", true],
      // Past a break in the grammar, where the proxy reads no further.
      [
        `Bearer realm="mcp" junk resource_metadata="${evil}", resource_metadata="${at}"`,
        'Bearer realm="mcp"',
        false,
      ],
      // Written as the grammar allows and these clients cannot read: with spaces around `=`,
      // in capitals, or in a DPoP challenge (RFC 9449 §7.1), which the 2.x client reads too.
      [`Bearer resource_metadata = "${at}"`, "Bearer", true],
      [`Bearer RESOURCE_METADATA="${at}"`, "Bearer", true],
      [
        `Bearer realm="mcp", DPoP algs="ES256", resource_metadata="${at}"`,
        'Bearer realm="mcp"',
        true,
      ],
    ] as const) {
      const origin = await scriptedOrigin({
        "tools/list": {
          status: 401,
          headers: [
            ["WWW-Authenticate", challenge],
            ["Content-Type", "application/json"],
          ],
          body: '{"error":"invalid_token"}',
        },
      });
      const proxy = viaProxy({ ORIGIN_URL: origin.originUrl }, { app: createApp() });
      const response = await postJson(proxy, PROXY_URL, rpc(1, "tools/list"));
      expect(response.status).toBe(401);
      const header = response.headers.get("www-authenticate") ?? "";
      expect(metadataUrlsReadBySdks(header), challenge).toEqual(
        Array(4).fill(named ? proxied : undefined),
      );
      expect(header.startsWith(kept), header).toBe(true);
      expect(header).not.toContain("evil.example");
    }
  });

  it("leave other schemes and a challenge without resource_metadata as they are", async () => {
    for (const [variant, challenge] of [
      ["root", 'Bearer realm="mcp"'],
      ["none", 'Basic realm="legacy"'],
    ] as const) {
      const response = await postJson(proxyFor(variant).proxy, PROXY_URL, rpc(1, "tools/list"));
      expect(response.headers.get("www-authenticate")).toBe(challenge);
    }
  });
});

describe("a token the origin refuses, in relay mode", () => {
  /** An origin whose every answer to `method` is `status` with the challenge `challenge`. */
  async function refusing(method: string, status: number, challenge: string) {
    const origin = await scriptedOrigin({
      [method]: {
        status,
        headers: [
          ["WWW-Authenticate", challenge],
          ["Content-Type", "application/json"],
        ],
        body: '{"error":"refused"}',
      },
    });
    return {
      host: new URL(origin.originUrl).host,
      proxy: viaProxy({ ORIGIN_URL: origin.originUrl }),
    };
  }
  const TOKEN = "tok-SECRET-0123";
  const inSession = { authorization: `Bearer ${TOKEN}`, "mcp-session-id": "s-1" };

  it("a 401 invalid_token within a session the origin began with the client's token: expired or revoked, not an audience the origin refuses", async () => {
    const log = vi.spyOn(console, "log");
    const { host, proxy } = await refusing(
      "tools/call",
      401,
      'Bearer error="invalid_token", error_description="The access token expired"',
    );
    const call = rpc(1, "tools/call", { name: "files_read", arguments: { path: "a" } });
    expect((await postJson(proxy, PROXY_URL, call, inSession)).status).toBe(401);
    const lines = log.mock.calls.map(([line]) => JSON.parse(String(line)));
    expect(lines.filter((line) => line.event === "auth_audience_mismatch")).toEqual([]);
    expect(lines.filter((line) => line.event === "auth_token_refused")).toEqual([
      { event: "auth_token_refused", origin: host, status: 401, error: "invalid_token" },
    ]);
    expect(JSON.stringify(lines)).not.toContain("SECRET");
  });

  it("a 403 insufficient_scope: passed on as the origin wrote it, the line naming the scope it asks for", async () => {
    const log = vi.spyOn(console, "log");
    const { host, proxy } = await refusing(
      "tools/list",
      403,
      'Bearer error="insufficient_scope", scope="files:write"',
    );
    const refused = await postJson(proxy, PROXY_URL, rpc(1, "tools/list"), inSession);
    expect(refused.status).toBe(403);
    // The client signs in at the origin's own authorization server: the scope is that server's.
    expect(refused.headers.get("www-authenticate")).toBe(
      'Bearer error="insufficient_scope", scope="files:write"',
    );
    const lines = log.mock.calls.map(([line]) => JSON.parse(String(line)));
    expect(lines.filter((line) => line.event === "auth_token_refused")).toEqual([
      {
        event: "auth_token_refused",
        origin: host,
        status: 403,
        error: "insufficient_scope",
        scope: "files:write",
      },
    ]);
  });

  it("a 401 invalid_token outside a session: the hint names both causes, an expired token and an origin that takes only its own", async () => {
    const log = vi.spyOn(console, "log");
    const { host, proxy } = await refusing("tools/list", 401, 'Bearer error="invalid_token"');
    const asked = { authorization: `Bearer ${TOKEN}` };
    expect((await postJson(proxy, PROXY_URL, rpc(1, "tools/list"), asked)).status).toBe(401);
    const lines = log.mock.calls.map(([line]) => JSON.parse(String(line)));
    const [hint, ...more] = lines.filter((line) => line.event === "auth_audience_mismatch");
    expect(more).toEqual([]);
    expect(hint).toMatchObject({ origin: host });
    expect(hint.hint).toMatch(/expired/);
    expect(hint.hint).toMatch(/AUTH_MODE=broker/);
  });
});

describe("the proxy's protected-resource metadata", () => {
  it("comes from the origin's path-insertion location, though MCP_PATH is not the origin's path", async () => {
    const { origin, proxy } = proxyFor("foreign");
    const response = await metadata(proxy);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      ...metadataDocument(origin, "insertion"),
      resource: "http://proxy.test/mcp",
    });
  });

  it("comes from where the origin's challenge names it, in an isolate that has seen no challenge yet", async () => {
    // The origin publishes two documents: one where RFC 9728 puts it, and the one its challenges
    // name, which a client that asked the origin itself would read; or only the one they name.
    for (const variant of ["insertion", "advertised"] as const) {
      const { origin, proxy } = proxyFor(variant);
      expect(await (await metadata(proxy)).json(), variant).toEqual({
        ...metadataDocument(origin, "advertised"),
        resource: "http://proxy.test/mcp",
      });
    }
  });

  it("comes from where RFC 9728 puts it when the origin's MCP endpoint does not answer the proxy's ask", async () => {
    // An origin whose endpoint holds a GET without a word (or drops it), while its metadata is
    // where RFC 9728 puts it: the ask is a hint, and the document is read as if none was named.
    const origin = METADATA_ORIGINS.root;
    const endpoint = `${origin}/v1/mcp`;
    const network = globalThis.fetch;
    vi.spyOn(globalThis, "fetch").mockImplementation((input, init) => {
      const url = input instanceof Request ? input.url : String(input);
      if (url !== endpoint || (init?.method ?? "GET") !== "GET") return network(input, init);
      return new Promise((_, reject) =>
        init?.signal?.addEventListener("abort", () => reject(init.signal?.reason), { once: true }),
      );
    });
    const logs = captureLogs();
    const proxy = viaProxy(
      { ORIGIN_URL: endpoint, ORIGIN_TIMEOUT_MS: "200" },
      { app: createApp() },
    );
    const response = await metadata(proxy);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      ...metadataDocument(origin, "root"),
      resource: "http://proxy.test/mcp",
    });
    // The ask that went unanswered is logged as any request to the origin is.
    expect(logs.events("origin_timeout")).toEqual([
      expect.objectContaining({ origin: new URL(origin).host, method: "GET" }),
    ]);
  });

  it("comes from the origin's root location when that is the only one, at both of the proxy's locations", async () => {
    const { origin, proxy } = proxyFor("root");
    const expected = { ...metadataDocument(origin, "root"), resource: "http://proxy.test/mcp" };
    expect(await (await metadata(proxy)).json()).toEqual(expected);
    expect(await (await metadata(proxy, "")).json()).toEqual(expected);
  });

  it("keeps every member but resource as the origin wrote it: its numbers' text and its strings' escapes", async () => {
    // Read with JSON.parse and written with JSON.stringify, 12345678901234567891 was served as
    // 12345678901234567000, 1.50 as 1.5, and "\u002f" as "/".
    const members =
      '"authorization_servers":["https://as.example/\\u002fx"],"x-limit":12345678901234567891,"x-ratio":1.50,"x-nested":{"n":9007199254740993}';
    const document = `{"resource":"https://meta.example/v1/mcp",${members}}`;
    const network = globalThis.fetch;
    vi.spyOn(globalThis, "fetch").mockImplementation((input, init) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      if (url.host !== "meta.example") return network(input, init);
      const found = url.pathname.startsWith("/.well-known/oauth-protected-resource");
      return Promise.resolve(
        found
          ? new Response(document, { headers: { "content-type": "application/json" } })
          : new Response(null, { status: 404 }),
      );
    });
    const proxy = viaProxy({ ORIGIN_URL: "https://meta.example/v1/mcp" }, { app: createApp() });
    const response = await metadata(proxy);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe(`{"resource":"http://proxy.test/mcp",${members}}`);
  });

  it("is 404 when the origin publishes none", async () => {
    const logs = captureLogs();
    const { proxy } = proxyFor("none");
    const response = await metadata(proxy);
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ error: "not_found" });
    // A 404 is the origin's word that there is none: no failure of its.
    expect(logs.events("origin_error")).toEqual([]);
  });

  it("asks the origin three times when it publishes none, then nothing for a while: a client's requests for it cost the origin no more", async () => {
    const { origin, proxy } = proxyFor("none");
    const start = await requests(origin);
    expect((await metadata(proxy)).status).toBe(404);
    // Where its challenge names a location, then RFC 9728's two.
    expect(await requests(origin)).toBe(start + 3);
    for (let i = 0; i < 5; i++)
      expect((await metadata(proxy, i % 2 ? "" : "/mcp")).status).toBe(404);
    expect(await requests(origin)).toBe(start + 3);
  });

  it("is 502 that says the origin failed, logged origin_error, when the origin answers its location 5xx: not 404, which says it publishes none", async () => {
    const logs = captureLogs();
    // Its path-insertion location answers 503, its root location 404.
    const { origin, proxy } = proxyFor("failing");
    const response = await metadata(proxy);
    expect(response.status).toBe(502);
    const body = await response.text();
    expect(JSON.parse(body)).toEqual({
      error: "origin_error",
      error_description:
        "The origin failed to answer for its OAuth protected-resource metadata (HTTP 503)",
    });
    expect(body).not.toContain(FAILING_WORDS);
    expect(logs.events("origin_error")).toEqual([
      {
        event: "origin_error",
        origin: new URL(origin).host,
        method: "GET",
        status: 503,
        document: "oauth-protected-resource",
      },
    ]);
    expect(JSON.stringify(logs.lines())).not.toContain(FAILING_WORDS);
    // Not kept: the next request asks the origin again.
    const before = await hits(origin);
    expect((await metadata(proxy)).status).toBe(502);
    expect(await hits(origin)).toBeGreaterThan(before);
  });

  it("is not remembered as none published from a 429: once the origin answers again, so does the proxy", async () => {
    // The origin (or what stands before it) limits the proxy's requests for a moment, as another
    // caller's traffic through the same proxy may make it.
    const { origin, proxy } = proxyFor("root");
    const network = globalThis.fetch;
    let limited = true;
    vi.spyOn(globalThis, "fetch").mockImplementation((input, init) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      if (!limited || !url.pathname.startsWith("/.well-known/")) return network(input, init);
      return Promise.resolve(new Response("slow down", { status: 429 }));
    });
    const during = await metadata(proxy);
    expect(during.status).not.toBe(200);
    await during.body?.cancel();
    limited = false;
    const after = await metadata(proxy);
    expect(after.status).toBe(200);
    expect(await after.json()).toEqual({
      ...metadataDocument(origin, "root"),
      resource: "http://proxy.test/mcp",
    });
  });

  it("is 504 once ORIGIN_TIMEOUT_MS has passed, where the origin sends the start of its document and no more", async () => {
    const logs = captureLogs();
    const { origin, proxy } = proxyFor("stalled", { ORIGIN_TIMEOUT_MS: "300" });
    const response = await metadata(proxy);
    expect(response.status).toBe(504);
    expect(await response.json()).toMatchObject({ error: { code: -32001 } });
    expect(logs.events("origin_timeout")).toEqual([
      {
        event: "origin_timeout",
        origin: new URL(origin).host,
        method: "GET",
        detail: "the answer was not read whole within 300 ms",
      },
    ]);
  });

  it("is kept in isolate memory for a while: a second request does not reach the origin", async () => {
    const { origin, proxy } = proxyFor("root");
    await metadata(proxy);
    const before = await hits(origin);
    expect(await (await metadata(proxy)).json()).toMatchObject({
      resource_name: "published at root",
    });
    expect(await hits(origin)).toBe(before);
  });

  it("names a profile's URL as the resource for clients that use it", async () => {
    const { origin, proxy } = proxyFor("insertion");
    const response = await postJson(proxy, `${PROXY_URL}/gemini`, rpc(1, "tools/list"));
    expect(response.headers.get("www-authenticate")).toContain(
      'resource_metadata="http://proxy.test/.well-known/oauth-protected-resource/mcp/gemini"',
    );
    expect(await (await metadata(proxy, "/mcp/gemini")).json()).toEqual({
      ...metadataDocument(origin, "advertised"),
      resource: "http://proxy.test/mcp/gemini",
    });
    expect((await metadata(proxy, "/mcp/claude")).status).toBe(404);
  });

  it("names PUBLIC_URL when set, and never a host from Forwarded or X-Forwarded-*", async () => {
    const { proxy } = proxyFor("insertion", { PUBLIC_URL: "https://mcp.acme.example" });
    const forwarded = {
      headers: { forwarded: "host=evil.example", "x-forwarded-host": "evil.example" },
    };
    const challenge = await postJson(proxy, PROXY_URL, rpc(1, "tools/list"), forwarded.headers);
    expect(challenge.headers.get("www-authenticate")).toContain(
      'resource_metadata="https://mcp.acme.example/.well-known/oauth-protected-resource/mcp"',
    );
    expect(await (await metadata(proxy, "/mcp", forwarded)).json()).toMatchObject({
      resource: "https://mcp.acme.example/mcp",
    });

    const local = proxyFor("insertion").proxy;
    expect(await (await metadata(local, "/mcp", forwarded)).json()).toMatchObject({
      resource: "http://proxy.test/mcp",
    });
  });
});
