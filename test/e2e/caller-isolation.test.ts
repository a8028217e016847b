/**
 * Each caller's own listing (SECURITY.md, "What the proxy answers itself"):
 * an origin that shows every bearer token its own tools
 * (test/fixtures/node/caller-origin.ts), and SDK clients signed in as
 * different users of it through one proxy isolate. Whatever the proxy
 * answers itself (search, search mode, holds) comes from what the origin
 * showed that caller, whoever listed last.
 */
import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import { createApp } from "../../src/app";
import { callerOrigin, signedInAs, type CallerTool as Tool } from "../helpers/caller-origin";
import { clientsOfEachTest, type TestClient, type ToolResult } from "../helpers/clients";
import { collidingSchemas } from "../helpers/colliding-schemas";
import { captureLogs } from "../helpers/logs";
import { messagesOf, postJson, rpc } from "../helpers/mcp";
import { type Fetch, PROXY_URL, viaProxy } from "../helpers/proxy";

const connect = clientsOfEachTest();

const userTools = (count: number): Tool[] =>
  Array.from({ length: count }, (_, i) => ({
    name: `user.item_${i}`,
    description: `Reads the user's item number ${i}.`,
    inputSchema: { type: "object", properties: { id: { type: "string" } } },
  }));

const adminTools = (count: number): Tool[] =>
  Array.from({ length: count }, (_, i) => ({
    name: `admin.secret_${i}`,
    description: `Payroll export of department ${i}, with social security numbers.`,
    inputSchema: { type: "object", properties: { ssn: { type: "string" } } },
  }));

const found = (result: ToolResult) =>
  (result.structuredContent as { tools?: Tool[] } | undefined)?.tools ?? [];

const echoed = (result: ToolResult) =>
  result.structuredContent as { tool: string; arguments: Record<string, unknown>; caller: string };

/** Everything a result says, as one text: what a model would read of it. */
const said = (result: ToolResult) => JSON.stringify(result);

