/**
 * The operator's rules (TOOL_RULES, TOOL_CHANGES; docs/rules.md) through the
 * proxy in workerd, with the SDK clients of 2025-11-25 and 2026-07-28: the
 * demo origin's tools hidden, renamed, described, and called with aliases,
 * fixed values and defaults; and a tool whose definition changes under the
 * proxy's feet (the catalog origin, test/fixtures/node/catalog-origin.ts).
 */
import { waitOnExecutionContext } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createApp } from "../../src/app";
import { changingOrigin, runAcceptCommand } from "../helpers/changing-origin";
import { clientsOfEachTest, EACH_WIRE, type ToolResult } from "../helpers/clients";
import { DEMO_NAMES } from "../helpers/demo-names";
import { captureLogs } from "../helpers/logs";
import { postJson } from "../helpers/mcp";
import {
  DEMO_ORIGIN,
  freshOrigin,
  GATEWAY_ORIGIN,
  newTrace,
  PROXY_URL,
  receivedByOrigin,
  viaProxy,
} from "../helpers/proxy";

const connect = clientsOfEachTest();

afterEach(() => {
  vi.restoreAllMocks();
});

const RULES = {
  hide: ["scope:*"],
  hideAnnotated: { destructiveHint: true },
  tools: {
    "catering.invoice": {
      name: "create_invoice",
      description: "Create an invoice for a catering order.",
      aliases: { invoice: "payload_json" },
      fixed: { invoice_id: "INV-FIXED" },
    },
    "files.read": {
      appendDescription: "Paths are relative to the repository root.",
      defaults: { max_bytes: 4096 },
    },
  },
};

const echoed = (result: ToolResult) =>
  result.structuredContent as { tool: string; arguments: Record<string, unknown> };

describe.each(EACH_WIRE)("TOOL_RULES, protocol %s", (revision) => {
  const withRules = () =>
    connect(revision, viaProxy({ ORIGIN_URL: freshOrigin(), TOOL_RULES: JSON.stringify(RULES) }));

  it("leaves hidden tools out, by glob and by annotation, and refuses calls to them by any name", async () => {
    const client = await withRules();
    const names = (await client.listTools()).map((tool) => tool.name);
    expect(names).not.toContain(DEMO_NAMES["scope:action"]);
    expect(names).not.toContain(DEMO_NAMES["deploy:confirm"]);
    expect(names).toContain(DEMO_NAMES["unity/health"]);
    for (const name of ["scope:action", DEMO_NAMES["scope:action"], DEMO_NAMES["deploy:confirm"]]) {
      await expect(client.callTool(name, { scope: "billing", target: "prod" })).rejects.toThrow(
        `Unknown tool: ${name}`,
      );
    }
  });

  it("lists a renamed tool under the operator's name and description, its fixed argument left out", async () => {
    const client = await withRules();
    const invoice = (await client.listTools()).find((tool) => tool.name === "create_invoice");
    expect(invoice).toMatchObject({
      description: "Create an invoice for a catering order.",
      inputSchema: { properties: { payload_json: { type: "object" } } },
    });
    const schema = invoice?.inputSchema as { properties: object } | undefined;
    expect(Object.keys(schema?.properties ?? {})).toEqual(["payload_json"]);
  });

  it("calls a renamed tool by its new name or its original one: alias applied, fixed value set over the model's, under any spelling", async () => {
    const client = await withRules();
    await client.listTools();
    // `catering.invoice` is no OpenAI name: the proxy forwards that call under the name it came with.
    for (const name of ["create_invoice", "catering.invoice"]) {
      const result = await client.callTool(name, {
        invoice: { invoice_id: "INV-1", amount: 3 },
        invoice_id: "INV-MODEL",
        // Spellings the schema's own alias matching folds to it, which an origin may read too.
        invoiceId: "INV-SPELLED",
        "INVOICE-ID": "INV-SHOUTED",
      });
      expect(echoed(result), name).toEqual({
        tool: "catering.invoice",
        arguments: { payload_json: { invoice_id: "INV-1", amount: 3 }, invoice_id: "INV-FIXED" },
      });
    }
  });

  it("appends to a description, says the default, and sets it only when the model leaves it out", async () => {
    const client = await withRules();
    const read = (await client.listTools()).find((tool) => tool.name === DEMO_NAMES["files.read"]);
    expect(read?.description).toBe(
      "Reads a file from the workspace.\n\nPaths are relative to the repository root.",
    );
    expect(read?.inputSchema).toMatchObject({
      properties: {
        max_bytes: {
          description:
            "Read at most this many bytes. Default: 4096 (the proxy sets it when left out).",
        },
      },
    });
    const left = await client.callTool(DEMO_NAMES["files.read"], { path: "a.md" });
    expect(echoed(left).arguments).toEqual({ path: "a.md", max_bytes: 4096 });
    const given = await client.callTool(DEMO_NAMES["files.read"], { path: "a.md", max_bytes: 9 });
    expect(echoed(given).arguments).toEqual({ path: "a.md", max_bytes: 9 });
  });
});

