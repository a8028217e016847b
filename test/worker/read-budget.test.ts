/**
 * What requests served at once by one isolate hold of what they read whole
 * (src/transport/read-bounded.ts `ReadBudget`, 32 MiB): past it a request is
 * answered `503` with `Retry-After`, and nothing of it reaches the origin or,
 * for an answer, the client; once the others are done, it goes through. What
 * a request reads first (64 KiB) is always taken.
 */
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { unreadAddressee } from "../../src/protocol/jsonrpc";
import { rewriteResponse } from "../../src/rewrite/response";
import { newIsolateState } from "../../src/routes/app-env";
import { profileOf } from "../../src/schemas/profile";
import { ToolMapMemory, toolMapScopes } from "../../src/toolmap/isolate-memory";
import { ToolMap } from "../../src/toolmap/tool-map";
import {
  ALWAYS_TAKEN_BYTES,
  type Hold,
  MAX_HELD_BYTES,
  ReadBudget,
} from "../../src/transport/read-bounded";
import { captureLogs } from "../helpers/logs";
import { messagesOf, postJson, rpc } from "../helpers/mcp";
import {
  CATALOG_ORIGIN,
  GATEWAY_ORIGIN,
  newTrace,
  PROXY_URL,
  receivedByOrigin,
  viaProxy,
} from "../helpers/proxy";

const MiB = 1024 * 1024;
const encoder = new TextEncoder();
const HEADERS = { "mcp-protocol-version": "2025-11-25" };

/**
 * A `ping` whose body the client sends all but its last byte of, and then
 * waits: the proxy holds what it read of it until `finish` sends a last byte
 * that is no JSON's, which the proxy answers itself (`400`).
 */
function stalledBody(bytes: number) {
  const text = JSON.stringify({ ...rpc("held", "ping"), params: { pad: "" } });
  const padded = text.replace('"pad":""', `"pad":"${"a".repeat(bytes - text.length)}"`);
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
      c.enqueue(encoder.encode(padded.slice(0, -1)));
    },
  });
  return {
    body,
    finish() {
      controller.enqueue(encoder.encode("!"));
      controller.close();
    },
  };
}

/** An isolate's read budget that says when what its reads hold reaches a count. */
class WatchedBudget extends ReadBudget {
  #waiting: Array<{ bytes: number; reached: () => void }> = [];

  override hold(): Hold {
    const hold = super.hold();
    return {
      take: (bytes) => {
        const taken = hold.take(bytes);
        const reached = this.#waiting.filter((waiting) => this.held >= waiting.bytes);
        this.#waiting = this.#waiting.filter((waiting) => !reached.includes(waiting));
        for (const waiting of reached) waiting.reached();
        return taken;
      },
      release: () => hold.release(),
    };
  }

  /** Settles once the isolate's reads hold `bytes`. */
  holds(bytes: number): Promise<void> {
    if (this.held >= bytes) return Promise.resolve();
    return new Promise((reached) => this.#waiting.push({ bytes, reached }));
  }
}

/** One isolate, `held` bytes of it taken by two clients whose bodies stall. */
async function isolateHolding(held: number, origin: string) {
  const reads = new WatchedBudget();
  const app = createApp({ ...newIsolateState(), reads });
  const proxy = viaProxy({ ORIGIN_URL: origin, MAX_BODY_BYTES: String(16 * MiB) }, { app });
  const stalled = [stalledBody(held / 2), stalledBody(held / 2)];
  const answers = stalled.map(({ body }) =>
    proxy(PROXY_URL, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json", ...HEADERS },
      body,
    }),
  );
  // Each body all but its last byte, counted by the proxy as it read it.
  await reads.holds(held - 2);
  return {
    proxy,
    async finish() {
      for (const { finish } of stalled) finish();
      return Promise.all(answers);
    },
  };
}

/** `isolateHolding` in front of the gateway, whose requests are traced as `trace`. */
async function gatewayHolding(held: number) {
  const trace = newTrace();
  return { trace, ...(await isolateHolding(held, `${GATEWAY_ORIGIN}/mcp?trace=${trace}`)) };
}

/** A call whose 2 MiB body a budget held to 1 MiB of its limit cannot take. */
const LARGE_CALL = JSON.stringify(
  rpc(7, "tools/call", { name: "echo", arguments: { text: "b".repeat(2 * MiB) } }),
);

async function expectBusy(response: Response, id: unknown) {
  expect(response.status).toBe(503);
  expect(response.headers.get("retry-after")).toBe("1");
  const error = await response.json<{ id: unknown; error: { code: number; message: string } }>();
  expect(error.id).toBe(id);
  expect(error.error.code).toBe(-32603);
  expect(error.error.message).toContain("send the request again in a moment");
}

/** A `tools/list` of protocol 2026-07-28, which the catalog answers in a JSON body. */
const listTools = (id: number) =>
  rpc(id, "tools/list", {
    _meta: {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities": {},
      "io.modelcontextprotocol/clientInfo": { name: "read-budget-test", version: "1.0.0" },
    },
  });
const LIST_HEADERS = { "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/list" };

let logs: ReturnType<typeof captureLogs>;
afterEach(() => logs?.restore());

