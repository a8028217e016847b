/**
 * The operator's `fixed` values (docs/rules.md) against whatever a model
 * sends: the whole way back of a `tools/call` (repairToolCall: recovery,
 * aliases, coalescing, repair, the rule's values), any arguments, inline or
 * not, under every validation mode.
 */
import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import { echoTools } from "../../demo/src/tools";
import { foldKey } from "../../src/args/coalesce";
import type { JsonRpcRequest } from "../../src/protocol/jsonrpc";
import { alignCallHeaders, paramMismatch } from "../../src/protocol/mcp-headers";
import { revisionOf } from "../../src/protocol/revision";
import { repairToolCall } from "../../src/rewrite/tools-call";
import { resolverOf } from "../../support/resolver";
import { rulesOf } from "../helpers/tool-rules";

const rule = rulesOf({
  tools: {
    "catering.invoice": {
      fixed: { invoice_id: "INV-FIXED" },
      aliases: { inv: "invoice_id" },
      defaults: { currency: "EUR" },
    },
  },
}).ruleFor("catering.invoice");

const entry = {
  original: "catering.invoice",
  schemaHash: "",
  inputSchema: echoTools.find((tool) => tool.name === "catering.invoice")?.inputSchema,
};
const resolver = resolverOf(entry, { rule });

describe("fixed arguments (property)", () => {
  it("reach the origin as the operator set them, under every spelling the model tries", async () => {
    vi.spyOn(console, "log").mockImplementation(() => {});
    const key = fc.constantFrom(
      ...["invoice_id", "invoiceId", "INVOICE_ID", "invoice-id", "Invoice Id", "inv"],
      ...["payload_json", "payload-json", "__proto__", "currency", "amount"],
    );
    const value = fc.oneof(
      fc.constantFrom("INV-MODEL", null, '{"invoice_id":"INV-MODEL","amount":"1"}'),
      fc.jsonValue({ maxDepth: 1 }),
    );
    // As JSON reads them: a `__proto__` key an own one.
    const asJson = (object: object) => JSON.parse(JSON.stringify(object));
    const args = fc.dictionary(key, value, { maxKeys: 5 }).map(asJson);
    const inline = fc.dictionary(key, value, { maxKeys: 2 }).map(asJson);
    let forwarded = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.option(args, { nil: undefined }),
        inline,
        fc.constantFrom("off", "warn", "enforce" as const),
        async (sent, beside, mode) => {
          const params = asJson({ ...beside, name: "catering_invoice", arguments: sent });
          const message = { jsonrpc: "2.0", id: 1, method: "tools/call", params };
          const outcome = await repairToolCall(
            message as JsonRpcRequest,
            resolver,
            mode,
            revisionOf(new Headers()),
          );
          // A call refused (enforce, arguments invalid) never reaches the origin at all.
          if (outcome.kind !== "forward") return;
          forwarded++;
          const received = asJson(outcome.message).params.arguments as Record<string, unknown>;
          expect(received.invoice_id).toBe("INV-FIXED");
          for (const [name, given] of Object.entries(received)) {
            if (foldKey(name) === foldKey("invoice_id")) expect(given, name).toBe("INV-FIXED");
          }
        },
      ),
      { numRuns: 2_000 },
    );
    // Not vacuous: most calls reach the origin (1,392 to 1,468 of 2,000 across 60 seeds, a standard
    // deviation of 18), never fewer than half as many.
    expect(forwarded).toBeGreaterThan(700);
  });
});

