/**
 * `GET /readyz` (routes/readyz.ts): whether the proxy can serve its origin,
 * checked with the proxy's own `initialize` and `tools/list` (relay mode) or
 * its authorization server's metadata (broker mode), never with a client's
 * credentials, kept a few seconds per isolate. `/healthz` stays liveness.
 */
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { newIsolateState } from "../../src/routes/app-env";
import { checkWithin, READY_TIMEOUT_MS, READY_TTL_MS, Readiness } from "../../src/routes/readyz";
import { MAX_HELD_BYTES, ReadBudget } from "../../src/transport/read-bounded";
import { DEMO_NAMES } from "../helpers/demo-names";
import { captureLogs } from "../helpers/logs";
import {
  BROKERED_ORIGIN,
  CATALOG_ORIGIN,
  CLOSED_ORIGIN,
  DEMO_ORIGIN,
  GATEWAY_ORIGIN,
  HEADER_ORIGIN,
  heldOnceClosed,
  newTrace,
  receivedByOrigin,
  viaProxy,
} from "../helpers/proxy";

const READYZ = "http://proxy.test/readyz";

/** A fresh isolate of the proxy (nothing checked yet; `app` may share its read budget) in front of `vars.ORIGIN_URL`. */
async function readyz(vars: Record<string, string>, url = READYZ, app = createApp()) {
  const response = await viaProxy(vars, { app })(url);
  return { response, body: await response.json<Record<string, unknown>>() };
}

