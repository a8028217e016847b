/**
 * The same end-to-end suite once per protocol revision, each with a real SDK
 * client of that revision, through the proxy and straight to the demo origin
 * (SDK 1.x for 2025-era sessions, SDK 2.x for 2026-07-28): listing, calls to
 * renamed tools with repaired arguments, elicitation, progress, and
 * `tools/list_changed`.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { nameRules } from "../../src/names/profiles";
import { newIsolateState } from "../../src/routes/app-env";
import { toolMapScopes } from "../../src/toolmap/isolate-memory";
import { connectClient, type Progress, REVISIONS, type TestClient } from "../helpers/clients";
import { DEMO_NAMES } from "../helpers/demo-names";
import { expectOriginsToolsAsViewed } from "../helpers/listing";
import { DEMO_ORIGIN, type Fetch, freshOrigin, PROXY_URL, viaProxy } from "../helpers/proxy";

const clients: TestClient[] = [];

async function connect(
  revision: (typeof REVISIONS)[number],
  url: string,
  fetch: Fetch = globalThis.fetch,
) {
  const client = await connectClient(revision, url, fetch);
  clients.push(client);
  return client;
}

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
});

describe.each(REVISIONS)("protocol %s, a real SDK client through the proxy", (revision) => {
  it("negotiates the revision, and lists every tool under a model-facing name", async () => {
    const proxied = await connect(revision, PROXY_URL, viaProxy());
    const direct = await connect(revision, `${DEMO_ORIGIN}/mcp`);
    expect(proxied.negotiated()).toBe(revision);

    const tools = await proxied.listTools();
    const originTools = await direct.listTools();
    // Every demo tool, in the origin's order, under its documented name.
    expect(tools.map((tool) => tool.name)).toEqual(Object.values(DEMO_NAMES));
    expectOriginsToolsAsViewed(tools, originTools);
  });

  it("calls a renamed tool with repaired arguments; the origin gets the original name and keys", async () => {
    const client = await connect(revision, PROXY_URL, viaProxy());
    await client.listTools();
    const result = await client.callTool(DEMO_NAMES["catering.invoice"], {
      "payload-json": '{"invoice_id":"INV-1042","amount":"19.5"}',
    });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({
      tool: "catering.invoice",
      arguments: { payload_json: { invoice_id: "INV-1042", amount: 19.5 } },
    });
  });

  it("answers an elicitation mid-call", async () => {
    const client = await connect(revision, PROXY_URL, viaProxy());
    await client.listTools();
    const result = await client.callTool(DEMO_NAMES["deploy:confirm"], { target: "eu" });
    expect(result.structuredContent).toEqual({
      tool: "deploy:confirm",
      arguments: { target: "eu" },
      answer: { action: "accept", content: { confirm: true } },
    });
  });

  it("delivers progress notifications as the tool sends them", async () => {
    const client = await connect(revision, PROXY_URL, viaProxy());
    await client.listTools();
    const updates: Progress[] = [];
    const result = await client.callTool(
      DEMO_NAMES["tasks.countdown"],
      { steps: 3, delay_ms: 10 },
      (p) => updates.push(p),
    );
    expect(result.structuredContent).toMatchObject({ tool: "tasks.countdown" });
    expect(updates.map(({ progress, total }) => ({ progress, total }))).toEqual([
      { progress: 1, total: 3 },
      { progress: 2, total: 3 },
      { progress: 3, total: 3 },
    ]);
  });

  it("passes tools/list_changed to the client and drops the tools the isolate cached, not the names it handed out", async () => {
    const originUrl = freshOrigin();
    const isolate = newIsolateState();
    const memory = isolate.toolMaps;
    const client = await connect(
      revision,
      PROXY_URL,
      viaProxy({ ORIGIN_URL: originUrl }, { app: createApp(isolate) }),
    );
    const tools = await client.listTools();
    const scopes = await toolMapScopes(new URL(originUrl), nameRules("openai"));
    const names = () => memory.origin(scopes.origin).profile(scopes.legacy).byName;
    const cached = () => memory.origin(scopes.origin).tools;
    expect(names().size).toBe(tools.length);
    expect(cached().size).toBe(tools.length);

    let told: () => void = () => {};
    const changed = new Promise<void>((resolve) => {
      told = resolve;
    });
    await client.watchToolsChanged(() => told());
    await client.callTool(DEMO_NAMES["catalog.refresh"], {});
    // The client is told once the proxy has passed the notification on, having forgotten the
    // tools; the names stand for what they did, as other callers' listings are kept.
    await changed;
    expect(cached().size).toBe(0);
    expect(names().size).toBe(tools.length);
  });
});