describe("arguments, as case-blind readers read keys", () => {
  const tasks = rulesOf({
    tools: { "tasks.update": { fixed: { task_id: "T-FIXED" } } },
  }).ruleFor("tasks.update");
  const tasksEntry = {
    original: "tasks.update",
    schemaHash: "",
    inputSchema: {
      type: "object",
      properties: { task_id: { type: "string" }, title: { type: "string" } },
    },
  };
  const tasksResolver = resolverOf(tasksEntry, { rule: tasks });

  const call = (args: unknown) =>
    repairToolCall(
      {
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "tasks_update", arguments: args },
      } as JsonRpcRequest,
      tasksResolver,
      "warn",
      revisionOf(new Headers()),
    );

  it.each([
    ["two aliases, one in another case", { "ti-tle": "A", TITLE: "B" }, "TITLE"],
    ["arguments sent as JSON text", '{"title":"A","Title":"B"}', "Title"],
  ])(
    "are refused where what the proxy would forward writes a key in two cases: %s",
    async (_, args, key) => {
      vi.spyOn(console, "log").mockImplementation(() => {});
      const outcome = await call(args);
      expect(outcome).toMatchObject({
        kind: "answer",
        response: { id: 1, error: { code: -32602, message: expect.stringContaining(key) } },
      });
    },
  );

  // Go's encoding/json reads `ſ` as `s` and the Kelvin sign as `k` in a field's name.
  it.each(["taſk_id", "tas\u212A_id", "TAſK_ID"])(
    "fixed: leave out the model's %s, which Go's encoding/json reads as task_id",
    async (spelled) => {
      vi.spyOn(console, "log").mockImplementation(() => {});
      const message = {
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "tasks_update", arguments: { [spelled]: "T-MODEL" } },
      };
      const outcome = await repairToolCall(
        message as JsonRpcRequest,
        tasksResolver,
        "warn",
        revisionOf(new Headers()),
      );
      expect(outcome.kind).toBe("forward");
      if (outcome.kind !== "forward") return;
      const args = (outcome.message.params as { arguments: Record<string, unknown> }).arguments;
      expect(args).toEqual({ task_id: "T-FIXED" });
    },
  );
});

describe("the enforce fix-it text, where rules fix an argument", () => {
  const rule = rulesOf({
    tools: { "tasks.update": { fixed: { "tenant/org": "acme" } } },
  }).ruleFor("tasks.update");
  const entry = {
    original: "tasks.update",
    schemaHash: "",
    inputSchema: {
      type: "object",
      additionalProperties: false,
      properties: { "tenant/org": { type: "integer" }, title: { type: "string" } },
      required: ["title", "tenant/org"],
    },
  };
  const resolver = resolverOf(entry, { rule });

  it("names no argument the model is not shown: not as received, declared, suggested or at fault", async () => {
    vi.spyOn(console, "log").mockImplementation(() => {});
    const message = {
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "tasks_update", arguments: { tenant_or: "globex" } },
    };
    const outcome = await repairToolCall(
      message as JsonRpcRequest,
      resolver,
      "enforce",
      revisionOf(new Headers()),
    );
    const text = JSON.stringify(outcome.kind === "answer" ? outcome.response : outcome);
    // The listed schema leaves it out (docs/rules.md): the fix-it text told its name, as a key
    // the model sent, one it declares, the one it meant by `tenant_or`, and one whose value the
    // tool refuses (the operator's string for an integer).
    expect(text).toContain("missing required field `title`");
    expect(text).toContain("Unknown key `tenant_or`");
    expect(text).not.toContain("tenant/org");
    expect(text).not.toContain("tenant.org");
  });
});

describe("the enforce fix-it text, where a fixed argument requires others", () => {
  // The operator's `tenant` is set, and the schema requires `region` beside it: the issue is at
  // the arguments, and its message named `tenant` ("Instance has "tenant" but does not have …").
  const dependentOn = (keyword: string) => ({
    original: "reports.run",
    schemaHash: "",
    inputSchema: {
      type: "object",
      properties: { tenant: { type: "string" }, region: { type: "string" }, month: {} },
      required: ["month"],
      // draft-07's `dependencies` also as a schema, whose issue wraps the schema's own.
      ...(keyword === "dependencies (a schema)"
        ? { dependencies: { tenant: { required: ["region"] } } }
        : { [keyword]: { tenant: ["region"] } }),
    },
  });
  const rule = rulesOf({ tools: { "reports.run": { fixed: { tenant: "acme" } } } }).ruleFor(
    "reports.run",
  );

  it.each(["dependentRequired", "dependencies", "dependencies (a schema)"])(
    "names it nowhere, though its %s asks for another argument",
    async (keyword) => {
      vi.spyOn(console, "log").mockImplementation(() => {});
      const message = {
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "reports_run", arguments: { mnth: "5" } },
      };
      const outcome = await repairToolCall(
        message as JsonRpcRequest,
        resolverOf(dependentOn(keyword), { rule }),
        "enforce",
        revisionOf(new Headers()),
      );
      const text = JSON.stringify(outcome.kind === "answer" ? outcome.response : outcome);
      expect(text).toContain("missing required field `month`");
      // What the schema the model sees says of it (docs/rules.md): required.
      expect(text).toContain("missing required field `region`");
      expect(text).not.toContain("tenant");
    },
  );
});

