/**
 * Every request the SDK 2.x client makes in protocol 2026-07-28 (`server/
 * discover`, `tools/list`, `tools/call`, `prompts/list`, `prompts/get`,
 * `resources/list`, `resources/templates/list`, `resources/read`,
 * `completion/complete`, `subscriptions/listen` and the
 * `notifications/cancelled` that closes it), through the proxy to an SDK 2.x
 * server whose entry checks each one's 2026-07-28 headers against its body
 * (test/fixtures/node/surface-origin.ts). Under every profile's URL what the
 * proxy does not rename reaches the origin as the client wrote it and comes
 * back as the origin answered; the call it renames carries the headers the
 * origin checks, in both rounds of a call the origin asks input for
 * (`input_required`, then `inputResponses` and the `requestState` it
 * signed); and a `subscriptions/listen` stream tells the client of a change,
 * after which its listing keeps every name it had.
 */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterEach, describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { PROFILE_NAMES } from "../../src/names/profiles";
import type { SurfaceRecord } from "../fixtures/node/surface-origin";
import { expectOriginsToolsAsViewed } from "../helpers/listing";
import { type Fetch, PROXY_URL, SURFACE_ORIGIN, viaProxy } from "../helpers/proxy";

const clients: Client[] = [];

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
});

/** The SDK 2.x client, pinned to 2026-07-28, confirming every elicitation. */
async function connect(url: string, fetch: Fetch = globalThis.fetch): Promise<Client> {
  const client = new Client(
    { name: "surface-e2e", version: "2.0.0" },
    { capabilities: { elicitation: {} }, versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  client.setRequestHandler("elicitation/create", () => ({
    action: "accept",
    content: { confirm: true },
  }));
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { fetch }));
  clients.push(client);
  return client;
}

/** A surface origin of its own: its URL, what reached it, and a tool added to it. */
function surfaceOrigin() {
  const trace = crypto.randomUUID();
  return {
    url: `${SURFACE_ORIGIN}/mcp?trace=${trace}`,
    received: async (): Promise<SurfaceRecord> =>
      (await fetch(`${SURFACE_ORIGIN}/__received?trace=${trace}`)).json(),
    async addTool(name: string) {
      const added = await fetch(
        `${SURFACE_ORIGIN}/__tools?trace=${trace}&name=${encodeURIComponent(name)}`,
        { method: "POST" },
      );
      expect(added.status).toBe(204);
    },
  };
}

/** What `ledger.entry` answers once the user confirmed: its name and the arguments it got. */
const BOOKED = {
  tool: "ledger.entry",
  arguments: { region: "eu", amount: 12 },
  answer: { confirm: true },
};

/** Everything the client asks a server for besides its tools, in one order. */
async function askAllButTools(client: Client) {
  const subscription = await client.listen({ toolsListChanged: true });
  await subscription.close();
  return {
    prompts: await client.listPrompts(),
    prompt: await client.getPrompt({ name: "brief/summary", arguments: { topic: "zürich" } }),
    resources: await client.listResources(),
    templates: await client.listResourceTemplates(),
    readme: await client.readResource({ uri: "notes://readme" }),
    // Its Mcp-Name in the `=?base64?…?=` form: the URI is not ASCII.
    note: await client.readResource({ uri: "notes://zürich" }),
    completion: await client.complete({
      ref: { type: "ref/resource", uri: "notes://{topic}" },
      argument: { name: "topic", value: "z" },
    }),
    listened: subscription.honoredFilter,
  };
}

const isCall = ({ headers }: SurfaceRecord["requests"][number]) =>
  headers["mcp-method"] === "tools/call";

/** A call as the origin read it: headers, and params but the `requestState` it signed (they expire by the second). */
const callRead = ({ headers, body }: SurfaceRecord["requests"][number]) => {
  const { requestState, ...params } = JSON.parse(body).params;
  return { headers, params, signed: typeof requestState === "string" };
};

