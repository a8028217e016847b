/**
 * `tool_rules_unmatched` (docs/rules.md, "A rule that names no tool") where
 * the origin lists each caller their own tools (test/fixtures/node/caller-origin.ts,
 * by bearer token), as most signed-in origins do: a rule for tools only some
 * callers are listed is no mistake, whoever lists first; a typo, or a
 * model-facing name, still is, and is logged. In gate mode, a user the origin
 * knows by the shared key alone is every such user to it (test/helpers/gate.ts).
 */
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { sanitizeName } from "../../src/names/sanitize";
import { profileOf } from "../../src/schemas/profile";
import { type CallerTool, callerOrigin, signedInAs } from "../helpers/caller-origin";
import { clientsOfEachTest, EACH_WIRE } from "../helpers/clients";
import { connectAs, gateNetwork, USER_KEY } from "../helpers/gate";
import { captureLogs } from "../helpers/logs";
import { GATEWAY_ORIGIN, viaProxy } from "../helpers/proxy";

const connect = clientsOfEachTest();

const userTools = (count: number): CallerTool[] =>
  Array.from({ length: count }, (_, i) => ({
    name: `user.item_${i}`,
    description: `Reads the user's item number ${i}.`,
    inputSchema: { type: "object", properties: { id: { type: "string" } } },
  }));

const ADMIN_TOOLS: CallerTool[] = [
  {
    name: "admin.payroll",
    description: "Exports the payroll.",
    inputSchema: { type: "object", properties: { month: { type: "string" } } },
  },
  {
    name: "admin.users",
    description: "Lists every user.",
    inputSchema: { type: "object", properties: {} },
  },
];

describe.each(EACH_WIRE)(
  "TOOL_RULES where each caller is listed their own tools, protocol %s",
  (revision) => {
    /** One isolate with `rules`, before a fresh map of the caller origin; `list` lists as `token`. */
    function setup(rules: object) {
      const origin = callerOrigin();
      const proxy = viaProxy(
        { ORIGIN_URL: origin.url, TOOL_RULES: JSON.stringify(rules) },
        { app: createApp() },
      );
      const list = async (token: string) =>
        (await (await connect(revision, signedInAs(token, proxy))).listTools()).map(
          (tool) => tool.description,
        );
      return { origin, list };
    }

    it("logs no rule for tools only a caller listed after another is listed", async () => {
      const logs = captureLogs();
      const { origin, list } = setup({ hide: ["admin.*"] });
      await origin.list("bob", userTools(3));
      await origin.list("admin", [...userTools(3), ...ADMIN_TOOLS]);

      expect(await list("bob")).toHaveLength(3);
      // The rule does what it was written for: admin's tools are left out of admin's listing.
      expect(await list("admin")).toEqual(userTools(3).map((tool) => tool.description));
      expect(logs.events("tool_rules_unmatched")).toEqual([]);
    });

    it("logs a rule that names no tool of three distinct listings, with how many it was judged against", async () => {
      const logs = captureLogs();
      const { origin, list } = setup({ hide: ["admin.*", "amdin.*"] });
      await origin.list("bob", userTools(3));
      await origin.list("dave", userTools(3));
      await origin.list("carol", userTools(4));
      await origin.list("admin", [...userTools(3), ...ADMIN_TOOLS]);

      // Bob's listing again, and dave's, which is bob's: one listing, not three.
      await list("bob");
      await list("dave");
      await list("bob");
      await list("carol");
      expect(logs.events("tool_rules_unmatched")).toEqual([]);

      await list("admin");
      await list("admin");
      await list("bob");
      expect(logs.events("tool_rules_unmatched")).toEqual([
        {
          event: "tool_rules_unmatched",
          profile: "openai",
          rules: [{ rule: "TOOL_RULES.hide[1]", listings: 3 }],
        },
      ]);
    });

    it("logs a model-facing name at the first listing, with the tool it names", async () => {
      const logs = captureLogs();
      const modelFacing = sanitizeName("user.item_1", profileOf("openai").names).name;
      expect(modelFacing).not.toBe("user.item_1");
      const { origin, list } = setup({ hide: [modelFacing] });
      await origin.list("bob", userTools(3));

      expect(await list("bob")).toHaveLength(3);
      expect(logs.events("tool_rules_unmatched")).toEqual([
        {
          event: "tool_rules_unmatched",
          profile: "openai",
          rules: [{ rule: "TOOL_RULES.hide[0]", listings: 1, modelFacingOf: ["user.item_1"] }],
        },
      ]);
    });

    it("logs a typo at the first listing of a request the origin cannot tell from another's: no credential", async () => {
      const logs = captureLogs();
      const { origin, list } = setup({ hide: ["admin.*", "amdin.*"] });
      await origin.list("", [...userTools(3), ...ADMIN_TOOLS]);

      expect(await list("")).toHaveLength(3);
      expect(logs.events("tool_rules_unmatched")).toEqual([
        {
          event: "tool_rules_unmatched",
          profile: "openai",
          rules: [{ rule: "TOOL_RULES.hide[1]", listings: 1 }],
        },
      ]);
    });
  },
);

describe("TOOL_RULES in gate mode: the origin tells users apart only by what the proxy sends it", () => {
  /** The lines one listing of `user`'s logs, the first of an isolate with a typo in its rules. */
  async function typoListedBy(user: string, vars: Record<string, string> = {}) {
    const logs = captureLogs();
    const network = gateNetwork({
      ORIGIN_URL: `${GATEWAY_ORIGIN}/mcp?map=${crypto.randomUUID()}`,
      TOOL_RULES: JSON.stringify({ hide: ["amdin.*"] }),
      ...vars,
    });
    const { client } = await connectAs(user, network);
    expect((await client.listTools()).length).toBeGreaterThan(0);
    await client.close();
    const lines = logs.events("tool_rules_unmatched");
    logs.restore();
    return lines;
  }
  const TYPO = {
    event: "tool_rules_unmatched",
    profile: "openai",
    rules: [{ rule: "TOOL_RULES.hide[0]", listings: 1 }],
  };
  const ALICE_OWN_KEY = { ORIGIN_USER_SECRETS: JSON.stringify({ "alice@acme.test": USER_KEY }) };

  it("logs a typo at the first listing of a user known by the shared ORIGIN_SECRET alone: every such user's", async () => {
    expect(await typoListedBy("alice")).toEqual([TYPO]);
    // Dave has no key of his own: to the origin, he is every user without one.
    expect(await typoListedBy("dave", ALICE_OWN_KEY)).toEqual([TYPO]);
  });

  it("waits for distinct listings where the origin is told who the user is: a key of their own, or ORIGIN_USER_HEADER", async () => {
    // Alice's own key: what the origin lists her may be hers alone.
    expect(await typoListedBy("alice", ALICE_OWN_KEY)).toEqual([]);
    expect(await typoListedBy("alice", { ORIGIN_USER_HEADER: "X-User-Email" })).toEqual([]);
  });
});