describe("Mcp-Param-* headers of fixed arguments (protocol 2026-07-28)", () => {
  const rule = rulesOf({
    tools: { "tasks.update": { fixed: { task_id: "T-FIXED" } } },
  }).ruleFor("tasks.update");
  /** The tool declares a header for its fixed argument, another for one the model sets. */
  const resolver = resolverOf(
    {
      original: "tasks.update",
      schemaHash: "",
      inputSchema: {
        type: "object",
        properties: {
          task_id: { type: "string", "x-mcp-header": "Task" },
          taskId: { type: "string", "x-mcp-header": "Task-Alias" },
          title: { type: "string", "x-mcp-header": "Title" },
        },
      },
    },
    { rule },
  );

  /**
   * What the origin gets of a call with `args` and the client's `sent`
   * headers: the headers forwarded, or the header the proxy refuses it for.
   */
  async function forwarded(args: Record<string, unknown>, sent: Record<string, string>) {
    vi.spyOn(console, "log").mockImplementation(() => {});
    const message = {
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "tasks.update", arguments: args },
    };
    const outcome = await repairToolCall(
      message as JsonRpcRequest,
      resolver,
      "warn",
      revisionOf(new Headers()),
    );
    if (outcome.kind !== "forward" || !outcome.headers) throw new Error("not forwarded");
    const headers = new Headers({ "mcp-method": "tools/call", ...sent });
    const refused = paramMismatch(headers, outcome.headers);
    if (refused !== undefined) return { refused };
    alignCallHeaders(headers, outcome.headers);
    headers.delete("mcp-method");
    return {
      body: (outcome.message.params as { arguments: unknown }).arguments,
      headers: Object.fromEntries(headers),
    };
  }

  it("say the fixed value: the client's header of the model's value is replaced, not refused", async () => {
    expect(
      await forwarded(
        { task_id: "T-MODEL", title: "A" },
        { "mcp-param-task": "T-MODEL", "mcp-param-title": "A" },
      ),
    ).toEqual({
      body: { task_id: "T-FIXED", title: "A" },
      headers: { "mcp-param-task": "T-FIXED", "mcp-param-title": "A" },
    });
  });

  it("leave out the client's header of a spelling the rule drops from the body", async () => {
    // `taskId` folds to the fixed `task_id`: the model's value is left out, and so is its header.
    expect(await forwarded({ taskId: "T-MODEL" }, { "mcp-param-task-alias": "T-MODEL" })).toEqual({
      body: { task_id: "T-FIXED" },
      headers: { "mcp-param-task": "T-FIXED" },
    });
  });

  it("still refuse a header of an argument the rules do not set that disagrees with the body", async () => {
    expect(
      await forwarded({ title: "A" }, { "mcp-param-task": "T-MODEL", "mcp-param-title": "B" }),
    ).toEqual({ refused: "mcp-param-title" });
  });
});

describe("empty text for arguments (docs/arguments.md, step 1)", () => {
  const filesRead = {
    original: "files.read",
    schemaHash: "",
    inputSchema: echoTools.find((tool) => tool.name === "files.read")?.inputSchema,
  };
  const call = (resolver: ReturnType<typeof resolverOf>) =>
    repairToolCall(
      {
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "files_read", arguments: "" },
      },
      resolver,
      "warn",
      revisionOf(new Headers()),
    );

  it("is no arguments where the rule's values make the call one the schema takes", async () => {
    // The view hides `path`, which the operator fixes: the model sees a tool without arguments.
    const fixesPath = rulesOf({ tools: { "files.read": { fixed: { path: "README.md" } } } });
    const outcome = await call(resolverOf(filesRead, { rule: fixesPath.ruleFor("files.read") }));
    expect(outcome.kind).toBe("forward");
    const sent = JSON.parse(JSON.stringify(outcome.kind === "forward" ? outcome.message : {}));
    expect(sent.params).toEqual({ name: "files.read", arguments: { path: "README.md" } });
  });

  it("is refused where the schema requires what nothing sets: what it meant is not known", async () => {
    vi.spyOn(console, "log").mockImplementation(() => {});
    const outcome = await call(resolverOf(filesRead));
    expect(outcome.kind).toBe("answer");
    expect(JSON.stringify(outcome.kind === "answer" ? outcome.response : {})).toContain(
      "`arguments` must be an object, not an empty string",
    );
  });
});
