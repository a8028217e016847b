import { describe, expect, it } from "vitest";
import { encodeHeaderValue } from "../../src/protocol/mcp-headers";
import { namedTools } from "../../src/protocol/tools-list";
import { renameTools, UNFIT_META } from "../../src/rewrite/tools-list";
import { DEMO_NAMES } from "../helpers/demo-names";

describe("renameTools", () => {
  it("changes each tool's name and nothing else, and leaves out what is no tool", () => {
    const result = {
      tools: [
        {
          name: "files.read",
          title: "Read",
          inputSchema: { type: "object" },
          outputSchema: { type: "object" },
          annotations: { readOnlyHint: true },
          execution: { taskSupport: "optional" },
          _meta: { "x/y": 1 },
          futureField: [1, 2],
        },
        { name: "ok_name", inputSchema: { type: "object" } },
        { title: "no name at all" },
      ],
      nextCursor: "abc",
      ttlMs: 60000,
      cacheScope: "session",
      _meta: { trace: "t" },
    };
    const renamed = renameTools(result, {
      names: new Map([
        ["files.read", DEMO_NAMES["files.read"]],
        ["ok_name", "ok_name"],
      ]),
      schemas: new Map(),
      unfit: new Map(),
      descriptions: new Map(),
      misshapen: new Map(),
      hidden: new Set(),
      twoWays: new Set(),
      perCaller: false,
      settled: true,
    });
    expect(renamed).toEqual({
      ...result,
      tools: [
        { ...result.tools[0], name: DEMO_NAMES["files.read"] },
        result.tools[1],
        // The entry with no name is no tool, which every client refuses the listing over: left out.
      ],
    });
    expect(Object.keys(renamed.tools[0] as object)).toEqual(Object.keys(result.tools[0] as object));
  });

  it("writes a public cacheScope private, in its place, only where the listing is its caller's own", () => {
    const result = { tools: [], ttlMs: 60000, cacheScope: "public", nextCursor: "abc" };
    const listing = (perCaller: boolean) => ({
      names: new Map(),
      schemas: new Map(),
      unfit: new Map(),
      descriptions: new Map(),
      misshapen: new Map(),
      hidden: new Set<string>(),
      twoWays: new Set<string>(),
      perCaller,
      settled: true,
    });
    const own = renameTools(result, listing(true));
    expect(own).toEqual({ ...result, cacheScope: "private" });
    expect(Object.keys(own)).toEqual(Object.keys(result));
    expect(renameTools(result, listing(false))).toEqual(result);
  });
});

describe("namedTools, of a listing parsed whole", () => {
  it("hands on of each tool the members of MCP's the proxy reads, and none the origin wrote beside them", () => {
    const inputSchema = { type: "object", properties: { amount: { type: "integer" } } };
    const result = JSON.parse(
      JSON.stringify({
        tools: [
          {
            name: "transfer",
            description: "Moves money.",
            inputSchema,
            _meta: { "x/y": 1 },
            // Members the proxy's reading of a listing's text gives a tool (listing-text.ts).
            schemaJson: { text: '{"type":"object"}', span: [0, 17] },
            written: { text: "{}", span: [0, 2] },
            readsOneWay: true,
            json: 5,
          },
          { title: "no name at all" },
        ],
      }),
    );
    const [tool, ...rest] = namedTools(result);
    expect(rest).toEqual([]);
    expect(Object.entries(tool ?? {}).filter(([, value]) => value !== undefined)).toEqual([
      ["name", "transfer"],
      ["description", "Moves money."],
      ["inputSchema", inputSchema],
      ["_meta", { "x/y": 1 }],
    ]);
    // The listing the client is sent is the origin's, as it came.
    expect(result.tools[0]).toHaveProperty("schemaJson");
  });
});

describe("renameTools, a tool its provider may still refuse", () => {
  it("says why in the tool's _meta, beside the origin's own entries", () => {
    const tool = { name: "bulk.import", inputSchema: { type: "object" }, _meta: { "x/y": 1 } };
    const view = { type: "object", properties: {}, additionalProperties: false, required: [] };
    const renamed = renameTools(
      { tools: [tool] },
      {
        names: new Map([["bulk.import", "bulk_import_abc123"]]),
        schemas: new Map([["bulk.import", view]]),
        unfit: new Map([["bulk.import", "1001 enum values (at most 1,000)"]]),
        descriptions: new Map(),
        misshapen: new Map(),
        hidden: new Set(),
        twoWays: new Set(),
        perCaller: false,
        settled: true,
      },
    );
    expect(renamed.tools).toEqual([
      {
        name: "bulk_import_abc123",
        inputSchema: view,
        _meta: { "x/y": 1, [UNFIT_META]: "1001 enum values (at most 1,000)" },
      },
    ]);
  });
});

describe("encodeHeaderValue (SEP-2243)", () => {
  it.each([
    ["unity/health", "unity/health"],
    ["scope:action", "scope:action"],
    ["über", "=?base64?w7xiZXI=?="],
    [" padded", "=?base64?IHBhZGRlZA==?="],
    ["line\r\nbreak", "=?base64?bGluZQ0KYnJlYWs=?="],
    ["=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="],
  ])("%o → %o", (value, header) => {
    expect(encodeHeaderValue(value)).toBe(header);
  });
});
