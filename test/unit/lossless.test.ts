/**
 * Lossless, property-based: for generated POST bodies (exotic numbers, keys
 * named like prototype members at every depth, Unicode with lone surrogates,
 * batches), what the proxy forwards differs from what the client sent only in
 * fields its log reports changing (the listing's `tools_renamed`, each call's
 * `tool_call_repaired`), and a body it does not change is forwarded as the
 * same bytes. Values are compared by the text that wrote
 * them, so a rounded number or a rewritten escape is a difference; and a
 * changed call is held to the client's text byte for byte around what it
 * changes (json.ts `spliceExact`, also tested here).
 */
import { env } from "cloudflare:workers";
import fc from "fast-check";
import { afterEach, describe, expect, it, vi } from "vitest";
import { echoTools } from "../../demo/src/tools";
import {
  MAX_NESTING,
  nestsTooDeep,
  parseExact,
  spliceExact,
  stringifyExact,
  writtenAsIn,
} from "../../src/json";
import { readObject, skipSpace } from "../../src/json-spans";
import { planForward } from "../../src/rewrite/request";
import { NO_RULES, type ToolPolicy } from "../../src/rules/tool-rules";
import { profileOf } from "../../src/schemas/profile";
import { ToolMapMemory } from "../../src/toolmap/isolate-memory";
import { toolResolver } from "../../src/toolmap/resolve-tool";
import { ToolMap } from "../../src/toolmap/tool-map";
import { readPostBody } from "../../src/transport/post-body";
import { ReadBudget } from "../../src/transport/read-bounded";
import { DEMO_NAMES } from "../helpers/demo-names";
import {
  differences,
  isLeaf,
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

const callText = fc
  .tuple(
    fc.integer({ min: 1, max: 999 }),
    fc.constantFrom(DEMO_NAMES["files.read"], "get-weather", "unknown_tool"),
    objectText(valueText),
    fc.option(objectText(valueText), { nil: undefined }),
  )
  .map(
    ([id, name, args, meta]) =>
      `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":${JSON.stringify(name)},"arguments":${args}${meta ? `,"_meta":${meta}` : ""}}}`,
  );
const otherText = fc.oneof(
  fc
    .tuple(fc.integer({ min: 1000, max: 2000 }), objectText(valueText))
    .map(
      ([id, params]) => `{"jsonrpc":"2.0","id":${id},"method":"resources/read","params":${params}}`,
    ),
  objectText(valueText).map(
    (params) => `{"jsonrpc":"2.0","method":"notifications/progress","params":${params}}`,
  ),
);
const bodyText = fc.oneof(
  callText,
  otherText,
  // Each request of a batch its own id: a batch sharing one is refused (docs/errors.md).
  fc
    .uniqueArray(fc.oneof(callText, otherText), {
      minLength: 1,
      maxLength: 4,
      selector: (item) => /^\{"jsonrpc":"2\.0","id":(\d+)/.exec(item)?.[1] ?? item,
    })
    .map((items) => `[${items.join(",")}]`),
);

interface RepairLine {
  name: string;
  renamedKeys: Array<{ from: string; to: string }>;
  coercions: Array<{ path: string }>;
  dropped: string[];
}

/** The paths the log says the proxy changed in a call to `name`: the listing's renames, the call's repairs. */
function reported(lines: RepairLine[], renamed: ReadonlySet<string>, name: string): Set<string> {
  const paths = new Set<string>(renamed.has(name) ? ["params.name"] : []);
  for (const line of lines.filter((candidate) => candidate.name === name)) {
    const argument = (path: string) => paths.add(`params.arguments.${path}`);
    for (const { from, to } of line.renamedKeys) {
      argument(from);
      argument(to);
    }
    for (const { path } of line.coercions) argument(path);
    for (const path of line.dropped) argument(path);
  }
  return paths;
}

/** A tool map that listed two demo tools, and the model-facing names its `tools_renamed` line reported. */
async function listedToolMap(): Promise<{ toolMap: ToolMap; renamed: Set<string> }> {
  const memory = new ToolMapMemory();
  const toolMap = new ToolMap(
    env.TOOL_MAP,
    { origin: `test:${crypto.randomUUID()}`, legacy: `test:${crypto.randomUUID()}` },
    profileOf("openai"),
    memory,
    () => {},
  );
  const log = vi.spyOn(console, "log").mockImplementation(() => {});
  await toolMap.nameListing(
    echoTools.filter((tool) => ["files.read", "get-weather"].includes(tool.name)),
  );
  const renames = log.mock.calls
    .map(([line]) => JSON.parse(String(line)))
    .filter((line) => line.event === "tools_renamed")
    .flatMap((line: { renames: Array<{ to: string }> }) => line.renames.map(({ to }) => to));
  log.mockRestore();
  return { toolMap, renamed: new Set(renames) };
}

describe("what the proxy forwards", () => {
  it("differs from what the client sent only where its log says it changed something", async () => {
    const { toolMap, renamed } = await listedToolMap();
    const resolveTool = toolResolver(toolMap, async () => false);
    let changedBodies = 0;
    await fc.assert(
      fc.asyncProperty(bodyText, async (text) => {
        const log = vi.spyOn(console, "log").mockImplementation(() => {});
        const request = new Request("http://proxy.test/mcp", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: text,
        });
        const body = await readPostBody(
          request,
          { maxBodyBytes: 1 << 20, maxBatchMessages: 256 },
          new ReadBudget().hold(),
        );
        expect(body.kind, text).toBe("parsed");
        if (body.kind !== "parsed") return;
        const plan = await planForward(body, resolveTool, "warn", async () => undefined, 1 << 20);
        expect(plan.kind).toBe("forward");
        if (plan.kind !== "forward") return;
        const lines = log.mock.calls
          .map(([line]) => String(line))
          .filter((line) => line.startsWith('{"event":"tool_call_repaired"'))
          .map((line) => JSON.parse(line) as RepairLine);
        log.mockRestore();

        if (plan.body === body.bytes) return;
        changedBodies++;
        const sent = [sourceTree(text)].flat() as Tree[];
        const forwardedText =
          plan.body instanceof Uint8Array ? new TextDecoder().decode(plan.body) : String(plan.body);
        const forwarded = [sourceTree(forwardedText)].flat() as Tree[];
        expect(forwarded).toHaveLength(sent.length);
        for (const [index, message] of sent.entries()) {
          const params = (message as Record<string, Tree>).params as
            | Record<string, Tree>
            | undefined;
          const name =
            params?.name && isLeaf(params.name) ? JSON.parse(params.name.text) : undefined;
          const allowed =
            typeof name === "string" ? reported(lines, renamed, name) : new Set<string>();
          for (const path of differences(message, forwarded[index], "")) {
            expect(allowed, `${path} changed in ${text}`).toContain(path);
          }
        }
      }),
      { numRuns: 300 },
    );
    // Not vacuous: a share of the bodies was changed (54 to 92 of 300 across 60 seeds, a standard
    // deviation of 8: the floor is five and a half below their mean).
    expect(changedBodies).toBeGreaterThan(30);
  });
});

describe("a call the proxy changes is written over the client's text", () => {
  /** The inside of an object's text, as members to write after another (`,` first where it has any). */
  const membersOf = (object: string) => {
    const inner = object.slice(1, -1);
    return inner.trim() === "" ? inner : `,${inner}`;
  };

  const callParts = fc.record({
    space: fc.array(spaceText, { minLength: 3, maxLength: 3 }),
    id: fc.constantFrom("7", "1.0", "9007199254740993", '"r\\u0031"'),
    pathKey: fc.constantFrom('"path"', '"p\\u0061th"'),
    // A number sent for the string `path` is coerced to the string of its text; "p" stays.
    number: fc.option(fc.constantFrom("12", "1.50", "1e400", "-0", "9007199254740993", "1E5"), {
      nil: undefined,
    }),
    args: oddObjectText(oddValueText),
    meta: fc.option(oddObjectText(oddValueText), { nil: undefined }),
    // Members beside `arguments`: the envelope's, and one the proxy does not know (a vendor's).
    task: fc.option(oddValueText, { nil: undefined }),
    vendor: fc.option(oddValueText, { nil: undefined }),
    beside: fc.option(oddObjectText(oddValueText), { nil: undefined }),
    // In a batch, a call before it that the proxy answers itself: its arguments are no object.
    answered: fc.boolean(),
    // Around the body: a byte order mark, and space before and after the JSON.
    bom: fc.boolean(),
    around: spaceText,
  });
  type CallParts = typeof callParts extends fc.Arbitrary<infer T> ? T : never;

  /**
   * A body of one renamed call (beside a notification, in a batch) as the client sends it, or,
   * `forwarded`, as the origin must get it: the original name, the number for `path` its string.
   */
  function bodyOf(parts: CallParts, forwarded: boolean): string {
    return `${parts.bom ? "\uFEFF" : ""}${parts.around}${jsonOf(parts, forwarded)}${parts.around}`;
  }

  function jsonOf(parts: CallParts, forwarded: boolean): string {
    const [a, b, c] = parts.space as [string, string, string];
    const name = JSON.stringify(forwarded ? "files.read" : DEMO_NAMES["files.read"]);
    const number = forwarded && parts.number !== undefined ? `"${parts.number}"` : parts.number;
    const call =
      `{${a}"jsonrpc"${b}:${b}"2.0",${c}"id":${a}${parts.id},"method":"tools/call",${c}"params":${b}{"name":${a}${name}${b},` +
      `"arguments":{${c}${parts.pathKey}:${number ?? '"p"'}${membersOf(parts.args)}}` +
      `${parts.meta === undefined ? "" : `,${a}"_meta":${parts.meta}`}` +
      `${parts.task === undefined ? "" : `,"task"${b}:${parts.task}`}` +
      `${parts.vendor === undefined ? "" : `,${c}"x-v\u0065ndor":${a}${parts.vendor}`}}${a}}`;
    if (parts.beside === undefined) return call;
    const note = `{"jsonrpc":"2.0",${b}"method":"notifications/progress","params":${parts.beside}}`;
    if (!parts.answered) return `[${a}${call}${b},${c}${note}${a}]`;
    // Forwarded without the call the proxy answers, each message as it was written.
    if (forwarded) return `[${call},${note}]`;
    const refused = `{"jsonrpc":"2.0","id":"refused","method":"tools/call","params":{"name":${name},"arguments":5}}`;
    return `[${a}${refused},${c}${call}${b},${c}${note}${a}]`;
  }

  it("as it came but for the name restored and a value coerced: spacing, escapes, array-index keys, members and messages beside them, a BOM and space around (property)", async () => {
    const { toolMap } = await listedToolMap();
    const resolveTool = toolResolver(toolMap, async () => false);
    await fc.assert(
      fc.asyncProperty(callParts, async (parts) => {
        vi.spyOn(console, "log").mockImplementation(() => {});
        const sent = bodyOf(parts, false);
        const request = new Request("http://proxy.test/mcp", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: sent,
        });
        const body = await readPostBody(
          request,
          { maxBodyBytes: 1 << 20, maxBatchMessages: 256 },
          new ReadBudget().hold(),
        );
        if (body.kind !== "parsed") throw new Error(sent);
        const plan = await planForward(body, resolveTool, "warn", async () => undefined, 1 << 20);
        if (plan.kind !== "forward") throw new Error(sent);
        expect(String(plan.body), sent).toBe(bodyOf(parts, true));
      }),
      { numRuns: 300 },
    );
  });
});

