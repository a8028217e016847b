/**
 * Caller isolation, attacked (SECURITY.md, "What the proxy answers itself"):
 * two users of an origin that lists each bearer token its own tools
 * (test/fixtures/node/caller-origin.ts), one proxy isolate. Bob may learn
 * nothing from the proxy of a tool the origin listed only to ann, nor which
 * names the operator's rules hide.
 */
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { sanitizeName } from "../../src/names/sanitize";
import { profileOf } from "../../src/schemas/profile";
import { MAX_UNPROVEN_RELISTS } from "../../src/toolmap/profile-names";
import { callerOrigin, type CallerTool as Tool, USER_READ } from "../helpers/caller-origin";
import { EACH_WIRE, type Wire } from "../helpers/clients";
import { messagesOf, postJson, wireRequest } from "../helpers/mcp";
import { type Fetch, PROXY_URL, viaProxy } from "../helpers/proxy";

const PAYROLL: Tool = {
  name: "admin.payroll",
  description: "Exports the payroll, with social security numbers.",
  inputSchema: {
    type: "object",
    properties: { secret_ssn_field: { type: "string" } },
    required: ["secret_ssn_field"],
  },
};
const WRITE: Tool = {
  name: "user.write",
  description: "Writes an item of the user's.",
  inputSchema: { type: "object", properties: { id: { type: "string" } } },
};

/** One user's raw requests through `proxy` as a client of `wire` writes them outside a session: bearer `token`. */
function user(proxy: Fetch, token: string, wire: Wire) {
  let id = 0;
  const send = async (method: string, params?: Record<string, unknown>) => {
    const { body, headers } = wireRequest(wire, ++id, method, params);
    const response = await postJson(proxy, PROXY_URL, body, {
      ...headers,
      authorization: `Bearer ${token}`,
    });
    const [message] = await messagesOf(response);
    return message as { result?: Record<string, unknown>; error?: { message: string } };
  };
  return {
    send,
    list: async (cursor?: string) =>
      (await send("tools/list", cursor === undefined ? {} : { cursor })).result as {
        tools: Tool[];
        nextCursor?: string;
      },
    call: (name: string, args: Record<string, unknown> = {}) =>
      send("tools/call", { name, arguments: args }),
  };
}

/** The name the openai profile gives `original`: what anyone can work out from a guessed original. */
const openaiName = (original: string) => sanitizeName(original, profileOf("openai").names).name;