describe("protocol 2026-07-28, every request of the SDK 2.x client, through the proxy", () => {
  it.each(PROFILE_NAMES)(
    "%s: what the proxy does not rename reaches the origin as the client wrote it, headers and all, and comes back as the origin answered",
    async (profile) => {
      const straight = surfaceOrigin();
      const direct = await connect(straight.url);
      const through = surfaceOrigin();
      const proxy = viaProxy({ ORIGIN_URL: through.url }, { app: createApp() });
      const proxied = await connect(`${PROXY_URL}/${profile}`, proxy);

      const originTools = (await direct.listTools()).tools;
      const tools = (await proxied.listTools()).tools;
      expectOriginsToolsAsViewed(tools, originTools, profile);
      expect(await askAllButTools(proxied)).toEqual(await askAllButTools(direct));
      // A model's call: the amount as text, which the proxy reads as the integer declared.
      const name = tools[0]?.name ?? "";
      const booked = await proxied.callTool({ name, arguments: { region: "eu", amount: "12" } });
      const bookedDirectly = await direct.callTool({
        name: "ledger.entry",
        arguments: { region: "eu", amount: 12 },
      });
      expect(booked).toEqual(bookedDirectly);
      expect(booked.structuredContent).toEqual(BOOKED);

      const reached = await through.received();
      const sent = await straight.received();
      expect(reached.requests.filter((r) => !isCall(r))).toEqual(
        sent.requests.filter((r) => !isCall(r)),
      );
      // Both rounds of the call, as the client would have sent them straight: the origin's
      // name in the body and in Mcp-Name, the region mirrored in Mcp-Param-Region.
      expect(reached.requests.filter(isCall).map(callRead)).toEqual(
        sent.requests.filter(isCall).map(callRead),
      );
      expect(reached.requests.filter(isCall).map(callRead)[1]).toMatchObject({
        headers: { "mcp-name": "ledger.entry", "mcp-param-region": "eu" },
        params: { name: "ledger.entry", arguments: BOOKED.arguments },
        signed: true,
      });
    },
  );
});

describe("protocol 2026-07-28, a call the origin asks input for (input_required), through the proxy", () => {
  it.each([
    ["in the isolate of the first round", {}, false],
    ["in a new isolate, which never saw the tool", {}, true],
    ["in search mode, through call_tool", { MAX_TOOLS: "2" }, false],
  ])(
    "is called again %s as the first round was: renamed, repaired and header-checked, its requestState as the origin signed it",
    async (_, vars: Record<string, string>, newIsolate) => {
      const origin = surfaceOrigin();
      const settings = { ORIGIN_URL: origin.url, ...vars };
      const first = viaProxy(settings, { app: createApp() });
      const later = newIsolate ? viaProxy(settings, { app: createApp() }) : first;
      let calls = 0;
      const fetch: Fetch = (input, init) => {
        if (new Headers(init?.headers).get("mcp-method") === "tools/call") calls++;
        return (calls > 1 ? later : first)(input, init);
      };
      const client = await connect(PROXY_URL, fetch);
      const search = vars.MAX_TOOLS !== undefined;
      if (search) {
        // Over MAX_TOOLS: the client is listed search_tools and call_tool.
        await origin.addTool("ledger.audit");
        await origin.addTool("ledger.export");
      }
      const listed = (await client.listTools()).tools.map((tool) => tool.name);
      const args = { region: "eu", amount: "12" };
      const result = search
        ? await client.callTool({
            name: "call_tool",
            arguments: {
              name: await ledgerFound(client),
              arguments: args,
            },
          })
        : await client.callTool({ name: listed[0] ?? "", arguments: args });
      expect(result.structuredContent).toEqual(BOOKED);

      const { requests, states } = await origin.received();
      const rounds = requests.filter(isCall);
      expect(rounds.map(({ headers }) => headers)).toEqual([ROUND_HEADERS, ROUND_HEADERS]);
      const [asked, again] = rounds.map(({ body }) => JSON.parse(body).params);
      expect(asked).toMatchObject({ name: "ledger.entry", arguments: BOOKED.arguments });
      expect(asked).not.toHaveProperty("requestState");
      expect(again).toMatchObject({
        name: "ledger.entry",
        arguments: BOOKED.arguments,
        inputResponses: { confirm: { action: "accept", content: { confirm: true } } },
      });
      // The state the origin signed, as it signed it: the origin verified it, and its arguments.
      expect(states).toHaveLength(1);
      expect(rounds[1]?.body).toContain(`"requestState":"${states[0]}"`);
    },
  );
});