describe.each(EACH_WIRE)("TOOL_RULES, cold isolates, protocol %s", (revision) => {
  it("applies an explicit alias before the schema's coalescing, and logs the keys it set and left out", async () => {
    const logs = captureLogs();
    const client = await connect(
      revision,
      viaProxy({ ORIGIN_URL: freshOrigin(), TOOL_RULES: JSON.stringify(RULES) }),
    );
    await client.listTools();
    // `payload-json` would coalesce to payload_json on its own; the alias `invoice` would not.
    await client.callTool("create_invoice", {
      invoice: { amount: 1 },
      invoice_id: "INV-MODEL",
      invoiceId: "INV-SPELLED",
    });
    expect(logs.events("tool_call_repaired")).toContainEqual(
      expect.objectContaining({
        "gen_ai.tool.name": "catering.invoice",
        name: "create_invoice",
        renamedKeys: [{ from: "invoice", to: "payload_json" }],
        setByRules: ["invoice_id"],
        dropped: ["invoiceId"],
      }),
    );
    const [renamed] = logs.events("tools_renamed");
    expect(renamed?.renames).toContainEqual({
      from: "catering.invoice",
      to: "create_invoice",
      reasons: ["rule"],
    });
    // Counted, never named: a tool the rules hide (`scope:action`, renamed under openai).
    expect(renamed?.hidden).toBeGreaterThan(0);
    expect(JSON.stringify(logs.events("tools_renamed"))).not.toContain("scope");
  });

  it("refuses a name the origin does not list, which an origin that looks names up leniently could take for a hidden tool", async () => {
    const logs = captureLogs();
    const trace = newTrace();
    const client = await connect(
      revision,
      viaProxy({
        ORIGIN_URL: freshOrigin(GATEWAY_ORIGIN, `&trace=${trace}`),
        TOOL_RULES: JSON.stringify(RULES),
      }),
    );
    await client.listTools();
    // Hidden tools in another case, up to a NUL (a C string's end), with other separators; and no tool at all.
    for (const name of [
      "SCOPE:ACTION",
      "scope:action\u0000",
      "scope_action",
      "Deploy-Confirm",
      "no_such_tool",
    ]) {
      await expect(client.callTool(name, { target: "prod" })).rejects.toThrow(
        `Unknown tool: ${name}`,
      );
    }
    expect(echoed(await client.callTool(DEMO_NAMES["files.read"], { path: "a" })).tool).toBe(
      "files.read",
    );
    const calls = (await receivedByOrigin(trace)).filter((r) => r.body.includes('"tools/call"'));
    expect(calls.map((call) => JSON.parse(call.body).params.name)).toEqual(["files.read"]);
    // The operator's log tells a name the listing lacks from a tool the rules hide.
    expect(logs.events("tool_call_refused").map(({ name, reason }) => [name, reason])).toEqual([
      ["SCOPE:ACTION", "unlisted"],
      ["scope:action\u0000", "hidden"],
      ["scope_action", "unlisted"],
      ["Deploy-Confirm", "unlisted"],
      ["no_such_tool", "unlisted"],
    ]);
  });

  it("sets a fixed argument on a call by another spelling of its tool, which an origin that looks names up in any case would run", async () => {
    const trace = newTrace();
    const client = await connect(
      revision,
      viaProxy({
        ORIGIN_URL: freshOrigin(GATEWAY_ORIGIN, `&trace=${trace}`),
        TOOL_RULES: JSON.stringify({
          tools: { "catering.invoice": { fixed: { invoice_id: "INV-FIXED" } } },
        }),
      }),
    );
    await client.listTools();
    // An origin that looks names up in any case would run catering.invoice with the model's id:
    // the call is that tool's, under its own name, with the operator's.
    await client.callTool("CATERING.INVOICE", { payload_json: {}, invoice_id: "INV-MODEL" });
    const calls = (await receivedByOrigin(trace)).filter((r) => r.body.includes('"tools/call"'));
    // The name and arguments it reached the origin with (2026-07-28 adds the `_meta` envelope).
    const sent = calls.map((call) => JSON.parse(call.body).params);
    expect(sent.map(({ name, arguments: args }) => ({ name, arguments: args }))).toEqual([
      { name: "catering.invoice", arguments: { payload_json: {}, invoice_id: "INV-FIXED" } },
    ]);
  });

  it("refuses a tool its name alone hides in a new isolate after the caller's own listing, as a name no tool has", async () => {
    const trace = newTrace();
    const cold = await connect(
      revision,
      viaProxy(
        {
          ORIGIN_URL: freshOrigin(GATEWAY_ORIGIN, `&trace=${trace}`),
          TOOL_RULES: JSON.stringify({ hide: ["scope:*"] }),
        },
        { app: createApp() },
      ),
    );
    await expect(cold.callTool("scope:action", { target: "prod" })).rejects.toThrow(
      "Unknown tool: scope:action",
    );
    // Listed once, as for any name the caller's listing here would tell: refused from the rules
    // alone, sooner and without the names alike to it that a listing gives, the answer told a
    // name the rules hide from one no tool has (test/worker/caller-isolation-attacks.test.ts).
    const methods = (await receivedByOrigin(trace)).map((r) => JSON.parse(r.body || "{}").method);
    expect(methods.filter((method) => method === "tools/list")).toHaveLength(1);
    expect(methods).not.toContain("tools/call");
  });

  it("lists the origin once for a caller new to an isolate before it forwards their call by a name the map in KV knows: whether the tool is theirs only their listing tells", async () => {
    const trace = newTrace();
    const vars = {
      ORIGIN_URL: freshOrigin(GATEWAY_ORIGIN, `&trace=${trace}`),
      TOOL_RULES: JSON.stringify({ hide: ["scope:*"] }),
    };
    const contexts: ExecutionContext[] = [];
    await (await connect(revision, viaProxy(vars, { contexts }))).listTools();
    await Promise.all(contexts.map((ctx) => waitOnExecutionContext(ctx)));
    const listed = async () =>
      (await receivedByOrigin(trace)).filter((r) => r.body.includes('"tools/list"')).length;
    const before = await listed();
    // `files.read` is no OpenAI name: the map never hands it out, but KV knows the tool.
    const cold = await connect(revision, viaProxy(vars, { app: createApp() }));
    expect(echoed(await cold.callTool("files.read", { path: "a" })).tool).toBe("files.read");
    expect(await listed()).toBe(before + 1);
    expect(echoed(await cold.callTool("files.read", { path: "b" })).tool).toBe("files.read");
    expect(await listed()).toBe(before + 1);
  });

  it("serves only what `only` and onlyAnnotated leave, and refuses the rest", async () => {
    const client = await connect(
      revision,
      viaProxy({
        ORIGIN_URL: freshOrigin(),
        TOOL_RULES: JSON.stringify({ onlyAnnotated: { readOnlyHint: true } }),
      }),
    );
    expect((await client.listTools()).map((tool) => tool.name)).toEqual([DEMO_NAMES["files.read"]]);
    await expect(client.callTool(DEMO_NAMES["unity/health"], {})).rejects.toThrow("Unknown tool");
  });

  it("refuses a hidden tool in a cold isolate, which lists the origin to learn its annotations", async () => {
    const origin = freshOrigin();
    const vars = { ORIGIN_URL: origin, TOOL_RULES: JSON.stringify(RULES) };
    const contexts: ExecutionContext[] = [];
    const warm = await connect(revision, viaProxy(vars, { contexts }));
    await warm.listTools();
    await Promise.all(contexts.map((ctx) => waitOnExecutionContext(ctx)));
    const cold = await connect(revision, viaProxy(vars, { app: createApp() }));
    await expect(cold.callTool(DEMO_NAMES["deploy:confirm"], { target: "prod" })).rejects.toThrow(
      "Unknown tool",
    );
  });

  it("refuses a tool hidden by its annotations when a new isolate is called by its original name", async () => {
    const vars = { ORIGIN_URL: freshOrigin(), TOOL_RULES: JSON.stringify(RULES) };
    const cold = await connect(revision, viaProxy(vars, { app: createApp() }));
    await expect(cold.callTool("deploy:confirm", { target: "prod" })).rejects.toThrow(
      "Unknown tool: deploy:confirm",
    );
    // Learned from the listing it asked for: a tool its rules let through still goes on.
    const other = await connect(revision, viaProxy(vars, { app: createApp() }));
    expect(echoed(await other.callTool("files.read", { path: "a" })).tool).toBe("files.read");
  });

  it("serves a tool that onlyAnnotated lets through when a new isolate is called by its original name", async () => {
    const vars = {
      ORIGIN_URL: freshOrigin(),
      TOOL_RULES: JSON.stringify({ onlyAnnotated: { readOnlyHint: true } }),
    };
    const cold = await connect(revision, viaProxy(vars, { app: createApp() }));
    expect(echoed(await cold.callTool("files.read", { path: "a" })).tool).toBe("files.read");
    await expect(cold.callTool("unity/health", {})).rejects.toThrow("Unknown tool: unity/health");
  });
});

