/**
 * One reading of a request (SECURITY.md, One reading of every request): its
 * 2026-07-28 headers beside its body, as the proxy and the origin both read
 * them, or a refusal before the origin is called.
 */
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { demoSession } from "../helpers/demo";
import { ENVELOPE_2026, messagesOf, postJson, rpc, wireRequest } from "../helpers/mcp";
import { HEADER_ORIGIN, PROXY_URL, viaProxy } from "../helpers/proxy";

/** The `mcp` profile's URL, where the origin's tools keep their names. */
const MCP_URL = `${PROXY_URL}/mcp`;

const withoutMethod = (header: string) =>
  `Header mismatch: the ${header} header comes without Mcp-Method, which every request that mirrors its body in headers carries (protocol 2026-07-28)`;

describe("Mcp-Name and Mcp-Param-* without Mcp-Method", () => {
  // The SDK 2.x origin (test/fixtures/node/header-origin.ts) records the Mcp-Param-* headers of
  // every call that reaches it, per trace, before it judges the call.
  async function headerOrigin() {
    const trace = crypto.randomUUID();
    const url = new URL(HEADER_ORIGIN);
    url.searchParams.set("trace", trace);
    const proxy = viaProxy({ ORIGIN_URL: url.href }, { app: createApp() });
    const list = wireRequest("2026-07-28", "list", "tools/list");
    await messagesOf(await postJson(proxy, MCP_URL, list.body, list.headers));
    const reached = async () =>
      (await (
        await fetch(new URL(`/__received?trace=${trace}`, HEADER_ORIGIN))
      ).json()) as unknown[];
    return { proxy, reached };
  }

  it.each([
    ["Mcp-Param-*", { "mcp-param-region": "us-east" }],
    ["Mcp-Name", { "mcp-name": "header.string" }],
    ["Mcp-Name", { "mcp-name": "header.string", "mcp-param-region": "us-east" }],
  ])(
    "are refused -32020 as the SDK's server refuses them, the origin not called: %s",
    async (header, sent) => {
      // The proxy coalesces `Region` to `region`: the body it would forward says eu-west, the
      // header a gateway before it read says us-east.
      const { proxy, reached } = await headerOrigin();
      const response = await postJson(
        proxy,
        MCP_URL,
        rpc(7, "tools/call", {
          name: "header.string",
          arguments: { Region: "eu-west" },
          _meta: ENVELOPE_2026,
        }),
        { "mcp-protocol-version": "2026-07-28", ...sent },
      );
      expect(response.status).toBe(400);
      expect(await response.json()).toEqual({
        jsonrpc: "2.0",
        id: 7,
        error: { code: -32020, message: withoutMethod(header) },
      });
      expect(await reached()).toEqual([]);
    },
  );

  it("are refused in a 2025-11-25 session too, where no client sends them: the origin not called", async () => {
    // An origin of that revision ignores them; a gateway before the proxy may not, and the body
    // the proxy forwards (`city` for `City`) is not the one such a header was written from.
    const { proxy, session, received } = await demoSession();
    await messagesOf(await postJson(proxy, PROXY_URL, rpc("list", "tools/list"), session));
    const calls = async () =>
      (await received()).filter((r) => r.body.includes('"tools/call"')).length;
    const before = await calls();
    const call = rpc(8, "tools/call", { name: "get-weather", arguments: { City: "Zürich" } });
    for (const [header, sent] of [
      ["Mcp-Param-*", { "mcp-param-city": "Oslo" }],
      ["Mcp-Name", { "mcp-name": "get-weather" }],
    ] as const) {
      const response = await postJson(proxy, PROXY_URL, call, { ...session, ...sent });
      expect(response.status, header).toBe(400);
      expect(await response.json()).toEqual({
        jsonrpc: "2.0",
        id: 8,
        error: { code: -32020, message: withoutMethod(header) },
      });
    }
    expect(await calls()).toBe(before);
  });

  it("pass with Mcp-Method, brought in line with the call the proxy forwards", async () => {
    const { proxy, reached } = await headerOrigin();
    const { body, headers } = wireRequest("2026-07-28", 9, "tools/call", {
      name: "header.string",
      arguments: { Region: "eu-west" },
    });
    const [answer] = await messagesOf(
      await postJson(proxy, MCP_URL, body, { ...headers, "mcp-param-region": "eu-west" }),
    );
    expect(answer).toMatchObject({
      id: 9,
      result: { structuredContent: { arguments: { region: "eu-west" } } },
    });
    expect(await reached()).toEqual([{ "mcp-param-region": "eu-west" }]);
  });
});