describe.each(EACH_WIRE)("caller isolation under attack, protocol %s", (wire) => {
  it("gives a caller no view another caller's paged listing made, for the same last page's text", async () => {
    // The origin lists in pages of 2: ann's last page is bob's whole listing, byte for byte.
    const origin = callerOrigin("&page_size=2");
    await origin.list("ann", [PAYROLL, { ...PAYROLL, name: "admin.fire" }, USER_READ, WRITE]);
    await origin.list("bob", [USER_READ, WRITE]);
    const proxy = viaProxy(
      { ORIGIN_URL: origin.url, ARGUMENT_VALIDATION: "enforce" },
      { app: createApp() },
    );
    const ann = user(proxy, "ann", wire);
    const bob = user(proxy, "bob", wire);

    const first = await ann.list();
    expect(first.tools.map((tool) => tool.name)).toContain(openaiName("admin.payroll"));
    const last = await ann.list(first.nextCursor);
    expect(last.nextCursor).toBeUndefined();
    expect((await bob.list()).tools.map((tool) => tool.name)).toEqual([
      openaiName("user.read"),
      openaiName("user.write"),
    ]);

    // Bob calls ann's tool by the name anyone can work out from a guessed original: the proxy
    // must tell him nothing of its arguments (the origin answers: not bob's tool).
    const answer = JSON.stringify(await bob.call(openaiName("admin.payroll"), {}));
    expect(answer).not.toMatch(/secret_ssn_field/);
  });

  /** Bob calls by names anyone can work out from guessed originals: one listed to ann, one to no one. */
  const guessOriginals = async (bob: ReturnType<typeof user>) => {
    // Ann's tool first: were its original restored, the origin's answer would tell bob that some
    // caller of the proxy has a tool of that name.
    const existing = JSON.stringify(await bob.call(openaiName("admin.payroll")));
    expect(existing).toContain(`Unknown tool: ${openaiName("admin.payroll")}`);
    expect(existing).not.toContain("admin.payroll");
    // A name no one was shown goes to the origin as bob wrote it, and the origin answers for it.
    const guessed = JSON.stringify(await bob.call(openaiName("admin.salaries")));
    expect(guessed).toContain(`Unknown tool: ${openaiName("admin.salaries")}`);
  };

  it("does not restore the original of another caller's tool for a call by its name, after the caller listed their own", async () => {
    const origin = callerOrigin();
    await origin.list("ann", [PAYROLL, USER_READ]);
    await origin.list("bob", [USER_READ]);
    const proxy = viaProxy({ ORIGIN_URL: origin.url }, { app: createApp() });
    const ann = user(proxy, "ann", wire);
    const bob = user(proxy, "bob", wire);
    expect((await ann.list()).tools.map((tool) => tool.name)).toContain(
      openaiName("admin.payroll"),
    );
    expect((await bob.list()).tools).toHaveLength(1);
    await guessOriginals(bob);
  });

  // Before 2026-11-30, with no listing of the caller's here and no rules that refuse calls, the
  // resolver restored any name the map handed out: the caller's own listing is asked for first.
  it("does not restore the original of another caller's tool for a call by its name, without a listing of their own", async () => {
    const origin = callerOrigin();
    await origin.list("ann", [PAYROLL, USER_READ]);
    await origin.list("bob", [USER_READ]);
    const proxy = viaProxy({ ORIGIN_URL: origin.url }, { app: createApp() });
    await user(proxy, "ann", wire).list();
    await guessOriginals(user(proxy, "bob", wire));
  });

  it("does not restore the original of another caller's tool for a caller whose listing here is pages", async () => {
    // No tool ceiling (anthropic): a paged listing is named page by page, never whole.
    const origin = callerOrigin("&page_size=1");
    await origin.list("ann", [PAYROLL, USER_READ]);
    await origin.list("bob", [USER_READ, WRITE]);
    const proxy = viaProxy({ ORIGIN_URL: origin.url, PROFILE: "anthropic" }, { app: createApp() });
    const ann = user(proxy, "ann", wire);
    const bob = user(proxy, "bob", wire);
    const named = (original: string) => sanitizeName(original, profileOf("anthropic").names).name;
    expect((await ann.list()).tools.map((tool) => tool.name)).toEqual([named("admin.payroll")]);
    const first = await bob.list();
    expect((await bob.list(first.nextCursor)).nextCursor).toBeUndefined();
    const existing = JSON.stringify(await bob.call(named("admin.payroll")));
    expect(existing).toContain(`Unknown tool: ${named("admin.payroll")}`);
    expect(existing).not.toContain("admin.payroll");
    // Bob's own tools, from either page, still reach the origin.
    for (const tool of ["user.read", "user.write"]) {
      expect((await bob.call(named(tool), { id: "1" })).result?.structuredContent).toEqual({
        tool,
        arguments: { id: "1" },
        caller: "bob",
      });
    }
  });

  it("does not restore the original of another caller's tool for a caller whose whole listing was followed by later pages, listing the origin for them once", async () => {
    const origin = callerOrigin();
    await origin.list("ann", [PAYROLL, USER_READ]);
    await origin.list("bob", [USER_READ]);
    const proxy = viaProxy({ ORIGIN_URL: origin.url }, { app: createApp() });
    const bob = user(proxy, "bob", wire);
    await user(proxy, "ann", wire).list();
    expect((await bob.list()).tools).toHaveLength(1);
    // Pages asked for by a cursor (the origin reads it as an offset): what bob already listed.
    for (let i = 0; i < 5; i++) expect((await bob.list("0")).tools).toHaveLength(1);
    // However many of ann's names bob calls, the origin is listed for him once a minute.
    for (let i = 0; i < 5; i++) await guessOriginals(bob);
    // Bob's own listing, his five pages, and one listing on his behalf.
    expect(await origin.listings()).toEqual({ ann: 1, bob: 7 });
  });

  it("reaches a caller's own tool called by its own name, which another caller's tool was named before", async () => {
    // Ann's files.write was handed out as files_write_<fingerprint>; bob's tool has that very name.
    const taken = openaiName("files.write");
    const origin = callerOrigin();
    await origin.list("ann", [{ ...WRITE, name: "files.write" }]);
    await origin.list("bob", [{ ...WRITE, name: taken }]);
    const proxy = viaProxy({ ORIGIN_URL: origin.url }, { app: createApp() });
    const bob = user(proxy, "bob", wire);
    expect((await user(proxy, "ann", wire).list()).tools.map((tool) => tool.name)).toEqual([taken]);
    expect((await bob.list()).tools.map((tool) => tool.name)).toEqual([`${taken}_2`]);
    for (const name of [`${taken}_2`, taken]) {
      expect((await bob.call(name, { id: "1" })).result?.structuredContent).toEqual({
        tool: taken,
        arguments: { id: "1" },
        caller: "bob",
      });
    }
  });

  it("answers a call by a name another caller's tool was given as one by a name no one was given, where it is another spelling of the caller's own tool", async () => {
    // Ann's legal files_read keeps its name; bob's files.read is files_read_<fingerprint>, and
    // files_read is another spelling of it. Were bob's call by files_read told apart from one by
    // a name no one was given (files_reads), it would tell him some caller has a files_read.
    const origin = callerOrigin();
    await origin.list("ann", [{ ...USER_READ, name: "files_read" }]);
    await origin.list("bob", [
      { ...USER_READ, name: "files.read" },
      { ...USER_READ, name: "files.reads" },
    ]);
    const proxy = viaProxy({ ORIGIN_URL: origin.url }, { app: createApp() });
    const bob = user(proxy, "bob", wire);
    expect((await user(proxy, "ann", wire).list()).tools.map((tool) => tool.name)).toEqual([
      "files_read",
    ]);
    expect((await bob.list()).tools).toHaveLength(2);
    for (const [name, tool] of [
      ["files_read", "files.read"],
      ["files_reads", "files.reads"],
    ] as const) {
      expect((await bob.call(name, { id: "1" })).result?.structuredContent, name).toEqual({
        tool,
        arguments: { id: "1" },
        caller: "bob",
      });
    }
  });

  it.each([
    ["original", (original: string) => original],
    ["listed name", openaiName],
  ])(
    "answers a call by another caller's %s as one by a name no one was listed, where the rules refuse calls",
    async (_, nameOf) => {
      const origin = callerOrigin();
      await origin.list("ann", [PAYROLL, USER_READ]);
      await origin.list("bob", [USER_READ]);
      const proxy = viaProxy(
        { ORIGIN_URL: origin.url, TOOL_RULES: JSON.stringify({ hide: ["*delete*"] }) },
        { app: createApp() },
      );
      await user(proxy, "ann", wire).list();

      // Bob, who has listed nothing here, guesses: a tool listed to ann, and one listed to no one.
      const existing = await user(proxy, "bob", wire).call(nameOf("admin.payroll"));
      const guessed = await user(proxy, "bob", wire).call(nameOf("admin.salaries"));
      expect(guessed.error?.message).toBe(`Unknown tool: ${nameOf("admin.salaries")}`);
      expect(existing.error?.message).toBe(`Unknown tool: ${nameOf("admin.payroll")}`);
    },
  );

  it("restores a caller's tool added since their listing here, which they were listed elsewhere", async () => {
    const origin = callerOrigin();
    await origin.list("ann", [USER_READ]);
    const here = viaProxy({ ORIGIN_URL: origin.url }, { app: createApp() });
    const elsewhere = viaProxy({ ORIGIN_URL: origin.url }, { app: createApp() });
    expect((await user(here, "ann", wire).list()).tools).toHaveLength(1);
    // The origin gives ann a tool; another isolate lists it to her, and she calls it here.
    await origin.list("ann", [PAYROLL, USER_READ]);
    expect((await user(elsewhere, "ann", wire).list()).tools).toHaveLength(2);
    const called = await user(here, "ann", wire).call(openaiName("admin.payroll"), {
      secret_ssn_field: "x",
    });
    expect(called.result?.structuredContent).toEqual({
      tool: "admin.payroll",
      arguments: { secret_ssn_field: "x" },
      caller: "ann",
    });
  });

  it("keeps a caller's paged listing theirs when a later page is the text of another caller's whole listing", async () => {
    // The origin lists in pages of 2: bob's last page is ann's whole listing, byte for byte.
    const origin = callerOrigin("&page_size=2");
    await origin.list("ann", [USER_READ, WRITE]);
    await origin.list("bob", [PAYROLL, { ...PAYROLL, name: "admin.fire" }, USER_READ, WRITE]);
    const proxy = viaProxy(
      { ORIGIN_URL: origin.url, TOOL_RULES: JSON.stringify({ hide: ["*delete*"] }) },
      { app: createApp() },
    );
    const ann = user(proxy, "ann", wire);
    const bob = user(proxy, "bob", wire);
    const first = await bob.list();
    expect(first.tools.map((tool) => tool.name)).toContain(openaiName("admin.payroll"));
    // Ann lists between bob's pages.
    expect((await ann.list()).tools).toHaveLength(2);
    expect((await bob.list(first.nextCursor)).tools).toHaveLength(2);

    // Bob's own tool, from his first page: his call reaches it.
    const called = await bob.call(openaiName("admin.payroll"), { secret_ssn_field: "x" });
    expect(called.result?.structuredContent).toEqual({
      tool: "admin.payroll",
      arguments: { secret_ssn_field: "x" },
      caller: "bob",
    });
  });
});

