/**
 * The forms posted to broker and gate mode's sign-in routes (the consent
 * page's answer, `POST /authorize`; the token endpoint, `POST /oauth/token`)
 * are read to a bound and no further: a client that streams a body without
 * end is refused `413` once it passes the bound, and the proxy holds no more
 * of it than that (an isolate's memory is shared by every request it serves).
 */
import { env } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MAX_REGISTRATION_BYTES, MAX_SIGN_IN_FORM_BYTES } from "../../src/auth/sign-in-body";
import { BROKER_URL, brokerFor } from "../helpers/broker";
import { GATE_URL, gateNetwork } from "../helpers/gate";
import { captureLogs } from "../helpers/logs";
import { handBuiltClient } from "../helpers/oauth-client";
import { BROKERED_ORIGIN, type Fetch } from "../helpers/proxy";

const CHUNK = 64 * 1024;
/** Far past the bound: what a client that never stops would send, as far as a test goes. */
const SENT_AT_MOST = 8 * 1024 * 1024;

/** A form body that goes on (`a=aaaa…`), counting what the proxy pulled of it. */
function endlessForm() {
  const pulled = { bytes: 0 };
  const chunk = new TextEncoder().encode("a".repeat(CHUNK));
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (pulled.bytes >= SENT_AT_MOST) {
        controller.close();
        return;
      }
      controller.enqueue(pulled.bytes === 0 ? new TextEncoder().encode("a=") : chunk);
      pulled.bytes += chunk.byteLength;
    },
  });
  return { body, pulled };
}

const kv = () => env.OAUTH_KV as KVNamespace;

const FORM = { "content-type": "application/x-www-form-urlencoded" };

let logs: ReturnType<typeof captureLogs>;
beforeEach(() => {
  logs = captureLogs();
});
afterEach(() => logs.restore());

describe.each([
  ["broker", () => brokerFor(BROKERED_ORIGIN.strict), BROKER_URL],
  ["gate", () => gateNetwork(), GATE_URL],
] as Array<[string, () => Fetch, string]>)(
  "%s mode: a sign-in form without end",
  (_, network, url) => {
    it.each([
      ["the consent page's answer (POST /authorize)", "/authorize"],
      ["a token request (POST /oauth/token)", "/oauth/token"],
    ])("%s is refused 413 at the bound, the rest unread", async (_, path) => {
      const proxy = network();
      const target =
        path === "/authorize" ? (await handBuiltClient(proxy, url)).url : new URL(path, url);
      const { body, pulled } = endlessForm();
      const response = await proxy(target, {
        method: "POST",
        headers: FORM,
        body,
        redirect: "manual",
      });
      expect(pulled.bytes).toBeLessThanOrEqual(MAX_SIGN_IN_FORM_BYTES + 2 * CHUNK);
      expect(response.status).toBe(413);
      expect(await response.json()).toMatchObject({ error: "invalid_request" });
      expect(logs.events("sign_in_body_too_large")).toEqual([
        expect.objectContaining({ path, limit: MAX_SIGN_IN_FORM_BYTES }),
      ]);
    });

    it("refuses a declared Content-Length past the bound without reading the body", async () => {
      const proxy = network();
      const { body, pulled } = endlessForm();
      const response = await proxy(new URL("/oauth/token", url), {
        method: "POST",
        headers: { ...FORM, "content-length": String(MAX_SIGN_IN_FORM_BYTES + 1) },
        body,
      });
      expect(pulled.bytes).toBeLessThanOrEqual(2 * CHUNK);
      expect(response.status).toBe(413);
    });
  },
);

describe.each([
  ["broker", () => brokerFor(BROKERED_ORIGIN.strict), BROKER_URL],
  ["gate", () => gateNetwork(), GATE_URL],
] as Array<[string, () => Fetch, string]>)("%s mode: a registration", (_, network, url) => {
  /** A registration whose client name is `nameLength` characters, the rest as a client writes it. */
  const registration = (nameLength: number) =>
    JSON.stringify({
      client_name: "n".repeat(nameLength),
      redirect_uris: ["http://127.0.0.1:33418/callback"],
      token_endpoint_auth_method: "none",
    });

  it("of a few hundred KiB is refused 413 and nothing is stored, where KV's storage is what it spends", async () => {
    const proxy = network();
    const clients = async () => (await kv().list({ prefix: "client:" })).keys.length;
    const before = await clients();
    const response = await proxy(new URL("/oauth/register", url), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: registration(512 * 1024),
    });
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ error: "invalid_request" });
    expect(logs.events("sign_in_body_too_large")).toEqual([
      expect.objectContaining({ path: "/oauth/register", limit: MAX_REGISTRATION_BYTES }),
    ]);
    expect(await clients()).toBe(before);
  });

  it("as a client writes one (a name, a few redirect URIs) is taken", async () => {
    const response = await network()(new URL("/oauth/register", url), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: registration(200),
    });
    expect(response.status).toBe(201);
  });
});
