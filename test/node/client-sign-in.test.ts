/**
 * `npm run client` with a user's credentials, as an operator runs it to see
 * what a signed-in user sees through the proxy:
 *
 * - `--sign-in` in front of broker mode (served by wrangler, before the
 *   OAuth origin of test/fixtures/node/oauth-origin.ts): the test reads the
 *   address the command prints, answers the consent page and the origin's
 *   sign-in over HTTP as a browser would (test/helpers/consent.ts), lands on
 *   the command's callback, and sees the listing;
 * - `--header` in relay mode, before an origin that takes a bearer token and
 *   lists each caller their own tools.
 *
 * No token, code or header value is printed, even where the origin echoes it.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Secrets, sendingHeaders } from "../../scripts/lib/client-credentials";
import { MAX_SCOPE_LENGTH } from "../../src/auth/scope-tokens";
import { startCallerOrigin } from "../fixtures/node/caller-origin";
import { type OAuthOrigin, startOAuthOrigin } from "../fixtures/node/oauth-origin";
import { answerConsent } from "../helpers/consent";
import { npmRunAsync, npmRunLive } from "./npm-scripts";
import { serveProxy } from "./serve-proxy";

/** The proxy's tokens (workers-oauth-provider's: user, grant, secret), access or refresh. */
const PROXY_TOKEN = /[\w-]+:[\w-]{16}:[\w-]{32}/;
/** The origin's tokens (the fixture's: UUIDs), which never leave the proxy. */
const ORIGIN_TOKEN = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/;

/**
 * For one describe block, broker mode in front of an OAuth origin of its own (each block its own
 * proxy: the sign-in rate limit, 30 requests a minute per address, counts every sign-in of one),
 * and the command run signed in through it.
 */
