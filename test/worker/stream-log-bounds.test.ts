/**
 * What one stream of the origin's can make the proxy do, event after event
 * (SECURITY.md, "No single request can hurt the proxy or the origin"): a
 * stream has no end the proxy sets, so what it does per event must stop
 * somewhere. A listing's stream, before its listing, and a resumed stream
 * (GET with `Last-Event-ID`), which the proxy reads for replayed listings
 * for as long as it lasts; and what a stream read for listings must not slip
 * past the rules, or take from events no client reads.
 */
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { clientView, isEvent } from "../helpers/event-stream";
import { captureLogs } from "../helpers/logs";
import { postJson, rpc } from "../helpers/mcp";
import { PROXY_URL, viaProxy } from "../helpers/proxy";
import { scriptedOrigin } from "../helpers/scripted-origin";

const eventStream = (body: string) => ({
  status: 200,
  headers: [["Content-Type", "text/event-stream"]] as [string, string][],
  body,
});
/** An event whose data mentions `"tools"` and is no JSON: no listing to rename. */
const notJson = (i: number) => `data: {"tools": not json ${i}}\n\n`;
/** A listing answering request `id`, of one tool new to the map. */
const listing = (id: number, name = `t/${id}`) =>
  `id: e${id}\ndata: {"jsonrpc":"2.0","id":${id},"result":{"tools":[{"name":"${name}","inputSchema":{"type":"object"}}]}}\n\n`;
const namesIn = (text: string) =>
  clientView(text)
    .filter(isEvent)
    .flatMap(({ data }) => {
      try {
        return [JSON.parse(data) as { result?: { tools?: { name: string }[] } }];
      } catch {
        return [];
      }
    })
    .flatMap((message) => message.result?.tools?.map((tool) => tool.name) ?? []);

describe("a listing's stream whose events mention tools and are no JSON", () => {
  it("logs response_not_rewritten once, not once an event", async () => {
    const body =
      Array.from({ length: 50 }, (_, i) => notJson(i)).join("") + listing(1, "files.read");
    const origin = await scriptedOrigin({ "tools/list": eventStream(body) });
    const proxy = viaProxy({ ORIGIN_URL: origin.originUrl }, { app: createApp() });
    const logs = captureLogs();
    const text = await (await postJson(proxy, PROXY_URL, rpc(1, "tools/list"))).text();
    const lines = logs.events("response_not_rewritten");
    logs.restore();
    expect(namesIn(text)).toEqual([expect.stringMatching(/^files_read_/)]);
    expect(lines).toHaveLength(1);
  });
});

describe("a resumed stream (Last-Event-ID) that replays more listings than a body may ask for", () => {
  /** A resumed GET through a new isolate, the origin replaying `count` listings, each of a new tool. */
  async function resumed(count: number, vars: Record<string, string> = {}) {
    const body = Array.from({ length: count }, (_, i) => listing(i + 1)).join("");
    const origin = await scriptedOrigin({ "*": eventStream(body) });
    const proxy = viaProxy({ ORIGIN_URL: origin.originUrl, ...vars }, { app: createApp() });
    const logs = captureLogs();
    const response = await proxy(PROXY_URL, {
      headers: { accept: "text/event-stream", "last-event-id": "e0" },
    });
    const text = await response.text().catch(() => "");
    const lines = logs.lines();
    logs.restore();
    return { text, lines };
  }

  it("renames one more than a body may ask for (MAX_BATCH_MESSAGES), and passes the rest as they came", async () => {
    const { text, lines } = await resumed(80, { MAX_BATCH_MESSAGES: "32" });
    const names = namesIn(text);
    expect(names).toHaveLength(80);
    expect(names.slice(0, 33).every((name) => /^t_\d+_/.test(name))).toBe(true);
    expect(names.slice(33)).toEqual(Array.from({ length: 47 }, (_, i) => `t/${i + 34}`));
    // A line or two per listing named, for 33 of them: not one per listing the origin sends.
    expect(lines.filter((line) => line.event === "tools_renamed").length).toBeLessThanOrEqual(33);
  });

  it("ends there where the rules hide tools: what follows is never read, nor reaches the client", async () => {
    const { text, lines } = await resumed(80, {
      MAX_BATCH_MESSAGES: "32",
      TOOL_RULES: JSON.stringify({ hide: ["secret.*"] }),
    });
    // The chunk the 33rd came in is read whole, each listing in it renamed and hidden as the rules say.
    const names = namesIn(text);
    expect(names.length).toBeGreaterThanOrEqual(33);
    expect(names.length).toBeLessThan(80);
    expect(names.every((name) => /^t_\d+_/.test(name))).toBe(true);
    expect(lines.filter((line) => line.event === "listing_stream_ended")).toEqual([
      { event: "listing_stream_ended", listings: 32 },
    ]);
  });
});