describe("TOOL_RULES: a call that names no tool", () => {
  it.each([
    ["a name that is no string", { name: ["scope:action"], arguments: {} }],
    ["no name", { arguments: { name: "scope:action" } }],
    ["params that are no object", ["scope:action", {}]],
  ])(
    "refuses a call with %s, which a lenient origin could still read as a hidden tool's",
    async (_, params) => {
      // `tools[["scope:action"]]` is `tools["scope:action"]` to JavaScript.
      const trace = newTrace();
      const proxy = viaProxy({
        ORIGIN_URL: freshOrigin(GATEWAY_ORIGIN, `&trace=${trace}`),
        TOOL_RULES: JSON.stringify(RULES),
      });
      const response = await postJson(proxy, PROXY_URL, {
        jsonrpc: "2.0",
        id: 7,
        method: "tools/call",
        params,
      });
      expect(await response.json()).toMatchObject({
        id: 7,
        error: { code: -32602, message: expect.stringContaining("params.name") },
      });
      expect(await receivedByOrigin(trace)).toEqual([]);
    },
  );
});

describe.each(EACH_WIRE)(
  "TOOL_RULES: a rule that names no listed tool, protocol %s",
  (revision) => {
    it("is logged once, at the first listing where requests carry no credential, with the tools whose model-facing names it names instead", async () => {
      const logs = captureLogs();
      // What an operator writes from a client's listing: model-facing names, not the origin's.
      const rules = {
        hide: ["scope:*", "files_read_*", "admin.*"],
        only: ["exact:nowhere", "**"],
        tools: {
          "files.read": { defaults: { max_bytes: 4096 } },
          [DEMO_NAMES["catering.invoice"]]: { fixed: { invoice_id: "INV-FIXED" } },
        },
      };
      const client = await connect(
        revision,
        viaProxy({ ORIGIN_URL: freshOrigin(), TOOL_RULES: JSON.stringify(rules) }),
      );
      const names = (await client.listTools()).map((tool) => tool.name);
      // The rules that name no tool are off: what the operator meant to hide is listed.
      expect(names).toContain(DEMO_NAMES["files.read"]);
      expect(names).not.toContain(DEMO_NAMES["scope:action"]);
      await client.listTools();
      expect(logs.events("tool_rules_unmatched")).toEqual([
        {
          event: "tool_rules_unmatched",
          profile: "openai",
          rules: [
            { rule: "TOOL_RULES.hide[1]", listings: 1, modelFacingOf: ["files.read"] },
            { rule: "TOOL_RULES.hide[2]", listings: 1 },
            { rule: "TOOL_RULES.only[0]", listings: 1 },
            {
              rule: "TOOL_RULES.tools.catering_invoice_kb7ev1",
              listings: 1,
              modelFacingOf: ["catering.invoice"],
            },
          ],
        },
      ]);
    });
  },
);

