/**
 * `Mcp-Param-*` headers (protocol 2026-07-28) through the proxy, against the
 * official SDK 2.x server, which refuses a call whose headers and body
 * disagree. The proxy re-derives the headers from the arguments it forwards:
 * for arguments it does not change they are what the SDK client sends, and for
 * arguments it repairs or the operator's rules set, what it would send for
 * those it forwards, each written out here.
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

async function proxied(name: string, args: Record<string, unknown>) {
  const { trace, url } = traced(HEADER_ORIGIN, name === "header.number");
  const proxy = viaProxy({ ORIGIN_URL: url }, { app: createApp() });
  // The `mcp` profile's URL, where `header.string` keeps its name.
  const answer = await callVia(proxy, `${PROXY_URL}/mcp`, name, args);
  return { answer, headers: (await received(trace))[0] };
}

/** What the echoing origin answers a call with `args` (the SDK's server names itself in `_meta`). */
const echoed = (args: Record<string, unknown>) => ({
  _meta: { "io.modelcontextprotocol/serverInfo": { name: "header-origin", version: "1.0.0" } },
  content: [{ type: "text", text: JSON.stringify(args) }],
  structuredContent: { arguments: args },
});

/**
 * Each case's headers written out as SEP-2243 and the SDK 2.x client write
 * them: as is, or `=?base64?<UTF-8, standard base64>?=` for text that is empty,
 * padded, not ASCII, or reads as that form (`printf %s <text> | base64`); none
 * for an object, an absent value or an integer past 2^53 - 1. Not the proxy's reading, nor the client's
 * sent straight, which could both be wrong alike.
 */
describe("Mcp-Param-* through the proxy, as the SDK 2.x client writes them", () => {
  it.each([
    ["header.string", { region: "eu-west" }, { "mcp-param-region": "eu-west" }],
    ["header.string", { region: "" }, { "mcp-param-region": "=?base64??=" }],
    ["header.string", { region: " padded " }, { "mcp-param-region": "=?base64?IHBhZGRlZCA=?=" }],
    ["header.string", { region: "Zürich" }, { "mcp-param-region": "=?base64?WsO8cmljaA==?=" }],
    ["header.string", { region: "tab\there" }, { "mcp-param-region": "tab\there" }],
    [
      "header.string",
      { region: "=?base64?bm90?=" },
      { "mcp-param-region": "=?base64?PT9iYXNlNjQ/Ym05MD89?=" },
    ],
    ["header.string", {}, {}],
    ["header.integer", { retries: 3 }, { "mcp-param-retries": "3" }],
    ["header.integer", { retries: -12 }, { "mcp-param-retries": "-12" }],
    // Past 2^53 - 1 an integer may not read back as sent: no header, and the origin takes the body's.
    ["header.integer", { retries: 2 ** 53 }, {}],
    ["header.boolean", { dry_run: false }, { "mcp-param-dry-run": "false" }],
    ["header.boolean", { dry_run: true }, { "mcp-param-dry-run": "true" }],
    ["header.nested", { target: { city: "Oslo" } }, { "mcp-param-city": "Oslo" }],
    ["header.nested", { target: {} }, {}],
    ["header.deep", { region: "eu-west" }, { "mcp-param-region": "eu-west" }],
  ])("%s %j", async (name, args, headers) => {
    const through = await proxied(name, args);
    expect(through.headers).toEqual(headers);
    expect(through.answer).toEqual(echoed(args));
  });
});

describe("Mcp-Param-* for arguments the proxy repaired: those of the repaired arguments", () => {
  it.each([
    ["header.integer", { retries: "7" }, { retries: 7 }, { "mcp-param-retries": "7" }],
    // The client's header says the string's digits, as the body now does: past 2^53 - 1, no header.
    ["header.integer", { retries: "9007199254740993" }, { retries: 2 ** 53 }, {}],
    ["header.boolean", { "dry-run": "true" }, { dry_run: true }, { "mcp-param-dry-run": "true" }],
    [
      "header.string",
      { Region: "eu-west" },
      { region: "eu-west" },
      { "mcp-param-region": "eu-west" },
    ],
    [
      "header.nested",
      { target: { City: "Oslo" } },
      { target: { city: "Oslo" } },
      { "mcp-param-city": "Oslo" },
    ],
    ["header.string", { region: null }, {}, {}],
    ["header.nested", { target: { city: null } }, { target: {} }, {}],
  ])("%s %j", async (name, sent, repaired, headers) => {
    const through = await proxied(name, sent);
    expect(through.answer).toEqual(echoed(repaired));
    expect(through.headers).toEqual(headers);
  });
});

