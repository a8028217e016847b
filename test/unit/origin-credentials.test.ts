import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { originCredentials } from "../../src/auth/broker";
import { type Config, parseConfig } from "../../src/config";
import { originRequestHeaders } from "../../src/transport/headers";

function config(vars: Record<string, unknown>): Config {
  const result = parseConfig({
    ORIGIN_URL: "https://o.example/mcp",
    TOOL_MAP: env.TOOL_MAP,
    ...vars,
  } as unknown as Env);
  if (result.kind !== "valid") throw new Error(result.problem);
  return result.config;
}

const relay = config({});
const broker = config({
  AUTH_MODE: "broker",
  OAUTH_KV: env.OAUTH_KV,
  SIGN_IN_RATE_LIMIT: env.SIGN_IN_RATE_LIMIT,
});
const client = new Headers({
  authorization: "Bearer client-token",
  cookie: "session=client",
  "mcp-session-id": "s-1",
});

describe("whose credentials reach the origin", () => {
  it("relay mode: the client's, as sent", () => {
    const credentials = originCredentials(relay, {});
    expect(Object.fromEntries(originRequestHeaders(client, credentials))).toEqual({
      authorization: "Bearer client-token",
      cookie: "session=client",
      "mcp-session-id": "s-1",
    });
  });

  it.each([
    ["made for this origin", "https://o.example/mcp"],
    ["made before grants named their origin", undefined],
  ])(
    "broker mode: the origin's token from a validated grant %s, never the client's",
    (_, origin) => {
      const ctx = { props: { upstream: { accessToken: "origin-token" }, origin } };
      expect(
        Object.fromEntries(originRequestHeaders(client, originCredentials(broker, ctx))),
      ).toEqual({ authorization: "Bearer origin-token", "mcp-session-id": "s-1" });
    },
  );

  it("broker mode: no token from a grant made for another origin", () => {
    for (const origin of [
      "https://other.example/mcp",
      "https://o.example/other",
      "http://o.example/mcp",
    ]) {
      const ctx = { props: { upstream: { accessToken: "origin-token" }, origin } };
      expect(originCredentials(broker, ctx)).toEqual({ kind: "proxy" });
    }
  });

  it("broker mode without a validated grant: no credential at all", () => {
    for (const ctx of [{}, { props: {} }, { props: { upstream: { accessToken: 7 } } }]) {
      const credentials = originCredentials(broker, ctx);
      expect(credentials).toEqual({ kind: "proxy" });
      expect(Object.fromEntries(originRequestHeaders(client, credentials))).toEqual({
        "mcp-session-id": "s-1",
      });
    }
  });
});
