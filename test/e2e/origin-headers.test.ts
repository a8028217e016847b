/**
 * Which of a client's headers reach the origin, in each mode: every header
 * SECURITY.md's table names (but `Transfer-Encoding` and `Content-Length`,
 * which the request's own body sets), sent in one request, and what an origin
 * that records its requests received. Relay mode goes through the origin gateway
 * (origin-gateway.ts), broker mode to an OAuth origin after a real sign-in
 * (oauth-origin.ts); both record every header of a request with `?trace=`.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { answerConsent } from "../helpers/consent";
import { DEMO_NAMES } from "../helpers/demo-names";
import { clientView, isEvent } from "../helpers/event-stream";
import { connectAs, GATE_URL, gateNetwork, neverShowsItsKeys, SHARED_KEY } from "../helpers/gate";
import {
  initialize,
  messagesOf,
  PROTOCOL_VERSION,
  postJson,
  rpc,
  wireRequest,
} from "../helpers/mcp";
import { type SignedIn, signInAndConnect } from "../helpers/oauth-client";
import {
  BROKERED_ORIGIN,
  clientNetwork,
  GATEWAY_ORIGIN,
  newTrace,
  PROXY_URL,
  receivedByOrigin,
  viaProxy,
} from "../helpers/proxy";

type Fate = "passes" | "stops";

/** A header a client sends, and whether it reaches the origin in relay and in broker mode (and gate mode, as broker). */
interface Row {
  name: string;
  value: string;
  relay: Fate;
  broker: Fate;
}

const row = (name: string, value: string, relay: Fate, broker: Fate): Row => ({
  name,
  value,
  relay,
  broker,
});
const stops = (name: string, value: string) => row(name, value, "stops", "stops");
const passes = (name: string, value: string) => row(name, value, "passes", "passes");
const relayOnly = (name: string, value: string) => row(name, value, "passes", "stops");

const ADDRESS = "203.0.113.7";

const TABLE: Row[] = [
  // Where the client is: an origin behind a CDN or load balancer may believe these.
  stops("forwarded", `for=${ADDRESS};host=admin.example;proto=https`),
  stops("forwarded-for", ADDRESS),
  stops("x-forwarded", `for=${ADDRESS}`),
  stops("x-forwarded-for", ADDRESS),
  stops("x-forwarded-host", "admin.example"),
  stops("x-forwarded-proto", "https"),
  stops("x-forwarded-port", "443"),
  stops("x-forwarded-prefix", "/admin"),
  stops("x-forwarded-uri", "/admin"),
  stops("x-real-ip", ADDRESS),
  stops("x-client-ip", ADDRESS),
  stops("client-ip", ADDRESS),
  stops("x-cluster-client-ip", ADDRESS),
  stops("true-client-ip", ADDRESS),
  stops("fastly-client-ip", ADDRESS),
  stops("x-original-forwarded-for", ADDRESS),
  stops("x-appengine-user-ip", ADDRESS),
  stops("x-azure-clientip", ADDRESS),
  stops("x-azure-socketip", ADDRESS),
  stops("cloudfront-viewer-address", `${ADDRESS}:443`),
  stops("fly-client-ip", ADDRESS),
  stops("x-envoy-external-address", ADDRESS),
  stops("cf-connecting-ip", ADDRESS),
  stops("cf-connecting-ipv6", "2001:db8::7"),
  stops("cf-pseudo-ipv4", ADDRESS),
  // Another URL, method or host than the request's.
  stops("x-original-url", "/admin/delete"),
  stops("x-rewrite-url", "/admin/delete"),
  stops("x-original-uri", "/admin/delete"),
  stops("x-http-method-override", "DELETE"),
  stops("x-http-method", "DELETE"),
  stops("x-method-override", "DELETE"),
  stops("x-original-method", "DELETE"),
  stops("x-host", "admin.example"),
  stops("x-original-host", "admin.example"),
  stops("x-http-host-override", "admin.example"),
  // Cloudflare's own: what its edge says of a request, and Access's assertions of the user.
  stops("cf-ipcountry", "US"),
  stops("cf-visitor", '{"scheme":"https"}'),
  stops("cf-ray", "8f00000000000000-SJC"),
  stops("cf-worker", "admin.example"),
  stops("cf-ew-via", "15"),
  stops("cf-ipcity", "Springfield"),
  stops("cf-device-type", "desktop"),
  stops("cf-access-jwt-assertion", "eyJhbGciOiJSUzI1NiJ9.e30.sig"),
  stops("cf-access-authenticated-user-email", "admin@admin.example"),
  // Hop by hop: this connection's, not the next one's.
  stops("keep-alive", "timeout=5"),
  stops("proxy-authorization", "Basic Zm9vOmJhcg=="),
  stops("proxy-authenticate", 'Basic realm="hop"'),
  stops("proxy-connection", "keep-alive"),
  stops("te", "trailers"),
  stops("trailer", "x-checksum"),
  stops("upgrade", "h2c"),
  stops("connection", "x-per-hop"),
  stops("x-per-hop", "1"),
  stops("host", "admin.example"),
  // The same names with `_` for `-`: CGI's `HTTP_X_FORWARDED_FOR` is either spelling, and Rack,
  // WSGI and PHP servers read it so (Puma before 6.4.3, CVE-2024-45614; gunicorn before 22).
  stops("x_forwarded_for", ADDRESS),
  stops("x_real_ip", ADDRESS),
  stops("cf_connecting_ip", ADDRESS),
  stops("cf_access_authenticated_user_email", "admin@admin.example"),
  stops("x_http_method_override", "DELETE"),
  stops("mcp_name", "admin.payroll"),
  stops("x_api_key", "client-key"),
  // The client's own credentials, and the application's headers: the origin's to judge in
  // relay mode; in broker mode the proxy's token stands in for them.
  relayOnly("cookie", "session=client"),
  relayOnly("x-api-key", "client-key"),
  relayOnly("cf-access-client-id", "client-id.access"),
  relayOnly("cf-access-client-secret", "client-secret"),
  relayOnly("cf-access-token", "eyJhbGciOiJSUzI1NiJ9.e30.sig"),
  relayOnly("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"),
  relayOnly("cache-control", "no-cache"),
  relayOnly("referer", "https://client.example/"),
  // The runtime asks for what it decodes itself: an answer in zstd would not be renamed.
  stops("accept-encoding", "zstd"),
  // Listed in PASS_HEADERS for this test's broker.
  passes("x-tenant", "acme"),
  // MCP's and the content's own.
  passes("accept", "application/json, text/event-stream"),
  passes("content-type", "application/json"),
  passes("accept-language", "nb-NO, en;q=0.5"),
  passes("user-agent", "edge-rewriter-test/1.0"),
  passes("mcp-protocol-version", PROTOCOL_VERSION),
  passes("mcp-session-id", "session-1"),
  passes("mcp-method", "ping"),
  passes("mcp-name", "ping-target"),
  passes("mcp-param-region", "eu-west"),
  passes("last-event-id", "evt-7"),
];

