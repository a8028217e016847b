/**
 * The members of a tool MCP's clients refuse (src/protocol/tool-shape.ts), as
 * the clients of the SDKs were found to refuse them
 * (test/node/misshapen-tools-frameworks.test.ts), and a listing that holds
 * such a tool as the proxy writes it.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ProfileName } from "../../src/names/profiles";
import { readListingText } from "../../src/protocol/listing-text";
import { revisionOf } from "../../src/protocol/revision";
import {
  misshapenMembers,
  parsedMembers,
  rootReadsWell,
  rootTextReadsWell,
  shapedRoot,
  withoutMembers,
} from "../../src/protocol/tool-shape";
import { misshapenOf, WrittenTool } from "../../src/protocol/written-tool";
import { rewriteJsonText } from "../../src/rewrite/listing-answer";
import { answerSearch } from "../../src/rewrite/search-mode";
import { profileOf } from "../../src/schemas/profile";
import { schemaView } from "../../src/schemas/view";
import { WHOLE_LISTING } from "../../support/listing";
import { freshToolMap } from "../helpers/fresh-tool-map";
import { captureLogs } from "../helpers/logs";
import { PROVIDER_RULES } from "../helpers/provider-rules";

const SCHEMA = { type: "object", properties: { id: { type: "integer" } }, required: ["id"] };

/** Each member as a client refused it, with what is left out. */
const REFUSED: Array<[string, Record<string, unknown>, string[]]> = [
  ["a description null", { description: null }, ["description"]],
  ["a description 42", { description: 42 }, ["description"]],
  ["a title null", { title: null }, ["title"]],
  ["annotations null", { annotations: null }, ["annotations"]],
  ["annotations a list", { annotations: [] }, ["annotations"]],
  [
    "hints of other types",
    { annotations: { readOnlyHint: "true", destructiveHint: 1, title: null, other: null } },
    ["annotations.title", "annotations.readOnlyHint", "annotations.destructiveHint"],
  ],
  ["no input schema", { inputSchema: undefined }, ["inputSchema"]],
  ["an input schema text", { inputSchema: "x" }, ["inputSchema"]],
  ["an output schema null", { outputSchema: null }, ["outputSchema"]],
  ["an output schema of no type", { outputSchema: { properties: {} } }, ["outputSchema"]],
  ["an output schema of an array", { outputSchema: { type: "array" } }, ["outputSchema"]],
  [
    "an output schema whose property is true",
    { outputSchema: { type: "object", properties: { a: true } } },
    ["outputSchema"],
  ],
  [
    "an output schema's $schema 5",
    { outputSchema: { type: "object", $schema: 5 } },
    ["outputSchema"],
  ],
  ["icons null", { icons: null }, ["icons"]],
  ["an icon of no src", { icons: [{ mimeType: "image/png" }] }, ["icons"]],
  ["an icon's theme", { icons: [{ src: "x", theme: "blue" }] }, ["icons"]],
  ["an icon's sizes", { icons: [{ src: "x", sizes: "48x48" }] }, ["icons"]],
  ["_meta a list", { _meta: [] }, ["_meta"]],
  ["execution null", { execution: null }, ["execution"]],
  ["a task support", { execution: { taskSupport: "always" } }, ["execution.taskSupport"]],
];

/** What every client takes, each member present. */
const WELL = {
  name: "orders.get",
  title: "Get",
  description: "Get one order.",
  inputSchema: SCHEMA,
  outputSchema: { type: "object", properties: { status: { type: "string" } }, $schema: "x" },
  annotations: { title: "Order", readOnlyHint: true, openWorldHint: false, other: null },
  icons: [{ src: "https://x/o.png", mimeType: "image/png", sizes: ["48x48"], theme: "dark" }],
  _meta: { "x/y": null },
  execution: { taskSupport: "optional" },
  other: null,
};

/** `tool` read from a listing's text, as the proxy reads an origin's answer. */
function written(tool: Record<string, unknown>): WrittenTool {
  const text = JSON.stringify({ jsonrpc: "2.0", id: 1, result: { tools: [tool] } });
  const [element] = readListingText(text)?.elements ?? [];
  if (!(element instanceof WrittenTool)) throw new Error("not read as a tool");
  return element;
}