describe.each(EACH_WIRE)("a name the operator chose, protocol %s", (revision) => {
  it("reaches the tool it was chosen for, never the tool whose own name it is", async () => {
    const vars = {
      ORIGIN_URL: freshOrigin(),
      TOOL_RULES: JSON.stringify({ tools: { "files.read": { name: "a_b" } } }),
    };
    const contexts: ExecutionContext[] = [];
    const warm = await connect(revision, viaProxy(vars, { contexts }));
    const listed = await warm.listTools();
    const described = (name: string) => listed.find((tool) => tool.name === name)?.description;
    expect(described("a_b")).toBe("Reads a file from the workspace.");
    await Promise.all(contexts.map((ctx) => waitOnExecutionContext(ctx)));

    const cold = await connect(revision, viaProxy(vars, { app: createApp() }));
    expect(echoed(await cold.callTool("a_b", { path: "README.md" })).tool).toBe("files.read");
  });
});

/** A tool whose definition changed since it was first listed. */
describe.each(EACH_WIRE)("TOOL_CHANGES, protocol %s", (revision) => {
  it("log: lists the new definition and logs what changed, once", async () => {
    const logs = captureLogs();
    const { origin, change } = changingOrigin();
    const client = await connect(revision, viaProxy({ ORIGIN_URL: origin }));
    await client.listTools();
    await change();
    const tools = await client.listTools();
    await client.listTools();
    expect(tools[0]?.description).toContain("(changed 1 times)");
    const changes = logs.events("tool_definition_changed");
    expect(changes).toEqual([
      expect.objectContaining({ tool: "read_text_file", changed: ["description"], mode: "log" }),
    ]);
  });

  it("hold: leaves the tool out and refuses calls until the logged command accepts the change", async () => {
    const logs = captureLogs();
    const { origin, change } = changingOrigin();
    const vars = { ORIGIN_URL: origin, TOOL_CHANGES: "hold" };
    const contexts: ExecutionContext[] = [];
    const client = await connect(revision, viaProxy(vars, { contexts }));
    expect((await client.listTools()).map((tool) => tool.name)).toContain("read_text_file");
    await Promise.all(contexts.map((ctx) => waitOnExecutionContext(ctx)));

    await change();
    expect((await client.listTools()).map((tool) => tool.name)).not.toContain("read_text_file");
    await expect(client.callTool("read_text_file", { path: "a" })).rejects.toThrow(
      "Tool read_text_file is held",
    );
    // Nor in another spelling, which an origin that looks names up leniently would run.
    await expect(client.callTool("READ_TEXT_FILE", { path: "a" })).rejects.toThrow(
      "Unknown tool: READ_TEXT_FILE",
    );
    const [held] = logs.events("tool_definition_changed");
    expect(held).toMatchObject({ tool: "read_text_file", changed: ["description"], mode: "hold" });

    // The logged command, for `wrangler dev` here (no WRANGLER_ENV), writes the accept key.
    await runAcceptCommand(held, origin);

    // Another isolate (or this one, a minute on) reads the acceptance: the tool is back.
    const accepted = await connect(revision, viaProxy(vars, { app: createApp() }));
    const tools = await accepted.listTools();
    expect(tools.find((tool) => tool.name === "read_text_file")?.description).toContain(
      "(changed 1 times)",
    );
    expect(logs.events("tool_definition_accepted")).toEqual([
      expect.objectContaining({ tool: "read_text_file", pin: held?.to }),
    ]);
    expect(await accepted.callTool("read_text_file", { path: "a" })).toMatchObject({
      structuredContent: { tool: "read_text_file" },
    });
  });

  it("hold: a new isolate refuses a held tool called by its original name, which it lists the origin to judge", async () => {
    const { origin, change } = changingOrigin();
    // A cap of 12: `read_text_file` is renamed, so its own name is one the map never hands out.
    const vars = { ORIGIN_URL: origin, TOOL_CHANGES: "hold", NAME_MAX_LENGTH: "12" };
    const contexts: ExecutionContext[] = [];
    const client = await connect(revision, viaProxy(vars, { contexts }));
    expect((await client.listTools()).map((tool) => tool.name)).not.toContain("read_text_file");
    await Promise.all(contexts.map((ctx) => waitOnExecutionContext(ctx)));

    await change();
    const cold = await connect(revision, viaProxy(vars, { app: createApp() }));
    await expect(cold.callTool("read_text_file", { path: "a" })).rejects.toThrow(
      "Tool read_text_file is held",
    );
  });

  it("hold: a changed title, which people approving a call read, is held like a changed description", async () => {
    const logs = captureLogs();
    const { origin, change } = changingOrigin({ titled: true });
    const contexts: ExecutionContext[] = [];
    const client = await connect(
      revision,
      viaProxy({ ORIGIN_URL: origin, TOOL_CHANGES: "hold" }, { contexts }),
    );
    expect((await client.listTools())[0]).toMatchObject({
      name: "read_text_file",
      title: "read_text_file",
    });
    await Promise.all(contexts.map((ctx) => waitOnExecutionContext(ctx)));

    await change();
    expect((await client.listTools()).map((tool) => tool.name)).not.toContain("read_text_file");
    expect(logs.events("tool_definition_changed")).toEqual([
      expect.objectContaining({ tool: "read_text_file", changed: ["title"], mode: "hold" }),
    ]);
  });

  it("hold: a tool listed twice is listed once, so a changed copy cannot stand beside the one pinned", async () => {
    const logs = captureLogs();
    const { origin, change } = changingOrigin({ twice: true });
    const contexts: ExecutionContext[] = [];
    const client = await connect(
      revision,
      viaProxy({ ORIGIN_URL: origin, TOOL_CHANGES: "hold" }, { contexts }),
    );
    const named = async () => (await client.listTools()).map((tool) => tool.name);
    expect((await named()).filter((name) => name === "read_text_file")).toHaveLength(1);
    expect(logs.events("tool_listed_twice")).toMatchObject([{ tools: ["read_text_file"] }]);
    await Promise.all(contexts.map((ctx) => waitOnExecutionContext(ctx)));

    // The first copy changes; the second stays as it was pinned.
    await change();
    const tools = await client.listTools();
    expect(tools.map((tool) => tool.name)).not.toContain("read_text_file");
    expect(tools.map((tool) => tool.description).join("\n")).not.toContain("(changed 1 times)");
    expect(logs.events("tool_definition_changed")).toMatchObject([
      { tool: "read_text_file", changed: ["description"], mode: "hold" },
    ]);
  });

  it("allow: neither logs nor holds", async () => {
    const logs = captureLogs();
    const { origin, change } = changingOrigin();
    const client = await connect(revision, viaProxy({ ORIGIN_URL: origin, TOOL_CHANGES: "allow" }));
    await client.listTools();
    await change();
    expect((await client.listTools())[0]?.description).toContain("(changed 1 times)");
    expect(logs.events("tool_definition_changed")).toEqual([]);
  });
});

describe("the demo origin is untouched without rules", () => {
  it("lists every tool", async () => {
    const client = await connect(
      "2025-11-25",
      viaProxy({ ORIGIN_URL: `${DEMO_ORIGIN}/mcp?map=${crypto.randomUUID()}` }),
    );
    const names = (await client.listTools()).map((tool) => tool.name);
    expect(names.sort()).toEqual(Object.values(DEMO_NAMES).sort());
  });
});
