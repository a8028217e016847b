/**
 * Each caller's own listing across profiles (SECURITY.md, "What the proxy
 * answers itself"): one isolate serving every profile path of one origin at
 * once, and two users the origin lists differently
 * (test/fixtures/node/caller-origin.ts). Whatever the proxy answers itself
 * through one profile (a search, its schemas, a did-you-mean) comes from what
 * the origin showed that caller, whoever listed last through any profile.
 */
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { MAX_UNPROVEN_RELISTS } from "../../src/toolmap/profile-names";
import { callerOrigin, signedInAs, type CallerTool as Tool } from "../helpers/caller-origin";
import { clientsOfEachTest, type TestClient, type ToolResult } from "../helpers/clients";
import { type Fetch, PROXY_URL, viaProxy } from "../helpers/proxy";

const connect = clientsOfEachTest();

/** Alice's tools: 140, over the OpenAI and Gemini ceilings (128). */
const aliceTools: Tool[] = Array.from({ length: 140 }, (_, i) => ({
  name: `user.item_${i}`,
  description: `Reads the user's item number ${i}.`,
  inputSchema: { type: "object", properties: { alice_id: { type: "string" } } },
}));

/**
 * Mallory's: tools of names alice was never listed, and alice's own names
 * with mallory's descriptions and schemas, each word of them mallory's.
 */
const malloryTools: Tool[] = [
  ...Array.from({ length: 70 }, (_, i) => ({
    name: `admin.secret_${i}`,
    description: `Payroll export of department ${i}, with social security numbers.`,
    inputSchema: {
      type: "object",
      properties: { mallory_ssn: { type: "string", description: "Mallory ssn field." } },
      required: ["mallory_ssn"],
    },
  })),
  ...aliceTools.slice(0, 70).map((tool, i) => ({
    name: tool.name,
    description: `Payroll export of the user's item number ${i}, mallory's.`,
    inputSchema: {
      type: "object",
      properties: { mallory_ssn: { type: "string", description: "Mallory ssn field." } },
      required: ["mallory_ssn"],
    },
  })),
];

/** What tells mallory's listing: any of it in an answer to alice is a leak. */
const MALLORYS = /mallory|payroll|social security|department|admin|secret/i;

/** The profile paths one Worker serves; `PROXY_URL` is `PROFILE`'s (openai). */
const PATHS = ["", "/gemini", "/openai-strict", "/anthropic", "/mcp"] as const;

const said = (result: ToolResult) => JSON.stringify(result);
const found = (result: ToolResult) =>
  (result.structuredContent as { tools?: Tool[] } | undefined)?.tools ?? [];

describe.each(["2025-11-25", "2026-07-28"] as const)("protocol %s", (revision) => {
  async function setup(vars: Record<string, string> = {}) {
    const origin = callerOrigin();
    await origin.list("alice", aliceTools);
    await origin.list("mallory", malloryTools);
    const proxy = viaProxy({ ORIGIN_URL: origin.url, ...vars }, { app: createApp() });
    const as = (token: string, path: string): Promise<TestClient> =>
      connect(revision, signedInAs(token, proxy), `${PROXY_URL}${path}`);
    return { as };
  }

  it.each<Record<string, string>>([{}, { TOOL_CHANGES: "hold" }, { MAX_TOOLS: "40" }])(
    "answers alice through each profile from her own listing, mallory listing last through every profile (%o)",
    async (vars) => {
      const { as } = await setup(vars);
      const alice = await Promise.all(PATHS.map((path) => as("alice", path)));
      const mallory = await Promise.all(PATHS.map((path) => as("mallory", path)));
      // Alice lists through each profile, then mallory through every one: the last listing of
      // the isolate, in every profile, is mallory's.
      for (const client of alice) await client.listTools();
      for (const client of mallory) await client.listTools();

      for (const [i, client] of alice.entries()) {
        const path = PATHS[i];
        const tools = await client.listTools();
        expect(JSON.stringify(tools), path).not.toMatch(MALLORYS);
        const searching = tools.some((tool) => tool.name === "search_tools");
        if (searching) {
          const query = "payroll export department social security mallory ssn item number 7";
          const search = await client.callTool("search_tools", { query, limit: 50 });
          expect(found(search).length, path).toBeGreaterThan(0);
          // The answer says what it was asked: the rest is what it found.
          expect(said(search).replaceAll(query, ""), path).not.toMatch(MALLORYS);
          // A tool of hers listed to mallory with his schema: hers, in whatever view the profile makes.
          const [item] = found(
            await client.callTool("search_tools", { query: "item number 7", limit: 1 }),
          );
          expect(JSON.stringify(item), path).toMatch(/alice_id/);
          // Mallory's name, through call_tool: no tool of hers; whatever answers it tells nothing of his.
          const called = await client
            .callTool("call_tool", { name: "admin.secret_7", arguments: {} })
            .then(said, String);
          expect(called.replaceAll("admin.secret_7", ""), path).not.toMatch(MALLORYS);
        }
        // A name like mallory's: the did-you-mean (or the origin) answers from hers alone.
        for (const name of ["admin_secret_7x", "user_item_7x"]) {
          const answer = await client.callTool(name, { mallory_ssn: "x" }).then(said, String);
          expect(answer.replaceAll(name, "").replaceAll("mallory_ssn", ""), path).not.toMatch(
            MALLORYS,
          );
        }
      }
    },
    180_000,
  );
});

