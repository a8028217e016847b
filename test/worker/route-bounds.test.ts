/**
 * What one request to a route besides the MCP endpoint's listings can make the
 * proxy do (docs/limits.md), for an unauthenticated client and a hostile
 * origin: requests to the origin and log lines, counted, never timed.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { MAX_PAGES } from "../../src/toolmap/relist";
import { captureLogs } from "../helpers/logs";
import { postJson, rpc } from "../helpers/mcp";
import { PROXY_URL, viaProxy } from "../helpers/proxy";
import { scriptedOrigin } from "../helpers/scripted-origin";

let logs: ReturnType<typeof captureLogs> | undefined;
afterEach(() => logs?.restore());

const ID_MARK = '"@ID@"';
const json = (body: unknown) => ({
  status: 200,
  headers: [["content-type", "application/json"]] as [string, string][],
  body: JSON.stringify(body).replace('"@ID@"', ID_MARK),
});

describe("GET /readyz in relay mode, before an origin with a session whose listing never ends", () => {
  it("asks the origin at most initialize, initialized, MAX_PAGES pages and the session's DELETE", async () => {
    const origin = await scriptedOrigin(
      {
        initialize: {
          ...json({
            jsonrpc: "2.0",
            id: "@ID@",
            result: {
              protocolVersion: "2025-11-25",
              capabilities: { tools: {} },
              serverInfo: { name: "endless", version: "1.0.0" },
            },
          }),
          headers: [
            ["content-type", "application/json"],
            ["mcp-session-id", "endless-session"],
          ],
        },
        "notifications/initialized": { status: 202, headers: [], body: "" },
        // Every page says there is one more.
        "tools/list": json({
          jsonrpc: "2.0",
          id: "@ID@",
          result: { tools: [], nextCursor: "more" },
        }),
      },
      ID_MARK,
    );
    const proxy = viaProxy({ ORIGIN_URL: origin.originUrl }, { app: createApp() });
    const response = await proxy("http://proxy.test/readyz");
    expect(response.status).toBe(503);
    await response.body?.cancel();
    const received = await origin.received();
    const methods = received.map(({ method, body }) =>
      body ? `${method} ${JSON.parse(body).method}` : method,
    );
    expect(methods).toEqual([
      "POST initialize",
      "POST notifications/initialized",
      ...Array.from({ length: MAX_PAGES }, () => "POST tools/list"),
      "DELETE",
    ]);
    // docs/limits.md: `/readyz`'s check, at most 3 + MAX_PAGES requests.
    expect(received.length).toBeLessThanOrEqual(3 + MAX_PAGES);
  });
});

describe("an origin's 401 whose challenges name metadata on other hosts", () => {
  // A line each `resource_metadata` naming another host: an origin's header of a few tens of KB
  // made every client request write a thousand lines.
  const CHALLENGES = 1_000;
  const header = Array.from(
    { length: CHALLENGES },
    (_, i) =>
      `Bearer resource_metadata="https://evil${i}.example/.well-known/oauth-protected-resource"`,
  ).join(", ");

  it("is one line a request, however many it names", async () => {
    const origin = await scriptedOrigin({
      "*": {
        status: 401,
        headers: [
          ["content-type", "application/json"],
          ["www-authenticate", header],
        ],
        body: "{}",
      },
    });
    const proxy = viaProxy({ ORIGIN_URL: origin.originUrl }, { app: createApp() });
    logs = captureLogs();
    const response = await postJson(proxy, PROXY_URL, rpc(1, "tools/list"));
    expect(response.status).toBe(401);
    // Passed on as the origin wrote them: the proxy fetches nothing from there.
    expect(response.headers.get("www-authenticate")).toContain("evil999.example");
    await response.body?.cancel();
    const foreign = logs.lines().filter((line) => line.event === "auth_metadata_foreign_host");
    expect(foreign.length).toBeLessThanOrEqual(1);
  });
});