describe("listings in events of another type than message (event: decoy), which no client reads", () => {
  /** `listing(id, name)` as an event of type `decoy`: renamed as any, but answering nothing. */
  const decoy = (id: number, name: string) => `event: decoy\n${listing(id, name)}`;

  /** A POST's `tools/list` whose stream holds 80 decoys before its answer, which lists `last`. */
  async function decoyed(last: string, vars: Record<string, string> = {}) {
    const body =
      Array.from({ length: 80 }, (_, i) => decoy(1, `d/${i + 1}`)).join("") + listing(1, last);
    const origin = await scriptedOrigin({ "tools/list": eventStream(body) });
    const proxy = viaProxy(
      { ORIGIN_URL: origin.originUrl, MAX_BATCH_MESSAGES: "32", ...vars },
      { app: createApp() },
    );
    const logs = captureLogs();
    const response = await postJson(proxy, PROXY_URL, rpc(1, "tools/list"));
    const text = await response.text().catch(() => "");
    const lines = logs.lines();
    logs.restore();
    return { text, lines };
  }

  it("are not named without end before a listing's answer: one more than a body may ask for", async () => {
    // Counted only as answers, each was named before the answer came: 81 tools_renamed lines.
    const { lines } = await decoyed("files.read");
    expect(lines.filter((line) => line.event === "tools_renamed").length).toBeLessThanOrEqual(33);
  });

  it("end the stream there where the rules hide tools: the answer after them is never shown", async () => {
    const { text, lines } = await decoyed("secret.admin", {
      TOOL_RULES: JSON.stringify({ hide: ["secret.*"] }),
    });
    expect(lines.filter((line) => line.event === "tools_renamed").length).toBeLessThanOrEqual(33);
    expect(namesIn(text).some((name) => name.includes("secret"))).toBe(false);
    expect(lines.filter((line) => line.event === "listing_stream_ended")).toEqual([
      { event: "listing_stream_ended", listings: 32 },
    ]);
  });

  it("are counted among a resumed stream's replayed listings (MAX_BATCH_MESSAGES)", async () => {
    const body = Array.from({ length: 80 }, (_, i) => decoy(i + 1, `t/${i + 1}`)).join("");
    const origin = await scriptedOrigin({ "*": eventStream(body) });
    const proxy = viaProxy(
      { ORIGIN_URL: origin.originUrl, MAX_BATCH_MESSAGES: "32" },
      { app: createApp() },
    );
    const logs = captureLogs();
    const response = await proxy(PROXY_URL, {
      headers: { accept: "text/event-stream", "last-event-id": "e0" },
    });
    await response.text().catch(() => "");
    const lines = logs.lines();
    logs.restore();
    expect(lines.filter((line) => line.event === "tools_renamed").length).toBeLessThanOrEqual(33);
  });
});

describe("a listing on the GET stream a client opened without Last-Event-ID", () => {
  // An origin that answers a client's tools/list POST with 202 leaves the request open in the
  // SDKs' clients (they wait for its answer on another stream), and a response on the GET stream
  // with its id is taken for the answer: it passed byte for byte, with what the rules hide.
  it("is renamed and hidden as a listing, where the rules hide tools", async () => {
    const body = listing(1, "secret.admin") + listing(1, "files.read");
    const origin = await scriptedOrigin({ "*": eventStream(body) });
    const proxy = viaProxy(
      { ORIGIN_URL: origin.originUrl, TOOL_RULES: JSON.stringify({ hide: ["secret.*"] }) },
      { app: createApp() },
    );
    const response = await proxy(PROXY_URL, { headers: { accept: "text/event-stream" } });
    const names = namesIn(await response.text().catch(() => ""));
    expect(names.some((name) => name.includes("secret"))).toBe(false);
    expect(names.every((name) => /^files_read_/.test(name))).toBe(true);
  });
});

describe("a tools/list_changed in an event of another type than message, on a stream read for listings", () => {
  // The SDKs' clients skip it: their client lists nothing again, and the caller's listing stands,
  // as on a stream the proxy only watches. Dropped, under hold their next call had the origin
  // list the tools again on their behalf.
  async function calledAfter(event: string) {
    const json = (body: string) => ({
      status: 200,
      headers: [["Content-Type", "application/json"]] as [string, string][],
      body,
    });
    const listed = json(
      '{"jsonrpc":"2.0","id":"@ID@","result":{"tools":[{"name":"files.read","inputSchema":{"type":"object"}}]}}',
    );
    const origin = await scriptedOrigin(
      {
        "tools/list": listed,
        "tools/call": json('{"jsonrpc":"2.0","id":"@ID@","result":{"content":[]}}'),
        "*": eventStream(
          `${event}data: {"jsonrpc":"2.0","method":"notifications/tools/list_changed"}\n\n`,
        ),
      },
      '"@ID@"',
    );
    const proxy = viaProxy(
      {
        ORIGIN_URL: origin.originUrl,
        TOOL_CHANGES: "hold",
        TOOL_RULES: JSON.stringify({ hide: ["secret.*"] }),
      },
      { app: createApp() },
    );
    const name = namesIn(
      `data: ${await (await postJson(proxy, PROXY_URL, rpc(1, "tools/list"))).text()}\n\n`,
    )[0];
    await (await proxy(PROXY_URL, { headers: { accept: "text/event-stream" } })).text();
    await origin.received();
    const call = rpc(3, "tools/call", { name, arguments: {} });
    await (await postJson(proxy, PROXY_URL, call)).text();
    return (await origin.received()).filter((r) => r.body.includes("mcp-edge-rewriter/relist/"));
  }

  it("drops no listing: the caller's next call asks the origin for none", async () => {
    expect(await calledAfter("event: decoy\n")).toEqual([]);
  });

  it("as one a client reads does", async () => {
    expect(await calledAfter("")).not.toEqual([]);
  });
});
