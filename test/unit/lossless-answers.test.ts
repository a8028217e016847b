/**
 * Lossless on the way back, property-based: a listing the proxy renames, alone
 * or in a batch beside other answers, and a batch it merges its own answers
 * into, reach the client with every member it does not mean to change
 * written as the origin wrote it (numbers, escapes, unknown fields of tools,
 * results and `_meta`). Values are compared by the text that wrote them; the
 * answers of a batch it does not rename, and the other members of a tool it
 * writes again, byte for byte.
 */
import fc from "fast-check";
import { afterEach, describe, expect, it, vi } from "vitest";
import { keyReadTwice } from "../../src/json";
import type { ProfileName } from "../../src/names/profiles";
import { misshapenMembers, parsedMembers } from "../../src/protocol/tool-shape";
import { rewriteJsonText } from "../../src/rewrite/listing-answer";
import { UNFIT_META } from "../../src/rewrite/tools-list";
import type { ToolPolicy } from "../../src/rules/tool-rules";
import { freshToolMap } from "../helpers/fresh-tool-map";
import {
  differences,
  objectText,
  oddObjectText,
  oddValueText,
  sourceTree,
  spaceText,
  type Tree,
  valueText,
} from "../helpers/json-text";
import { rulesOf } from "../helpers/tool-rules";

afterEach(() => {
  vi.restoreAllMocks();
});

/** Members of a tool the proxy never changes, known to MCP or not, and keys like prototype members. */
const TOOL_MEMBERS = [
  "title",
  "annotations",
  "outputSchema",
  "_meta",
  "icons",
  "x-vendor",
  "__proto__",
];
const memberText = fc
  .uniqueArray(fc.tuple(fc.constantFrom(...TOOL_MEMBERS), valueText), {
    selector: ([key]) => key,
    maxLength: 4,
  })
  .map((entries) => entries.map(([key, value]) => `,${JSON.stringify(key)}:${value}`).join(""));

/** A schema some profiles view (a `oneOf` at its root, a `const`), with values in any text. */
const schemaText = fc
  .tuple(
    fc.constantFrom("", ',"oneOf":[{"required":["a"]},{"required":["b"]}]'),
    valueText,
    valueText,
  )
  .map(
    ([root, bound, other]) =>
      `{"type":"object","properties":{"a":{"type":"integer","maximum":${bound === "null" ? "1" : "9007199254740993"},"default":${other}},"b":{"const":${other}}}${root}}`,
  );

const toolText = (name: string) =>
  fc
    .tuple(schemaText, memberText)
    .map(
      ([schema, members]) => `{"name":${JSON.stringify(name)},"inputSchema":${schema}${members}}`,
    );

const NAMES = ["files.read", "get weather", "plain_name", "a/b"];
const listingText = fc
  .tuple(
    fc.subarray(NAMES, { minLength: 1 }).chain((names) => fc.tuple(...names.map(toolText))),
    objectText(valueText),
  )
  .map(
    ([tools, extra]) =>
      `{"jsonrpc":"2.0","id":1,"result":{${extra.slice(1, -1)}${extra === "{}" ? "" : ","}"tools":[${tools.join(",")}]}}`,
  );
const otherText = fc
  .tuple(fc.integer({ min: 2, max: 99 }), objectText(valueText))
  .map(([id, result]) => `{"jsonrpc":"2.0","id":${id},"result":${result}}`);
/** An answer of the origin's written unusually (json-text.ts `oddObjectText`). */
const oddAnswerText = fc
  .tuple(fc.integer({ min: 2, max: 99 }), oddObjectText(oddValueText), spaceText)
  .map(([id, result, space]) => `{${space}"jsonrpc":"2.0",${space}"id":${id},"result":${result}}`);
const answerText = fc.oneof(
  listingText,
  fc
    .tuple(listingText, fc.array(otherText, { maxLength: 3 }))
    .map(([listing, others]) => `[${[...others, listing].join(",")}]`),
);