describe.each(["2025-11-25", "2026-07-28"] as const)("protocol %s", (revision) => {
  /** One isolate (one app) with one origin, and a client per token through it. */
  async function setup(vars: Record<string, string> = {}) {
    const origin = callerOrigin();
    const proxy = viaProxy({ ORIGIN_URL: origin.url, ...vars }, { app: createApp() });
    const as = (token: string): Promise<TestClient> => connect(revision, signedInAs(token, proxy));
    return { origin, as };
  }

  it("answers a search only from the searcher's own listing, whoever listed last", async () => {
    const { origin, as } = await setup();
    await origin.list("admin", [...userTools(100), ...adminTools(50)]);
    await origin.list("bob", userTools(130));
    const admin = await as("admin");
    const bob = await as("bob");
    const nobody = await as("");

    await bob.listTools();
    expect((await admin.listTools()).map((tool) => tool.name)).toEqual([
      "search_tools",
      "call_tool",
    ]);
    // Admin listed last: bob and a caller without a token learn nothing of admin's tools.
    for (const client of [bob, nobody]) {
      // Bob searches his own listing; a caller listed nothing has no search_tools to call.
      const answer = await client
        .callTool("search_tools", { query: "payroll export" })
        .then(said, String);
      expect(answer).not.toMatch(/admin|department|social security/i);
    }

    // Bob listed last: admin still finds admin's own tools.
    await bob.listTools();
    const search = await admin.callTool("search_tools", { query: "payroll export", limit: 5 });
    expect(found(search).map((tool) => tool.description)).toEqual(
      expect.arrayContaining([expect.stringMatching(/^Payroll export of department/)]),
    );
    const [secret] = found(search);
    const called = await admin.callTool("call_tool", {
      name: secret?.name ?? "",
      arguments: { ssn: "x" },
    });
    expect(echoed(called)).toMatchObject({ tool: expect.stringMatching(/^admin\.secret_/) });
  });

  it("keeps search mode for a caller whose listing is over the ceiling when another's is not", async () => {
    const { origin, as } = await setup();
    await origin.list("admin", [...userTools(100), ...adminTools(50)]);
    await origin.list("carol", userTools(20));
    const admin = await as("admin");
    const carol = await as("carol");
    await admin.listTools();
    const [secret] = found(await admin.callTool("search_tools", { query: "department 7" }));
    expect(secret?.description).toMatch(/department 7,/);

    expect(await carol.listTools()).toHaveLength(20);
    const called = await admin.callTool("call_tool", { name: secret?.name ?? "", arguments: {} });
    expect(echoed(called)).toEqual({ tool: "admin.secret_7", arguments: {}, caller: "admin" });
  });

  // Pins stand for the tools' texts in a view's key only where they cover descriptions.
  it.each<Record<string, string>>([
    { TOOL_CHANGES: "log" },
    { TOOL_CHANGES: "hold" },
    { TOOL_CHANGES: "log", TOOL_CHANGES_SCOPE: "schema" },
    { TOOL_CHANGES: "allow" },
  ])(
    "answers a search with the searcher's own description of a tool listed to each with another (%o)",
    async (vars) => {
      const { origin, as } = await setup(vars);
      const listed = (description: string) =>
        userTools(150).map((tool) =>
          tool.name === "user.item_7" ? { ...tool, description } : tool,
        );
      await origin.list("ann", listed("Archives the user's item number 7."));
      await origin.list("ben", listed("Deletes the user's item number 7 for good."));
      const ann = await as("ann");
      const ben = await as("ben");
      await ann.listTools();
      await ben.listTools();
      for (const [client, says] of [
        [ann, /^Archives/],
        [ben, /^Deletes/],
      ] as const) {
        const [tool] = found(await client.callTool("search_tools", { query: "item number 7" }));
        expect(tool?.description).toMatch(says);
      }
    },
  );

  it("holds a changed definition for the caller it changed for, and only for them", async () => {
    const { origin, as } = await setup({ TOOL_CHANGES: "hold" });
    const report = (user: string, wording = "Gets a report") => ({
      name: "report.get",
      description: `${wording} for ${user}.`,
      inputSchema: { type: "object", properties: { month: { type: "string" } } },
    });
    await origin.list("ann", [report("ann")]);
    await origin.list("ben", [report("ben")]);
    const ann = await as("ann");
    const ben = await as("ben");

    // Each one's own definition, shown to each: neither is a change.
    expect((await ann.listTools()).map((tool) => tool.description)).toEqual([
      "Gets a report for ann.",
    ]);
    const logs = captureLogs();
    expect((await ben.listTools()).map((tool) => tool.description)).toEqual([
      "Gets a report for ben.",
    ]);
    expect(logs.events("tool_definition_differs")).toEqual([
      expect.objectContaining({ tool: "report.get", changed: ["description"], mode: "hold" }),
    ]);
    logs.restore();
    expect((await ann.listTools()).map((tool) => tool.description)).toEqual([
      "Gets a report for ann.",
    ]);

    // The origin changes what it shows ann: held for ann, not for ben.
    await origin.list("ann", [report("ann", "Deletes every report")]);
    expect(await ann.listTools()).toEqual([]);
    expect((await ben.listTools()).map((tool) => tool.description)).toEqual([
      "Gets a report for ben.",
    ]);
    const [listed] = await ben.listTools();
    const called = await ben.callTool(listed?.name ?? "", { month: "may" });
    expect(echoed(called)).toMatchObject({ tool: "report.get", caller: "ben" });
    const refused = await ann.callTool(listed?.name ?? "", { month: "may" }).catch(String);
    expect(String(refused)).toMatch(/held/);
  });

  it("holds a change for a caller shown it before, after a new caller was listed the same text", async () => {
    const { origin, as } = await setup({ TOOL_CHANGES: "hold" });
    const report = (wording: string) => ({
      name: "report.get",
      description: `${wording} the monthly report.`,
      inputSchema: { type: "object", properties: { month: { type: "string" } } },
    });
    await origin.list("ann", [report("Gets")]);
    const ann = await as("ann");
    const [listed] = await ann.listTools();
    expect(listed?.description).toBe("Gets the monthly report.");

    // The origin changes the tool for everyone; a caller new to the proxy lists it first (theirs,
    // not a change for them), then ann, who was shown it before, lists the very same text.
    await origin.list("ann", [report("Deletes")]);
    await origin.list("newcomer", [report("Deletes")]);
    const newcomer = await as("newcomer");
    expect(await newcomer.listTools()).toHaveLength(1);
    expect(await ann.listTools()).toEqual([]);
    const refused = await ann.callTool(listed?.name ?? "", { month: "may" }).catch(String);
    expect(String(refused)).toMatch(/held/);
  });

  it("repairs and checks a call against the caller's own schema of a tool, whoever listed it last", async () => {
    const { origin, as } = await setup({ ARGUMENT_VALIDATION: "enforce" });
    const report = (properties: Record<string, unknown>, required: string[] = []) => ({
      name: "report.get",
      inputSchema: { type: "object", properties, required },
    });
    await origin.list("ann", [report({ month: { type: "string" } })]);
    await origin.list("ben", [
      report({ month: { type: "integer" }, payroll_ssn: { type: "string" } }, ["payroll_ssn"]),
    ]);
    const ann = await as("ann");
    const ben = await as("ben");
    const [listed] = await ann.listTools();
    await ben.listTools();

    // Ben listed last: ann's call is hers as her listing declares it, and tells her nothing of ben's.
    const called = await ann.callTool(listed?.name ?? "", { month: "5" });
    expect(said(called)).not.toMatch(/payroll_ssn|integer/);
    expect(echoed(called)).toEqual({
      tool: "report.get",
      arguments: { month: "5" },
      caller: "ann",
    });
    // Ben's own call is repaired against his schema, the one the map now holds.
    const bens = await ben.callTool(listed?.name ?? "", { month: "5", payroll_ssn: "x" });
    expect(echoed(bens).arguments).toEqual({ month: 5, payroll_ssn: "x" });
  });

  /**
   * Ann's and ben's schemas of one tool, each with their own salt in its
   * description (values of theirs the origin writes in), found so that both
   * give one fingerprint: `count` a string to ann and an integer to ben,
   * `page` the other way round.
   */
  const collidingReports = () => {
    const schema = (owner: string, count: string, page: string) => (salt: string) => ({
      type: "object",
      description: `Reports of ${owner}, ${salt}.`,
      properties: { count: { type: count }, page: { type: page } },
    });
    const [ann, ben] = collidingSchemas(
      schema("ann", "string", "integer"),
      schema("ben", "integer", "string"),
    );
    const report = (inputSchema: Tool["inputSchema"]): Tool => ({
      name: "report.get",
      inputSchema,
    });
    return [report(ann), report(ben)] as const;
  };

  /** Ann and ben as clients, the origin listing each their own of `collidingReports`. */
  const collidingCallers = async () => {
    const { origin, as } = await setup();
    const [annReport, benReport] = collidingReports();
    await origin.list("ann", [annReport]);
    await origin.list("ben", [benReport]);
    return { ann: await as("ann"), ben: await as("ben") };
  };

  it("does not repair a caller's call against another caller's schema listed since, of the same fingerprint", async () => {
    const { ann, ben } = await collidingCallers();
    const [listed] = await ann.listTools();
    await ben.listTools();

    // Ben listed last, his schema's fingerprint ann's: her count is a string, as her schema says,
    // and her call is left as she sent it (nothing repaired: its bytes go on as they came).
    const logs = captureLogs();
    const called = await ann.callTool(listed?.name ?? "", { count: "5" });
    expect(echoed(called)).toEqual({
      tool: "report.get",
      arguments: { count: "5" },
      caller: "ann",
    });
    expect(logs.events("tool_call_repaired")).toEqual([]);
    logs.restore();
  });

  it("repairs each caller's call against their own schema where two callers' schemas of a tool share a fingerprint, whoever listed last", async () => {
    const { ann, ben } = await collidingCallers();
    const [listed] = await ann.listTools();
    const name = listed?.name ?? "";
    const sent = { count: "5", page: "2" };
    const argumentsOf = async (client: TestClient) =>
      echoed(await client.callTool(name, sent)).arguments;

    await ben.listTools();
    expect(await argumentsOf(ann)).toEqual({ count: "5", page: 2 });
    expect(await argumentsOf(ben)).toEqual({ count: 5, page: "2" });
    await ann.listTools();
    expect(await argumentsOf(ben)).toEqual({ count: 5, page: "2" });
    expect(await argumentsOf(ann)).toEqual({ count: "5", page: 2 });
  });

  // Search mode views a tool's schema when a search first reads it, from whichever caller's listing
  // made the search, and keeps views per tool name: each searcher still sees their own schema.
  it.each<Record<string, string>>([
    { TOOL_CHANGES: "allow" },
    { TOOL_CHANGES: "log" },
    { TOOL_CHANGES: "hold" },
    { TOOL_CHANGES: "log", TOOL_CHANGES_SCOPE: "schema" },
  ])(
    "shows each searcher their own schema of a tool whose schemas share a fingerprint, its fixed argument left out, whoever searched first (%o)",
    async (vars) => {
      const settings = {
        ...vars,
        TOOL_RULES: JSON.stringify({ tools: { "report.get": { fixed: { page: 1 } } } }),
      };
      const { origin, as } = await setup(settings);
      const [annReport, benReport] = collidingReports();
      // Over the openai profile's ceiling (128): search mode. Cal is listed what ann is.
      await origin.list("ann", [...userTools(149), annReport]);
      await origin.list("cal", [...userTools(149), annReport]);
      await origin.list("ben", [...userTools(149), benReport]);
      const reportOf = async (client: TestClient) => {
        const search = await client.callTool("search_tools", { query: "report get" });
        return found(search).find((tool) =>
          String(tool.inputSchema.description).startsWith("Reports of"),
        )?.inputSchema;
      };
      const annsSchema = {
        type: "object",
        description: annReport.inputSchema.description,
        properties: { count: { type: "string" } },
      };
      const bensSchema = {
        type: "object",
        description: benReport.inputSchema.description,
        properties: { count: { type: "integer" } },
      };
      const ann = await as("ann");
      const ben = await as("ben");
      const cal = await as("cal");
      await ann.listTools();
      await cal.listTools();
      await ben.listTools();
      // Ben searches first; cal searches the view ann's listing made, which no one searched yet.
      expect(await reportOf(ben)).toMatchObject(bensSchema);
      expect(await reportOf(cal)).toMatchObject(annsSchema);
      expect(await reportOf(ann)).toMatchObject(annsSchema);
      // Listed again the other way round.
      await ben.listTools();
      await ann.listTools();
      expect(await reportOf(ann)).toMatchObject(annsSchema);
      expect(await reportOf(ben)).toMatchObject(bensSchema);
      for (const schema of [await reportOf(ann), await reportOf(ben), await reportOf(cal)]) {
        expect(schema?.properties).not.toHaveProperty("page");
      }

      // A cold isolate: ben's search lists the origin for him first.
      const cold = viaProxy({ ORIGIN_URL: origin.url, ...settings }, { app: createApp() });
      const coldBen = await connect(revision, signedInAs("ben", cold));
      const coldAnn = await connect(revision, signedInAs("ann", cold));
      expect(await reportOf(coldBen)).toMatchObject(bensSchema);
      expect(await reportOf(coldAnn)).toMatchObject(annsSchema);
      expect((await reportOf(coldBen))?.properties).not.toHaveProperty("page");
    },
  );

  it("keeps a name it handed out pointing at its tool when another tool's own name is that name", async () => {
    const { origin, as } = await setup();
    const write = { name: "files.write", inputSchema: { type: "object" } };
    await origin.list("ta", [write]);
    const ta = await as("ta");
    const [listed] = await ta.listTools();
    const handedOut = listed?.name ?? "";
    expect(handedOut).toMatch(/^files_write_[a-z0-9]+$/);

    const logs = captureLogs();
    await origin.list("tb", [{ name: handedOut, inputSchema: { type: "object" } }]);
    const tb = await as("tb");
    const [newcomer] = await tb.listTools();
    expect(newcomer?.name).toBe(`${handedOut}_2`);
    expect(logs.events("tool_name_taken")).toEqual([
      expect.objectContaining({ tool: handedOut, name: `${handedOut}_2`, takenBy: "files.write" }),
    ]);
    logs.restore();

    expect(echoed(await ta.callTool(handedOut, {}))).toMatchObject({
      tool: "files.write",
      caller: "ta",
    });
    expect(echoed(await tb.callTool(`${handedOut}_2`, {}))).toMatchObject({
      tool: handedOut,
      caller: "tb",
    });
  });

  it.each([
    ["X-API-Key", (key: string) => ({ "x-api-key": key })],
    [
      "Cloudflare Access's service token",
      (key: string) => ({ "cf-access-client-id": "id.access", "cf-access-client-secret": key }),
    ],
  ] as const)(
    "keeps callers apart when the origin tells them apart by %s",
    async (_, headersOf) => {
      const origin = callerOrigin();
      const proxy = viaProxy({ ORIGIN_URL: origin.url }, { app: createApp() });
      const as = (key: string): Promise<TestClient> =>
        connect(revision, (input, init) => {
          const headers = new Headers(init?.headers);
          for (const [name, value] of Object.entries(headersOf(key))) headers.set(name, value);
          return proxy(input, { ...init, headers });
        });
      await origin.list("admin-key", [...userTools(100), ...adminTools(50)]);
      await origin.list("bob-key", userTools(130));
      const admin = await as("admin-key");
      const bob = await as("bob-key");

      await bob.listTools();
      await admin.listTools();
      // Admin listed last: bob's search answers from bob's own listing.
      const answer = said(
        await bob.callTool("search_tools", { query: "payroll export", limit: 5 }),
      );
      expect(answer).not.toMatch(/admin|department|social security/i);
      const search = await admin.callTool("search_tools", { query: "payroll export", limit: 5 });
      expect(found(search).map((tool) => tool.description)).toEqual(
        expect.arrayContaining([expect.stringMatching(/^Payroll export of department/)]),
      );
    },
  );
});

