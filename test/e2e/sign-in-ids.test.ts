/**
 * What a client names at broker and gate mode's sign-in routes (a token of
 * the proxy's, a refresh token, a code, its client ID) becomes a key in
 * `OAUTH_KV`, and KV holds no key over 512 bytes: one that long is no
 * token, code or client of the proxy's, and is answered as any unknown one
 * is, never with the proxy's 500.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { MAX_DOCUMENT_CLIENT_ID_CHARS } from "../../src/auth/client-ids";
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

/** An https URL with a path of `length` characters: the shape of a Client ID Metadata Document's. */
const documentUrl = (length: number) => {
  const head = "https://client.example/";
  return `${head}${"d".repeat(length - head.length)}`;
};

/** A client assertion (RFC 7523) the library reads its unverified `iss` of, signed by no one. */
function assertionIssuedBy(iss: string): string {
  const part = (value: object) =>
    btoa(String.fromCharCode(...new TextEncoder().encode(JSON.stringify(value))))
      .replaceAll("+", "-")
      .replaceAll("/", "_")
      .replace(/=+$/, "");
  return `${part({ alg: "RS256", typ: "JWT" })}.${part({ iss, sub: iss, aud: "x" })}.c2ln`;
}

describe.each([
  ["broker", () => brokerFor(BROKERED_ORIGIN.strict), BROKER_URL],
  ["gate", () => gateNetwork(), GATE_URL],
] as Array<[string, () => Fetch, string]>)(
  "%s mode: a client ID that names a metadata document past the bound, or with a character no URL's text holds",
  (_, network, url) => {
    /** The document URLs the library asked the network for. */
    let fetched: string[] = [];
    beforeEach(() => {
      fetched = [];
      const passOn = globalThis.fetch;
      vi.spyOn(globalThis, "fetch").mockImplementation((input, init) => {
        const asked = input instanceof Request ? input.url : String(input);
        if (new URL(asked).hostname !== "client.example") return passOn(input, init);
        fetched.push(asked);
        return Promise.reject(new TypeError("no host serves it"));
      });
    });
    afterEach(() => {
      vi.mocked(globalThis.fetch).mockRestore();
    });

    const refused: Array<[string, string, string]> = [
      ["longer than the bound", documentUrl(MAX_DOCUMENT_CLIENT_ID_CHARS + 1), "length"],
      ["with a control character", `${documentUrl(40)}\u001b[2J`, "characters"],
      ["with a control character before it", `\u001b${documentUrl(40)}`, "characters"],
      ["with a space", `${documentUrl(40)} x`, "characters"],
      ["with a character outside ASCII", `${documentUrl(40)}\u202e`, "characters"],
    ];
    const tokenRequest = (proxy: Fetch, form: Record<string, string>, headers = {}) =>
      proxy(new URL("/oauth/token", url), {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
        body: new URLSearchParams(form),
      });
    const refusal = (path: string, reason: string, from: string, length: number) => ({
      event: "client_id_refused",
      path,
      reason,
      from,
      length,
    });

    it.each(refused)(
      "at /authorize, %s: a 400 page that says so, nothing fetched",
      async (_, clientId, reason) => {
        const proxy = network();
        const { url: authorize } = await handBuiltClient(proxy, url);
        authorize.searchParams.set("client_id", clientId);
        const page = await proxy(authorize, { redirect: "manual" });
        expect(page.status).toBe(400);
        expect(await page.text()).toContain("The client_id names a Client ID Metadata Document");
        expect(fetched).toEqual([]);
        expect(logs.events("client_id_refused")).toEqual([
          refusal("/authorize", reason, "query", clientId.length),
        ]);
      },
    );

    it.each(refused)(
      "at the token endpoint, %s: invalid_client, wherever the request names it",
      async (_, clientId, reason) => {
        const proxy = network();
        const answers = [
          await tokenRequest(proxy, {
            grant_type: "authorization_code",
            code: "c",
            client_id: clientId,
          }),
          await tokenRequest(
            proxy,
            { grant_type: "authorization_code", code: "c" },
            { authorization: `Basic ${btoa(`${encodeURIComponent(clientId)}:secret`)}` },
          ),
          await tokenRequest(proxy, {
            grant_type: "authorization_code",
            code: "c",
            client_assertion_type: "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
            client_assertion: assertionIssuedBy(clientId),
          }),
          // A revocation (RFC 7009) names its client too.
          await tokenRequest(proxy, { token: "u:g:s", client_id: clientId }),
        ];
        for (const answer of answers) {
          expect(answer.status).toBe(401);
          expect(await answer.json()).toEqual({
            error: "invalid_client",
            error_description: expect.stringContaining("Client ID Metadata Document"),
          });
        }
        // RFC 6749 §5.2: a client that sent Basic credentials is challenged for them.
        expect(answers.map((answer) => answer.headers.get("www-authenticate"))).toEqual([
          null,
          'Basic realm="OAuth"',
          null,
          null,
        ]);
        expect(fetched).toEqual([]);
        expect(logs.events("client_id_refused")).toEqual(
          ["client_id", "basic", "client_assertion", "client_id"].map((from) =>
            refusal("/oauth/token", reason, from, clientId.length),
          ),
        );
      },
    );

    it.each([
      ["a vertical tab before them", (b64: string) => `Basic \u000b${b64}`],
      ["a no-break space before them", (b64: string) => `Basic \u00a0${b64}`],
      ["a vertical tab after them", (b64: string) => `Basic ${b64}\u000b`],
    ])(
      "in Basic credentials with %s, which the library trims away: invalid_client, nothing fetched",
      async (_, header) => {
        const proxy = network();
        const clientId = documentUrl(MAX_DOCUMENT_CLIENT_ID_CHARS + 1);
        const answer = await tokenRequest(
          proxy,
          { grant_type: "authorization_code", code: "c" },
          { authorization: header(btoa(`${encodeURIComponent(clientId)}:secret`)) },
        );
        expect(answer.status).toBe(401);
        expect(await answer.json()).toEqual({
          error: "invalid_client",
          error_description: expect.stringContaining("Client ID Metadata Document"),
        });
        expect(fetched).toEqual([]);
        expect(logs.events("client_id_refused")).toEqual([
          refusal("/oauth/token", "length", "basic", clientId.length),
        ]);
      },
    );

    it("at the bound, is the library's to resolve: fetched, and unknown where no host serves it", async () => {
      const proxy = network();
      const clientId = documentUrl(MAX_DOCUMENT_CLIENT_ID_CHARS);
      const token = await tokenRequest(proxy, {
        grant_type: "authorization_code",
        code: "c",
        client_id: clientId,
      });
      expect(token.status).toBe(401);
      expect(await token.json()).toMatchObject({
        error: "invalid_client",
        error_description: "Client not found",
      });
      const { url: authorize } = await handBuiltClient(proxy, url);
      authorize.searchParams.set("client_id", clientId);
      const page = await proxy(authorize, { redirect: "manual" });
      expect(page.status).toBe(400);
      expect(await page.text()).toContain("This app could not be verified.");
      expect(fetched).toEqual([clientId, clientId]);
      expect(logs.events("client_id_refused")).toEqual([]);
    });
  },
);
