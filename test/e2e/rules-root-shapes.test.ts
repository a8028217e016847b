/**
 * The operator's `fixed` and `defaults` (docs/rules.md, "Arguments") through
 * the proxy in workerd, at every profile's URL, for a tool whose input schema
 * has each root servers write (test/fixtures/root-shapes.ts: a root `$ref`,
 * as Go's invopop/jsonschema writes every input, an `allOf`, an `anyOf`, a
 * `oneOf` of `$ref`s): the listing asks for neither, and a call without them
 * reaches the origin with the operator's values, on a 2025-11-25 session and
 * in 2026-07-28 requests. On the wire: the SDK's
 * client refuses a listing whose input schema does not say `type: "object"`,
 * which `mcp` passes on as the origin wrote it.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { PROFILE_NAMES } from "../../src/names/profiles";
import { ROOT_SHAPES } from "../fixtures/root-shapes";
import { EACH_WIRE } from "../helpers/clients";
import { rawExchange } from "../helpers/mcp";
import { CATALOG_ORIGIN, PROXY_URL, viaProxy } from "../helpers/proxy";

afterEach(() => {
  vi.restoreAllMocks();
});

/** The catalog's first tool: `read_text_file` (`path` required, `tail`, `head`). */
const RULES = {
  tools: { read_text_file: { fixed: { path: "/srv/notes.md" }, defaults: { head: 10 } } },
};

describe.each(
  EACH_WIRE.flatMap((revision) => ROOT_SHAPES.map((root) => [revision, root] as const)),
)("protocol %s, fixed and defaults, the input schema's root %s", (revision, root) => {
  it.each(PROFILE_NAMES)(
    "at %s: listed without them, called with the operator's values",
    async (profile) => {
      vi.spyOn(console, "log").mockImplementation(() => {});
      const origin = `${CATALOG_ORIGIN}/mcp?map=${crypto.randomUUID()}&tools=3&root=${encodeURIComponent(root)}`;
      const proxy = viaProxy({ ORIGIN_URL: origin, TOOL_RULES: JSON.stringify(RULES) });
      const exchange = await rawExchange(revision, proxy, `${PROXY_URL}/${profile}`);
      const ask = async (id: number, method: string, params?: Record<string, unknown>) => {
        const [answer] = await exchange(id, method, params);
        return answer?.result as Record<string, unknown>;
      };

      const { tools } = (await ask(1, "tools/list")) as { tools: Array<Record<string, unknown>> };
      const tool = tools.find((listed) => listed.name === "read_text_file");
      const listed = JSON.stringify(tool?.inputSchema);
      expect(listed).not.toContain('"path"');
      expect(listed).toContain("Default: 10 (the proxy sets it when left out).");
      // Strict mode requires every property; `head` takes null there, which means "left out".
      if (profile !== "openai-strict") expect(listed).not.toMatch(/"required":\[[^\]]*"head"/);

      const args = profile === "openai-strict" ? { tail: null, head: null } : {};
      const called = await ask(2, "tools/call", { name: "read_text_file", arguments: args });
      expect(called.structuredContent).toEqual({
        tool: "read_text_file",
        arguments: { path: "/srv/notes.md", head: 10 },
      });
    },
  );
});
