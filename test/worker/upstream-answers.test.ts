/**
 * How the proxy reads an authorization server's or identity provider's
 * answer in broker and gate mode (auth/upstream-requests.ts): whatever its
 * status line says, an answer that came is read, not taken for a server
 * that could not be reached.
 */
import * as oauth from "oauth4webapi";
import { describe, expect, it } from "vitest";
import { requestOptions } from "../../src/auth/upstream-requests";
import { configOf } from "../../src/config";
import { tenantEnv } from "../helpers/proxy";
import { scriptedOrigin } from "../helpers/scripted-origin";

describe("an authorization server's answer", () => {
  it("is read though its reason phrase holds a tab, which RFC 9112 allows and a Response built anew refuses", async () => {
    const metadata = '{"issuer":"http://127.0.0.1","token_endpoint":"http://127.0.0.1/token"}';
    const server = await scriptedOrigin({
      "*": {
        status: 200,
        reason: "All\tgood",
        headers: [["Content-Type", "application/json"]],
        body: metadata,
      },
    });
    const result = configOf(tenantEnv({ ORIGIN_URL: server.originUrl }));
    if (result.kind !== "valid") throw new Error("the test's settings are valid");
    const options = requestOptions(result.config, new URL(server.originUrl));
    // What oauth4webapi fetches every answer with (metadata, registrations, tokens, keys).
    const answer = await options[oauth.customFetch](server.originUrl, { method: "GET" });
    expect(answer.status).toBe(200);
    expect(await answer.text()).toBe(metadata);
  });
});
