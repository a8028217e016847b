/**
 * What a client names at broker and gate mode's sign-in routes (a token of
 * the proxy's, a refresh token, a code, its client ID) becomes a key in
 * `OAUTH_KV`, and KV holds no key over 512 bytes: one that long is no
 * token, code or client of the proxy's, and is answered as any unknown one
 * is, never with the proxy's 500.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BROKER_URL, brokerFor } from "../helpers/broker";
import { GATE_URL, gateNetwork } from "../helpers/gate";
import { captureLogs } from "../helpers/logs";
import { PROTOCOL_VERSION, postJson, rpc } from "../helpers/mcp";
import { handBuiltClient, REDIRECT_URL } from "../helpers/oauth-client";
import { BROKERED_ORIGIN, type Fetch } from "../helpers/proxy";

/** The shape of the proxy's tokens and codes (`<user>:<grant>:<secret>`), with a user ID of 600 characters. */
const LONG_TOKEN = `${"u".repeat(600)}:${"g".repeat(16)}:${"s".repeat(32)}`;
const LONG_CLIENT_ID = "c".repeat(600);

let logs: ReturnType<typeof captureLogs>;
beforeEach(() => {
  logs = captureLogs();
});
afterEach(() => {
  // Nothing of these requests is the proxy's fault.
  expect(logs.events("internal_error")).toEqual([]);
  logs.restore();
});

describe.each([
  ["broker", () => brokerFor(BROKERED_ORIGIN.strict), BROKER_URL],
  ["gate", () => gateNetwork(), GATE_URL],
] as Array<[string, () => Fetch, string]>)(
  "%s mode: a token, code or client ID longer than KV's keys",
  (_, network, url) => {
    const tokenRequest = (proxy: Fetch, form: Record<string, string>) =>
      proxy(new URL("/oauth/token", url), {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams(form),
      });

    it("is an unknown token on an MCP request: 401 invalid_token", async () => {
      const response = await postJson(network(), url, rpc(1, "tools/list"), {
        authorization: `Bearer ${LONG_TOKEN}`,
        "mcp-protocol-version": PROTOCOL_VERSION,
      });
      expect(response.status).toBe(401);
      expect(response.headers.get("www-authenticate")).toContain('error="invalid_token"');
    });

    it("is an unknown grant at the token endpoint: a refresh token or a code, invalid_grant", async () => {
      const proxy = network();
      const { clientId } = await handBuiltClient(proxy, url);
      const refresh = await tokenRequest(proxy, {
        grant_type: "refresh_token",
        refresh_token: LONG_TOKEN,
        client_id: clientId,
      });
      expect(refresh.status).toBe(400);
      expect(await refresh.json()).toMatchObject({ error: "invalid_grant" });
      const code = await tokenRequest(proxy, {
        grant_type: "authorization_code",
        code: LONG_TOKEN,
        client_id: clientId,
        redirect_uri: REDIRECT_URL,
        code_verifier: "v".repeat(43),
      });
      expect(code.status).toBe(400);
      expect(await code.json()).toMatchObject({ error: "invalid_grant" });
    });

    it("is a token revoked already (RFC 7009: 200)", async () => {
      const proxy = network();
      const { clientId } = await handBuiltClient(proxy, url);
      const revoked = await tokenRequest(proxy, { token: LONG_TOKEN, client_id: clientId });
      expect(revoked.status).toBe(200);
      await revoked.body?.cancel();
    });

    it("is an unknown client: invalid_client at the token endpoint, a 400 page at /authorize", async () => {
      const proxy = network();
      const token = await tokenRequest(proxy, {
        grant_type: "refresh_token",
        refresh_token: "u:g:s",
        client_id: LONG_CLIENT_ID,
      });
      expect(token.status).toBe(401);
      expect(await token.json()).toMatchObject({ error: "invalid_client" });
      const { url: authorize } = await handBuiltClient(proxy, url);
      authorize.searchParams.set("client_id", LONG_CLIENT_ID);
      const page = await proxy(authorize, { redirect: "manual" });
      // Not the 503 that tells the user to try again in a minute: this client will never be.
      expect(page.status).toBe(400);
      await page.body?.cancel();
      expect(logs.events("sign_in_failed")).toEqual([]);
    });
  },
);
