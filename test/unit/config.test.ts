import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config";
import { nameRules } from "../../src/names/profiles";

const env = (vars: Record<string, unknown>) => vars as unknown as Env;

describe("parseConfig", () => {
  it("applies the documented defaults", () => {
    expect(parseConfig(env({ ORIGIN_URL: "https://mcp.example.com/mcp" }))).toEqual({
      kind: "valid",
      config: {
        originUrl: new URL("https://mcp.example.com/mcp"),
        mcpPath: "/mcp",
        originTimeoutMs: 30_000,
        maxBodyBytes: 4_194_304,
        names: nameRules("openai"),
        argumentValidation: "warn",
        allowedHosts: [],
      },
    });
  });

  it("reads numbers given as strings (wrangler vars) or numbers (TOML integers)", () => {
    const result = parseConfig(
      env({
        ORIGIN_URL: " http://127.0.0.1:9000/rpc ",
        ORIGIN_TIMEOUT_MS: "2500",
        MAX_BODY_BYTES: 1024,
      }),
    );
    expect(result).toMatchObject({
      kind: "valid",
      config: { originTimeoutMs: 2500, maxBodyBytes: 1024 },
    });
    expect(result.kind === "valid" && result.config.originUrl.href).toBe(
      "http://127.0.0.1:9000/rpc",
    );
  });

  it("reads ALLOWED_HOSTS as a list of lower-case hostnames", () => {
    const result = parseConfig(
      env({ ORIGIN_URL: "https://o.example/mcp", ALLOWED_HOSTS: " LocalHost, 127.0.0.1,,[::1] " }),
    );
    expect(result.kind === "valid" && result.config.allowedHosts).toEqual([
      "localhost",
      "127.0.0.1",
      "[::1]",
    ]);
  });

  it.each([
    ["ORIGIN_TIMEOUT_MS", "1.5"],
    ["ORIGIN_TIMEOUT_MS", "-3"],
    ["MAX_BODY_BYTES", ""],
    ["MAX_BODY_BYTES", true],
  ])("refuses %s = %o", (setting, value) => {
    expect(
      parseConfig(env({ ORIGIN_URL: "https://o.example/mcp", [setting]: value })),
    ).toMatchObject({
      kind: "invalid",
      setting,
    });
  });
});