describe.each(EACH_WIRE)(
  "a tool the rules hide, guessed by a caller new to the isolate, protocol %s",
  (wire) => {
    const DELETE: Tool = { ...WRITE, name: "user.delete" };
    const nearest = `Did you mean: ${openaiName("user.read")}?`;

    it.each([
      ["an exact: name", "exact:user.delete"],
      ["a glob", "user.del*"],
    ])("is answered as a name no tool has, where %s hides it", async (_, hidden) => {
      const origin = callerOrigin();
      await origin.list("ann", [USER_READ, DELETE]);
      await origin.list("bob", [USER_READ, DELETE]);
      const rules = JSON.stringify({ hide: [hidden] });
      /** Bob's call in an isolate where ann listed (which knows the names), he has not. */
      const answerTo = async (name: string) => {
        const proxy = viaProxy({ ORIGIN_URL: origin.url, TOOL_RULES: rules }, { app: createApp() });
        await user(proxy, "ann", wire).list();
        return (await user(proxy, "bob", wire).call(name)).error?.message;
      };
      // A name no tool has is told bob's names alike to it, from his own listing, asked for then.
      expect(await answerTo("user.remove")).toBe(`Unknown tool: user.remove. ${nearest}`);
      expect(await answerTo("user_remove_abc123")).toBe(
        `Unknown tool: user_remove_abc123. ${nearest}`,
      );
      // Answered from the rules alone, without his listing (and sooner), the hidden tool's original
      // and model-facing name were told no alike names: the answer told which names the rules hide.
      expect(await answerTo("user.delete")).toBe(`Unknown tool: user.delete. ${nearest}`);
      const listed = openaiName("user.delete");
      expect(await answerTo(listed)).toBe(`Unknown tool: ${listed}. ${nearest}`);
    });
  },
);