/**
 * The paths at which a listing answer through the proxy may differ: each tool's name and input
 * schema, and the members of `text`'s tools no MCP client takes (protocol/tool-shape.ts), which
 * are left out.
 */
const mayDiffer = (path: string, text: string) => {
  if (
    /^(?:\d+\.)?result\.tools\.\d+\.(?:name|inputSchema(?:\..*)?|_meta\.[^.]*unfit)$/.test(path)
  ) {
    return true;
  }
  if (path.endsWith(UNFIT_META)) return true;
  const at = /^(?:\d+\.)?result\.tools\.(\d+)\.(.*)$/.exec(path);
  const listing = [JSON.parse(text)].flat().at(-1) as { result: { tools: unknown[] } };
  const tool = listing.result.tools[Number(at?.[1])] as Record<string, unknown> | undefined;
  const misshapen = tool ? misshapenMembers(parsedMembers(tool)) : [];
  return misshapen.some((left) => at?.[2] === left || at?.[2]?.startsWith(`${left}.`));
};

/** Rules that write `files.read` again: its description changes. */
const DESCRIBING: ToolPolicy = {
  rules: rulesOf({ tools: { "files.read": { appendDescription: "Ask first." } } }),
  changes: "allow",
};

describe("a listing the proxy renames", () => {
  it("keeps the origin's numbers in every schema, viewed or not", async () => {
    const schema =
      '{"type":"object","properties":{"n":{"type":"integer","maximum":9007199254740993,"default":1.50,"description":"caf\\u00e9"}},"additionalProperties":false}';
    const text = `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a.b","inputSchema":${schema}}]}}`;
    for (const profile of ["openai", "gemini"] as const) {
      const toolMap = freshToolMap(profile);
      const renamed = await rewriteJsonText(text, { listIds: new Set([1]), toolMap });
      expect(renamed).toContain('"maximum":9007199254740993');
      // OpenAI takes the schema as it is: the origin's text, escapes and all.
      if (profile === "openai") expect(renamed).toContain(`"inputSchema":${schema}`);
    }
  });

  // One double written two ways in one schema: known by value it has no one text, so each is
  // written in its own only where the view knows where it came from, in the nodes it copied
  // (optional made nullable, a `$ref` inlined, `Optional[…]`'s `anyOf` with null merged) and in
  // the values it moved (a `const` made an enum, an enum without its null, a default in words).
  it.each([
    [
      "openai-strict",
      '{"a":{"type":"integer","maximum":9007199254740993},"b":{"type":"integer","maximum":9007199254740992}}',
      ['"maximum":9007199254740993', '"maximum":9007199254740992'],
    ],
    [
      "openai-strict",
      '{"a":{"type":"number","minimum":0.0},"b":{"type":"integer","minimum":0}}',
      ['"minimum":0.0', '"minimum":0}'],
    ],
    [
      "gemini",
      '{"a":{"anyOf":[{"type":"integer","maximum":9007199254740993},{"type":"null"}]},"b":{"type":"integer","maximum":9007199254740992}}',
      ['"maximum":9007199254740993', '"maximum":9007199254740992'],
    ],
    [
      "gemini",
      '{"a":{"$ref":"#/$defs/big"},"b":{"type":"integer","maximum":9007199254740992}},"$defs":{"big":{"type":"integer","maximum":9007199254740993}}',
      ['"maximum":9007199254740993', '"maximum":9007199254740992'],
    ],
    [
      "gemini",
      '{"a":{"const":9007199254740993},"b":{"const":9007199254740992}}',
      ['"enum":["9007199254740993"]', '"enum":["9007199254740992"]'],
    ],
    [
      "gemini",
      '{"a":{"enum":[null,9007199254740993]},"b":{"enum":[9007199254740992]}}',
      ['"enum":["9007199254740993"]', '"enum":["9007199254740992"]'],
    ],
    [
      "gemini",
      '{"a":{"type":"integer","default":9007199254740993},"b":{"type":"integer","default":9007199254740992}}',
      ["Default: 9007199254740993.", "Default: 9007199254740992."],
    ],
  ])(
    "keeps each number's own text in a %s view of a schema that writes its double two ways: %s",
    async (profile, properties, written) => {
      const schema = `{"type":"object","properties":${properties}}`;
      const text = `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a.b","inputSchema":${schema}}]}}`;
      const renamed = await rewriteJsonText(text, {
        listIds: new Set([1]),
        toolMap: freshToolMap(profile as ProfileName),
      });
      for (const part of written) expect(renamed).toContain(part);
    },
  );

  it("keeps every other member of every tool, of the result and of other answers as the origin wrote it (property)", async () => {
    vi.spyOn(console, "log").mockImplementation(() => {});
    let changed = 0;
    await fc.assert(
      fc.asyncProperty(
        answerText,
        fc.constantFrom("openai", "gemini", "openai-strict"),
        async (text, profile) => {
          const toolMap = freshToolMap(profile);
          const renamed = await rewriteJsonText(text, { listIds: new Set([1]), toolMap });
          if (renamed === undefined) return;
          changed++;
          const before = sourceTree(text);
          const after = sourceTree(renamed);
          for (const path of differences(before, after, "")) {
            expect(mayDiffer(path, text), `${path} changed in ${text}\n${renamed}`).toBe(true);
          }
          // Every tool is still there, in its order.
          const toolsOf = (tree: Tree) =>
            ([tree].flat().at(-1) as { result: { tools: Tree[] } }).result.tools.length;
          expect(toolsOf(after)).toBe(toolsOf(before));
        },
      ),
      { numRuns: 400 },
    );
    expect(changed).toBeGreaterThan(100);
  });

  it("keeps every other member of a tool it writes again for the description the rules give it, as the origin wrote it", async () => {
    // Spacing, key escapes and array-index keys, which JSON.stringify writes first.
    vi.spyOn(console, "log").mockImplementation(() => {});
    const kept = [
      '"annotations": {"title": "caf\\u00e9", "readOnlyHint": true}',
      '"outputSchema": {"type": "object", "properties": {"b": {"type": "string"}, "2024": {"type": "number"}, "10": {}}}',
      '"icons": [ {"src": "https://icons.example/\\u0069.png"} ]',
      '"x-vendor": {"z": 1, "3": 2.50}',
    ];
    const text = `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"files.read", "description": "Reads.", ${kept.join(", ")}, "inputSchema": {"type":"object"}}]}}`;
    const toolMap = freshToolMap("openai", DESCRIBING);
    const renamed = await rewriteJsonText(text, { listIds: new Set([1]), toolMap });
    expect(renamed).toContain("Ask first.");
    for (const member of kept) expect(renamed).toContain(member);
  });

  it("in a batch, keeps every other answer as the origin wrote it, byte for byte (property)", async () => {
    // Spacing, key escapes, array-index keys (which a JavaScript object holds first), and a key
    // written twice, which readers read one way or the other: the proxy reads none of these.
    vi.spyOn(console, "log").mockImplementation(() => {});
    const twice = '{"jsonrpc":"2.0", "id":50, "result":{"isError":false, "isError":true}}';
    await fc.assert(
      fc.asyncProperty(
        listingText,
        fc.array(oddAnswerText, { maxLength: 3 }),
        spaceText,
        async (listing, others, space) => {
          const answers = [twice, ...others];
          const text = `[${answers.join(`,${space}`)},${space}${listing}]`;
          const renamed = await rewriteJsonText(text, {
            listIds: new Set([1]),
            toolMap: freshToolMap("openai"),
          });
          expect(renamed?.startsWith(`[${answers.join(`,${space}`)},${space}`), text).toBe(true);
        },
      ),
      { numRuns: 200 },
    );
  });

  it("in a batch of listings, or beside the proxy's own answers, keeps each tool it leaves as it came, and each listing's envelope, byte for byte", async () => {
    // Parsed whole, a listing the proxy renamed was written as JSON.stringify writes it, but
    // for its numbers' and strings' text: its spacing and its keys' escapes were lost, in the
    // tools it did not change too.
    vi.spyOn(console, "log").mockImplementation(() => {});
    const schema =
      '{ "type" : "object", "properties" : { "n" : { "type" : "number", "maximum" : 1E+2 } } }';
    const listing = (id: number, name: string) =>
      `{ "jsonrpc" : "2.0" , "\\u0069d" : ${id} , "result" : { "tools" : [ { "name" : "${name}" , "inputSchema" : ${schema} } ,\r\n { "n\\u0061me" : "plain_${id}" , "inputSchema" : ${schema} , "x-v" : [ 1.0 , -0 ] } ] , "_meta" : { "k" : "\\u00e9" } } }`;
    const local = { jsonrpc: "2.0", id: 9, error: { code: -32602, message: "x" } };
    for (const [text, before] of [
      [`[ ${listing(1, "a.b")} ,\n ${listing(2, "c.d")} ]`, []],
      [listing(1, "a.b"), [local]],
    ] as const) {
      const renamed = await rewriteJsonText(
        text,
        { listIds: new Set([1, 2]), toolMap: freshToolMap("openai") },
        before,
      );
      const origin = (renamed ?? "").replace(/"(a|c)_(b|d)_\w+"/g, (_, x, y) => `"${x}.${y}"`);
      expect(origin).toContain(text.startsWith("[") ? text.slice(1, -1).trim() : text);
    }
  });

  it("in an answer parsed whole, keeps each tool it leaves as it came and every member beside the names, byte for byte (property)", async () => {
    // A batch of one listing or two, or one beside the proxy's own answer: spacing, key escapes
    // and array-index keys anywhere but the names it changes, in the envelope and in the tools.
    vi.spyOn(console, "log").mockImplementation(() => {});
    const schema = '{ "type" : "object" , "properties" : { } }';
    const odd = fc.option(oddObjectText(oddValueText), { nil: undefined });
    const tool = (names: readonly string[]) =>
      fc
        .tuple(
          fc.constantFrom(...names),
          spaceText,
          fc.constantFrom('"name"', '"n\\u0061me"'),
          odd,
          odd,
        )
        .map(
          ([name, space, key, vendor, meta]) =>
            `{${space}${key}${space}:${space}"${name}",${space}"inputSchema":${schema}${vendor === undefined ? "" : `,${space}"x-vendor"${space}:${space}${vendor}`}${meta === undefined ? "" : `, "_meta":${meta}`}${space}}`,
        );
    const listing = (id: number) =>
      fc
        .tuple(
          // Each name once: a name listed twice is listed once.
          fc
            .subarray(["a.b", "c/d", `plain_${id}`], { minLength: 1 })
            .chain((names) => fc.tuple(...names.map((name) => tool([name])))),
          spaceText,
          fc.constantFrom('"id"', '"\\u0069d"'),
          odd,
        )
        .map(
          ([tools, space, idKey, meta]) =>
            `{${space}"jsonrpc":"2.0",${space}${idKey}${space}:${space}${id},"result":{${space}"tools"${space}:${space}[${tools.join(`,${space}`)}]${meta === undefined ? "" : `,"_meta":${meta}`}}${space}}`,
        );
    const local = { jsonrpc: "2.0", id: 9, error: { code: -32602, message: "x" } };
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc
            .tuple(listing(1), spaceText)
            .map(([one, space]) => ({ text: `[${space}${one}${space}]`, before: [] })),
          fc
            .tuple(listing(1), listing(2), spaceText)
            .map(([one, two, space]) => ({ text: `[${one},${space}${two}]`, before: [] })),
          listing(1).map((one) => ({ text: one, before: [local] })),
        ),
        async ({ text, before }) => {
          const renamed = await rewriteJsonText(
            text,
            { listIds: new Set([1, 2]), toolMap: freshToolMap("openai") },
            before,
          );
          // Each name the proxy gave, back to the origin's: what is left is the origin's text.
          const origin = (renamed ?? text)
            .replace(/"a_b_\w+"/g, '"a.b"')
            .replace(/"c_d_\w+"/g, '"c/d"');
          expect(origin, text).toContain(before.length > 0 ? text : text.slice(1, -1).trim());
        },
      ),
      { numRuns: 300 },
    );
  });

  it("writes no key twice in a tool it writes again: the client reads the annotations the proxy pinned", async () => {
    vi.spyOn(console, "log").mockImplementation(() => {});
    const text =
      '{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"files.read", "annotations": {"readOnlyHint": false, "readOnlyHint": true}, "inputSchema": {"type":"object","properties":{}}}]}}';
    const toolMap = freshToolMap("openai", DESCRIBING);
    const renamed = await rewriteJsonText(text, { listIds: new Set([1]), toolMap });
    expect(keyReadTwice(renamed ?? "", 0, (key) => key)).toBeUndefined();
    expect(renamed).toContain('"annotations":{"readOnlyHint":true}');
  });

  it("in a batch, writes no key twice in a tool it names: the client reads what the proxy read", async () => {
    vi.spyOn(console, "log").mockImplementation(() => {});
    const text =
      '[{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a.b","inputSchema":{"type":"object"}},{"name":"plain_name","inputSchema":{"type":"object","properties":{"q":{"type":"string","type":"integer"}}},"_meta":{"k":1,"k":2}}]}}]';
    const renamed = await rewriteJsonText(text, {
      listIds: new Set([1]),
      toolMap: freshToolMap("openai"),
    });
    expect(renamed).toContain('"name":"a_b_');
    expect(keyReadTwice(renamed ?? "", 0, (key) => key)).toBeUndefined();
    expect(renamed).toContain('"q":{"type":"integer"}');
  });

  it("merged with the proxy's own answers, writes those as it writes them alone, not with the origin's spelling of a like value", async () => {
    // The origin writes 3 as 3.0 and -32602 as -3.2602e4: by value, the proxy's answer to
    // request 3 was one to 3.0, and its error code one a reader of integers refuses.
    vi.spyOn(console, "log").mockImplementation(() => {});
    const origin = '{"jsonrpc":"2.0", "id":2, "result":{"n":3.0, "c":-3.2602e4, "m":"\\u0078"}}';
    const local = { jsonrpc: "2.0", id: 3, error: { code: -32602, message: "x" } };
    const merged = await rewriteJsonText(
      origin,
      { listIds: new Set(), toolMap: freshToolMap("openai") },
      [local],
    );
    expect(merged).toBe(`[${JSON.stringify(local)},${origin}]`);
  });

  it("merged with the proxy's own answers, keeps the origin's as it wrote them (property)", async () => {
    vi.spyOn(console, "log").mockImplementation(() => {});
    await fc.assert(
      fc.asyncProperty(fc.array(otherText, { minLength: 1, maxLength: 3 }), async (others) => {
        const toolMap = freshToolMap("openai");
        const text = `[${others.join(",")}]`;
        const local = {
          jsonrpc: "2.0",
          id: 100,
          error: { code: -32602, message: "Unknown tool: x" },
        };
        const merged = await rewriteJsonText(text, { listIds: new Set(), toolMap }, [local]);
        expect(merged).toBeDefined();
        const [ours, ...theirs] = sourceTree(merged as string) as Tree[];
        expect(differences(sourceTree(text), theirs, "")).toEqual([]);
        expect(JSON.parse(JSON.stringify(ours))).toBeDefined();
      }),
      { numRuns: 300 },
    );
  });
});