function brokerInFront() {
  let origin: OAuthOrigin;
  let broker: Awaited<ReturnType<typeof serveProxy>>;

  beforeAll(async () => {
    origin = await startOAuthOrigin();
    broker = await serveProxy(origin.strict.href, { AUTH_MODE: "broker" });
  });

  afterAll(async () => {
    await broker?.dispose();
    origin?.close();
  });

  /** Flips the origin's authorization server (oauth-origin.ts `/__control`). */
  async function control(body: Record<string, unknown>) {
    const answer = await fetch(new URL("/__control", origin.authorizationServer), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    expect(answer.status).toBe(204);
  }

  /** The address the command printed, and the redirect URI it asks to come back to. */
  async function printedAddress(run: ReturnType<typeof npmRunLive>) {
    const [address = ""] = await run.printed(ADDRESS);
    const authorizationUrl = new URL(address);
    const redirect = authorizationUrl.searchParams.get("redirect_uri") ?? "";
    return { authorizationUrl, redirect };
  }

  /**
   * The command run with `--sign-in`, the user allowing it: the consent page,
   * the origin's sign-in, and the browser's landing on the command's callback.
   */
  async function signedIn(args: string[]) {
    const run = npmRunLive("client", [...args, "--sign-in"]);
    const { authorizationUrl, redirect } = await printedAddress(run);
    expect(redirect).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    const { callback } = await answerConsent(fetch, authorizationUrl, "approve", {
      home: redirect,
    });
    const landing = await fetch(callback);
    expect(landing.status).toBe(200);
    expect(await landing.text()).toContain("Signed in.");
    const code = callback.searchParams.get("code") ?? "";
    expect(code).not.toBe("");
    return { ...(await run.done), code };
  }

  return {
    url: () => broker.url.href,
    control,
    printedAddress,
    signedIn,
    /** The model-facing name of the origin's `files.read`, read from a signed-in listing. */
    async filesRead() {
      const { out } = await signedIn(["list", broker.url.href]);
      const [name = ""] = /files_read_[a-z0-9]{6}/.exec(out) ?? [];
      expect(name).not.toBe("");
      return name;
    },
  };
}

/** The address the command prints for the user to open: a public client's ID, state, PKCE challenge. */
const ADDRESS = /^http:\/\/127\.0\.0\.1:\d+\/authorize\?\S+$/m;

/** Nothing a credential is, in what the command printed (beside the address, whose client ID is a UUID too). */
function noCredential(out: string, code: string) {
  const printed = out.replace(ADDRESS, "");
  expect(printed).not.toContain(code);
  expect(printed).not.toMatch(PROXY_TOKEN);
  expect(printed).not.toMatch(ORIGIN_TOKEN);
}

/** The JSON the command printed last: a call's result. */
const printedResult = (out: string) => JSON.parse(out.slice(out.indexOf("{")));

describe("npm run client --sign-in, in front of broker mode", () => {
  const broker = brokerInFront();

  it("says the server asks for sign-in, and how, when it is run without", async () => {
    const { status, out } = await npmRunAsync("client", ["list", broker.url()]);
    expect(status).toBe(1);
    expect(out).toContain("The server asks for sign-in (401)");
    expect(out).toContain("--sign-in");
    expect(out).toContain('--header "Authorization: Bearer <token>"');
    // A token of its own is none of the proxy's: refused, and said so, its value not shown.
    const wrong = await npmRunAsync("client", [
      "list",
      broker.url(),
      "--header",
      "Authorization: Bearer not-a-token-of-the-proxy",
    ]);
    expect(wrong.status).toBe(1);
    expect(wrong.out).toContain("The server refused the credential sent (401)");
    expect(wrong.out).not.toContain("not-a-token-of-the-proxy");
  });

  it("signs in through the consent page and the origin's sign-in, and lists what the user sees", async () => {
    const { status, out, code } = await broker.signedIn(["list", broker.url()]);
    expect(status).toBe(0);
    expect(out).toMatch(/^files_read_[a-z0-9]{6}: Reads a file\.$/m);
    expect(out).toContain("Signed in.");
    noCredential(out, code);
  });

  it("calls a tool signed in, its arguments reaching the origin", async () => {
    const name = await broker.filesRead();
    const { status, out, code } = await broker.signedIn(["call", broker.url(), name, "path=a.txt"]);
    expect(status).toBe(0);
    expect(printedResult(out).structuredContent).toEqual({
      tool: "files.read",
      arguments: { path: "a.txt" },
    });
    noCredential(out, code);
  });

  it("takes the one callback of its own sign-in, on 127.0.0.1 alone, and closes after it", async () => {
    const run = npmRunLive("client", ["list", broker.url(), "--sign-in"]);
    const { authorizationUrl, redirect } = await broker.printedAddress(run);
    const at = new URL(redirect);
    // Bound to 127.0.0.1: another loopback address of this machine reaches nothing.
    await expect(fetch(`http://127.0.0.2:${at.port}/callback`)).rejects.toThrow();
    // A callback of another sign-in (a stale tab, another page's guess) changes nothing.
    const forged = new URL(redirect);
    forged.search = new URLSearchParams({ code: "forged-code", state: "not-this-one" }).toString();
    expect((await fetch(forged)).status).toBe(400);
    expect((await fetch(new URL("/elsewhere", redirect))).status).toBe(404);

    const { callback } = await answerConsent(fetch, authorizationUrl, "approve", {
      home: redirect,
    });
    expect(callback.searchParams.get("state")).toBe(authorizationUrl.searchParams.get("state"));
    expect((await fetch(callback)).status).toBe(200);
    const { status, out } = await run.done;
    expect(status).toBe(0);
    expect(out).toMatch(/^files_read_[a-z0-9]{6}: /m);
    // Closed: the same callback again reaches no one.
    await expect(fetch(callback)).rejects.toThrow();
  });

  it("gives up, and stops listening, when no sign-in comes back in time", async () => {
    const run = npmRunLive("client", ["list", broker.url(), "--sign-in", "--sign-in-timeout", "1"]);
    const { redirect } = await broker.printedAddress(run);
    const { status, out } = await run.done;
    expect(status).toBe(1);
    expect(out).toContain("No sign-in came back within 1 s (--sign-in-timeout): not signed in.");
    await expect(fetch(redirect)).rejects.toThrow();
  });
});

describe("npm run client --sign-in, for a scope the origin asks for more of (step-up)", () => {
  const broker = brokerInFront();

  afterAll(async () => {
    await broker.control({ requiredScope: null });
  });

  it("says which scopes a call needs, as the proxy names the origin's, and signs in for them with --scope", async () => {
    const name = await broker.filesRead();
    await broker.control({ requiredScope: { scope: "files:write", tool: "files.read" } });

    const refused = await broker.signedIn(["call", broker.url(), name, "path=a.txt"]);
    expect(refused.status).toBe(1);
    expect(refused.out).toContain(
      "The server needs permissions this sign-in lacks (403 insufficient_scope): origin:files:write.",
    );
    expect(refused.out).toContain("origin:<scope> is the origin's own <scope>");
    expect(refused.out).toContain("--sign-in --scope 'origin:files:write'");
    noCredential(refused.out, refused.code);

    const granted = await broker.signedIn([
      "call",
      broker.url(),
      name,
      "path=a.txt",
      "--scope",
      "origin:files:write",
    ]);
    expect(granted.status).toBe(0);
    expect(printedResult(granted.out).structuredContent).toEqual({
      tool: "files.read",
      arguments: { path: "a.txt" },
    });
    noCredential(granted.out, granted.code);
  });

  it("names an origin scope as long as the proxy carries, its origin: prefix beside the bound", async () => {
    const name = await broker.filesRead();
    // 128 characters, the longest of the origin's the proxy names: origin:<scope> is 135.
    const longest = `files:${"w".repeat(MAX_SCOPE_LENGTH - "files:".length)}`;
    await broker.control({ requiredScope: { scope: longest, tool: "files.read" } });

    const refused = await broker.signedIn(["call", broker.url(), name, "path=a.txt"]);
    expect(refused.status).toBe(1);
    expect(refused.out).toContain(
      `The server needs permissions this sign-in lacks (403 insufficient_scope): origin:${longest}.`,
    );
    expect(refused.out).toContain(`--sign-in --scope 'origin:${longest}'`);
    noCredential(refused.out, refused.code);
  });
});

describe("npm run client --sign-in, in front of relay mode and an origin's own OAuth", () => {
  let origin: OAuthOrigin;
  let relay: Awaited<ReturnType<typeof serveProxy>>;

  beforeAll(async () => {
    origin = await startOAuthOrigin();
    relay = await serveProxy(origin.lenient.href);
  });

  afterAll(async () => {
    await relay?.dispose();
    origin?.close();
  });

  it("signs in at the origin's authorization server, as the proxy's metadata names it, and lists", async () => {
    const run = npmRunLive("client", ["list", relay.url.href, "--sign-in"]);
    const [address = ""] = await run.printed(ADDRESS);
    const authorizationUrl = new URL(address);
    expect(authorizationUrl.origin).toBe(origin.authorizationServer.origin);
    // The origin's authorization server approves at once: its answer sends the browser back.
    const approved = await fetch(authorizationUrl, { redirect: "manual" });
    const callback = new URL(approved.headers.get("location") ?? "");
    expect(callback.href.startsWith(authorizationUrl.searchParams.get("redirect_uri") ?? "-")).toBe(
      true,
    );
    expect((await fetch(callback)).status).toBe(200);
    const { status, out } = await run.done;
    expect(status).toBe(0);
    expect(out).toMatch(/^files_read_[a-z0-9]{6}: Reads a file\.$/m);
    noCredential(out, callback.searchParams.get("code") ?? "-");
  });
});

describe("npm run client --header, in front of relay mode", () => {
  const ADMIN = "admin-token-0123456789";
  const USER = "user-token-9876543210";
  let origin: Awaited<ReturnType<typeof startCallerOrigin>>;
  let relay: Awaited<ReturnType<typeof serveProxy>>;

  beforeAll(async () => {
    origin = await startCallerOrigin();
    const map = crypto.randomUUID();
    const tool = (name: string) => ({ name, inputSchema: { type: "object" } });
    for (const [caller, tools] of [
      [ADMIN, [tool("files.read"), tool("admin.users.delete")]],
      [USER, [tool("files.read")]],
    ] as const) {
      await fetch(new URL(`/__tools?map=${map}&caller=${caller}`, origin.url), {
        method: "POST",
        body: JSON.stringify(tools),
      });
    }
    relay = await serveProxy(`${origin.url.href}?map=${map}&bearer`);
  });

  afterAll(async () => {
    await relay?.dispose();
    origin?.close();
  });

  it("lists what each caller's token is listed, and says how to send one when none was", async () => {
    const gemini = `${relay.url.href}/gemini`;
    const none = await npmRunAsync("client", ["list", gemini]);
    expect(none.status).toBe(1);
    expect(none.out).toContain("The server asks for sign-in (401)");
    expect(none.out).toContain('--header "Authorization: Bearer <token>"');

    const admin = await npmRunAsync("client", [
      "list",
      gemini,
      "--header",
      `Authorization: Bearer ${ADMIN}`,
    ]);
    expect(admin).toMatchObject({ status: 0 });
    expect(admin.out.trim().split("\n")).toEqual(["files.read", "admin.users.delete"]);
    const user = await npmRunAsync("client", [
      "list",
      gemini,
      "--header",
      `Authorization: Bearer ${USER}`,
    ]);
    expect(user.out.trim().split("\n")).toEqual(["files.read"]);
  });

  it("never prints a header's value, not even where the origin echoes it", async () => {
    const call = await npmRunAsync("client", [
      "call",
      `${relay.url.href}/gemini`,
      "admin.users.delete",
      "user=bob",
      "--header",
      `Authorization: Bearer ${ADMIN}`,
    ]);
    expect(call).toMatchObject({ status: 0 });
    expect(call.out).not.toContain(ADMIN);
    // The origin named the caller by the token it got: the admin's, shown hidden.
    expect(JSON.parse(call.out).structuredContent).toEqual({
      tool: "admin.users.delete",
      arguments: { user: "bob" },
      caller: "[hidden]",
    });
  });

  it("refuses a header line that is none by its name alone", async () => {
    const secret = "s3cret-value-of-a-key";
    for (const line of [`Authorization Bearer ${secret}`, `X-Api-Key: ${secret}\u0007`]) {
      const refused = await npmRunAsync("client", ["list", relay.url.href, "--header", line]);
      expect(refused.status).toBe(1);
      expect(refused.out).toContain("--header");
      expect(refused.out).not.toContain(secret);
    }
  });
});

describe("--header's reach", () => {
  it("goes to the MCP server's origin, never to another (an authorization server elsewhere)", async () => {
    const seen: Array<string | undefined> = [];
    const server = createServer((request, response) => {
      seen.push(request.headers["x-tenant-key"] as string | undefined);
      response.end();
    });
    await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
    const other = createServer((request, response) => {
      seen.push(request.headers["x-tenant-key"] as string | undefined);
      response.end();
    });
    await new Promise<void>((listening) => other.listen(0, "127.0.0.1", listening));
    const at = (listening: typeof server, path: string) =>
      `http://127.0.0.1:${(listening.address() as AddressInfo).port}${path}`;
    try {
      const headers = new Headers({ "X-Tenant-Key": "tenant-key-0001" });
      const sending = sendingHeaders(headers, new URL(at(server, "/mcp")));
      await sending(at(server, "/mcp"));
      await sending(at(server, "/.well-known/oauth-protected-resource/mcp"));
      await sending(at(other, "/token"));
      expect(seen).toEqual(["tenant-key-0001", "tenant-key-0001", undefined]);
    } finally {
      server.close();
      other.close();
    }
    // And the value is hidden from what is printed, as written and as JSON writes it.
    const secrets = new Secrets();
    secrets.add('key"with\\quotes');
    expect(secrets.hide(`${JSON.stringify({ v: 'key"with\\quotes' })} key"with\\quotes`)).toBe(
      '{"v":"[hidden]"} [hidden]',
    );
  });
});