/** What reached the origin with each round of `ledger.entry`'s call. */
const ROUND_HEADERS = {
  "mcp-method": "tools/call",
  "mcp-name": "ledger.entry",
  "mcp-param-region": "eu",
  "mcp-protocol-version": "2026-07-28",
};

/** `ledger.entry`'s name, as a search in search mode gives it. */
async function ledgerFound(client: Client): Promise<string> {
  const search = await client.callTool({
    name: "search_tools",
    arguments: { query: "book an amount in a region" },
  });
  const found = (search.structuredContent as { tools: Array<{ name: string }> }).tools;
  return found[0]?.name ?? "";
}

describe("protocol 2026-07-28, subscriptions/listen through the proxy", () => {
  it("tells the client its tools changed; listed again, every name keeps its tool, and a tool whose own name is one of them gets the next", async () => {
    const origin = surfaceOrigin();
    const proxy = viaProxy({ ORIGIN_URL: origin.url }, { app: createApp() });
    const client = await connect(PROXY_URL, proxy);
    const [ledger = ""] = (await client.listTools()).tools.map((tool) => tool.name);
    expect(ledger).not.toBe("ledger.entry");
    let told: () => void = () => {};
    const changed = new Promise<void>((resolve) => {
      told = resolve;
    });
    client.setNotificationHandler("notifications/tools/list_changed", () => told());
    const subscription = await client.listen({ toolsListChanged: true });

    // A tool whose own name is the one the proxy gave `ledger.entry`: a model calling that name
    // must still reach `ledger.entry`.
    await origin.addTool(ledger);
    await changed;
    const listed = (await client.listTools()).tools.map((tool) => tool.name);
    await subscription.close();
    expect(listed).toEqual([ledger, `${ledger}_2`]);
    const booked = await client.callTool({ name: ledger, arguments: { region: "eu", amount: 12 } });
    expect(booked.structuredContent).toEqual(BOOKED);
    const added = await client.callTool({ name: `${ledger}_2`, arguments: {} });
    expect(added.structuredContent).toEqual({ tool: ledger, arguments: {} });
  });
});

describe("protocol 2026-07-28, a restored name that is no plain header value", () => {
  // SEP-2243: Mcp-Name carries text that is not printable ASCII, or has spaces at an end, or
  // reads as the sentinel itself, as `=?base64?<UTF-8>?=`; the SDK's server refuses any other.
  it.each([
    ["météo.prévoir", "=?base64?bcOpdMOpby5wcsOpdm9pcg==?="],
    [" padded ", "=?base64?IHBhZGRlZCA=?="],
    ["=?base64?eA==?=", "=?base64?PT9iYXNlNjQ/ZUE9PT89?="],
  ])(
    "%j reaches the origin in Mcp-Name as %s, which it reads as its tool's name",
    async (original, header) => {
      const origin = surfaceOrigin();
      await origin.addTool(original);
      const proxy = viaProxy({ ORIGIN_URL: origin.url }, { app: createApp() });
      const client = await connect(PROXY_URL, proxy);
      const [, listed] = (await client.listTools()).tools;
      expect(listed?.name).toMatch(/^[A-Za-z0-9_-]+$/);
      const called = await client.callTool({ name: listed?.name ?? "", arguments: {} });
      expect(called.structuredContent).toEqual({ tool: original, arguments: {} });
      const [call] = (await origin.received()).requests.filter(isCall);
      expect(call?.headers["mcp-name"]).toBe(header);
    },
  );
});