/**
 * What the runtime puts on a Worker's request itself, whatever the client
 * sent: the body's length, and `CF-Worker`, the zone the Worker runs for.
 */
const RUNTIME = new Set(["content-length", "cf-worker"]);

const sent = Object.fromEntries(TABLE.map(({ name, value }) => [name, value]));

/**
 * That the origin `received` exactly the client's headers the table lets
 * through in `mode`, each as sent (or as `held` says the origin holds it),
 * and besides them only the runtime's and `Authorization`, which it hands back.
 */
function expectTableHeld(
  received: Record<string, string>,
  mode: "relay" | "broker",
  held: Record<string, string> = sent,
): string {
  // The runtime's CF-Worker stands in for the client's, which it must not carry.
  expect(received["cf-worker"]).not.toBe(sent["cf-worker"]);
  const names = Object.keys(received).filter((name) => !RUNTIME.has(name));
  const passing = TABLE.filter((entry) => entry[mode] === "passes").map(({ name }) => name);
  expect(names.filter((name) => Object.hasOwn(sent, name)).sort()).toEqual(passing.sort());
  // Nothing the proxy made up: no address, no forwarding header of its own.
  expect(names.filter((name) => !Object.hasOwn(sent, name))).toEqual(["authorization"]);
  for (const name of passing) expect(received[name], name).toBe(held[name]);
  return received.authorization ?? "";
}

describe("relay mode: the client's credentials and application headers pass, nothing that says where it is", () => {
  it("reaches the origin with exactly the headers the table lets through, as the client wrote them", async () => {
    const proxy = viaProxy({ ORIGIN_URL: `${GATEWAY_ORIGIN}/mcp` });
    const trace = newTrace();
    const response = await postJson(proxy, `${PROXY_URL}?trace=${trace}`, rpc(1, "ping"), {
      ...sent,
      authorization: "Bearer client-token",
    });
    await response.body?.cancel();

    const [received] = await receivedByOrigin(trace);
    expect(expectTableHeld(received?.headers ?? {}, "relay")).toBe("Bearer client-token");
  });
});