describe("a tool's members", () => {
  it("that every client takes are none left out", () => {
    expect(misshapenMembers(parsedMembers(WELL))).toEqual([]);
    expect(misshapenMembers(written(WELL))).toEqual([]);
  });

  it.each(REFUSED)("%s is left out", (_, members, left) => {
    const tool = { ...WELL, ...members };
    expect(misshapenMembers(parsedMembers(tool))).toEqual(left);
    expect(misshapenOf(written(tool))).toEqual(left);
  });

  it("written so no JSON parser reads them are left out whole, not read", () => {
    // A raw control character in a string: the proxy's reading of the text passes it, no client's.
    for (const member of ["annotations", "execution", "icons"]) {
      const value = member === "icons" ? '[{"src":"a\u0001"}]' : '{"title":"a\u0001"}';
      const text = `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"t","inputSchema":{"type":"object"},"${member}":${value}}]}}`;
      const [tool] = readListingText(text)?.elements ?? [];
      expect(tool).toBeInstanceOf(WrittenTool);
      expect(misshapenMembers(tool as WrittenTool)).toEqual([member]);
    }
  });

  it("of a tool written again as it was are known without reading it again", () => {
    const tool = {
      ...WELL,
      name: "orders.find",
      description: null,
      annotations: { readOnlyHint: "x" },
    };
    const first = written(tool);
    const text = JSON.stringify({ jsonrpc: "2.0", id: 2, result: { tools: [WELL, tool] } });
    const [, moved] = readListingText(text, [first])?.elements ?? [];
    expect(moved).toBeInstanceOf(WrittenTool);
    expect((moved as WrittenTool).texts).toBe(first.texts);
    expect(misshapenOf(moved as WrittenTool)).toBe(misshapenOf(first));
    expect(misshapenOf(first)).toEqual(["description", "annotations.readOnlyHint"]);
  });

  it("read from the text are those read from the parse", () => {
    const member = fc.oneof(
      fc.jsonValue({ maxDepth: 3 }),
      fc.constantFrom(WELL.annotations, WELL.icons, WELL.outputSchema, { type: "object" }),
    );
    const keys = ["title", "description", "inputSchema", "outputSchema", "annotations"] as const;
    const more = ["icons", "_meta", "execution"] as const;
    fc.assert(
      fc.property(
        fc.record(Object.fromEntries([...keys, ...more].map((key) => [key, member])), {
          requiredKeys: [],
        }),
        (members) => {
          const tool = { name: "t", ...members };
          const parsed = JSON.parse(JSON.stringify(tool));
          expect(misshapenMembers(written(tool))).toEqual(misshapenMembers(parsedMembers(parsed)));
        },
      ),
    );
  });

  it("are left out by path, every other as it was", () => {
    const tool = { ...WELL, description: null, annotations: { readOnlyHint: "x", title: "T" } };
    const shown = withoutMembers(tool, ["description", "annotations.readOnlyHint", "inputSchema"]);
    expect(Object.keys(shown)).toEqual(Object.keys(tool).filter((key) => key !== "description"));
    expect(shown.annotations).toEqual({ title: "T" });
    // The origin's own tool is not changed.
    expect(tool.annotations).toEqual({ readOnlyHint: "x", title: "T" });
  });
});

describe("a schema's root", () => {
  const root = fc.record(
    {
      type: fc.constantFrom("object", "array", ["object", "null"], null),
      properties: fc.oneof(
        fc.dictionary(fc.string(), fc.oneof(fc.boolean(), fc.constant({}), fc.jsonValue())),
        fc.jsonValue(),
      ),
      required: fc.oneof(fc.array(fc.string()), fc.jsonValue()),
      $schema: fc.oneof(fc.string(), fc.integer()),
      description: fc.string(),
    },
    { requiredKeys: [] },
  );

  it("read from its text reads as its parse, where the text tells", () => {
    fc.assert(
      fc.property(root, (schema) => {
        const told = rootTextReadsWell(JSON.stringify(schema), 0);
        if (told !== undefined) expect(told).toBe(rootReadsWell(schema));
      }),
    );
  });

  it("shaped is one every client takes, and the same where it is one", () => {
    fc.assert(
      fc.property(root, (schema) => {
        const copy = structuredClone(schema);
        const shaped = shapedRoot(schema);
        expect(rootReadsWell(shaped)).toBe(true);
        expect(schema).toEqual(copy);
        if (rootReadsWell(schema)) expect(shaped).toBe(schema);
        expect(shaped.description).toBe(schema.description);
      }),
    );
    expect(
      shapedRoot({ properties: { a: true, b: false, c: null, d: { type: "string" } } }),
    ).toEqual({
      type: "object",
      properties: { a: {}, b: { not: {} }, c: {}, d: { type: "string" } },
    });
  });

  it("is shaped in every profile's view, the pass-through one's too", () => {
    const misshapen = {
      properties: { into: { type: "integer" }, extra: true },
      required: ["into"],
    };
    for (const profile of ["mcp", "openai", "anthropic", "gemini"] as const) {
      const view = schemaView(misshapen, profileOf(profile).schemas);
      expect(rootReadsWell(view.schema), profile).toBe(true);
      expect(view.differs).toBe(true);
    }
    const view = schemaView(SCHEMA, profileOf("mcp").schemas);
    expect(view).toMatchObject({ schema: SCHEMA, differs: false });
  });
});