describe("caller isolation under attack, 2026-07-28 parameter headers", () => {
  // A call's Mcp-Param-* headers are checked against its tool's schema; the one the map holds may
  // be another caller's, and the proxy's "Header mismatch" would say whether that schema declares
  // the header the caller guessed: such a call waits for the caller's own listing.
  const report = (properties: Record<string, unknown>): Tool => ({
    name: "report.get",
    inputSchema: { type: "object", properties },
  });

  /** Ann's schema of report.get declares a Tenant header, bob's none; ann listed it here. */
  async function annListed(callers: Record<string, Tool[]> = {}) {
    const origin = callerOrigin();
    await origin.list("ann", [report({ tenant: { type: "string", "x-mcp-header": "Tenant" } })]);
    for (const token of ["bob", ...Object.keys(callers)]) {
      await origin.list(token, callers[token] ?? [report({ month: { type: "string" } })]);
    }
    const proxy = viaProxy({ ORIGIN_URL: origin.url }, { app: createApp() });
    expect((await user(proxy, "ann", "2026-07-28").list()).tools).toHaveLength(1);
    /** A call of report.get by `token`, with `header` set to "acme" where one is named. */
    const call = async (token: string, header?: string) => {
      const { body, headers } = wireRequest("2026-07-28", 1, "tools/call", {
        name: openaiName("report.get"),
        arguments: { month: "5" },
      });
      const response = await postJson(proxy, PROXY_URL, body, {
        ...headers,
        authorization: `Bearer ${token}`,
        ...(header ? { [header]: "acme" } : {}),
      });
      return { status: response.status, messages: await messagesOf(response) };
    };
    return { origin, call };
  }

  const reachedOwnTool = (token: string) => [
    { result: { structuredContent: { tool: "report.get", caller: token } } },
  ];

  it("does not tell a caller with no listing here which headers another caller's schema of a tool declares", async () => {
    const { origin, call } = await annListed();
    // Bob, whose listing this isolate has not read, guesses a header of ann's schema, and one
    // no schema declares: the two calls of his own tool are answered alike.
    const guessed = await call("bob", "mcp-param-tenant");
    const control = await call("bob", "mcp-param-region");
    expect(control.status).toBe(200);
    expect(guessed.status).toBe(control.status);
    expect(JSON.stringify(guessed.messages)).not.toMatch(/mismatch/i);
    // Bob's own listing, asked for once for both calls: each reached his own tool.
    expect(await origin.listings()).toEqual({ ann: 1, bob: 1 });
    for (const { messages } of [guessed, control])
      expect(messages).toMatchObject(reachedOwnTool("bob"));
  });

  it("lists the caller's own tools for a call that carries no Mcp-Param-* header too, and sends it as written where they cannot be read", async () => {
    // The schema the map holds is ann's: a call is repaired against the caller's own, asked for.
    const { origin, call } = await annListed();
    expect((await call("bob")).messages).toMatchObject(reachedOwnTool("bob"));
    expect(await origin.listings()).toEqual({ ann: 1, bob: 1 });
    // Past the listings a minute for callers not listed here: the call goes on unrepaired,
    // not refused (it carries nothing checked against a schema).
    const others = Array.from({ length: MAX_UNPROVEN_RELISTS }, (_, i) => `user${i}`);
    const { call: callNext } = await annListed(
      Object.fromEntries(others.map((token) => [token, [report({ month: { type: "string" } })]])),
    );
    for (const token of others) await callNext(token);
    expect((await callNext("bob")).messages).toMatchObject([
      {
        result: {
          structuredContent: { tool: "report.get", arguments: { month: "5" }, caller: "bob" },
        },
      },
    ]);
  });

  it("refuses such a call, telling to try again, where the caller's own listing cannot be read", async () => {
    // The proxy lists the origin for callers whose credentials it has not listed in the isolate 10
    // times a minute per isolate and profile together (toolmap/profile-names.ts
    // MAX_UNPROVEN_RELISTS): the 11th such caller's listing is not asked for.
    const others = Array.from({ length: MAX_UNPROVEN_RELISTS }, (_, i) => `user${i}`);
    const { call } = await annListed(
      Object.fromEntries(others.map((token) => [token, [report({ month: { type: "string" } })]])),
    );
    for (const token of others) {
      expect((await call(token, "mcp-param-region")).messages).toMatchObject(reachedOwnTool(token));
    }
    const refused = await call("bob", "mcp-param-tenant");
    expect(refused.messages).toMatchObject([
      {
        error: {
          code: -32602,
          message: `Tool ${openaiName("report.get")} cannot be checked now: the origin's tool listing for this caller could not be read; try again`,
        },
      },
    ]);
  });
});