describe("/readyz", () => {
  it("lists the origin itself, without the client's credentials, and says how many tools", async () => {
    const trace = newTrace();
    const proxy = viaProxy(
      { ORIGIN_URL: `${GATEWAY_ORIGIN}/mcp?trace=${trace}` },
      { app: createApp() },
    );
    const response = await proxy(READYZ, {
      headers: { authorization: "Bearer client-token", cookie: "session=client" },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(await response.json()).toEqual({
      status: "ready",
      origin: new URL(GATEWAY_ORIGIN).host,
      tools: Object.keys(DEMO_NAMES).length,
      checkedSecondsAgo: 0,
    });
    const received = await receivedByOrigin(trace);
    expect(
      received.map(({ method, body }) => (body ? `${method} ${JSON.parse(body).method}` : method)),
    ).toEqual(["POST initialize", "POST notifications/initialized", "POST tools/list", "DELETE"]);
    for (const { headers } of received) {
      expect(headers.authorization).toBeUndefined();
      expect(headers.cookie).toBeUndefined();
    }

    // Kept a few seconds: a monitor polling the isolate costs the origin nothing more.
    const again = await proxy(READYZ);
    expect(again.status).toBe(200);
    expect(await receivedByOrigin(trace)).toHaveLength(received.length);
  });

  it("503 with the reason when the origin is down, and says so in the log", async () => {
    const logs = captureLogs();
    const { response, body } = await readyz({ ORIGIN_URL: `${CLOSED_ORIGIN}/mcp` });
    expect(response.status).toBe(503);
    expect(response.headers.get("retry-after")).toBe("5");
    expect(body).toEqual({
      status: "unready",
      origin: new URL(CLOSED_ORIGIN).host,
      reason: "the origin could not be reached",
      checkedSecondsAgo: 0,
    });
    expect(logs.events("origin_unready")).toEqual([
      {
        event: "origin_unready",
        origin: new URL(CLOSED_ORIGIN).host,
        reason: "the origin could not be reached",
      },
    ]);
    logs.restore();
  });

  it("a check that fails unexpectedly: the line's detail names the origin by its host, never ORIGIN_URL's path or query", async () => {
    const logs = captureLogs();
    const origin = new URL("https://origin.example/t/KEY-IN-PATH/mcp?api_key=KEY-IN-QUERY");
    const checked = await checkWithin(1000, origin, async () => {
      throw new TypeError(
        `Fetch API cannot load: ${origin.href}; ${origin.pathname}${origin.search}.`,
      );
    });
    expect(checked).toEqual({
      ready: false,
      reason: "the check failed (origin_unready's detail says why)",
    });
    expect(logs.events("origin_unready")).toEqual([
      {
        event: "origin_unready",
        origin: "origin.example",
        reason: "the check failed (origin_unready's detail says why)",
        detail: "Fetch API cannot load: https://origin.example/…; ….",
      },
    ]);
    expect(JSON.stringify(logs.lines())).not.toContain("KEY-IN");
    logs.restore();
  });

  it("503 when the origin does not answer in time", async () => {
    const { response, body } = await readyz({
      ORIGIN_URL: `${GATEWAY_ORIGIN}/delay/5000/mcp`,
      ORIGIN_TIMEOUT_MS: "50",
    });
    expect(response.status).toBe(503);
    expect(body.reason).toBe("the origin did not answer within 50 ms");
  });

  it("503 when the origin answers and then sends nothing more: its stream is closed, not left open", async () => {
    // The origin answers initialize with one event (a progress notification) and then nothing.
    const trace = newTrace();
    const { response, body } = await readyz({
      ORIGIN_URL: `${GATEWAY_ORIGIN}/held/mcp?trace=${trace}`,
      ORIGIN_TIMEOUT_MS: "500",
    });
    expect(response.status).toBe(503);
    expect(body.reason).toBe("the origin did not finish answering within 500 ms");
    expect(await heldOnceClosed(trace)).toEqual({ opened: 1, closed: 1 });
  });

  it("ready behind sign-in: an origin that answers 401 with a Bearer challenge is an MCP server a client lists", async () => {
    const { response, body } = await readyz({ ORIGIN_URL: `${GATEWAY_ORIGIN}/auth/mcp` });
    expect(response.status).toBe(200);
    expect(body).toEqual({
      status: "ready",
      origin: new URL(GATEWAY_ORIGIN).host,
      signIn: "required",
      checkedSecondsAgo: 0,
    });
  });

  it.each([
    ["an event stream", ""],
    ["JSON", "?json"],
  ])("ready when the origin answers its listing in a batch of one, as %s", async (_, query) => {
    const { response, body } = await readyz({
      ORIGIN_URL: `${GATEWAY_ORIGIN}/batch-list/mcp${query}`,
    });
    expect(response.status).toBe(200);
    expect(body).toEqual({
      status: "ready",
      origin: new URL(GATEWAY_ORIGIN).host,
      tools: Object.keys(DEMO_NAMES).length,
      checkedSecondsAgo: 0,
    });
  });

  // The SDK 2.x's createMcpHandler with `legacy: "reject"` serves 2026-07-28 alone: it has no
  // `initialize` (a 400), and lists its tools to any request that carries the revision's envelope.
  it("ready when the origin serves 2026-07-28 alone: it has no initialize, and is listed as that revision lists", async () => {
    const { response, body } = await readyz({ ORIGIN_URL: `${HEADER_ORIGIN}/mcp` });
    expect(response.status).toBe(200);
    expect(body).toEqual({
      status: "ready",
      origin: new URL(HEADER_ORIGIN).host,
      // header-origin.ts's tools, `header.number` (served at `?number` alone) aside.
      tools: 6,
      checkedSecondsAgo: 0,
    });
  });

  it("503 when the listing cannot be read whole", async () => {
    // 60 pages of one tool: past the 50 pages a listing may have.
    const { response, body } = await readyz({
      ORIGIN_URL: `${CATALOG_ORIGIN}/mcp?tools=60&page_size=1`,
    });
    expect(response.status).toBe(503);
    expect(body.reason).toBe(
      "the origin's tools/list could not be read whole (relist_failed says why)",
    );
  });

  it("reads within the isolate's budget: while other requests hold it, a listing past what is left is not ready, and ready once they are done", async () => {
    const logs = captureLogs();
    const reads = new ReadBudget();
    // Held in a variable the test reads at its end: a hold that is garbage gives its share back.
    const others = reads.hold();
    others.take(MAX_HELD_BYTES);
    // About 1.5 MB of listing, past the 64 KiB a check reads whatever the others hold.
    const origin = `${CATALOG_ORIGIN}/mcp?map=${crypto.randomUUID()}&tools=2000`;
    const isolate = () => createApp({ ...newIsolateState(), reads });
    const busy = await readyz({ ORIGIN_URL: origin }, READYZ, isolate());
    expect(busy.response.status).toBe(503);
    expect(busy.body.reason).toBe(
      "the origin's tools/list could not be read whole (relist_failed says why)",
    );
    expect(logs.events("relist_failed")).toEqual([
      expect.objectContaining({ detail: "Error: the isolate's reads hold too much at once" }),
    ]);
    logs.restore();
    // What the check read is given back once it is done.
    expect(reads.held).toBe(MAX_HELD_BYTES);
    others.release();
    const ready = await readyz({ ORIGIN_URL: origin }, READYZ, isolate());
    expect(ready.response.status).toBe(200);
    expect(ready.body.tools).toBe(2000);
    expect(reads.held).toBe(0);
  });

  it("counts the tools a client is listed: a tool the origin lists twice counts once", async () => {
    // 5 tools, the first listed twice (as MCP forbids), over 3 pages.
    const { response, body } = await readyz({
      ORIGIN_URL: `${CATALOG_ORIGIN}/mcp?map=${crypto.randomUUID()}&tools=5&twice&page_size=2`,
    });
    expect(response.status).toBe(200);
    expect(body.tools).toBe(5);
  });

  it("503 when what answers is no MCP server", async () => {
    const { response, body } = await readyz({ ORIGIN_URL: `${DEMO_ORIGIN}/not-mcp` });
    expect(response.status).toBe(503);
    expect(body.reason).toMatch(/^the origin answered initialize with HTTP 4\d\d$/);
  });

  it("broker mode: ready when the origin's authorization server answers, 503 when it cannot be reached", async () => {
    // On a loopback host, where workers-oauth-provider takes a plain http URL.
    const local = "http://localhost/readyz";
    const broker = await readyz({ ORIGIN_URL: BROKERED_ORIGIN.strict, AUTH_MODE: "broker" }, local);
    expect(broker.response.status).toBe(200);
    expect(broker.body).toEqual({
      status: "ready",
      origin: new URL(BROKERED_ORIGIN.strict).host,
      authorizationServer: new URL(BROKERED_ORIGIN.authorizationServer).host,
      checkedSecondsAgo: 0,
    });
    const down = await readyz(
      { ORIGIN_URL: `${DEMO_ORIGIN}/mcp`, AUTH_MODE: "broker", UPSTREAM_ISSUER: CLOSED_ORIGIN },
      local,
    );
    expect(down.response.status).toBe(503);
    expect(down.body.reason).toBe(
      `The origin's authorization server (${new URL(CLOSED_ORIGIN).host}) could not be reached`,
    );
  });

  it("leaves /healthz as liveness: ok while the origin is down", async () => {
    const response = await viaProxy({ ORIGIN_URL: `${CLOSED_ORIGIN}/mcp` })(
      "http://proxy.test/healthz",
    );
    expect(response.status).toBe(200);
  });
});

describe("what an isolate keeps of readiness", () => {
  it("dates a check from when it finished: a slow check is 0 seconds old when answered, and kept its whole time", async () => {
    let now = 1_000_000;
    const readiness = new Readiness(() => now);
    const slow = async () => {
      now += 1_500;
      return { ready: true as const };
    };
    const checked = await readiness.of("relay", slow);
    expect(checked?.at).toBe(1_001_500);
    // Kept READY_TTL_MS from then: a check just before that is the kept one, not a new one.
    now += READY_TTL_MS - 1;
    expect(await readiness.of("relay", slow)).toBe(checked);
    now += 1;
    const renewed = await readiness.of("relay", slow);
    expect(renewed?.at).toBe(1_001_500 + READY_TTL_MS + 1_500);
  });

  it("gives up a check whose request is gone once it has run as long as a check may: the next request checks anew", async () => {
    let now = 1_000_000;
    const readiness = new Readiness(() => now);
    // A monitor that gave up before the check was done and left: the runtime cancelled its
    // request, and with it the check's requests to the origin and its timer. It never ends.
    void readiness.of("relay", () => new Promise<never>(() => {}));
    const check = async () => ({ ready: true as const });
    // While it may still be running, it is the isolate's one check: the others wait for it.
    now += READY_TIMEOUT_MS - 1;
    expect(await readiness.of("relay", check)).toBeUndefined();
    now += 1;
    expect((await readiness.of("relay", check))?.check).toEqual({ ready: true });
    // And the check that took its place is the one check while it runs.
    let answer: (check: { ready: true }) => void = () => {};
    const running = readiness.of("other", () => new Promise((resolve) => (answer = resolve)));
    expect(await readiness.of("other", check)).toBeUndefined();
    answer({ ready: true });
    expect((await running)?.check).toEqual({ ready: true });
  });
});