describe("JSON text read on the way to the origin", () => {
  /**
   * A strict tool map that listed `free.form`: `v` takes any value (asked for as text), `o` an
   * object, `l` a list of any values (each asked for as text).
   */
  async function strictToolMap(rules: ToolPolicy["rules"]): Promise<[ToolMap, string]> {
    const toolMap = new ToolMap(
      env.TOOL_MAP,
      { origin: `test:${crypto.randomUUID()}`, legacy: `test:${crypto.randomUUID()}` },
      profileOf("openai-strict"),
      new ToolMapMemory(),
      () => {},
      { rules, changes: "allow" },
    );
    const inputSchema = {
      type: "object",
      properties: {
        v: { description: "Anything." },
        o: { type: "object", properties: { k: {} } },
        d: { type: "integer" },
        l: { type: "array", items: { description: "Anything." } },
      },
    };
    vi.spyOn(console, "log").mockImplementation(() => {});
    const { names } = await toolMap.nameListing([{ name: "free.form", inputSchema }]);
    return [toolMap, names.get("free.form") as string];
  }

  /**
   * Where a call carries JSON text: a value the view asked for as text, the
   * arguments themselves as text (an undeclared `w` in them), an object sent as
   * text where the schema wants one (its `K-` coalesced to `k`), an element of a list. Each with the
   * path the text's value reaches the origin at.
   */
  /** What the proxy forwards of the body `call` (a batch of up to 4), under `warn`. */
  async function forwarded(toolMap: ToolMap, call: string): Promise<string> {
    const request = new Request("http://proxy.test/mcp", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: call,
    });
    const limits = { maxBodyBytes: 1 << 20, maxBatchMessages: 4 };
    const body = await readPostBody(request, limits, new ReadBudget().hold());
    if (body.kind !== "parsed") throw new Error(call);
    const resolveTool = toolResolver(toolMap, async () => false);
    const plan = await planForward(body, resolveTool, "warn", async () => undefined, 1 << 20);
    if (plan.kind === "refused") throw new Error(plan.message);
    return String(plan.body);
  }

  const FORMS: Array<[string, (text: string) => string, string[]]> = [
    ["a value the view asked for as text", (t) => `{"v":${JSON.stringify(t)}}`, ["v"]],
    ["the arguments as text", (t) => JSON.stringify(`{"w":${t}}`), ["w"]],
    ["an object as text", (t) => `{"o":${JSON.stringify(`{"K-":${t}}`)}}`, ["o", "k"]],
    [
      "an element the view asked for as text",
      (t) => `{"l":[1.0,${JSON.stringify(t)}]}`,
      ["l", "1"],
    ],
  ];

  it("reaches the origin byte-equal to the text, at the top and at every depth (property)", async () => {
    // With a default the rules set, the arguments are rebuilt after the text is read back.
    const maps = [
      await strictToolMap(NO_RULES),
      await strictToolMap(rulesOf({ tools: { "free.form": { defaults: { d: 30 } } } })),
    ];
    await fc.assert(
      fc.asyncProperty(
        valueText,
        fc.nat(maps.length - 1),
        fc.nat(FORMS.length - 1),
        async (text, which, form) => {
          vi.spyOn(console, "log").mockImplementation(() => {});
          const [toolMap, name] = maps[which] as [ToolMap, string];
          const [, args, path] = FORMS[form] as (typeof FORMS)[number];
          const call = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":${JSON.stringify(name)},"arguments":${args(text)}}}`;
          let reached: Tree | undefined = sourceTree(await forwarded(toolMap, call));
          for (const key of ["params", "arguments", ...path])
            reached = (reached as Record<string, Tree> | undefined)?.[key];
          expect(differences(sourceTree(text), reached, path.join(".")), call).toEqual([]);
        },
      ),
      { numRuns: 600 },
    );
  });

  /** Numbers that are one double written two ways (`1.5`, `1.50`), and those alone. */
  const twins = fc.constantFrom(
    "9007199254740993",
    "9007199254740992",
    "1.5",
    "1.50",
    "5",
    "5.0",
    "0",
    "-0",
  );
  const ids = fc.constantFrom("5", "9007199254740992", "9007199254740993");

  it("keeps each text's spelling of a value to that text: the body's beside the call, the call's text in it (property)", async () => {
    // A value the body writes one way and a text read on the way writes another (`5` and `5.0`,
    // `…992` and `…993`: one double) was written as the other text wrote it: the request's id
    // `5` reached the origin as `5.0`, an argument `…992` as `…993`.
    const [toolMap, name] = await strictToolMap(NO_RULES);
    const text = fc.oneof(valueText, twins, objectText(twins));
    await fc.assert(
      fc.asyncProperty(
        text,
        twins,
        ids,
        fc.nat(FORMS.length - 1),
        async (inner, beside, id, form) => {
          vi.spyOn(console, "log").mockImplementation(() => {});
          const [, args, path] = FORMS[form] as (typeof FORMS)[number];
          const call = `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":${JSON.stringify(name)},"arguments":${args(inner)},"x":${beside},"_meta":{"b":[${beside}]}}}`;
          const sent = sourceTree(call) as Record<string, Record<string, Tree>>;
          const reachedAll = sourceTree(await forwarded(toolMap, call)) as Record<
            string,
            Record<string, Tree>
          >;
          let reached: Tree | undefined = reachedAll.params?.arguments;
          for (const key of path) reached = (reached as Record<string, Tree> | undefined)?.[key];
          expect(differences(sourceTree(inner), reached, path.join(".")), call).toEqual([]);
          for (const key of ["x", "_meta"]) {
            expect(differences(sent.params?.[key], reachedAll.params?.[key], key), call).toEqual(
              [],
            );
          }
          expect(differences(sent.id, reachedAll.id, "id"), call).toEqual([]);
        },
      ),
      { numRuns: 600 },
    );
  });

  it("writes the request's id, and a call's arguments beside another's text, as the client wrote them", async () => {
    const [toolMap, name] = await strictToolMap(NO_RULES);
    vi.spyOn(console, "log").mockImplementation(() => {});
    const forward = (call: string) => forwarded(toolMap, call);
    // Arguments sent as JSON text, as models write them: its `5.0` is no spelling of the id `5`.
    expect(
      await forward(
        `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"${name}","arguments":"{\\"d\\":5.0}"}}`,
      ),
    ).toBe(
      `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"free.form","arguments":{"d":5.0}}}`,
    );
    // Nor is the first call's `…993` the second call's `…992`, whose `K-` is coalesced.
    expect(
      await forward(
        `[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"${name}","arguments":"{\\"w\\":9007199254740993}"}},` +
          `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"${name}","arguments":{"o":{"K-":9007199254740992}}}}]`,
      ),
    ).toBe(
      `[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"free.form","arguments":{"w":9007199254740993}}},` +
        `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"free.form","arguments":{"o":{"k":9007199254740992}}}}]`,
    );
  });

  it("writes a lone half of a character that JSON text read on the way holds as its escape, never raw", async () => {
    // A text in a string may hold a lone surrogate itself (the body's `\ud800` is one, in the
    // string), not as an escape: written as that text wrote it, the forwarded body held it raw,
    // and UTF-8 carries no lone surrogate: the origin read U+FFFD, not the character sent.
    const [toolMap, name] = await strictToolMap(NO_RULES);
    vi.spyOn(console, "log").mockImplementation(() => {});
    const forward = async (args: string) => {
      const call = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"${name}","arguments":${args}}}`;
      const request = new Request("http://proxy.test/mcp", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: call,
      });
      const limits = { maxBodyBytes: 1 << 20, maxBatchMessages: 1 };
      const body = await readPostBody(request, limits, new ReadBudget().hold());
      if (body.kind !== "parsed") throw new Error(call);
      const resolveTool = toolResolver(toolMap, async () => false);
      const plan = await planForward(body, resolveTool, "warn", async () => undefined, 1 << 20);
      if (plan.kind === "refused") throw new Error(plan.message);
      // What the origin reads: the body as UTF-8 carries it.
      return new TextDecoder().decode(new TextEncoder().encode(String(plan.body)));
    };
    // A value the view asked for as text, the text a string alone; the arguments as text.
    const reached = async (args: string, path: readonly string[]) => {
      const received = JSON.parse(await forward(args)) as { params: { arguments: unknown } };
      let value: unknown = received.params.arguments;
      for (const key of path) value = (value as Record<string, unknown>)[key];
      // As JSON text: a lone surrogate is no text to report a failure in.
      return JSON.stringify(value);
    };
    expect([
      await reached('{"v":"\\"\\ud800\\"","d":1.0}', ["v"]),
      await reached('"{\\"w\\":\\"\\ud800\\",\\"n\\":1.50}"', ["w"]),
      await reached('{"l":[1.0,"\\"\\ud800\\""]}', ["l", "1"]),
    ]).toEqual(['"\\ud800"', '"\\ud800"', '"\\ud800"']);
  });
});

describe("a batch's calls beside a body that writes many numbers otherwise", () => {
  it("cost the map writes of one reading of the body, not one for each call", async () => {
    // Each call that read JSON text joined what the body knew of its numbers by value into a
    // new map: 100 calls beside 300,000 numbers written `1.0` took 5.7 s of CPU. Counted, not timed.
    const toolMap = new ToolMap(
      env.TOOL_MAP,
      { origin: `test:${crypto.randomUUID()}`, legacy: `test:${crypto.randomUUID()}` },
      profileOf("openai"),
      new ToolMapMemory(),
      () => {},
    );
    vi.spyOn(console, "log").mockImplementation(() => {});
    const { names } = await toolMap.nameListing([
      { name: "free.form", inputSchema: { type: "object", properties: { n: {} } } },
    ]);
    const name = JSON.stringify(names.get("free.form"));
    const numbers = 20_000;
    const calls = 32;
    const messages = [
      `{"jsonrpc":"2.0","method":"notifications/progress","params":{"a":[${Array.from({ length: numbers }, (_, i) => `${i}.0`).join(",")}]}}`,
      ...Array.from(
        { length: calls },
        (_, i) =>
          `{"jsonrpc":"2.0","id":${i + 1},"method":"tools/call","params":{"name":${name},"arguments":"{\\"n\\":1.0}"}}`,
      ),
    ];
    const request = new Request("http://proxy.test/mcp", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: `[${messages.join(",")}]`,
    });
    const limits = { maxBodyBytes: 1 << 20, maxBatchMessages: calls + 1 };
    const body = await readPostBody(request, limits, new ReadBudget().hold());
    if (body.kind !== "parsed") throw new Error("not read");
    const resolveTool = toolResolver(toolMap, async () => false);
    // The Map constructor adds what it copies by `set`, which a spy sees.
    const set = vi.spyOn(Map.prototype, "set");
    const plan = await planForward(body, resolveTool, "warn", async () => undefined, 1 << 20);
    const writes = set.mock.calls.length;
    set.mockRestore();
    expect(plan.kind).toBe("forward");
    expect(writes).toBeLessThan(numbers);
  });
});

describe("spliceExact", () => {
  it("reads its text at most eight times over: a change deep in a large value is written as stringifyExact writes it", () => {
    // Each level of what changed reads its container's text again: at 64 levels around 100,000
    // characters, 6.4 million characters for one value coerced at the bottom; at 2, 200,000.
    const around = (depth: number) =>
      `${"[ ".repeat(depth)}"${"x".repeat(100_000)}", "5"${" ]".repeat(depth)}`;
    const coerced = (value: unknown, depth: number): unknown =>
      depth === 0 ? [(value as unknown[])[0], 5] : [coerced((value as unknown[])[0], depth - 1)];
    for (const [depth, spaced] of [
      [2, true],
      [64, false],
    ] as const) {
      const text = around(depth);
      const parsed = parseExact(text);
      const value = coerced(parsed?.value, depth - 1);
      const written = spliceExact(text, parsed?.value, value, parsed?.exact);
      expect(JSON.parse(written)).toEqual(value);
      expect(written.startsWith("[ ["), `${depth} levels`).toBe(spaced);
      if (!spaced) expect(written).toBe(stringifyExact(value, parsed?.exact));
    }
  });

  /**
   * `value` built again as the proxy builds what it changes (a spread, `writtenAsIn`), each
   * object and array where `rebuild` says so, down to the leaves; the rest kept as it is.
   */
  function rebuilt(value: unknown, rebuild: (depth: number) => boolean, depth = 0): unknown {
    if (typeof value !== "object" || value === null) return value;
    const inner = (item: unknown) => rebuilt(item, rebuild, depth + 1);
    if (!rebuild(depth)) return value;
    if (Array.isArray(value)) return writtenAsIn(value.map(inner), value);
    const entries = Object.entries(value).map(([key, item]) => [key, inner(item)] as const);
    return writtenAsIn(Object.fromEntries(entries), value);
  }

  it("writes a value built again from a text's, member for member, as that text (property)", () => {
    fc.assert(
      fc.property(spaceText, oddValueText, spaceText, fc.nat(), (before, value, after, seed) => {
        const text = `${before}${value}${after}`;
        const parsed = parseExact(text);
        const rebuild = (depth: number) => ((seed >> (depth % 30)) & 1) === 1;
        const copy = rebuilt(parsed?.value, rebuild);
        expect(spliceExact(text, parsed?.value, copy, parsed?.exact)).toBe(text);
      }),
      { numRuns: 1000 },
    );
  });

  it("writes a value with a member more or less, as its text where it kept it (property)", () => {
    fc.assert(
      fc.property(oddObjectText(oddValueText), fc.boolean(), (text, add) => {
        const parsed = parseExact(text);
        const value = parsed?.value as Record<string, unknown>;
        const [first] = Object.keys(value);
        const changed = writtenAsIn(
          add
            ? { ...value, added: [1] }
            : Object.fromEntries(Object.entries(value).filter(([key]) => key !== first)),
          value,
        );
        const written = spliceExact(text, value, changed, parsed?.exact);
        expect(sourceTree(written)).toEqual(sourceTree(stringifyExact(changed, parsed?.exact)));
        // Each object or array kept is the text that wrote it.
        for (const [key, span] of readObject(text, skipSpace(text, 0))?.members ?? []) {
          if (Object.hasOwn(changed, key) && typeof value[key] === "object") {
            expect(written).toContain(text.slice(span[0], span[1]));
          }
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe("parseExact and stringifyExact", () => {
  /** Any JSON number: sign, integer part, fraction, exponent. */
  const lexeme = fc
    .tuple(
      fc.constantFrom("", "-"),
      fc.oneof(fc.constant("0"), fc.stringMatching(/^[1-9][0-9]{0,24}$/)),
      fc.option(
        fc.oneof(fc.stringMatching(/^\.[0-9]{1,20}$/), fc.stringMatching(/^\.0{4,8}[1-9]0?$/)),
        { nil: "" },
      ),
      fc.option(fc.stringMatching(/^[eE][+-]?[0-9]{1,3}$/), { nil: "" }),
    )
    .map((parts) => parts.join(""));

  it("write every number back as it was written, inside a value or alone", () => {
    fc.assert(
      fc.property(lexeme, fc.string(), (number, key) => {
        for (const text of [number, `{${JSON.stringify(key)}:[${number},${number}]}`]) {
          const parsed = parseExact(text);
          expect(parsed && stringifyExact(parsed.value, parsed.exact)).toBe(text);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it("write a value as the one text that wrote it, even in an object rebuilt from it", () => {
    const parsed = parseExact('{"a":9007199254740993,"b":"\\u00e9","c":1.0,"d":1}');
    const rebuilt = Object.fromEntries(Object.entries(parsed?.value as object));
    // 1.0 and 1 are one value written two ways: written as JSON.stringify writes it.
    expect(stringifyExact(rebuilt, parsed?.exact)).toBe(
      '{"a":9007199254740993,"b":"\\u00e9","c":1,"d":1}',
    );
  });

  it("read no text nested deeper than MAX_NESTING, whichever way it parses", () => {
    const nested = (levels: number, leaf: string) =>
      `${'{"a":['.repeat(levels / 2)}${leaf}${"]}".repeat(levels / 2)}`;
    for (const leaf of ["1", "1.0"]) {
      expect(parseExact(nested(MAX_NESTING, leaf))).toBeDefined();
      expect(parseExact(nested(MAX_NESTING + 2, leaf))).toBeUndefined();
      expect(parseExact(nested(100_000, leaf))).toBeUndefined();
    }
    // Brackets count outside strings only, and a value that closes gives its levels back.
    const brackets = JSON.stringify(`\\"${"[{".repeat(1000)}`);
    expect(nestsTooDeep(`[${brackets}]`)).toBe(false);
    expect(nestsTooDeep(`[${nested(400, "1")},${nested(400, "1")}]`)).toBe(false);
    expect(nestsTooDeep(`[${nested(MAX_NESTING, "1")}]`)).toBe(true);
  });

  it("tell -0 from 0, which a Map takes for one key", () => {
    // fast-check's counterexample (seed 1018066676): a 0 elsewhere made a rebuilt -0 come out 0.
    const parsed = parseExact('[{"a":[0]},{"b":-0,"c":9007199254740993}]');
    const [, second] = (parsed?.value ?? []) as [unknown, Record<string, unknown>];
    const rebuilt = Object.fromEntries(Object.entries(second ?? {}));
    expect(stringifyExact(rebuilt, parsed?.exact)).toBe('{"b":-0,"c":9007199254740993}');
  });
});
