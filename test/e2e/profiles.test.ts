/**
 * Every profile's URL (docs/names.md, "Profiles"; docs/schemas.md) on each
 * wire: the SDK clients of 2025-11-25 and 2026-07-28 list the demo origin
 * through `MCP_PATH/<profile>`, and call a tool as that profile's view asks
 * a model to write the call. The views themselves are property-tested in
 * test/unit/schema-view.test.ts; here, that each reaches the client and back
 * whichever revision carries it.
 */
import { describe, expect, it } from "vitest";
import { PROFILE_NAMES } from "../../src/names/profiles";
import { clientsOfEachTest, EACH_WIRE } from "../helpers/clients";
import { expectOriginsToolsAsViewed } from "../helpers/listing";
import { DEMO_ORIGIN, freshOrigin, PROXY_URL, viaProxy } from "../helpers/proxy";

const connect = clientsOfEachTest();

interface PropertyView {
  type?: unknown;
  enum?: unknown[];
}

/**
 * `reports.query`'s arguments as a model writes them from the schema it was
 * shown: a free-form object as text, an enum of strings as its string, and
 * every property a strict schema requires, `null` for one left out.
 */
function writtenFor(inputSchema: unknown): Record<string, unknown> {
  const { properties = {}, required = [] } = inputSchema as {
    properties?: Record<string, PropertyView>;
    required?: string[];
  };
  const asText = (key: string) => [properties[key]?.type].flat().includes("string");
  const written: Record<string, unknown> = {
    limit: 10,
    priority: asText("priority") ? "2" : 2,
    since: null,
    filters: asText("filters") ? '{"team":"core"}' : { team: "core" },
  };
  for (const key of required) if (!(key in written)) written[key] = null;
  return written;
}

describe.each(EACH_WIRE)("protocol %s, every profile", (revision) => {
  it.each(PROFILE_NAMES)(
    "%s: lists every demo tool in a view its provider accepts, and a call written to that view reaches the origin's tool",
    async (profile) => {
      const proxied = await connect(
        revision,
        viaProxy({ ORIGIN_URL: freshOrigin() }),
        `${PROXY_URL}/${profile}`,
      );
      const direct = await connect(revision, globalThis.fetch, `${DEMO_ORIGIN}/mcp`);
      const tools = await proxied.listTools();
      const originTools = await direct.listTools();
      expectOriginsToolsAsViewed(tools, originTools, profile);

      const index = originTools.findIndex((tool) => tool.name === "reports.query");
      const listed = tools[index];
      const result = await proxied.callTool(listed?.name ?? "", writtenFor(listed?.inputSchema));
      expect(result.isError, JSON.stringify(result)).toBeFalsy();
      expect(result.structuredContent).toEqual({
        tool: "reports.query",
        arguments: { limit: 10, priority: 2, since: null, filters: { team: "core" } },
      });
    },
  );
});
