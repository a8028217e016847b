/**
 * `NAME_MAX_LENGTH` (docs/names.md, "Tool names"), for clients that prefix
 * the names they are given (Claude Code's `mcp__<server>__<tool>`): at every
 * profile's URL, every listed name, fingerprint included, is within the
 * budget, no two alike, and each one calls the tool it was listed for. The
 * catalog origin's copies are named with a long prefix
 * (`analytics.reporting_service_generate_quarterly_…`), so they share their
 * first 40 characters and more.
 */
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { parseConfig } from "../../src/config";
import { PROFILE_NAMES } from "../../src/names/profiles";
import { catalogTools } from "../fixtures/node/catalog-origin";
import { clientsOfEachTest, type ToolResult } from "../helpers/clients";
import { CATALOG_ORIGIN, PROXY_URL, viaProxy } from "../helpers/proxy";

const connect = clientsOfEachTest();

afterEach(() => {
  vi.restoreAllMocks();
});

const PREFIX = "analytics.reporting_service_generate_quarterly_";
/** Under every profile's tool ceiling (the lowest is 128): a listing, not search mode. */
const TOOLS = 60;

describe("NAME_MAX_LENGTH=40", () => {
  it.each(PROFILE_NAMES)(
    "at %s: every name within 40, distinct, and calling its own tool",
    async (profile) => {
      vi.spyOn(console, "log").mockImplementation(() => {});
      const origin = `${CATALOG_ORIGIN}/mcp?map=${crypto.randomUUID()}&tools=${TOOLS}&prefix=${PREFIX}`;
      const proxy = viaProxy({ ORIGIN_URL: origin, NAME_MAX_LENGTH: "40" });
      const client = await connect("2025-11-25", proxy, `${PROXY_URL}/${profile}`);
      const names = (await client.listTools()).map((tool) => tool.name);
      expect(names).toHaveLength(TOOLS);
      for (const name of names) expect(name.length, name).toBeLessThanOrEqual(40);
      expect(new Set(names).size).toBe(TOOLS);
      // Not vacuous: the long names were cut, and share their first 33 characters.
      expect(names.filter((name) => name.length === 40).length).toBeGreaterThan(5);

      const originals = catalogTools(TOOLS, { prefix: PREFIX }).map((tool) => tool.name);
      for (const [index, name] of names.entries()) {
        const result = (await client.callTool(name, {})) as ToolResult;
        expect((result.structuredContent as { tool: string }).tool, name).toBe(originals[index]);
      }
    },
    // Sixty calls, one after another.
    30_000,
  );
});

describe("the smallest NAME_MAX_LENGTH", () => {
  it("still lists search mode's own tools within it", async () => {
    vi.spyOn(console, "log").mockImplementation(() => {});
    const accepts = (n: number) =>
      parseConfig({
        ORIGIN_URL: "https://o.example/mcp",
        TOOL_MAP: env.TOOL_MAP,
        NAME_MAX_LENGTH: String(n),
      } as unknown as Env).kind === "valid";
    const smallest = Array.from({ length: 64 }, (_, n) => n).find(accepts);
    if (smallest === undefined) throw new Error("no NAME_MAX_LENGTH below 64 is taken");
    const origin = `${CATALOG_ORIGIN}/mcp?map=${crypto.randomUUID()}&tools=5`;
    const proxy = viaProxy({
      ORIGIN_URL: origin,
      NAME_MAX_LENGTH: String(smallest),
      MAX_TOOLS: "2",
    });
    const client = await connect("2025-11-25", proxy);
    const names = (await client.listTools()).map((tool) => tool.name);
    expect(names).toEqual(["search_tools", "call_tool"]);
    for (const name of names) expect(name.length, name).toBeLessThanOrEqual(smallest);
  });
});
