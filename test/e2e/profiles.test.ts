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
import { captureLogs } from "../helpers/logs";
import { CALLER_ORIGIN, DEMO_ORIGIN, freshOrigin, PROXY_URL, viaProxy } from "../helpers/proxy";

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

/**
 * Enums whose type takes `null` and whose values name none: Gemini is shown them `nullable` and
 * fills an optional one with `null`; any model may write one so.
 */
const SEARCH = {
  name: "issues.search",
  description: "Searches issues.",
  inputSchema: {
    type: "object",
    properties: {
      q: { type: "string" },
      sort: { type: ["string", "null"], enum: ["asc", "desc"] },
      order: { type: "string", nullable: true, enum: ["newest", "oldest"] },
      state: { type: ["string", "null"], enum: ["open", "closed"] },
    },
    required: ["q", "state"],
  },
};

/** An origin (test/fixtures/node/caller-origin.ts) that lists `SEARCH` and echoes each call. */
async function searchOrigin() {
  const map = crypto.randomUUID();
  const response = await fetch(`${CALLER_ORIGIN}/__tools?map=${map}&caller=`, {
    method: "POST",
    body: JSON.stringify([SEARCH]),
  });
  expect(response.status).toBe(204);
  return `${CALLER_ORIGIN}/mcp?map=${map}`;
}

describe("protocol 2026-07-28, every profile, a null no enum value is", () => {
  it.each(PROFILE_NAMES)(
    "%s: leaves out an optional one, and sends a required one on as written",
    async (profile) => {
      const proxied = await connect(
        "2026-07-28",
        viaProxy({ ORIGIN_URL: await searchOrigin() }),
        `${PROXY_URL}/${profile}`,
      );
      const [listed] = await proxied.listTools();
      const logs = captureLogs();
      const result = await proxied.callTool(listed?.name ?? "", {
        q: "bug",
        sort: null,
        order: null,
        state: null,
      });
      expect(result.structuredContent).toEqual({
        tool: "issues.search",
        arguments: { q: "bug", state: null },
        caller: "",
      });
      // Under ARGUMENT_VALIDATION=warn: logged as invalid, and the origin answers.
      expect(logs.events("tool_call_repaired")).toMatchObject([
        {
          dropped: ["sort", "order"],
          validation: "invalid",
          issues: [{ location: "#/state", keyword: "enum" }],
        },
      ]);
      logs.restore();
    },
  );
});
