/**
 * What the proxy makes of an origin's listing that it reads itself
 * (toolmap/relist.ts: a call naming a tool the map does not know, the rest
 * of a first page, `/readyz`), however the origin writes it: the call is
 * answered, never with the proxy's own throw (the app's 500).
 */
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { messagesOf, postJson, rpc } from "../helpers/mcp";
import { CATALOG_ORIGIN, PROXY_URL, viaProxy } from "../helpers/proxy";

/** A request's envelope in protocol 2026-07-28, which the catalog origin answers in JSON. */
const META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
  "io.modelcontextprotocol/clientInfo": { name: "origin-listings-test", version: "1.0.0" },
};

/** A call to `name` through a fresh isolate of the proxy in front of `origin`, in 2026-07-28. */
async function callThrough(origin: string, name: string) {
  const proxy = viaProxy({ ORIGIN_URL: origin }, { app: createApp() });
  return postJson(proxy, PROXY_URL, rpc(1, "tools/call", { name, arguments: {}, _meta: META }), {
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": "tools/call",
    "mcp-name": name,
  });
}

describe("a call naming a tool the map does not know", () => {
  it("reaches the origin when its listing holds hundreds of thousands of tools on one page", async () => {
    // 250,000 tools of some 50 bytes each: one page of 12 MB, within the 16 MiB a listing may be.
    const origin = `${CATALOG_ORIGIN}/mcp?map=${crypto.randomUUID()}&tiny&tools=250000`;
    const response = await callThrough(origin, "t7");
    expect(response.status).toBe(200);
    const [answer] = await messagesOf(response);
    expect(answer?.result).toMatchObject({ structuredContent: { tool: "t7", arguments: {} } });
  });
});
