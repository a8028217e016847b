/**
 * `Mcp-Param-*` headers (protocol 2026-07-28) through the proxy, against the
 * official SDK 2.x server, which refuses a call whose headers and body
 * disagree. The proxy re-derives the headers from the arguments it forwards;
 * for arguments it does not change they are exactly what the SDK client sends
 * straight to the origin, and for arguments it repairs, what the SDK client
 * would send for the repaired ones.
 */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { type Fetch, HEADER_ORIGIN, PROXY_URL, viaProxy } from "../helpers/proxy";

interface Answer {
  isError?: boolean;
  structuredContent?: { arguments: Record<string, unknown> };
}

async function received(trace: string): Promise<Array<Record<string, string>>> {
  return (await fetch(new URL(`/__received?trace=${trace}`, HEADER_ORIGIN))).json();
}

/** Calls `name` with `args` as the SDK 2.x client does, through `fetch` to `url`; the headers the origin got. */
async function callVia(fetch: Fetch, url: string, name: string, args: Record<string, unknown>) {
  const client = new Client(
    { name: "param-headers", version: "1.0.0" },
    { versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { fetch }));
  await client.listTools();
  let answer: Answer | { error: string };
  try {
    answer = (await client.callTool({ name, arguments: args })) as Answer;
  } catch (error) {
    answer = { error: String(error) };
  }
  await client.close();
  return answer;
}

/** The header origin at a new `?trace=`; `header.number` among its tools with `number`. */
function traced(base: string, number = false) {
  const trace = crypto.randomUUID();
  const url = new URL(base);
  url.searchParams.set("trace", trace);
  if (number) url.searchParams.set("number", "");
  return { trace, url: url.href };
}

async function direct(name: string, args: Record<string, unknown>) {
  const { trace, url } = traced(HEADER_ORIGIN);
  const answer = await callVia(fetch, url, name, args);
  return { answer, headers: (await received(trace))[0] };
}

async function proxied(name: string, args: Record<string, unknown>) {
  const { trace, url } = traced(HEADER_ORIGIN, name === "header.number");
  const proxy = viaProxy({ ORIGIN_URL: url }, { app: createApp() });
  // The `mcp` profile's URL, where `header.string` keeps its name.
  const answer = await callVia(proxy, `${PROXY_URL}/mcp`, name, args);
  return { answer, headers: (await received(trace))[0] };
}

describe("Mcp-Param-* through the proxy = straight from the SDK client", () => {
  it.each([
    ["header.string", { region: "eu-west" }],
    ["header.string", { region: "" }],
    ["header.string", { region: " padded " }],
    ["header.string", { region: "Zürich" }],
    ["header.string", { region: "tab\there" }],
    ["header.string", { region: "=?base64?bm90?=" }],
    ["header.string", {}],
    ["header.integer", { retries: 3 }],
    ["header.integer", { retries: -12 }],
    ["header.integer", { retries: 2 ** 53 }],
    ["header.boolean", { dry_run: false }],
    ["header.boolean", { dry_run: true }],
    ["header.nested", { target: { city: "Oslo" } }],
    ["header.nested", { target: {} }],
  ])("%s %j", async (name, args) => {
    const straight = await direct(name, args);
    const through = await proxied(name, args);
    expect(through.headers).toEqual(straight.headers);
    expect(through.answer).toEqual(straight.answer);
  });
});

describe("Mcp-Param-* for arguments the proxy repaired: what the SDK client sends for the repaired ones", () => {
  it.each([
    ["header.integer", { retries: "7" }, { retries: 7 }],
    ["header.boolean", { "dry-run": "true" }, { dry_run: true }],
    ["header.string", { Region: "eu-west" }, { region: "eu-west" }],
    ["header.nested", { target: { City: "Oslo" } }, { target: { city: "Oslo" } }],
    ["header.string", { region: null }, {}],
    ["header.nested", { target: { city: null } }, { target: {} }],
  ])("%s %j", async (name, sent, repaired) => {
    const straight = await direct(name, repaired);
    const through = await proxied(name, sent);
    expect(through.answer).toEqual(straight.answer);
    expect(through.headers).toEqual(straight.headers);
  });
});

describe("a number property with x-mcp-header, which the SDK's server still checks", () => {
  it("gets its header through the proxy, so the call is accepted", async () => {
    const through = await proxied("header.number", { ratio: 1.5 });
    expect(through.headers).toEqual({ "mcp-param-ratio": "1.5" });
    expect(through.answer).toMatchObject({ structuredContent: { arguments: { ratio: 1.5 } } });
  });
});

describe("Mcp-Method and Mcp-Name that disagree with the body", () => {
  /**
   * The proxy, reached by a client whose `tools/call` headers name `header`
   * for `mcp-name`; `calls` are the proxy's answers to those calls.
   */
  function claimingHeader(header: string) {
    const { trace, url } = traced(HEADER_ORIGIN);
    const proxy = viaProxy({ ORIGIN_URL: url }, { app: createApp() });
    const calls: Response[] = [];
    const fetch: Fetch = async (input, init) => {
      const headers = new Headers(init?.headers);
      if (headers.get("mcp-method") !== "tools/call") return proxy(input, init);
      headers.set("mcp-name", header);
      const response = await proxy(input, { ...init, headers });
      calls.push(response.clone());
      return response;
    };
    return { fetch, trace, calls };
  }

  it("are refused as the origin would refuse them (-32020), never aligned to the body and sent on", async () => {
    // A gateway in front of the proxy may allow or count calls by these headers (SEP-2243).
    const { fetch, trace, calls } = claimingHeader("header.boolean");
    const answer = await callVia(fetch, `${PROXY_URL}/mcp`, "header.string", { region: "eu" });
    expect(answer).toMatchObject({ error: expect.stringContaining("Mcp-Name header") });
    expect(calls.length).toBeGreaterThan(0);
    for (const call of calls) {
      expect(call.status).toBe(400);
      expect(await call.json()).toMatchObject({ error: { code: -32020 } });
    }
    expect(await received(trace)).toEqual([]);
  });

  it("pass when they name the body's tool, in the header's base64 form too", async () => {
    const { fetch, trace } = claimingHeader("=?base64?aGVhZGVyLnN0cmluZw==?=");
    const answer = await callVia(fetch, `${PROXY_URL}/mcp`, "header.string", { region: "eu" });
    expect(answer).toMatchObject({ structuredContent: { arguments: { region: "eu" } } });
    expect(await received(trace)).toHaveLength(1);
  });
});