describe("the isolate's read budget", () => {
  it("refuses a request body it cannot hold with 503, and takes it once the others are read", async () => {
    logs = captureLogs();
    const { trace, proxy, finish } = await gatewayHolding(MAX_HELD_BYTES - MiB);
    // Declared (Content-Length) and streamed.
    // 2025-11-25 writes no id for a request it did not read.
    await expectBusy(await postJson(proxy, PROXY_URL, LARGE_CALL, HEADERS), undefined);
    const streamed = new ReadableStream({
      start(controller) {
        controller.enqueue(encoder.encode(LARGE_CALL));
        controller.close();
      },
    });
    await expectBusy(
      await proxy(PROXY_URL, {
        method: "POST",
        headers: { "content-type": "application/json", ...HEADERS },
        body: streamed,
      }),
      undefined,
    );
    expect(logs.events("reads_over_budget")).toContainEqual(
      expect.objectContaining({ what: "the request's body", limit: MAX_HELD_BYTES }),
    );
    // A small request still fits; the refused ones never reached the origin.
    const ping = await postJson(proxy, PROXY_URL, rpc(8, "ping"), HEADERS);
    await ping.body?.cancel();
    const reached = async (method: string) =>
      (await receivedByOrigin(trace)).filter(({ body }) => body.includes(`"${method}"`)).length;
    expect(await reached("ping")).toBe(1);
    expect(await reached("tools/call")).toBe(0);

    // The stalled bodies end, and what they held is given back.
    for (const answer of await finish()) expect(answer.status).toBe(400);
    const again = await postJson(proxy, PROXY_URL, LARGE_CALL, HEADERS);
    expect(again.status).not.toBe(503);
    await again.body?.cancel();
    expect(await reached("tools/call")).toBe(1);
  });

  it("counts a body by its bytes where its Content-Length is no length: a negative one gives nothing back", async () => {
    const { trace, proxy, finish } = await gatewayHolding(MAX_HELD_BYTES - MiB);
    const response = await proxy(PROXY_URL, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "content-length": String(-MAX_HELD_BYTES),
        ...HEADERS,
      },
      body: LARGE_CALL,
    });
    await expectBusy(response, undefined);
    expect(await receivedByOrigin(trace)).toEqual([]);
    await finish();
  });

  it("takes a call's small body however much the others hold", async () => {
    const { trace, proxy, finish } = await gatewayHolding(MAX_HELD_BYTES);
    const ping = await postJson(proxy, PROXY_URL, rpc(8, "ping"), HEADERS);
    expect(ping.status).not.toBe(503);
    await ping.body?.cancel();
    expect((await receivedByOrigin(trace)).map(({ body }) => JSON.parse(body).id)).toEqual([8]);
    await finish();
  });

  it("passes an error's body it cannot hold as it came: a 401 to a listing keeps its challenge", async () => {
    logs = captureLogs();
    const reads = new ReadBudget();
    // Held in a variable the test reads at its end: a hold that is garbage gives its share back
    // (FinalizationRegistry), whenever the runtime collects, which a busy runtime does sooner.
    const others = reads.hold();
    others.take(MAX_HELD_BYTES);
    const body = JSON.stringify({ error: "invalid_token", detail: "x".repeat(ALWAYS_TAKEN_BYTES) });
    const challenge =
      'Bearer resource_metadata="https://read-budget.example/.well-known/oauth-protected-resource"';
    const profile = profileOf("openai");
    // An origin of this file's own: the runtime's KV holds other files' maps (docs/development.md).
    const scopes = await toolMapScopes(new URL("https://read-budget.example/mcp"), profile.names);
    const refused = await rewriteResponse(
      new Response(body, {
        status: 401,
        headers: { "content-type": "application/json", "www-authenticate": challenge },
      }),
      {
        listIds: new Set([9]),
        watchesListChanged: false,
        toolMap: new ToolMap(env.TOOL_MAP, scopes, profile, new ToolMapMemory(), () => {}),
        addressee: { ...unreadAddressee(new Headers()), ids: [9] },
        reads,
      },
    );
    expect(refused.status).toBe(401);
    expect(refused.headers.get("www-authenticate")).toBe(challenge);
    expect(await refused.text()).toBe(body);
    expect(logs.events("response_not_rewritten")).toContainEqual(
      expect.objectContaining({ reason: "the isolate's reads hold too much at once" }),
    );
    others.release();
  });

  it("answers a listing it cannot hold with 503, in a JSON body or an event stream, and renames it once the others are read", async () => {
    logs = captureLogs();
    // About 1.5 MB of listing, against 1 MiB left.
    const catalog = `${CATALOG_ORIGIN}/mcp?map=${crypto.randomUUID()}&tools=2000`;
    const { proxy, finish } = await isolateHolding(MAX_HELD_BYTES - MiB, catalog);
    const listing = await postJson(proxy, PROXY_URL, listTools(2), LIST_HEADERS);
    await expectBusy(listing, 2);
    expect(logs.events("reads_over_budget")).toContainEqual(
      expect.objectContaining({ what: "the origin's answer" }),
    );

    // 2025-11-25: the catalog answers in an event stream, begun before the listing is read.
    const streamed = await postJson(proxy, PROXY_URL, rpc(3, "tools/list"), HEADERS);
    expect(streamed.headers.get("content-type")).toContain("text/event-stream");
    await expect(streamed.text()).rejects.toThrow();
    expect(logs.events("reads_over_budget")).toContainEqual(
      expect.objectContaining({ what: "an event of the stream" }),
    );

    await finish();
    for (const [id, headers, body] of [
      [4, LIST_HEADERS, listTools(4)],
      [5, HEADERS, rpc(5, "tools/list")],
    ] as const) {
      const renamed = await postJson(proxy, PROXY_URL, body, headers);
      expect(renamed.status).toBe(200);
      const [message] = await messagesOf(renamed);
      // Read whole: 2,000 tools, over the profile's ceiling, become search mode.
      expect(message).toMatchObject({ id, result: { tools: [{ name: "search_tools" }, {}] } });
    }
  });
});
