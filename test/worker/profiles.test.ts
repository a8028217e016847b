/**
 * One deployment, two profiles (docs/names.md, "Profiles"): the same demo origin
 * listed at the default URL (openai) and at `MCP_PATH/gemini`, and called
 * through each, on a 2025-11-25 session and in 2026-07-28 requests; what
 * reached the origin is read back from the gateway.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { EACH_WIRE } from "../helpers/clients";
import { DEMO_NAMES } from "../helpers/demo-names";
import { captureLogs } from "../helpers/logs";
import { type Ask, postJson, rawExchange, rpc } from "../helpers/mcp";
import { declaredNames, PROVIDER_RULES } from "../helpers/provider-rules";
import {
  freshOrigin,
  GATEWAY_ORIGIN,
  PROXY_URL,
  receivedByOrigin,
  viaProxy,
} from "../helpers/proxy";

afterEach(() => {
  vi.restoreAllMocks();
});

const GEMINI_URL = `${PROXY_URL}/gemini`;
const STRICT_URL = `${PROXY_URL}/openai-strict`;

interface Tool {
  name: string;
  inputSchema: Record<string, unknown>;
}

async function listTools(ask: Ask) {
  const [message] = await ask("list", "tools/list");
  return (message as { result: { tools: Tool[] } }).result.tools;
}

/** The origin's own listing, straight from it. */
async function directly(origin: string) {
  return listTools(await rawExchange("2025-11-25", fetch, origin));
}

async function setUp(revision: (typeof EACH_WIRE)[number]) {
  const trace = crypto.randomUUID();
  const origin = freshOrigin(GATEWAY_ORIGIN, `&trace=${trace}`);
  const proxy = viaProxy({ ORIGIN_URL: origin });
  const sessions = {
    openai: await rawExchange(revision, proxy, PROXY_URL),
    gemini: await rawExchange(revision, proxy, GEMINI_URL),
    strict: await rawExchange(revision, proxy, STRICT_URL),
  };
  const call = async (ask: Ask, params: Record<string, unknown>) => {
    const messages = await ask("call", "tools/call", params);
    return messages.find((message) => message.id === "call") as {
      result: { structuredContent?: { tool: string; arguments: unknown }; isError?: boolean };
    };
  };
  /** The arguments of every tools/call the origin received, in order. */
  const argumentsReceived = async () =>
    (await receivedByOrigin(trace))
      .map((request) => JSON.parse(request.body || "null"))
      .filter((body) => body?.method === "tools/call")
      // Its name and arguments: 2026-07-28 adds the `_meta` envelope.
      .map(({ params: { name, arguments: args } }) => ({ name, arguments: args }));
  return { origin, sessions, call, argumentsReceived };
}