describe("broker mode: only MCP's and the content's headers, the proxy's token, and PASS_HEADERS", () => {
  /** The proxy on a loopback host: workers-oauth-provider accepts plain http only there. */
  const BROKER_URL = "http://localhost/mcp";
  const origin = BROKERED_ORIGIN.strict;
  const connected: SignedIn[] = [];

  afterEach(async () => {
    await Promise.all(connected.splice(0).map(({ client }) => client.close()));
  });

  async function signedIn() {
    const network = clientNetwork(
      viaProxy(
        { ORIGIN_URL: origin, AUTH_MODE: "broker", PASS_HEADERS: "X-Tenant" },
        { app: createApp() },
      ),
      BROKER_URL,
    );
    const signed = await signInAndConnect(BROKER_URL, network, {
      approve: async (url) => (await answerConsent(network, url)).callback,
    });
    connected.push(signed);
    return { network, token: signed.provider.saved?.access_token ?? "" };
  }

  async function receivedAt(trace: string): Promise<Array<{ headers: Record<string, string> }>> {
    return (await fetch(new URL(`/__received?trace=${trace}`, origin))).json();
  }

  it("reaches the origin with exactly the headers the table lets through, and the origin's token", async () => {
    const { network, token } = await signedIn();
    const trace = newTrace();
    const response = await postJson(network, `${BROKER_URL}?trace=${trace}`, rpc(1, "ping"), {
      ...sent,
      authorization: `Bearer ${token}`,
    });
    expect(response.status).toBe(200);
    await response.body?.cancel();

    const [received] = await receivedAt(trace);
    const authorization = expectTableHeld(received?.headers ?? {}, "broker");
    // The origin's own token, from the grant: never the client's.
    expect(authorization).toMatch(/^Bearer /);
    expect(authorization).not.toContain(token);
  });

  it("keeps a 2026-07-28 call's Mcp-Name in line with the tool it calls, its original name", async () => {
    const { network, token } = await signedIn();
    const trace = newTrace();
    const name = DEMO_NAMES["files.read"];
    const { body, headers } = wireRequest("2026-07-28", 1, "tools/call", {
      name,
      arguments: { path: "a" },
    });
    const response = await postJson(network, `${BROKER_URL}?trace=${trace}`, body, {
      ...headers,
      authorization: `Bearer ${token}`,
    });
    expect(response.status).toBe(200);
    // The origin, which refuses a call whose Mcp-Name is not its body's name, answered it.
    const [answer] = await messagesOf(response);
    expect(answer?.result).toMatchObject({
      structuredContent: { tool: "files.read", arguments: { path: "a" } },
    });
    // After the proxy's own listing, which told it the tool's original name.
    const received = (await receivedAt(trace)).at(-1);
    expect(received?.headers).toMatchObject({
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "tools/call",
      "mcp-name": "files.read",
    });
  });
});

describe("gate mode: only MCP's and the content's headers, the proxy's key, and PASS_HEADERS", () => {
  neverShowsItsKeys();
  const connected: SignedIn[] = [];

  afterEach(async () => {
    await Promise.all(connected.splice(0).map(({ client }) => client.close()));
  });

  it("reaches the origin with exactly the headers the table lets through, and the proxy's key", async () => {
    const network = gateNetwork({ PASS_HEADERS: "X-Tenant" });
    const signed = await connectAs("alice", network);
    connected.push(signed);
    const token = signed.provider.saved?.access_token ?? "";
    // A session id and an event id pass only as the proxy handed them to this user: the origin
    // gets its own back (gate-sessions.test.ts).
    const opened = await postJson(network, GATE_URL, initialize(), {
      authorization: `Bearer ${token}`,
    });
    const handed = {
      "mcp-session-id": opened.headers.get("mcp-session-id") ?? "",
      "last-event-id": clientView(await opened.text()).find(isEvent)?.id ?? "",
    };
    const trace = newTrace();
    const response = await postJson(network, `${GATE_URL}?trace=${trace}`, rpc(1, "ping"), {
      ...sent,
      ...handed,
      authorization: `Bearer ${token}`,
    });
    await response.body?.cancel();

    const received = await receivedByOrigin(trace);
    expect(received).toHaveLength(1);
    const held = { ...sent };
    for (const [name, value] of Object.entries(handed)) {
      held[name] = received[0]?.headers[name] ?? "";
      expect(value.startsWith(`${held[name]}.`), name).toBe(true);
    }
    const authorization = expectTableHeld(received[0]?.headers ?? {}, "broker", held);
    expect(authorization).toBe(`Bearer ${SHARED_KEY}`);
  });

  it("sends the origin nothing for a request without a token of the proxy's, whatever it carries", async () => {
    const network = gateNetwork({ PASS_HEADERS: "X-Tenant" });
    const trace = newTrace();
    const response = await postJson(network, `${GATE_URL}?trace=${trace}`, rpc(1, "ping"), {
      ...sent,
      authorization: `Bearer ${SHARED_KEY}`,
    });
    expect(response.status).toBe(401);
    await response.body?.cancel();
    expect(await receivedByOrigin(trace)).toEqual([]);
  });
});
