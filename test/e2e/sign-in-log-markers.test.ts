/**
 * What a client or a browser sends to broker mode's sign-in never reaches a
 * log line: not the proxy's (`sign_in_failed`, whose `detail` is an error's
 * message, `oauth_error`), nor the lines workers-oauth-provider and
 * oauth4webapi write themselves. Each request here carries one marker where
 * a client chooses the text (a redirect URI, a scope, a state, a code, a
 * token, a PKCE value, a handle, a cookie, a callback's parameters), and
 * every line the runtime was given, at any level, is searched for it. (A
 * client's ID is logged, as `client`, once the proxy knows the client.)
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { UNSEEN } from "../../src/log";
import { BROKER_URL, brokerFor, signInWithConsent } from "../helpers/broker";
import { CookieJar, walkSignIn } from "../helpers/consent";
import { GATE_URL, gateNetwork, signInAs } from "../helpers/gate";
import { handBuiltClient, REDIRECT_URL, type SignedIn } from "../helpers/oauth-client";
import { BROKERED_ORIGIN, type Fetch } from "../helpers/proxy";

/** What a line may not hold raw (docs/logs.md): C0 controls but tab and line feed, and `UNSEEN`. */
const RAW_CONTROLS = new RegExp(`[\\u0000-\\u0008\\u000b-\\u001f${UNSEEN}]`, "u");
const MARKER = `marker${crypto.randomUUID().replaceAll("-", "")}`;
const CALLBACK = "http://localhost/oauth/callback";

/** Every line written at any level, each call's arguments as text. */
let written: string[] = [];
const connected: SignedIn[] = [];

beforeEach(() => {
  written = [];
  for (const level of ["log", "info", "warn", "error", "debug"] as const) {
    vi.spyOn(console, level).mockImplementation((...args: unknown[]) => {
      written.push(
        args
          .map((arg) =>
            arg instanceof Error ? `${arg.name}: ${arg.message} ${String(arg.cause)}` : String(arg),
          )
          .join(" "),
      );
    });
  }
  // No host but the test's own answers: a client's URL (its metadata document, its redirect) is
  // refused at once, as a host that cannot be reached.
  const network = globalThis.fetch;
  vi.spyOn(globalThis, "fetch").mockImplementation((input, init) => {
    const url = new URL(input instanceof Request ? input.url : input);
    return url.hostname === "127.0.0.1"
      ? network(input, init)
      : Promise.reject(new TypeError("fetch refused by the test"));
  });
});

afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(connected.splice(0).map(({ client }) => client.close()));
});

/** The proxy's lines of `event`, as written. */
const events = (event: string) =>
  written.flatMap((line) => {
    try {
      const parsed = JSON.parse(line) as { event?: string };
      return parsed.event === event ? [parsed as Record<string, unknown>] : [];
    } catch {
      return [];
    }
  });

function neverLogged() {
  expect(written.filter((line) => line.includes(MARKER))).toEqual([]);
}

const broker = () => brokerFor(BROKERED_ORIGIN.strict);

/** `client`'s authorization request with `params` set (or removed, where `null`). */
function asked(url: URL, params: Record<string, string | null>) {
  const changed = new URL(url);
  for (const [name, value] of Object.entries(params)) {
    if (value === null) changed.searchParams.delete(name);
    else changed.searchParams.set(name, value);
  }
  return changed;
}

/**
 * A user who allowed `authorization`, up to the browser's return to the
 * proxy from the origin's authorization server (gate mode: the identity
 * provider, where `visit` signs in): its callback URL, and the browser's cookies.
 */
async function backFromOrigin(network: Fetch, authorization: URL, visit?: (url: URL) => URL) {
  const jar = new CookieJar();
  const walk = await walkSignIn(network, authorization, "approve", { home: CALLBACK, jar, visit });
  if (walk.callback === undefined) throw new Error("the browser did not come back");
  return { callback: walk.callback, jar };
}

/** A code's exchange at the proxy's token endpoint that names `clientId` in its form. */
const codeExchangeNaming = (network: Fetch, clientId: string) =>
  network("http://localhost/oauth/token", {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ grant_type: "authorization_code", code: "c", client_id: clientId }),
  });

