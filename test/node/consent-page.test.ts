/**
 * Broker mode's consent page in a real browser: Debian's Chromium, driven by
 * playwright-core, against the proxy served by wrangler and an OAuth-protected
 * origin. A client that registered itself with markup for a name sees it
 * shown as text; Allow runs the whole sign-in, through the origin's
 * authorization server, back to the client with a code that buys a token.
 *
 * Double-clickjacking: another site's page asks for a double-click and, between
 * the clicks, puts the consent page (loaded long before, in a window behind)
 * under the pointer. Allow answers only a gesture on the page itself once it
 * has been in front for half a second. Chromium's input is trusted input
 * here (`Input.dispatchMouseEvent`, Playwright's mouse and keyboard); the
 * page's half second is Playwright's clock, run forward, never waited for.
 */
import { createHash, randomBytes } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { type Browser, chromium, type Locator, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OAuthOrigin, startOAuthOrigin } from "../fixtures/node/oauth-origin";
import { DEMO_NAMES } from "../helpers/demo-names";
import { serveProxy } from "./serve-proxy";
import { CHROMIUM_PATH, chromiumMissing } from "./system-chromium";

/** A name that would run script on the proxy's origin if it were not escaped. */
const HOSTILE_NAME = `<img src=x onerror="document.title='pwned'">Evil & Co`;

/** How long the consent page must have been in front before a gesture turns Allow on. */
const IN_FRONT_MS = 500;

let origin: OAuthOrigin;
let proxy: Awaited<ReturnType<typeof serveProxy>>;
let browser: Browser;
let callbacks: ReturnType<typeof createServer>;
let redirectUri: string;
let clientId: string;

