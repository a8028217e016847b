/**
 * One reading of every request path (issue: sign-in walked around by a
 * percent-encoded path). The proxy is served by wrangler over HTTP in broker
 * mode and in gate mode, and requests go over a plain socket with the path
 * exactly as an attacker writes it: whatever the spelling of the MCP
 * endpoint, nothing reaches the origin without a token of the proxy's (in gate
 * mode, nothing gets the proxy's key), and nothing the client sent in
 * `Authorization` or `Cookie` reaches the origin on any route.
 */
import fc from "fast-check";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { rawRequest } from "../fixtures/node/raw-http";
import { startRecordingOrigin } from "../fixtures/node/recording-origin";
import { serveProxy } from "./serve-proxy";

const PROFILE_PATHS = ["/mcp", "/mcp/openai", "/mcp/gemini", "/mcp/anthropic", "/mcp/mcp"];
const JUNK = { authorization: "Bearer anything", cookie: "session=client-secret" };
const MCP_BODY = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" });
const MCP_HEADERS = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  ...JUNK,
};

/** Gate mode's settings: an identity provider nothing reaches here (no one signs in), and a key. */
const GATE = {
  AUTH_MODE: "gate",
  IDP_ISSUER: "https://idp.example",
  IDP_CLIENT_ID: "proxy",
  ALLOWED_DOMAINS: "acme.example",
  ORIGIN_SECRET: "operator-key",
};

describe.each([
  ["broker", { AUTH_MODE: "broker" }],
  ["gate", GATE],
])("%s mode, over a real socket", (_, vars) => {
  let origin: Awaited<ReturnType<typeof startRecordingOrigin>>;
  let proxy: Awaited<ReturnType<typeof serveProxy>>;

  beforeAll(async () => {
    origin = await startRecordingOrigin();
    proxy = await serveProxy(new URL("/mcp?key=operator-secret", origin.url).href, vars);
  });

  afterAll(async () => {
    await proxy?.dispose();
    origin?.close();
  });

  beforeEach(() => {
    origin.received.length = 0;
  });

  const post = (path: string) => rawRequest(proxy.url, "POST", path, MCP_HEADERS, MCP_BODY);

  it("answers the MCP endpoint without a proxy token with the proxy's 401", async () => {
    const reply = await post("/mcp");
    expect(reply.status).toBe(401);
    expect(origin.received).toEqual([]);
  });

  it.each([
    "/%6dcp",
    "/%6Dcp",
    "/m%63p",
    "/%6d%63%70",
    "/mcp/%67emini",
    "/./mcp",
    "/x/../mcp",
    "/%2e/mcp",
    "/mcp%2fgemini",
    "/mcp%252fgemini",
    "\\mcp",
    "/mcp\\gemini",
    "//mcp",
  ])("lets no spelling of the endpoint through without a proxy token: %s", async (path) => {
    const reply = await post(path);
    expect([400, 401, 404]).toContain(reply.status);
    expect(origin.received).toEqual([]);
  });

  it("refuses a path with no canonical form with a 400 that says why", async () => {
    const reply = await post("/mcp%2fgemini");
    expect(reply.status).toBe(400);
    expect(reply.body).toContain("encoded");
  });

  it("serves its own authorization-server metadata however the path is spelled", async () => {
    const reply = await rawRequest(
      proxy.url,
      "GET",
      "/.well-known/%6fauth-authorization-server",
      JUNK,
    );
    expect(reply.status).toBe(200);
    expect(JSON.parse(reply.body)).toMatchObject({ issuer: proxy.url.origin });
    expect(origin.received).toEqual([]);
  });

  it("relays no other /.well-known document: none of the origin's speaks for the proxy's host", async () => {
    const reply = await rawRequest(proxy.url, "GET", "/.well-known/security.txt", JUNK);
    expect(reply.status).toBe(404);
    expect(origin.received).toEqual([]);
  });

  it("lets no spelling of an MCP path reach the origin without a proxy token (property)", async () => {
    const encode = (char: string, lower: boolean) => {
      const hex = char.charCodeAt(0).toString(16).padStart(2, "0");
      return `%${lower ? hex : hex.toUpperCase()}`;
    };
    const spelling = fc
      .record({
        path: fc.constantFrom(...PROFILE_PATHS),
        chars: fc.array(fc.constantFrom("raw", "upper-hex", "lower-hex", "case"), {
          minLength: 16,
          maxLength: 16,
        }),
        extra: fc.constantFrom(
          "",
          "/",
          "//",
          ";a=b",
          "/.",
          "/./",
          "/x/..",
          "/%2e",
          "/%2E%2E",
          "?q=1",
        ),
        doubledSlash: fc.boolean(),
        backslash: fc.boolean(),
      })
      .map(({ path, chars, extra, doubledSlash, backslash }) => {
        let spelled = "";
        for (const [index, char] of [...path].entries()) {
          const how = chars[index % chars.length];
          if (char === "/") spelled += backslash && index > 0 ? "\\" : doubledSlash ? "//" : "/";
          else if (how === "upper-hex") spelled += encode(char, false);
          else if (how === "lower-hex") spelled += encode(char, true);
          else if (how === "case") spelled += char.toUpperCase();
          else spelled += char;
        }
        return spelled + extra;
      });
    await fc.assert(
      fc.asyncProperty(spelling, async (path) => {
        const before = origin.received.length;
        const reply = await post(path);
        expect(reply.status, path).not.toBeLessThan(400);
        expect(origin.received.slice(before), path).toEqual([]);
      }),
      { numRuns: 150 },
    );
  });
});