describe("broker mode's sign-in logs nothing a client or its browser wrote", () => {
  it("a signed-in SDK client's own sign-in, its token and its refresh", async () => {
    const network = broker();
    const signedIn = await signInWithConsent(network, "2025-11-25");
    connected.push(signedIn);
    const { access_token: token = "", refresh_token: refresh = "" } = signedIn.provider.saved ?? {};
    expect(events("sign_in_completed")).toHaveLength(1);
    for (const secret of [token, refresh]) {
      expect(secret.length).toBeGreaterThan(16);
      expect(written.filter((line) => line.includes(secret))).toEqual([]);
    }
  });

  it("an authorization request with a marker in each parameter a client writes", async () => {
    const network = broker();
    const { url } = await handBuiltClient(network, BROKER_URL);
    const hostile: Array<Record<string, string | null>> = [
      { redirect_uri: `https://evil.example/${MARKER}` },
      { redirect_uri: `${REDIRECT_URL}?${MARKER}` },
      { resource: `http://localhost/${MARKER}` },
      { response_type: MARKER },
      { code_challenge_method: MARKER },
      { code_challenge: null, code_challenge_method: MARKER },
      { client_id: MARKER },
      // Past KV's longest key (512 bytes), which the proxy reads as a client no one registered.
      { client_id: MARKER.repeat(20) },
    ];
    for (const params of hostile) {
      const answer = await network(asked(url, params), { redirect: "manual" });
      expect(answer.status, JSON.stringify(params)).toBeGreaterThanOrEqual(300);
      await answer.body?.cancel();
    }
    // Shown a consent page: a scope, a state and a PKCE challenge of the client's own.
    const shown = await network(
      asked(url, { scope: `${MARKER} origin:${MARKER}`, state: MARKER, code_challenge: MARKER }),
    );
    expect(shown.status).toBe(200);
    expect(await shown.text()).toContain(MARKER);
    expect(events("sign_in_started")).toHaveLength(1);
    neverLogged();
  });

  it("a consent answer with a marker for its handle, its cookie and its body", async () => {
    const network = broker();
    const { url } = await handBuiltClient(network, BROKER_URL);
    const page = await network(url);
    const cookie = page.headers.getSetCookie().map((header) => header.split(";")[0]);
    await page.body?.cancel();
    for (const [body, type] of [
      [new URLSearchParams({ handle: MARKER, decision: "approve" }), "x-www-form-urlencoded"],
      [new URLSearchParams({ handle: MARKER, decision: "deny" }), "x-www-form-urlencoded"],
      [JSON.stringify({ handle: MARKER }), "json"],
    ] as const) {
      const answer = await network(url, {
        method: "POST",
        headers: {
          "content-type": `application/${type}`,
          cookie: [...cookie, `${MARKER}=${MARKER}`].join("; "),
        },
        body,
        redirect: "manual",
      });
      expect(answer.status).toBe(400);
      await answer.body?.cancel();
    }
    neverLogged();
  });

  it("a callback the browser brings back with a marker in its code, its issuer, its state or beside them", async () => {
    const network = broker();
    // A state no browser was given.
    const forged = await network(`${CALLBACK}?state=${MARKER}&code=${MARKER}`);
    expect(forged.status).toBe(400);
    await forged.body?.cancel();

    const tampered: Array<Record<string, string>> = [
      // A code the origin's authorization server did not issue: it refuses it.
      { code: MARKER },
      // Another issuer than the one the browser was sent to (RFC 9207).
      { iss: `https://${MARKER}.example/` },
      // A JARM response, which the proxy never asked for.
      { response: MARKER },
      // An implicit flow's token.
      { access_token: MARKER, token: MARKER },
    ];
    for (const params of tampered) {
      const { url } = await handBuiltClient(network, BROKER_URL);
      const { callback, jar } = await backFromOrigin(network, url);
      const answer = await network(asked(callback, params), {
        headers: jar.header(callback),
        redirect: "manual",
      });
      expect(answer.status).toBe(302);
      expect(new URL(answer.headers.get("location") ?? "").searchParams.get("error")).toBe(
        "server_error",
      );
    }
    // Each was logged with its cause: oauth4webapi's message, a fixed text that names the check
    // that failed and quotes nothing of what it checked (the state's, which names none, aside).
    const failure = (reason: string, detail: string) =>
      expect.objectContaining({ step: "callback", reason, detail });
    expect(events("sign_in_failed")).toEqual([
      { event: "sign_in_failed", reason: "state" },
      failure(
        "invalid_grant",
        "ResponseBodyError: server responded with an error in the response body",
      ),
      failure(
        "invalid_response",
        'OperationProcessingError: unexpected "iss" (issuer) response parameter value',
      ),
      failure(
        "invalid_response",
        'OperationProcessingError: "parameters" contains a JARM response, use validateJwtAuthResponse() instead of validateAuthResponse()',
      ),
      failure(
        "invalid_response",
        "UnsupportedOperationError: implicit and hybrid flows are not supported",
      ),
    ]);
    neverLogged();
  });

  it("gate mode: a callback the browser brings back from the identity provider with a marker for its code", async () => {
    const network = gateNetwork();
    const { url } = await handBuiltClient(network, GATE_URL);
    const { callback, jar } = await backFromOrigin(network, url, signInAs("alice").visit);
    const answer = await network(asked(callback, { code: MARKER }), {
      headers: jar.header(callback),
      redirect: "manual",
    });
    expect(answer.status).toBe(302);
    expect(events("sign_in_failed")).toEqual([
      expect.objectContaining({
        step: "callback",
        reason: "invalid_grant",
        detail: "ResponseBodyError: server responded with an error in the response body",
      }),
    ]);
    neverLogged();
  });

  it("token, registration and MCP requests with a marker wherever a client writes one", async () => {
    const network = broker();
    const { clientId } = await handBuiltClient(network, BROKER_URL);
    const token = (form: Record<string, string>, headers: Record<string, string> = {}) =>
      network("http://localhost/oauth/token", {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
        body: new URLSearchParams(form),
      });
    const answers = [
      await token({
        grant_type: "authorization_code",
        code: `${MARKER}:${MARKER}:${MARKER}`,
        client_id: clientId,
        redirect_uri: `${REDIRECT_URL}/${MARKER}`,
        code_verifier: MARKER.repeat(2),
      }),
      await token({ grant_type: "refresh_token", refresh_token: MARKER, client_id: clientId }),
      await token({ grant_type: MARKER, client_id: clientId }),
      await token({ grant_type: "authorization_code", code: MARKER, client_id: MARKER }),
      await token(
        { grant_type: "authorization_code", code: MARKER },
        { authorization: `Basic ${btoa(`${clientId}:${MARKER}`)}` },
      ),
      await network("http://localhost/oauth/register", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ client_name: MARKER, redirect_uris: [`javascript:${MARKER}`] }),
      }),
      await network(BROKER_URL, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          authorization: `Bearer ${clientId}:${MARKER}:${MARKER}`,
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      }),
    ];
    for (const answer of answers) {
      expect(answer.status).toBeGreaterThanOrEqual(400);
      await answer.body?.cancel();
    }
    expect(events("oauth_error").length).toBeGreaterThanOrEqual(5);
    // A revocation (RFC 7009) of a token no one was issued is answered 200.
    const revoked = await token({ token: MARKER, token_type_hint: MARKER, client_id: clientId });
    await revoked.body?.cancel();
    neverLogged();
  });

  // workers-oauth-provider writes a client ID it could not resolve as a metadata document whole,
  // itself (`console.warn("CIMD fetch failed for <client_id>: …")`), past the proxy's log: a
  // client chose its length (a token request's 64 KiB) and its characters, control ones raw, which
  // a terminal following `wrangler tail` acts on. The proxy refuses such an ID before the library
  // reads it, and logs the refusal without it (docs/logs.md, `client_id_refused`).
  it("a client ID that names a metadata document past the bound and with control characters: refused, and logged bounded with none raw", async () => {
    const network = broker();
    const { url } = await handBuiltClient(network, BROKER_URL);
    // The URL parser takes it (it escapes what it would not keep); the library's check, not.
    const clientId = `https://client.example/${MARKER}\u001b[2J\u202e${"a".repeat(20_000)}`;
    const answer = await network(asked(url, { client_id: clientId }));
    expect(answer.status).toBe(400);
    await answer.body?.cancel();
    const token = await codeExchangeNaming(network, clientId);
    expect(token.status).toBe(401);
    for (const line of written) {
      expect(line.length).toBeLessThanOrEqual(16 * 1024);
      expect(line).not.toMatch(RAW_CONTROLS);
    }
    expect(events("client_id_refused")).toHaveLength(2);
    neverLogged();
  });

  // Within the bound, a client ID names a document that a host of the client's serves, and where
  // the library refuses it, its own line quotes what the document holds (`client_id "<the
  // document's>" does not match metadata URL …`, the methods it advertises): at most 5 KiB, the
  // most of a document it reads. The proxy never sees the document; it writes the line as one of
  // its own (`library_line`), escaped.
  it("a metadata document that holds control characters: quoted in the library's line, none written raw", async () => {
    const network = broker();
    const clientId = "https://client.example/oauth/client.json";
    const refusing = vi.mocked(globalThis.fetch).getMockImplementation();
    vi.mocked(globalThis.fetch).mockImplementation((input, init) =>
      String(input instanceof Request ? input.url : input) === clientId
        ? Promise.resolve(
            Response.json({
              client_id: `https://client.example/${MARKER}\u001b[2J`,
              client_name: "Client",
              redirect_uris: [REDIRECT_URL],
            }),
          )
        : (refusing?.(input, init) ?? Promise.reject(new TypeError("no fetch"))),
    );
    const token = await codeExchangeNaming(network, clientId);
    expect(token.status).toBe(401);
    expect(events("library_line")).toContainEqual(
      expect.objectContaining({ level: "warn", text: expect.stringContaining(MARKER) }),
    );
    for (const line of written) expect(line).not.toMatch(RAW_CONTROLS);
  });
});
