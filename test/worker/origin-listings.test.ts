/**
 * What the proxy makes of an origin's listing that it reads itself
 * (toolmap/relist.ts: a call naming a tool the map does not know, the rest
 * of a first page, `/readyz`), however the origin writes it: the call is
 * answered, never with the proxy's own throw (the app's 500), nor kept
 * waiting past `ORIGIN_TIMEOUT_MS` by a listing that never ends.
 */
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { captureLogs } from "../helpers/logs";
import { messagesOf, postJson, rpc } from "../helpers/mcp";
import {
  CATALOG_ORIGIN,
  GATEWAY_ORIGIN,
  heldOnceClosed,
  newTrace,
  PROXY_URL,
  viaProxy,
} from "../helpers/proxy";

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
    // 11 s alone; past the suite's 30 s with the other files at a load of 11 on two cores.
  }, 120_000);
});

describe("an origin that answers the proxy's own listing and then sends nothing more", () => {
  it.each([
    ["an event stream that never answers", "held"],
    ["a JSON body cut halfway", "half"],
  ])(
    "%s: the listing is given up at ORIGIN_TIMEOUT_MS, its connection closed, and the call told the listing could not be read",
    async (_, listing) => {
      const logs = captureLogs();
      // `work` is a name this new isolate does not know, and the rules judge calls by a listing:
      // the proxy lists the origin, which answers with headers and then nothing, no end either.
      // The client stays.
      const trace = newTrace();
      const proxy = viaProxy(
        {
          ORIGIN_URL: `${GATEWAY_ORIGIN}/held/mcp?trace=${trace}&listing=${listing}`,
          ORIGIN_TIMEOUT_MS: "1000",
          TOOL_RULES: JSON.stringify({ hide: ["secret.*"] }),
        },
        { app: createApp() },
      );
      const response = await postJson(
        proxy,
        PROXY_URL,
        rpc(1, "tools/call", { name: "work", arguments: {} }),
      );
      expect(response.status).toBe(200);
      expect(await messagesOf(response)).toEqual([
        {
          jsonrpc: "2.0",
          id: 1,
          error: {
            code: -32602,
            message:
              "Tool work cannot be checked now: the origin's tool listing for this caller could not be read; try again",
          },
        },
      ]);
      // The listing's one stream, closed; the call it was for never sent.
      expect(await heldOnceClosed(trace)).toEqual({ opened: 1, closed: 1 });
      expect(logs.events("relist_failed")).toEqual([
        {
          event: "relist_failed",
          origin: new URL(GATEWAY_ORIGIN).host,
          status: "timeout",
          detail: "the listing was not read whole within 1000 ms",
        },
      ]);
      logs.restore();
    },
  );
});
