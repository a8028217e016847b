/**
 * Broker mode's consent page in a real browser: Debian's Chromium, driven by
 * playwright-core, against the proxy served by wrangler and an OAuth-protected
 * origin. A client that registered itself with markup for a name sees it
 * shown as text; Allow runs the whole sign-in, through the origin's
 * authorization server, back to the client with a code that buys a token.
 */
import { createHash, randomBytes } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OAuthOrigin, startOAuthOrigin } from "../fixtures/node/oauth-origin";
import { DEMO_NAMES } from "../helpers/demo-names";
import { serveProxy } from "./serve-proxy";
import { CHROMIUM_PATH, chromiumMissing } from "./system-chromium";

/** A name that would run script on the proxy's origin if it were not escaped. */
const HOSTILE_NAME = `<img src=x onerror="document.title='pwned'">Evil & Co`;

let origin: OAuthOrigin;
let proxy: Awaited<ReturnType<typeof serveProxy>>;
let browser: Browser;
let callbacks: ReturnType<typeof createServer>;
let redirectUri: string;

describe.skipIf(chromiumMissing !== undefined)(
  `the consent page, in Chromium${chromiumMissing ? ` (${chromiumMissing})` : ""}`,
  () => {
    beforeAll(async () => {
      origin = await startOAuthOrigin();
      proxy = await serveProxy(origin.strict.href, { AUTH_MODE: "broker" });
      // The client's redirect URI: a loopback listener, as a desktop client has.
      callbacks = createServer((_request, response) => response.end("signed in"));
      await new Promise<void>((resolve) => callbacks.listen(0, "127.0.0.1", resolve));
      redirectUri = `http://127.0.0.1:${(callbacks.address() as AddressInfo).port}/callback`;
      browser = await chromium.launch({
        executablePath: CHROMIUM_PATH,
        args: [
          "--headless",
          "--no-sandbox",
          "--disable-gpu",
          "--disable-quic",
          "--no-first-run",
          "--disable-background-networking",
          "--disable-component-update",
          "--disable-sync",
        ],
      });
    });

    afterAll(async () => {
      await browser?.close();
      callbacks?.close();
      await proxy?.dispose();
      origin?.close();
    });

    async function register(clientName: string): Promise<string> {
      const response = await fetch(new URL("/oauth/register", proxy.url), {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          client_name: clientName,
          redirect_uris: [redirectUri],
          token_endpoint_auth_method: "none",
        }),
      });
      expect(response.status).toBe(201);
      return ((await response.json()) as { client_id: string }).client_id;
    }

    it("shows the client's name as text, and Allow signs in through the origin back to the client", async () => {
      const clientId = await register(HOSTILE_NAME);
      const verifier = randomBytes(32).toString("base64url");
      const authorize = new URL("/authorize", proxy.url);
      authorize.search = new URLSearchParams({
        response_type: "code",
        client_id: clientId,
        redirect_uri: redirectUri,
        code_challenge: createHash("sha256").update(verifier).digest("base64url"),
        code_challenge_method: "S256",
        state: "from-the-client",
        resource: proxy.url.href,
      }).toString();

      const page = await browser.newPage();
      const shown = await page.goto(authorize.href);
      expect(shown?.status()).toBe(200);
      expect(await shown?.headerValue("x-frame-options")).toBe("DENY");
      expect(await shown?.headerValue("content-security-policy")).toContain(
        "frame-ancestors 'none'",
      );

      expect(await page.locator("#client-name").textContent()).toBe(HOSTILE_NAME);
      expect(await page.locator("img").count()).toBe(0);
      expect(await page.title()).toBe(`Authorize ${HOSTILE_NAME}`);
      expect(await page.locator("#redirect-host").textContent()).toBe("127.0.0.1");
      expect(await page.textContent("body")).toContain(origin.strict.host);

      await page.getByRole("button", { name: "Allow" }).click();
      await page.waitForURL((url) => url.href.startsWith(redirectUri));
      const callback = new URL(page.url());
      expect(callback.searchParams.get("state")).toBe("from-the-client");
      const code = callback.searchParams.get("code") ?? "";
      expect(code).not.toBe("");
      await page.close();

      // The code buys the proxy's token, which opens the MCP endpoint.
      const token = await fetch(new URL("/oauth/token", proxy.url), {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({
          grant_type: "authorization_code",
          code,
          redirect_uri: redirectUri,
          client_id: clientId,
          code_verifier: verifier,
          resource: proxy.url.href,
        }),
      });
      expect(token.status).toBe(200);
      const { access_token: accessToken } = (await token.json()) as { access_token: string };
      const listing = await fetch(proxy.url, {
        method: "POST",
        headers: {
          authorization: `Bearer ${accessToken}`,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-protocol-version": "2025-11-25",
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      });
      expect(listing.status).toBe(200);
      const body = (await listing.json()) as { result: { tools: Array<{ name: string }> } };
      expect(body.result.tools.map((tool) => tool.name)).toEqual([DEMO_NAMES["files.read"]]);
    });
  },
);