describe.each(["2025-11-25", "2026-07-28"] as const)(
  "a caller with no listing here, protocol %s",
  (revision) => {
    /** One tool listed to each user with a schema of their own: alice's id a number, mallory's a string. */
    const read = (type: string): Tool => ({
      name: "user.read",
      description: "Reads an item of the user's.",
      inputSchema: { type: "object", properties: { id: { type } }, required: ["id"] },
    });
    const MALLORYS_OWN = { tool: "user.read", arguments: { id: "42" }, caller: "mallory" };

    /** What the origin received of mallory's call `{ id: "42" }` in an isolate where only alice listed. */
    async function callWithNoListingHere(vars: Record<string, string>, spent = false) {
      const origin = callerOrigin();
      await origin.list("alice", [read("integer")]);
      await origin.list("mallory", [read("string")]);
      const others = Array.from({ length: MAX_UNPROVEN_RELISTS }, (_, i) => `user${i}`);
      // Listed as alice is: the schema the map holds is an integer's, whoever of them listed last.
      for (const token of others) await origin.list(token, [read("integer")]);
      // Two isolates of one Worker: mallory listed in one, her call lands in the other, where only
      // alice listed (as it is for a caller whose listing there was let go of, or expired).
      const [here, there] = [createApp(), createApp()].map((app) =>
        viaProxy({ ORIGIN_URL: origin.url, ...vars }, { app }),
      );
      const alice = await connect(revision, signedInAs("alice", here as Fetch));
      const malloryThere = await connect(revision, signedInAs("mallory", there as Fetch));
      const malloryHere = await connect(revision, signedInAs("mallory", here as Fetch));
      await alice.listTools();
      const [tool] = await malloryThere.listTools();
      // Callers new to the isolate spend the listings it asks for them a minute, first.
      if (spent) {
        for (const token of others) {
          const other = await connect(revision, signedInAs(token, here as Fetch));
          await other.callTool(tool?.name ?? "", { id: "7" });
        }
      }
      const called = await malloryHere.callTool(tool?.name ?? "", { id: "42" });
      // Spent: her listing was asked for in the other isolate alone.
      if (spent) expect(await origin.listings()).toMatchObject({ mallory: 1 });
      return called.structuredContent;
    }

    // Under `hold` the caller's own listing is asked for before a call is judged: theirs.
    it("sends their call with their arguments where the policy judges it by their listing", async () => {
      expect(await callWithNoListingHere({ TOOL_CHANGES: "hold" })).toEqual(MALLORYS_OWN);
    });

    // Before 2026-11-30, with no listing of theirs here and no rules that refuse calls, the call
    // was repaired against the schema the map holds, listed last to another caller: mallory's "42"
    // reached the origin as 42, which told her that alice's schema of the tool says integer.
    it.each<Record<string, string>>([{}, { ARGUMENT_VALIDATION: "enforce" }])(
      "sends their call with their arguments, not repaired against the schema another caller was listed (%o)",
      async (vars) => {
        expect(await callWithNoListingHere(vars)).toEqual(MALLORYS_OWN);
      },
    );

    // Past the listings a minute the isolate asks for callers it has not listed: unrepaired.
    it.each<Record<string, string>>([{}, { ARGUMENT_VALIDATION: "enforce" }])(
      "sends their call as written where their listing cannot be asked for (%o)",
      async (vars) => {
        expect(await callWithNoListingHere(vars, true)).toEqual(MALLORYS_OWN);
      },
    );
  },
);