/** What a test sees of one consent page: the page, its Allow, and what it sent. */
interface Consent {
  page: Page;
  allow: Locator;
  authorize: URL;
  /** The page's `Content-Security-Policy`. */
  policy: string;
  verifier: string;
  /** The form submissions the page made, counted in the page as they start. */
  submits(): Promise<number>;
  /** The POSTs to `/authorize` the browser sent. */
  posts: string[];
}

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
      clientId = await register(HOSTILE_NAME);
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

    /**
     * The consent page in a browser of its own. With `clock`, the page's time
     * stands still until the test runs it forward.
     */
    async function openConsent({
      clock = false,
      touch = false,
      scope = "",
    } = {}): Promise<Consent> {
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
        ...(scope ? { scope } : {}),
      }).toString();
      const context = await browser.newContext({ hasTouch: touch });
      if (clock) {
        await context.clock.install({ time: Date.UTC(2026, 0, 1) });
        await context.clock.pauseAt(Date.UTC(2026, 0, 1, 0, 1));
      }
      const page = await context.newPage();
      const posts: string[] = [];
      page.on("request", (request) => {
        if (request.method() === "POST" && new URL(request.url()).pathname === "/authorize") {
          posts.push(request.url());
        }
      });
      const shown = await page.goto(authorize.href);
      expect(shown?.status()).toBe(200);
      expect(await shown?.headerValue("x-frame-options")).toBe("DENY");
      // DevTools' evaluation, which the page's Content-Security-Policy does not govern. (Strings:
      // the node tests are typed without the DOM.)
      await page.evaluate(
        'window.submits = 0; document.addEventListener("submit", () => window.submits++, true)',
      );
      return {
        page,
        allow: page.getByRole("button", { name: "Allow" }),
        authorize,
        policy: (await shown?.headerValue("content-security-policy")) ?? "",
        verifier,
        submits: () => page.evaluate<number>("window.submits"),
        posts,
      };
    }

    /**
     * A click where the pointer already is, as the second click of a double-click
     * lands: pressed and released, with no movement before it. Trusted input.
     */
    async function clickWithoutMoving(page: Page, target: Locator): Promise<void> {
      const box = await target.boundingBox();
      if (!box) throw new Error("the target is not on the page");
      const at = { x: box.x + box.width / 2, y: box.y + box.height / 2 };
      const cdp = await page.context().newCDPSession(page);
      for (const type of ["mousePressed", "mouseReleased"] as const) {
        await cdp.send("Input.dispatchMouseEvent", { type, ...at, button: "left", clickCount: 1 });
      }
      await cdp.detach();
    }

    /** A user's pointer crossing the page: from one corner towards the middle. */
    async function moveAcross(page: Page): Promise<void> {
      await page.mouse.move(10, 10);
      await page.mouse.move(200, 160, { steps: 5 });
    }

    /** Allow sent the browser on, through the origin, back to the client with a code. */
    async function signedInThroughAllow(consent: Consent): Promise<string> {
      await consent.page.waitForURL((url) => url.href.startsWith(redirectUri));
      const callback = new URL(consent.page.url());
      expect(callback.searchParams.get("state")).toBe("from-the-client");
      expect(consent.posts).toHaveLength(1);
      const code = callback.searchParams.get("code") ?? "";
      expect(code).not.toBe("");
      return code;
    }

    /** The page still asks, and the browser sent no Allow. */
    async function stillAsking(consent: Consent): Promise<void> {
      expect(await consent.submits()).toBe(0);
      expect(consent.posts).toEqual([]);
      expect(consent.page.url()).toBe(consent.authorize.href);
      expect(await consent.allow.isDisabled()).toBe(true);
    }

    it("shows the client's name as text, and Allow signs in through the origin back to the client", async () => {
      const consent = await openConsent();
      const { page } = consent;
      expect(await page.locator("#client-name").textContent()).toBe(HOSTILE_NAME);
      expect(await page.locator("img").count()).toBe(0);
      expect(await page.title()).toBe(`Authorize ${HOSTILE_NAME}`);
      expect(await page.locator("#redirect-host").textContent()).toBe("127.0.0.1");
      expect(await page.textContent("body")).toContain(origin.strict.host);

      // A user moves the pointer over the page to Allow, and clicks it once it is on.
      await moveAcross(page);
      await consent.allow.click();
      const code = await signedInThroughAllow(consent);
      await page.context().close();

      // The code buys the proxy's token, which opens the MCP endpoint.
      const token = await fetch(new URL("/oauth/token", proxy.url), {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({
          grant_type: "authorization_code",
          code,
          redirect_uri: redirectUri,
          client_id: clientId,
          code_verifier: consent.verifier,
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

    it("shows the whole of a long permission the app asks of the origin, within the page's width", async () => {
      // Step-up (docs/sign-in.md): `origin:<scope>` asks the origin for it; a scope is at most
      // 128 characters, and one run off the page's side would hide its end from the user.
      const long = `files:${"write".repeat(23)}:all`;
      const { page } = await openConsent({ scope: `origin:${long}` });
      const shown = page.locator("code", { hasText: long.slice(0, 20) });
      expect(await shown.textContent()).toBe(long);
      const box = await shown.boundingBox();
      const width = await page.evaluate<number>("document.documentElement.clientWidth");
      expect(box && box.x + box.width).toBeLessThanOrEqual(width);
      expect(
        await page.evaluate<boolean>("document.documentElement.scrollWidth <= innerWidth"),
      ).toBe(true);
      await page.context().close();
    });

    it("runs its own script and no other: the header allows it by its hash alone", async () => {
      const { page, policy } = await openConsent();
      const directives = new Map(
        policy.split(";").map((directive) => {
          const [name = "", ...values] = directive.trim().split(/\s+/);
          return [name, values] as const;
        }),
      );
      expect(directives.get("default-src")).toEqual(["'none'"]);
      expect(directives.get("frame-ancestors")).toEqual(["'none'"]);
      const scripts = await page.locator("script").allTextContents();
      expect(scripts).toHaveLength(1);
      const hash = createHash("sha256")
        .update(scripts[0] ?? "")
        .digest("base64");
      // One hash, nothing that lets other script in.
      expect(directives.get("script-src")).toEqual([`'sha256-${hash}'`]);

      // A script put into the page now (as a client's name could be, unescaped) does not run.
      const outcome = await page.evaluate(`new Promise((resolve) => {
        document.addEventListener("securitypolicyviolation", (event) =>
          resolve({ ran: window.injected === true, blocked: event.effectiveDirective }),
        );
        const script = document.createElement("script");
        script.textContent = "window.injected = true";
        document.body.append(script);
      })`);
      expect(outcome).toEqual({ ran: false, blocked: "script-src-elem" });
      expect(await page.title()).toBe(`Authorize ${HOSTILE_NAME}`);
      await page.context().close();
    });

    it("ignores a click that lands with no gesture on the page: the second click of a double-click it was swapped under", async () => {
      const consent = await openConsent({ clock: true });
      // In front long enough, and the pointer has not moved over it since.
      await consent.page.clock.runFor(IN_FRONT_MS);
      expect(await consent.allow.isDisabled()).toBe(true);
      await clickWithoutMoving(consent.page, consent.allow);
      await stillAsking(consent);

      // After the pointer moves over the page, the same click allows.
      await moveAcross(consent.page);
      expect(await consent.allow.isEnabled()).toBe(true);
      await clickWithoutMoving(consent.page, consent.allow);
      await signedInThroughAllow(consent);
      await consent.page.context().close();
    });

    it("ignores a click in its first half second in front, and a pointer that only trembles", async () => {
      const consent = await openConsent({ clock: true });
      // The pointer was moving when the page was swapped under it: no Allow yet.
      await moveAcross(consent.page);
      await clickWithoutMoving(consent.page, consent.allow);
      await stillAsking(consent);
      // The page has been in front for half a second, and the pointer did move over it.
      await consent.page.clock.runFor(IN_FRONT_MS);
      expect(await consent.allow.isEnabled()).toBe(true);

      // Leaving the page turns Allow off; back in front, a tremble of a few pixels is no gesture.
      // (Headless Chromium's pages keep focus: the window's events stand for the window manager's.)
      await consent.page.evaluate('dispatchEvent(new FocusEvent("blur"))');
      expect(await consent.allow.isDisabled()).toBe(true);
      await consent.page.evaluate('dispatchEvent(new FocusEvent("focus"))');
      await consent.page.clock.runFor(IN_FRONT_MS);
      const box = await consent.allow.boundingBox();
      if (!box) throw new Error("Allow is not on the page");
      await consent.page.mouse.move(box.x + 10, box.y + 10);
      await consent.page.mouse.move(box.x + 13, box.y + 12, { steps: 3 });
      await clickWithoutMoving(consent.page, consent.allow);
      await stillAsking(consent);
      await consent.page.context().close();
    });

    it("lets the keyboard allow: a key pressed on the page once it has been in front", async () => {
      const consent = await openConsent({ clock: true });
      // A key pressed as the page came to front is no gesture on it.
      await consent.page.keyboard.press("Shift");
      await consent.page.clock.runFor(IN_FRONT_MS);
      expect(await consent.allow.isDisabled()).toBe(true);

      // Tab turns Allow on and moves to it; Enter allows.
      await consent.page.keyboard.press("Tab");
      expect(await consent.page.locator(":focus").textContent()).toBe("Allow");
      await consent.page.keyboard.press("Enter");
      await signedInThroughAllow(consent);
      await consent.page.context().close();
    });

    it("lets a touch allow once the page has been in front: the tap on Allow turns it on and allows", async () => {
      const consent = await openConsent({ clock: true, touch: true });
      const box = await consent.allow.boundingBox();
      if (!box) throw new Error("Allow is not on the page");
      const center = { x: box.x + box.width / 2, y: box.y + box.height / 2 };
      // The second tap of a double-tap it was swapped under.
      await consent.page.touchscreen.tap(center.x, center.y);
      await stillAsking(consent);
      await consent.page.clock.runFor(IN_FRONT_MS);
      expect(await consent.allow.isDisabled()).toBe(true);
      await consent.page.touchscreen.tap(center.x, center.y);
      await signedInThroughAllow(consent);
      await consent.page.context().close();
    });
  },
);