// A 2025-11-25 session and 2026-07-28 requests (no session, the client's own `_meta` on each) of
// two users through one isolate: the caller is who the origin sees, whichever revision carries them.
describe("protocols 2025-11-25 and 2026-07-28 in one isolate", () => {
  it.each([
    ["2026-07-28", "2025-11-25"],
    ["2025-11-25", "2026-07-28"],
  ] as const)(
    "admin on %s, bob on %s: what the proxy answers each comes from their own listing alone",
    async (adminRevision, bobRevision) => {
      const origin = callerOrigin();
      const proxy = viaProxy(
        {
          ORIGIN_URL: origin.url,
          TOOL_RULES: JSON.stringify({ hide: ["exact:admin.secret_3"] }),
        },
        { app: createApp() },
      );
      await origin.list("admin", [...userTools(100), ...adminTools(50)]);
      await origin.list("bob", userTools(130));
      const admin = await connect(adminRevision, signedInAs("admin", proxy));
      const bob = await connect(bobRevision, signedInAs("bob", proxy));
      await bob.listTools();
      await admin.listTools();

      // Admin listed last. Bob's search, and his calls by admin's tools' names (one the rules
      // hide): nothing of admin's tools in what he is told, his own names the ones suggested.
      const search = await bob.callTool("search_tools", { query: "payroll export" });
      expect(said(search)).not.toMatch(/admin|department|social security/i);
      for (const name of ["admin.secret_7", "admin.secret_3"]) {
        const told = await bob.callTool("call_tool", { name, arguments: {} }).then(said, String);
        expect(told).not.toMatch(/ssn|department|social security|payroll/i);
        expect(told.match(/\badmin[\w.]*\w/gi) ?? []).toEqual([name]);
      }
      // Bob listed last: admin's search finds admin's own tools, but the one the rules hide.
      await bob.listTools();
      const adminSearch = await admin.callTool("search_tools", {
        query: "payroll export department",
        limit: 20,
      });
      const descriptions = found(adminSearch).map((tool) => tool.description);
      expect(descriptions).toContainEqual(expect.stringMatching(/^Payroll export of department/));
      expect(descriptions).not.toContainEqual(expect.stringMatching(/department 3,/));
      const [secret] = found(adminSearch);
      const called = await admin.callTool("call_tool", {
        name: secret?.name ?? "",
        arguments: { ssn: "x" },
      });
      expect(echoed(called)).toMatchObject({ tool: expect.stringMatching(/^admin\.secret_/) });
    },
  );
});