describe.each(EACH_WIRE)("a profile chosen by URL, protocol %s", (revision) => {
  it("lists the same tools at both URLs, each view accepted by its own provider", async () => {
    const { origin, sessions } = await setUp(revision);
    const openai = await listTools(sessions.openai);
    const gemini = await listTools(sessions.gemini);
    const direct = await directly(origin);
    expect(openai).toHaveLength(direct.length);
    expect(gemini).toHaveLength(direct.length);
    for (const [profile, tools] of [
      ["openai", openai],
      ["gemini", gemini],
    ] as const) {
      for (const [index, tool] of tools.entries()) {
        expect(PROVIDER_RULES[profile]?.(tool.inputSchema), `${profile} ${tool.name}`).toEqual([]);
        const declared = declaredNames(direct[index]?.inputSchema);
        for (const name of declaredNames(tool.inputSchema)) expect(declared).toContain(name);
      }
    }
  });

  it("shows each provider the schema it accepts for the same tool", async () => {
    const { sessions } = await setUp(revision);
    const find = (tools: Tool[], name: string) => tools.find((tool) => tool.name === name);
    // Gemini accepts the origin's name as it is; OpenAI does not.
    const openai = find(await listTools(sessions.openai), DEMO_NAMES["reports.query"]);
    const gemini = find(await listTools(sessions.gemini), "reports.query");
    // OpenAI accepts the origin's schema as it is, `$schema` and all.
    expect(openai?.inputSchema).toMatchObject({
      $schema: "http://json-schema.org/draft-07/schema#",
      additionalProperties: false,
      properties: { priority: { type: "integer", enum: [1, 2, 3] } },
    });
    expect(gemini?.inputSchema).toEqual({
      type: "object",
      properties: {
        limit: {
          type: "integer",
          minimum: 0,
          maximum: 500,
          description: "Rows to return. Must be greater than 0. Default: 50.",
        },
        priority: { type: "string", enum: ["1", "2", "3"], description: "1 is the highest." },
        since: { type: "string", nullable: true, description: "First day, or null. Format: date." },
        filters: { type: "string", description: "Column filters. A JSON object, as text." },
        columns: {
          type: "array",
          items: { type: "string" },
          description: "Items must be unique.",
        },
      },
      required: ["limit"],
    });
  });

  it("calls through either URL reach the original tool with arguments its schema accepts", async () => {
    const { sessions, call, argumentsReceived } = await setUp(revision);
    await listTools(sessions.openai);
    await listTools(sessions.gemini);
    const viaGemini = await call(sessions.gemini, {
      name: "reports.query",
      arguments: { limit: 10, priority: "2", since: null, filters: '{"team":"core"}' },
    });
    const viaOpenai = await call(sessions.openai, {
      name: DEMO_NAMES["reports.query"],
      arguments: { limit: 10, priority: 2, since: null, filters: { team: "core" } },
    });
    const expected = { limit: 10, priority: 2, since: null, filters: { team: "core" } };
    for (const answer of [viaGemini, viaOpenai]) {
      expect(answer.result.isError).toBeUndefined();
      expect(answer.result.structuredContent).toEqual({
        tool: "reports.query",
        arguments: expected,
      });
    }
    expect(await argumentsReceived()).toEqual([
      { name: "reports.query", arguments: expected },
      { name: "reports.query", arguments: expected },
    ]);
  });

  it("logs the schema rules a profile applied, once per tool and isolate", async () => {
    const logs = captureLogs();
    const { sessions } = await setUp(revision);
    await listTools(sessions.gemini);
    await listTools(sessions.gemini);
    const lines = logs.events("schemas_adapted");
    expect(lines).toHaveLength(1);
    expect(lines[0]?.profile).toBe("gemini");
    expect(lines[0]?.tools).toContainEqual({
      tool: "reports.query",
      rules: ["constraints_described", "enum_as_strings", "nullable", "object_as_text"],
      dropped: [
        "$schema",
        "additionalProperties",
        "default",
        "exclusiveMinimum",
        "format",
        "uniqueItems",
      ],
    });
  });

  it("openai-strict: lists every demo tool in the form OpenAI's strict mode accepts, names as under openai", async () => {
    const { origin, sessions } = await setUp(revision);
    const strict = await listTools(sessions.strict);
    const direct = await directly(origin);
    expect(strict.map((tool) => tool.name)).toEqual(
      direct.map((tool) => DEMO_NAMES[tool.name as keyof typeof DEMO_NAMES]),
    );
    for (const tool of strict) {
      expect(PROVIDER_RULES["openai-strict"]?.(tool.inputSchema), tool.name).toEqual([]);
    }
    // Straight from the origin, most are not.
    const refused = direct.filter(
      (tool) => PROVIDER_RULES["openai-strict"]?.(tool.inputSchema).length,
    );
    expect(refused.length).toBeGreaterThan(direct.length / 2);
  });

  it("openai-strict: calls written as a strict-mode model writes them reach the origin as unconstrained calls", async () => {
    const { sessions, call, argumentsReceived } = await setUp(revision);
    await listTools(sessions.strict);
    // Every property present, `null` for the ones the model leaves out, free-form objects as JSON text.
    const calls: Array<
      [keyof typeof DEMO_NAMES, Record<string, unknown>, Record<string, unknown>]
    > = [
      ["files.read", { path: "src/main.ts", max_bytes: null }, { path: "src/main.ts" }],
      [
        "reports.query",
        { limit: 10, priority: 2, since: null, filters: '{"team":"core"}', columns: null },
        { limit: 10, priority: 2, since: null, filters: { team: "core" } },
      ],
      ["get-weather", { city: "Oslo", units: null }, { city: "Oslo" }],
      [
        "catering.invoice",
        { payload_json: { invoice_id: "INV-1042", amount: null }, invoice_id: null },
        { payload_json: { invoice_id: "INV-1042" } },
      ],
      ["unity/health", {}, {}],
    ];
    for (const [original, written, unconstrained] of calls) {
      const answer = await call(sessions.strict, {
        name: DEMO_NAMES[original],
        arguments: written,
      });
      expect(answer.result.isError, original).toBeUndefined();
      expect(answer.result.structuredContent).toEqual({ tool: original, arguments: unconstrained });
    }
    expect(await argumentsReceived()).toEqual(
      calls.map(([original, , unconstrained]) => ({ name: original, arguments: unconstrained })),
    );
  });
});

describe("a profile's URL", () => {
  it("answers 404 for a profile that does not exist", async () => {
    const proxy = viaProxy({ ORIGIN_URL: freshOrigin(GATEWAY_ORIGIN) });
    const response = await postJson(proxy, `${PROXY_URL}/claude`, rpc(1, "ping"));
    expect(response.status).toBe(404);
  });
});