describe("a listing with a misshapen tool", () => {
  const toolMap = (profile: ProfileName) => freshToolMap(profile);
  // A well-formed tool written unusually: its text is copied, spaces, escapes and digits alike.
  const well =
    '{ "name":"orders_get","description":"caf\\u00e9", "inputSchema":{"type":"object","properties":{"n":{"maximum":9007199254740993}}},"annotations":{"readOnlyHint":true}}';
  const misshapen =
    '{"name":"orders_find","description":null,"inputSchema":{"type":"object","properties":{"n":{"maximum":9007199254740993}}},"annotations":{"readOnlyHint":"yes","title":"Find"}}';
  const text = `{"jsonrpc":"2.0","id":1,"result":{"tools":[${well},${misshapen}]}}`;

  it.each(["mcp", "openai"] as const)(
    "at %s, shows the other tools as the origin wrote them, and logs which members it left out",
    async (profile) => {
      const logs = captureLogs();
      const answer = (await rewriteJsonText(text, {
        listIds: new Set([1]),
        toolMap: toolMap(profile),
      })) as string;
      expect(answer).toContain(well);
      const [, shown] = JSON.parse(answer).result.tools;
      expect(shown).toEqual({
        name: "orders_find",
        inputSchema: { type: "object", properties: { n: { maximum: 9007199254740992 } } },
        annotations: { title: "Find" },
      });
      // The rest of it as the origin wrote it.
      expect(answer).toContain('"maximum":9007199254740993');
      expect(logs.events("tool_members_left_out")).toEqual([
        {
          event: "tool_members_left_out",
          profile,
          count: 1,
          tools: [{ tool: "orders_find", members: ["description", "annotations.readOnlyHint"] }],
        },
      ]);
      logs.restore();
    },
  );
});

describe("a tool whose input schema is no object", () => {
  const listing = `{"jsonrpc":"2.0","id":1,"result":{"tools":[${[
    '{"name":"alpha_none","description":"Takes nothing."}',
    '{"name":"beta_text","description":"Takes text.","inputSchema":"x"}',
    '{"name":"gamma_null","description":"Takes null.","inputSchema":null}',
  ].join(",")}]}}`;

  it.each(Object.keys(PROVIDER_RULES))(
    "at %s, is listed with one that takes any arguments, as the provider accepts it",
    async (profile) => {
      const logs = captureLogs();
      const map = freshToolMap(profile as ProfileName);
      const answer = await rewriteJsonText(listing, { listIds: new Set([1]), toolMap: map });
      const tools = JSON.parse(answer as string).result.tools as Array<Record<string, unknown>>;
      expect(tools).toHaveLength(3);
      for (const tool of tools) {
        expect(tool.inputSchema, `${tool.name}`).toMatchObject({ type: "object" });
        expect(PROVIDER_RULES[profile]?.(tool.inputSchema), `${tool.name}`).toEqual([]);
      }
      logs.restore();
    },
  );
});

describe("search mode's found tools", () => {
  // Three tools past a ceiling of one: search mode, each found by its word.
  const listing = `{"jsonrpc":"2.0","id":1,"result":{"tools":[${[
    '{"name":"alpha.none","description":"alpha"}',
    '{"name":"beta.text","description":"beta","inputSchema":"x"}',
    '{"name":"gamma.untyped","description":"gamma","inputSchema":{"properties":{"p":true}}}',
  ].join(",")}]}}`;

  it.each(["mcp", "openai", "openai-strict"] as const)(
    "at %s, show each input schema as a listing does: one every client, and the provider, takes",
    async (profile) => {
      const logs = captureLogs();
      const toolMap = freshToolMap(profileOf(profile, { maxTools: 1 }));
      await rewriteJsonText(listing, {
        listIds: new Set([1]),
        wholeListing: WHOLE_LISTING,
        toolMap,
      });
      const search = await toolMap.search();
      if (!search) throw new Error("no search mode");
      const found = (query: string) => {
        const call = {
          jsonrpc: "2.0" as const,
          id: 2,
          method: "tools/call",
          params: { name: "search_tools", arguments: { query, limit: 1 } },
        };
        const { response } = answerSearch(call, search, revisionOf(new Headers()), 1 << 20);
        const { result } = response as {
          result: { content: Array<{ text: string }>; structuredContent: { tools: unknown[] } };
        };
        return { text: result.content[0]?.text, tool: result.structuredContent.tools[0] };
      };
      for (const query of ["alpha", "beta", "gamma"]) {
        const { text, tool } = found(query);
        const { inputSchema } = tool as { inputSchema: unknown };
        expect(inputSchema, query).toMatchObject({ type: "object" });
        expect(text).toContain(`input schema: ${JSON.stringify(inputSchema)}`);
        if (profile !== "mcp") expect(PROVIDER_RULES[profile]?.(inputSchema), query).toEqual([]);
      }
      expect(found("gamma").tool).toMatchObject({ inputSchema: { properties: { p: {} } } });
      logs.restore();
    },
  );
});