describe("callers apart (property)", () => {
  const CALLERS = ["ann", "ben", "cal"] as const;
  type CallerName = (typeof CALLERS)[number];
  /** Tool names, some illegal for every provider (renamed), some alike once sanitized. */
  const POOL = ["files.read", "files/read", "files_read", "admin.payroll", "report.get", "ping"];
  const PROFILES = ["openai", "openai-strict", "gemini", "anthropic", "bedrock", "mcp"] as const;

  /** What the origin lists one caller: some tools of the pool, each with a description that says whose it is. */
  const listing = fc.uniqueArray(
    fc.record({
      name: fc.constantFrom(...POOL),
      own: fc.boolean(),
      destructive: fc.boolean(),
    }),
    { selector: (tool) => tool.name, maxLength: POOL.length },
  );
  const action = fc.record({
    kind: fc.oneof(
      { arbitrary: fc.constant("list"), weight: 3 },
      { arbitrary: fc.constantFrom("search", "call_tool", "call"), weight: 5 },
    ),
    caller: fc.constantFrom(...CALLERS),
    isolate: fc.constantFrom(0, 1),
    pick: fc.nat(),
  });

  /**
   * Each caller's five tools, one of them hidden, two alike once sanitized, listed and called by
   * each in turn in both isolates: the property's first run, which alone looks at 30 tools.
   */
  const mine = (name: string, destructive = false) => ({ name, own: true, destructive });
  const everyone = (name: string, destructive = false) => ({ name, own: false, destructive });
  const TAKEN_IN_TURN = {
    listings: {
      ann: [
        mine("files/read"),
        everyone("files_read"),
        mine("admin.payroll", true),
        everyone("report.get"),
        mine("ping"),
      ],
      ben: [
        mine("files.read"),
        everyone("files_read"),
        everyone("admin.payroll", true),
        mine("report.get"),
        everyone("ping"),
      ],
      cal: [
        everyone("files.read"),
        mine("files/read"),
        mine("admin.payroll", true),
        everyone("report.get"),
        mine("ping"),
      ],
    },
    actions: CALLERS.flatMap((caller) =>
      (
        [
          ["list", 0],
          ["call", 1],
          ["list", 1],
          ["call", 0],
        ] as const
      ).map(([kind, isolate], pick) => ({ kind, caller, isolate, pick })),
    ),
  };

  /** The description that tells whose a tool is: the caller's own, or one every caller is shown. */
  const descriptionOf = (caller: string, name: string, own: boolean) =>
    own ? `${name} of ${caller}` : `${name} of everyone`;

  it("no caller is told of a tool the origin did not list them, and each call reaches the caller's own tool", async () => {
    vi.spyOn(console, "log").mockImplementation(() => {});
    let checked = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.record({ ann: listing, ben: listing, cal: listing }),
        fc.array(action, { minLength: 4, maxLength: 12 }),
        fc.constantFrom(...PROFILES),
        fc.option(fc.integer({ min: 2, max: 3 }), { nil: undefined }),
        async (listings, actions, profile, ceiling) => {
          // The example, first, is counted apart: it looks at 30 alone, past the floor.
          const count = () => {
            if (listings !== TAKEN_IN_TURN.listings) checked++;
          };
          const origin = callerOrigin();
          for (const caller of CALLERS) {
            await origin.list(
              caller,
              listings[caller].map(({ name, own, destructive }) => ({
                name,
                description: descriptionOf(caller, name, own),
                inputSchema: { type: "object", properties: { q: { type: "string" } } },
                ...(destructive ? { annotations: { destructiveHint: true } } : {}),
              })),
            );
          }
          const vars = {
            ORIGIN_URL: origin.url,
            TOOL_RULES: JSON.stringify({ hideAnnotated: { destructiveHint: true } }),
            ...(ceiling === undefined ? {} : { MAX_TOOLS: String(ceiling) }),
          };
          // Two isolates sharing one KV.
          const isolates = [createApp(), createApp()].map((app) => viaProxy(vars, { app }));
          const url = profile === "openai" ? PROXY_URL : `${PROXY_URL}/${profile}`;
          /** What each caller may be told of: the descriptions the origin listed them, the rules aside. */
          const allowed = (caller: CallerName) =>
            new Set(
              listings[caller]
                .filter((tool) => !tool.destructive)
                .map(({ name, own }) => descriptionOf(caller, name, own)),
            );
          /** Model-facing names each caller was shown, and the original each stands for. */
          const shown = new Map<CallerName, Map<string, string>>(
            CALLERS.map((c) => [c, new Map()]),
          );
          let id = 0;
          const send = async (
            caller: CallerName,
            isolate: number,
            method: string,
            params?: object,
          ) => {
            const response = await postJson(
              isolates[isolate] as Fetch,
              url,
              rpc(++id, method, params as Record<string, unknown>),
              { authorization: `Bearer ${caller}`, "mcp-protocol-version": "2025-11-25" },
            );
            const [message] = await messagesOf(response);
            return message as { result?: Record<string, unknown>; error?: unknown };
          };
          const originalOf = (description: string) => description.split(" of ")[0] as string;

          for (const { kind, caller, isolate, pick } of actions) {
            if (kind === "list") {
              const tools = ((await send(caller, isolate, "tools/list")).result?.tools ??
                []) as Tool[];
              for (const tool of tools) {
                if (tool.name === "search_tools" || tool.name === "call_tool") continue;
                expect(allowed(caller)).toContain(tool.description);
                shown.get(caller)?.set(tool.name, originalOf(tool.description ?? ""));
                count();
              }
              continue;
            }
            if (kind === "search") {
              const result = (
                await send(caller, isolate, "tools/call", {
                  name: "search_tools",
                  arguments: { query: "of", limit: 20 },
                })
              ).result;
              for (const tool of found((result ?? {}) as unknown as ToolResult)) {
                expect(allowed(caller)).toContain(tool.description);
                shown.get(caller)?.set(tool.name, originalOf(tool.description ?? ""));
                count();
              }
              continue;
            }
            const names = [...(shown.get(caller)?.entries() ?? [])];
            const [name, original] = names[pick % Math.max(names.length, 1)] ?? [];
            if (name === undefined) continue;
            const message =
              kind === "call"
                ? await send(caller, isolate, "tools/call", { name, arguments: {} })
                : await send(caller, isolate, "tools/call", {
                    name: "call_tool",
                    arguments: { name, arguments: {} },
                  });
            const received = message.result?.structuredContent as
              | { tool: string; caller: string }
              | undefined;
            // A call by a name the caller was shown reaches that caller's own tool, or none.
            if (received?.tool !== undefined) {
              expect(received).toMatchObject({ tool: original, caller });
              count();
            }
          }
        },
      ),
      {
        numRuns: 20,
        examples: [[TAKEN_IN_TURN.listings, TAKEN_IN_TURN.actions, "openai", undefined]],
      },
    );
    // The random runs looked at something: on average a tool listed, found or called each. 20 of
    // them looked at as few as 40 across 60 seeds (a standard deviation of 14), not out of reach
    // of 20.
    expect(checked).toBeGreaterThan(20);
  }, 120_000);
});