describe("a number property with x-mcp-header, which the SDK's server still checks", () => {
  it("gets its header through the proxy, so the call is accepted", async () => {
    const through = await proxied("header.number", { ratio: 1.5 });
    expect(through.headers).toEqual({ "mcp-param-ratio": "1.5" });
    expect(through.answer).toMatchObject({ structuredContent: { arguments: { ratio: 1.5 } } });
  });
});

describe("a declaration the profile's view writes in another form", () => {
  // SEP-2243: a client excludes from its listing a tool whose `x-mcp-header` is on a property not
  // typed one of string, integer or boolean; `["string", "null"]`, 2020-12's form of OpenAPI's
  // `nullable`, is none of them, and the SDK 2.x client left the tool out of every listing.
  it.each(["anthropic", "bedrock"])(
    "%s: the client keeps a nullable declared property's tool, and its call gets its header",
    async (profile) => {
      const { trace, url } = traced(HEADER_ORIGIN);
      const proxy = viaProxy({ ORIGIN_URL: url }, { app: createApp() });
      const client = new Client(
        { name: "param-headers", version: "1.0.0" },
        { versionNegotiation: { mode: { pin: "2026-07-28" } } },
      );
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${PROXY_URL}/${profile}`), { fetch: proxy }),
      );
      const { tools } = await client.listTools();
      const tool = tools.find(({ name }) => name.startsWith("header_nullable"));
      expect(tool?.inputSchema.properties).toEqual({ zone: { type: ["string", "null"] } });
      const answer = await client.callTool({ name: tool?.name ?? "", arguments: { zone: "eu" } });
      await client.close();
      expect(answer).toEqual(echoed({ zone: "eu" }));
      expect(await received(trace)).toEqual([{ "mcp-param-zone": "eu" }]);
    },
  );
});

describe("Mcp-Method, Mcp-Name and Mcp-Param-* that disagree with the body", () => {
  /**
   * The proxy, reached by a client whose `tools/call` headers say `value`
   * for `name` (`mcp-name` unless told); `calls` are the proxy's answers to those calls.
   */
  function claimingHeader(value: string, name = "mcp-name") {
    const { trace, url } = traced(HEADER_ORIGIN);
    const proxy = viaProxy({ ORIGIN_URL: url }, { app: createApp() });
    const calls: Response[] = [];
    const fetch: Fetch = async (input, init) => {
      const headers = new Headers(init?.headers);
      if (headers.get("mcp-method") !== "tools/call") return proxy(input, init);
      headers.set(name, value);
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

  it.each([
    ["another value", "header.string", { region: "eu" }, "mcp-param-region", "us"],
    ["a value the body lacks", "header.string", {}, "mcp-param-region", "us"],
    ["another value after a repair", "header.integer", { retries: "7" }, "mcp-param-retries", "8"],
  ])(
    "Mcp-Param-* with %s is refused (-32020), never written again from the body and sent on",
    async (_, tool, args, header, value) => {
      // A gateway in front of the proxy may route or allow calls by these headers (SEP-2243):
      // written again from the body, the origin would act on a value the gateway never saw.
      const { fetch, trace, calls } = claimingHeader(value, header);
      const answer = await callVia(fetch, `${PROXY_URL}/mcp`, tool, args);
      expect(answer).toMatchObject({ error: expect.stringContaining(`${header} header`) });
      expect(calls.length).toBeGreaterThan(0);
      for (const call of calls) {
        expect(call.status).toBe(400);
        expect(await call.json()).toMatchObject({ error: { code: -32020 } });
      }
      expect(await received(trace)).toEqual([]);
    },
  );

  it("Mcp-Param-* that agrees with the repaired body passes, whatever form the client wrote", async () => {
    const { fetch, trace } = claimingHeader("=?base64?Nw==?=", "mcp-param-retries");
    const answer = await callVia(fetch, `${PROXY_URL}/mcp`, "header.integer", { retries: "7" });
    expect(answer).toMatchObject({ structuredContent: { arguments: { retries: 7 } } });
    expect(await received(trace)).toEqual([{ "mcp-param-retries": "7" }]);
  });

  it.each([
    ["7.0", "header.integer", { retries: 7 }, "mcp-param-retries", "7"],
    ["07", "header.integer", { retries: "7" }, "mcp-param-retries", "7"],
  ])(
    "Mcp-Param-* for an integer, written %s, passes where it is the body's number: the spec compares integers as numbers, as the origin does",
    async (value, tool, args, header, sent) => {
      const { fetch, trace } = claimingHeader(value, header);
      const answer = await callVia(fetch, `${PROXY_URL}/mcp`, tool, args);
      expect(answer).toMatchObject({ structuredContent: { arguments: { retries: 7 } } });
      expect(await received(trace)).toEqual([{ [header]: sent }]);
    },
  );

  /**
   * The fetch of a client whose `tools/call` carries `value` in header `name`,
   * straight to the origin: what the SDK's server itself makes of the header.
   */
  function straightToOrigin(value: string, name: string): Fetch {
    const { url } = traced(HEADER_ORIGIN);
    return async (input, init) => {
      const headers = new Headers(init?.headers);
      if (headers.get("mcp-method") === "tools/call") headers.set(name, value);
      const target = new URL(String(input instanceof Request ? input.url : input));
      return fetch(new URL(`${target.pathname}${new URL(url).search}`, HEADER_ORIGIN), {
        ...init,
        headers,
      });
    };
  }

  // The SDK's server decodes `=?base64?…?=` only in canonical base64 (padded, no whitespace), and
  // refuses any other; `atob` reads all three as the body's. Read so, the proxy wrote the header
  // again from the body, and the origin ran a call it refuses as the client sent it.
  it.each([
    ["mcp-name", "=?base64?aGVhZGVyLnN0cmluZw?=", "header.string", { region: "eu" }],
    ["mcp-name", "=?base64?aGVhZGVy LnN0cmluZw==?=", "header.string", { region: "eu" }],
    ["mcp-param-region", "=?base64?ZXU?=", "header.string", { region: "eu" }],
    ["mcp-param-retries", "=?base64?Nw?=", "header.integer", { retries: 7 }],
  ])(
    "%s %j, base64 the origin refuses, is refused (-32020), never aligned and sent on",
    async (header, value, tool, args) => {
      const direct = await callVia(straightToOrigin(value, header), `${HEADER_ORIGIN}`, tool, args);
      expect(direct).toMatchObject({ error: expect.stringContaining("Base64") });
      const { fetch, trace, calls } = claimingHeader(value, header);
      const answer = await callVia(fetch, `${PROXY_URL}/mcp`, tool, args);
      expect(answer).toMatchObject({ error: expect.stringContaining(`header`) });
      expect(calls.length).toBeGreaterThan(0);
      for (const call of calls) {
        expect(call.status).toBe(400);
        expect(await call.json()).toMatchObject({ error: { code: -32020 } });
      }
      expect(await received(trace)).toEqual([]);
    },
  );

  it("pass when they name the body's tool, in the header's base64 form too", async () => {
    const { fetch, trace } = claimingHeader("=?base64?aGVhZGVyLnN0cmluZw==?=");
    const answer = await callVia(fetch, `${PROXY_URL}/mcp`, "header.string", { region: "eu" });
    expect(answer).toMatchObject({ structuredContent: { arguments: { region: "eu" } } });
    expect(await received(trace)).toHaveLength(1);
  });
});

describe("Mcp-Param-* for arguments the operator's rules set (TOOL_RULES fixed and defaults)", () => {
  /** The proxy in front of a traced header origin, with `rules` as its TOOL_RULES. */
  function ruled(rules: Record<string, unknown>) {
    const { trace, url } = traced(HEADER_ORIGIN);
    const proxy = viaProxy(
      { ORIGIN_URL: url, TOOL_RULES: JSON.stringify({ tools: rules }) },
      { app: createApp() },
    );
    return { proxy, trace };
  }

  it.each([
    ["header.string", { region: "eu-central" }, {}, { "mcp-param-region": "eu-central" }],
    // What the model sent is replaced in the body: and so in the header the client mirrored it into.
    [
      "header.string",
      { region: "eu-central" },
      { region: "us" },
      { "mcp-param-region": "eu-central" },
    ],
    ["header.string", { region: "Zürich" }, {}, { "mcp-param-region": "=?base64?WsO8cmljaA==?=" }],
    ["header.integer", { retries: 5 }, { retries: 1 }, { "mcp-param-retries": "5" }],
    ["header.boolean", { dry_run: true }, {}, { "mcp-param-dry-run": "true" }],
    ["header.nested", { target: { city: "Oslo" } }, { target: {} }, { "mcp-param-city": "Oslo" }],
  ])(
    "fixed on %s %j, the model's %j: the header says the fixed value",
    async (tool, fixed, args, headers) => {
      const { proxy, trace } = ruled({ [tool]: { fixed } });
      const answer = await callVia(proxy, `${PROXY_URL}/mcp`, tool, args);
      expect(answer).toEqual(echoed(fixed));
      expect(await received(trace)).toEqual([headers]);
    },
  );

  it.each([
    [
      "header.string",
      { region: "eu-central" },
      {},
      { region: "eu-central" },
      { "mcp-param-region": "eu-central" },
    ],
    [
      "header.string",
      { region: "eu-central" },
      { region: "us" },
      { region: "us" },
      { "mcp-param-region": "us" },
    ],
    [
      "header.integer",
      { retries: 5 },
      { retries: null },
      { retries: 5 },
      { "mcp-param-retries": "5" },
    ],
  ])(
    "defaults on %s %j, the model's %j: the header says the body's value",
    async (tool, defaults, args, body, headers) => {
      const { proxy, trace } = ruled({ [tool]: { defaults } });
      const answer = await callVia(proxy, `${PROXY_URL}/mcp`, tool, args);
      expect(answer).toEqual(echoed(body));
      expect(await received(trace)).toEqual([headers]);
    },
  );

  it("a client whose listing predates the rule mirrors the model's value: the fixed value's header reaches the origin, never the client's", async () => {
    const { trace, url } = traced(HEADER_ORIGIN);
    const before = viaProxy({ ORIGIN_URL: url }, { app: createApp() });
    // The operator deploys a rule that fixes `region`, while the client holds its listing.
    const after = viaProxy(
      {
        ORIGIN_URL: url,
        TOOL_RULES: JSON.stringify({ tools: { "header.string": { fixed: { region: "eu" } } } }),
      },
      { app: createApp() },
    );
    let deployed = false;
    const client = new Client(
      { name: "param-headers", version: "1.0.0" },
      { versionNegotiation: { mode: { pin: "2026-07-28" } } },
    );
    /** What the client asked the proxy after the deploy, and its answer's status. */
    const exchanges: Array<[string | null, number]> = [];
    const fetch: Fetch = async (input, init) => {
      if (!deployed) return before(input, init);
      const response = await after(input, init);
      exchanges.push([new Headers(init?.headers).get("mcp-method"), response.status]);
      return response;
    };
    await client.connect(new StreamableHTTPClientTransport(new URL(`${PROXY_URL}/mcp`), { fetch }));
    await client.listTools();
    deployed = true;
    const answer = await client.callTool({ name: "header.string", arguments: { region: "us" } });
    await client.close();
    expect(answer).toEqual(echoed({ region: "eu" }));
    expect(await received(trace)).toEqual([{ "mcp-param-region": "eu" }]);
    // Taken at once: refused `-32020`, the SDK's client lists again and calls anew, and a
    // client that does not gets no answer but the refusal.
    expect(exchanges).toEqual([["tools/call", 200]]);
  });

  it("the client is shown no x-mcp-header for a fixed argument, and keeps a defaulted one's", async () => {
    const { proxy } = ruled({
      "header.string": { fixed: { region: "eu-central" } },
      "header.integer": { defaults: { retries: 5 } },
    });
    const client = new Client(
      { name: "param-headers", version: "1.0.0" },
      { versionNegotiation: { mode: { pin: "2026-07-28" } } },
    );
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${PROXY_URL}/mcp`), { fetch: proxy }),
    );
    const { tools } = await client.listTools();
    await client.close();
    const schemaOf = (name: string) => tools.find((tool) => tool.name === name)?.inputSchema;
    expect(JSON.stringify(schemaOf("header.string"))).not.toContain("x-mcp-header");
    expect(schemaOf("header.integer")?.properties?.retries).toMatchObject({
      "x-mcp-header": "Retries",
    });
  });
});
