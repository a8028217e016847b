/**
 * A broken configuration, as the Worker meets it: every problem in one
 * `config_invalid` line, and a 500 that names settings and never what they hold.
 */
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { captureLogs } from "../helpers/logs";
import { postJson, rpc } from "../helpers/mcp";
import { PROXY_URL, viaProxy } from "../helpers/proxy";

let logs: ReturnType<typeof captureLogs>;
beforeEach(() => {
  logs = captureLogs();
});
afterEach(() => logs.restore());

describe("a configuration with problems", () => {
  it("logs them all in one line, each at its path, and answers 500 naming the settings", async () => {
    const proxy = viaProxy({
      ORIGIN_URL: "https://o.example/mcp",
      MAX_TOOLS: "zero",
      TOOL_RULES: '{"hid":1',
      AUTH_MODE: "broker",
      OAUTH_KV: undefined,
    });
    const response = await postJson(proxy, PROXY_URL, rpc(1, "ping"));
    expect(response.status).toBe(500);
    expect(await response.json()).toEqual({
      jsonrpc: "2.0",
      id: null,
      error: {
        code: -32603,
        message:
          "Proxy misconfigured: MAX_TOOLS, TOOL_RULES, OAUTH_KV are invalid (the config_invalid log line says why)",
      },
    });
    expect(logs.events("config_invalid")).toEqual([
      {
        event: "config_invalid",
        problems: [
          { setting: "MAX_TOOLS", problem: "must be a whole number of tools" },
          {
            setting: "TOOL_RULES",
            problem: 'is not valid JSON: at line 1, column 9, expected "," or "}" after a member',
          },
          {
            setting: "OAUTH_KV",
            problem: "is required with AUTH_MODE=broker: bind a KV namespace as OAUTH_KV",
          },
        ],
      },
    ]);
  });
});

describe("a name the proxy does not read", () => {
  it("is counted in the 500, never named: the name is the operator's, and may be a value", async () => {
    // `wrangler secret put` takes a name, then asks for the value: given the value as the name,
    // it stores a secret named after it, which is then a name the proxy does not read.
    const pasted = `sk_live_${crypto.randomUUID().replaceAll("-", "")}`;
    const proxy = viaProxy({ MAX_TOOLS: "zero", [pasted]: "x", ANOTHER_UNREAD: "y" });
    const response = await postJson(proxy, PROXY_URL, rpc(1, "ping"));
    expect(response.status).toBe(500);
    const body = await response.text();
    expect(body).not.toContain(pasted);
    expect(JSON.parse(body)).toMatchObject({
      error: {
        code: -32603,
        message:
          "Proxy misconfigured: MAX_TOOLS is invalid; 2 names it does not read are set (the config_invalid log line says why)",
      },
    });
    // The operator's log names it, as npm run check does.
    expect(logs.events("config_invalid")[0]?.problems).toContainEqual({
      setting: pasted,
      problem: "is not a setting or binding the proxy reads (docs/configuration.md names each)",
    });
  });

  it("alone: the 500 says one is set", async () => {
    const response = await postJson(
      viaProxy({ ARGUMENT_VALIDATON: "off" }),
      PROXY_URL,
      rpc(1, "ping"),
    );
    expect(response.status).toBe(500);
    expect(await response.json()).toMatchObject({
      error: {
        message:
          "Proxy misconfigured: 1 name it does not read is set (the config_invalid log line says why)",
      },
    });
  });
});

describe("the proxy's own 500 for a bad configuration (property)", () => {
  /** What an operator may have written, each holding `m`; most of them wrong. */
  const written = (m: string): Record<string, unknown[]> => ({
    ORIGIN_URL: [`https://${m}.example/mcp?key=${m}`, m, `ftp://${m}.example/mcp`],
    MCP_PATH: [`/${m}/`, m, `/healthz/${m}`],
    ORIGIN_TIMEOUT_MS: [m, `-${m}`],
    MAX_BODY_BYTES: [m],
    PROFILE: [m],
    NAME_PROFILE: [m],
    NAME_MAX_LENGTH: [m],
    TOOL_RULES: [
      { tools: { [`${m}.x`]: { name: `${m}-x` } } },
      { tools: { a: { name: m }, b: { name: m } } },
      `{"hide": ["${m}"`,
      `{"${m}": []}`,
      { [m]: [] },
      { hide: [m], tools: { [m]: { [m]: 1 } } },
    ],
    TOOL_CHANGES: [m],
    ARGUMENT_VALIDATION: [m],
    ALLOWED_HOSTS: [`http://${m}`, `${m}:${m}`],
    PUBLIC_URL: [`https://${m}.example/${m}`, m],
    AUTH_MODE: [m, "broker"],
    SIGN_IN_DAILY_WRITES: [m],
    UPSTREAM_ISSUER: [`https://${m}.example/?q=${m}`, m],
    UPSTREAM_CLIENT_ID: [m, ""],
    UPSTREAM_CLIENT_SECRET: [m, ""],
    PASS_HEADERS: [`x-${m}, ${m} y`, `authorization, x-${m}`, `x-${m}`.repeat(40)],
  });
  const SETTINGS = Object.keys(written("m"));

  const settings = fc
    .record({
      m: fc.stringMatching(/^[a-z0-9]{12}$/).map((text) => `zq${text}`),
      chosen: fc.uniqueArray(fc.constantFrom(...SETTINGS), { maxLength: 8 }),
      picks: fc.array(fc.nat(), { minLength: 8, maxLength: 8 }),
      wrong: fc.constantFrom<[string, (m: string) => unknown]>(
        ["MAX_TOOLS", (m) => m],
        ["TOOL_RULES", (m) => ({ tools: { [`${m}.x`]: { name: `${m}-x` } } })],
        ["PASS_HEADERS", (m) => `x-${m}, ${m} y`],
      ),
    })
    .map(({ m, chosen, picks, wrong: [wrongSetting, wrongValue] }) => {
      const options = written(m);
      const vars = Object.fromEntries(
        chosen.map((setting, index) => {
          const values = options[setting] ?? [];
          return [setting, values[(picks[index] ?? 0) % values.length]];
        }),
      );
      // One wrong for sure, so every case is a refusal.
      return { m, vars: { ...vars, [wrongSetting]: wrongValue(m) } };
    });

  it("names settings and never holds what any setting says", async () => {
    await fc.assert(
      fc.asyncProperty(settings, async ({ m, vars }) => {
        const proxy = viaProxy(vars as Record<string, string>);
        for (const [method, url] of [
          ["POST", PROXY_URL],
          ["GET", "http://proxy.test/healthz"],
          ["GET", "http://proxy.test/readyz"],
        ] as const) {
          const response =
            method === "POST"
              ? await postJson(proxy, url, rpc(1, "ping"))
              : await proxy(url, { method });
          expect(response.status).toBe(500);
          const body = await response.text();
          expect(body).toContain("Proxy misconfigured: ");
          expect(body).not.toContain(m);
        }
        // The log names paths and problems, never ORIGIN_URL's query.
        expect(JSON.stringify(logs.events("config_invalid"))).not.toContain(`key=${m}`);
      }),
      { numRuns: 100 },
    );
  });
});
