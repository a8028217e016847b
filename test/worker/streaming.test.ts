/**
 * Responses stream through the proxy event by event; nothing is held back, and
 * nothing is lost: byte for byte where nothing is rewritten, and in the event
 * that carries a listing, every line but its data lines.
 */
import { env } from "cloudflare:workers";
import type { EventSourceMessage } from "eventsource-parser";
import { describe, expect, it } from "vitest";
import { unreadAddressee } from "../../src/protocol/jsonrpc";
import { MAX_READ_PAST_LISTINGS } from "../../src/rewrite/listing-stream";
import { rewriteResponse } from "../../src/rewrite/response";
import { NO_POLICY } from "../../src/rules/tool-rules";
import { profileOf } from "../../src/schemas/profile";
import { ToolMapMemory, toolMapScopes } from "../../src/toolmap/isolate-memory";
import { ToolMap } from "../../src/toolmap/tool-map";
import { type Hold, ReadBudget } from "../../src/transport/read-bounded";
import { firehose } from "../../support/firehose";
import { DEMO_NAMES } from "../helpers/demo-names";
import { digest } from "../helpers/digest";
import { clientView, clientViewOf, isEvent } from "../helpers/event-stream";
import { captureLogs } from "../helpers/logs";
import { nextMessage, openSession, postJson, rpc, sseEvents } from "../helpers/mcp";
import { GATEWAY_ORIGIN, PROXY_URL, viaProxy } from "../helpers/proxy";
import { scriptedOrigin } from "../helpers/scripted-origin";
import { rulesOf } from "../helpers/tool-rules";

function firehoseStream(megabytes: number): ReadableStream<Uint8Array> {
  const chunks = firehose(megabytes);
  return new ReadableStream({
    pull(controller) {
      const next = chunks.next();
      if (next.done) controller.close();
      else controller.enqueue(next.value);
    },
  });
}

/** An isolate's read budget that counts every byte its reads took. */
class TakenBudget extends ReadBudget {
  taken = 0;

  override hold(): Hold {
    const hold = super.hold();
    return {
      take: (bytes) => {
        this.taken += bytes;
        return hold.take(bytes);
      },
      release: () => hold.release(),
    };
  }
}

describe("event streams", () => {
  it("deliver the origin's first event while the origin still holds the stream open", async () => {
    const proxy = viaProxy();
    const session = await openSession(proxy, PROXY_URL);

    // `deploy:confirm` sends an elicitation request and waits for the answer
    // before it finishes its response. If the proxy buffered the stream, the
    // client would never see the question and the call would never end.
    const call = await postJson(
      proxy,
      PROXY_URL,
      rpc(1, "tools/call", { name: DEMO_NAMES["deploy:confirm"], arguments: { target: "prod" } }),
      session,
    );
    expect(call.headers.get("content-type")).toContain("text/event-stream");
    expect(call.headers.has("content-length")).toBe(false);
    const events = sseEvents(call);

    const question = await nextMessage(events);
    expect(question).toMatchObject({
      method: "elicitation/create",
      params: { message: "Deploy to prod?" },
    });

    const answer = await postJson(
      proxy,
      PROXY_URL,
      { jsonrpc: "2.0", id: question.id, result: { action: "accept", content: { confirm: true } } },
      session,
    );
    expect(answer.status).toBe(202);

    expect(await nextMessage(events)).toMatchObject({
      id: 1,
      result: {
        structuredContent: {
          tool: "deploy:confirm",
          answer: { action: "accept", content: { confirm: true } },
        },
      },
    });
  });

  /** Calls the demo's countdown through the proxy; its events, as they come. */
  async function countdown(steps: number, delayMs: number) {
    const proxy = viaProxy();
    const session = await openSession(proxy, PROXY_URL);
    const call = await postJson(
      proxy,
      PROXY_URL,
      rpc(2, "tools/call", {
        name: DEMO_NAMES["tasks.countdown"],
        arguments: { steps, delay_ms: delayMs },
        _meta: { progressToken: "p-1" },
      }),
      session,
    );
    return sseEvents(call);
  }

  it("deliver progress notifications in order before the result", async () => {
    const events = await countdown(3, 10);
    const progress = [];
    for (let i = 0; i < 3; i++) progress.push(await nextMessage(events));
    expect(progress.map((message) => (message.params as { progress: number }).progress)).toEqual([
      1, 2, 3,
    ]);
    expect(await nextMessage(events)).toMatchObject({
      id: 2,
      result: { structuredContent: { tool: "tasks.countdown" } },
    });
  });

  it("deliver a progress notification while the origin is still working", async () => {
    // The origin sends one notification and then nothing, not even the stream's end, until the
    // client hangs up: a proxy that held an event back until more came would never deliver it.
    const response = await postJson(
      viaProxy({ ORIGIN_URL: `${GATEWAY_ORIGIN}/held/mcp` }),
      PROXY_URL,
      rpc(2, "tools/call", { name: "work", arguments: {}, _meta: { progressToken: "p-1" } }),
    );
    const events = sseEvents(response);
    expect(await nextMessage(events)).toEqual({
      jsonrpc: "2.0",
      method: "notifications/progress",
      params: { progressToken: "p-1", progress: 1, total: 2 },
    });
    await events.cancel();
  });

  it("pass tens of MB byte for byte when nothing is rewritten", async () => {
    const response = await postJson(
      viaProxy({ ORIGIN_URL: `${GATEWAY_ORIGIN}/firehose/20/mcp` }),
      PROXY_URL,
      rpc(1, "ping"),
    );
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    const [through, expected] = await Promise.all([
      digest(response.body as ReadableStream<Uint8Array>),
      digest(firehoseStream(20)),
    ]);
    expect(through.bytes).toBeGreaterThan(20_000_000);
    expect(through).toEqual(expected);
  });

  it("rename the listing a stream opens with, and pass the rest byte for byte", async () => {
    const response = await postJson(
      viaProxy({ ORIGIN_URL: `${GATEWAY_ORIGIN}/firehose/5/listed/mcp` }),
      PROXY_URL,
      rpc(7, "tools/list"),
    );
    const bytes = new Uint8Array(await response.arrayBuffer());
    // The listing's data lines are written anew; everything after its blank line is the origin's.
    const end = new TextDecoder().decode(bytes.subarray(0, 4096)).indexOf("\n\n") + 2;
    const listing = new TextDecoder().decode(bytes.subarray(0, end));
    expect(JSON.parse(listing.replace(/^[\s\S]*?data: /, "")).result.tools[0].name).toBe(
      DEMO_NAMES["files.read"],
    );
    const rest = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes.subarray(end));
        controller.close();
      },
    });
    expect(await digest(rest)).toEqual(await digest(firehoseStream(5)));
  });

  it('rename a listing whose `"tools"` arrives cut across three chunks, and leave out what the rules hide', async () => {
    const listed = async (settings: Record<string, string> = {}) => {
      const response = await postJson(
        viaProxy({
          ORIGIN_URL: `${GATEWAY_ORIGIN}/firehose/1/listed-cut/mcp?map=${crypto.randomUUID()}`,
          ...settings,
        }),
        PROXY_URL,
        rpc(7, "tools/list"),
      );
      const [listing] = await clientViewOf(response.body as ReadableStream<Uint8Array>);
      const { tools } = JSON.parse((listing as EventSourceMessage).data).result;
      return (tools as Array<{ name: string }>).map((tool) => tool.name);
    };
    expect(await listed()).toEqual([DEMO_NAMES["files.read"]]);
    expect(await listed({ TOOL_RULES: JSON.stringify({ hide: ["files.read"] }) })).toEqual([]);
  });

  it("re-emit every event, comment and retry of a stream they rewrite", async () => {
    // A tools/list in the body puts the stream through the rewriting parser.
    const response = await postJson(
      viaProxy({ ORIGIN_URL: `${GATEWAY_ORIGIN}/firehose/5/mcp` }),
      PROXY_URL,
      rpc(1, "tools/list"),
    );
    const [through, expected] = await Promise.all([
      clientViewOf(response.body as ReadableStream<Uint8Array>),
      clientViewOf(firehoseStream(5)),
    ]);
    expect(through.length).toBeGreaterThan(5000);
    expect(through).toEqual(expected);
  });
});

describe("an event stream that answers a tools/list", () => {
  /**
   * The proxy's answer to a `tools/list` (id 1) that the origin answered with
   * `body`, under `openai`; `ids`, the requests of the client's body (a batch
   * beside the listing), `policy`, the operator's rules.
   */
  async function answered(
    body: BodyInit,
    { reads = new ReadBudget(), ids = [1], policy = NO_POLICY } = {},
  ): Promise<string> {
    const profile = profileOf("openai");
    const scopes = await toolMapScopes(
      new URL(`https://any.example/mcp?${crypto.randomUUID()}`),
      profile.names,
    );
    const response = await rewriteResponse(
      new Response(body, { headers: { "content-type": "text/event-stream" } }),
      {
        listIds: new Set([1]),
        watchesListChanged: false,
        reads,
        toolMap: new ToolMap(env.TOOL_MAP, scopes, profile, new ToolMapMemory(), () => {}, policy),
        addressee: { ...unreadAddressee(new Headers()), ids },
      },
    );
    return response.text();
  }

  /** `chunks` as an origin's body, one chunk each. */
  const chunked = (chunks: string[]) =>
    new ReadableStream<Uint8Array>({
      start(controller) {
        for (const chunk of chunks) controller.enqueue(new TextEncoder().encode(chunk));
        controller.close();
      },
    });

  const event = (message: unknown) => `event: message\ndata: ${JSON.stringify(message)}\n\n`;
  /** A progress notification of about `bytes` characters. */
  const progress = (bytes: number) =>
    event({
      jsonrpc: "2.0",
      method: "notifications/progress",
      params: { progressToken: "p", progress: 1, message: "x".repeat(bytes) },
    });

  /** A batch's listing (id 1) with a tool the rules hide, its call's answer (id 2), and the rules. */
  const HIDING_BATCH = {
    listing: event({
      jsonrpc: "2.0",
      id: 1,
      result: {
        tools: [
          { name: "files.read", inputSchema: { type: "object" } },
          { name: "secret.admin", inputSchema: { type: "object" } },
        ],
      },
    }),
    call: event({ jsonrpc: "2.0", id: 2, result: { content: [] } }),
    policy: { rules: rulesOf({ hide: ["secret.*"] }), changes: "log" as const },
  };

  it('hands the stream to the runtime after a listing that answers request 1 as "1", as after one with 1', async () => {
    // The SDK's client takes "1" for 1, and the proxy renames it: nothing after it needs reading.
    for (const id of [1, "1"]) {
      const tools = [{ name: "files.read", inputSchema: { type: "object" } }];
      const listing = event({ jsonrpc: "2.0", id, result: { tools } });
      const after = progress(20_000);
      // What the isolate's reads hold: JavaScript reading the stream holds an event it has begun.
      const reads = new TakenBudget();
      const text = await answered(chunked([listing, after.slice(0, 10_000), after.slice(10_000)]), {
        reads,
      });
      expect(text.endsWith(after), `id ${JSON.stringify(id)}`).toBe(true);
      expect(text).toContain('"files_read_');
      expect(reads.taken, `id ${JSON.stringify(id)}`).toBe(0);
    }
  });

  it("reads a batch's stream 64 KiB past its listing where rules hide tools, then hands it on: a call's answer comes later", async () => {
    const { listing, call } = HIDING_BATCH;
    const rest = Array.from({ length: 100 }, () => progress(4_000)).join("") + call;
    // Chunks that end inside events: the one the bound falls in is read, the rest passes as it came.
    const chunks = [listing];
    for (let at = 0; at < rest.length; at += 3_000) chunks.push(rest.slice(at, at + 3_000));
    const reads = new TakenBudget();
    const logs = captureLogs();
    const text = await answered(chunked(chunks), {
      ids: [1, 2],
      policy: HIDING_BATCH.policy,
      reads,
    });
    expect(text).not.toContain("secret.admin");
    expect(text.endsWith(rest)).toBe(true);
    expect(logs.events("listing_stream_ended")).toEqual([]);
    logs.restore();
    // What JavaScript held of the stream: the events it read, up to the bound, and none after.
    expect(reads.taken).toBeGreaterThan(0);
    expect(reads.taken).toBeLessThan(MAX_READ_PAST_LISTINGS);
  });

  it("reads the chunk a batch's stream crosses the 64 KiB in: a second answer at its start is hidden as the first", async () => {
    const { listing, call } = HIDING_BATCH;
    // The origin answers the listing again at once, and the chunk that holds it passes the bound.
    const again = listing + progress(MAX_READ_PAST_LISTINGS);
    for (const split of [false, true]) {
      // Alone, or after a chunk that leaves the bound a few bytes away.
      const before = split ? [progress(MAX_READ_PAST_LISTINGS - 200)] : [];
      const text = await answered(chunked([listing, ...before, again, call]), {
        ids: [1, 2],
        policy: HIDING_BATCH.policy,
      });
      expect(text.includes("secret.admin"), `after ${before.length} chunk(s)`).toBe(false);
      // Nothing is lost: every event comes, the call's answer last.
      const messages = clientView(text)
        .filter(isEvent)
        .map(({ data }) => JSON.parse((data as string).replaceAll("\n", "")));
      expect(messages.filter((message) => message.id === 1)).toHaveLength(2);
      expect(messages.at(-1)).toEqual({ jsonrpc: "2.0", id: 2, result: { content: [] } });
    }
  });

  it("passes the events after a listing it keeps as it came, whatever chunk they begin in", async () => {
    // Names and schemas every profile takes as they are: the listing is read, answered, kept.
    const tools = [{ name: "read_file", inputSchema: { type: "object", properties: {} } }];
    const listing = `event: message\ndata: ${JSON.stringify({ jsonrpc: "2.0", id: 1, result: { tools } })}\n\n`;
    const call = `event: message\ndata: ${JSON.stringify({ jsonrpc: "2.0", id: 2, result: { content: [] } })}\n\n`;
    const bytes = new TextEncoder().encode(listing + call);
    // The answer to a batch of a listing and a call: the call's event begins in the listing's chunk.
    for (const cut of [listing.length + 1, listing.length + 20, bytes.length - 1]) {
      const origin = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(bytes.slice(0, cut));
          controller.enqueue(bytes.slice(cut));
          controller.close();
        },
      });
      expect(await answered(origin), `cut at ${cut}`).toBe(listing + call);
    }
  });

  it("hands on the rest after a listing whose last CRLF a chunk cuts: its CR and its LF as the origin's", async () => {
    // The LF the next chunk begins with is the CR's. The listing was written anew as `\n\n`, and
    // that LF after it was a blank line the origin never wrote; now the listing keeps its CRLFs.
    const tools = [{ name: "files.read", inputSchema: { type: "object" } }];
    const crlf = (message: unknown) => `event: message\r\ndata: ${JSON.stringify(message)}\r\n\r\n`;
    const listing = crlf({ jsonrpc: "2.0", id: 1, result: { tools } });
    const call = crlf({ jsonrpc: "2.0", id: 2, result: { content: [] } });
    const whole = await answered(listing + call, { ids: [1, 2] });
    expect(whole).toMatch(/"files_read_\w+"[^\r\n]*\r\n\r\nevent: message\r\n/);
    for (const policy of [NO_POLICY, HIDING_BATCH.policy]) {
      for (const rest of [[`\n${call}`], ["\n", call]]) {
        const text = await answered(chunked([listing.slice(0, -1), ...rest]), {
          ids: [1, 2],
          policy,
        });
        expect(text, `${rest.length} chunks after the CR`).toBe(whole);
      }
    }
  });

  it("renames a listing in the stream's last event though no blank line ends it, which Go's SDK reads", async () => {
    // Go's SDK yields the event a stream ends in; the spec's readers (and the TS SDKs') drop it.
    const tools = [{ name: "files.read", inputSchema: { type: "object" } }];
    const text = await answered(
      `event: message\ndata: ${JSON.stringify({ jsonrpc: "2.0", id: 1, result: { tools } })}\n`,
    );
    // Still no event to a reader that waits for the blank line.
    expect(clientView(text).filter(isEvent)).toEqual([]);
    const [event] = clientView(`${text}\n`).filter(isEvent);
    const names = JSON.parse((event as EventSourceMessage).data).result.tools.map(
      (tool: { name: string }) => tool.name,
    );
    expect(names).toEqual([expect.stringMatching(/^files_read/)]);
  });
});

describe("an origin that answers a listing twice in one stream", () => {
  const HIDING = { TOOL_RULES: JSON.stringify({ hide: ["secret.*"] }) };

  /**
   * The proxy's answer to a `tools/list` from an origin that answers it with
   * `files.read` and `secret.admin`, then `megabytes` MB of progress, then the
   * same listing again: the stream as the client got it, and the tools of each
   * listing in it.
   */
  async function listedTwice(megabytes: number, settings: Record<string, string> = {}) {
    const response = await postJson(
      viaProxy({
        ORIGIN_URL: `${GATEWAY_ORIGIN}/firehose/${megabytes}/listed-twice/mcp?map=${crypto.randomUUID()}`,
        ...settings,
      }),
      PROXY_URL,
      rpc(7, "tools/list"),
    );
    const text = await response.text();
    const listings = clientView(text)
      .filter(isEvent)
      // The progress events' data written on two lines is no JSON: they are not listings.
      .flatMap(({ data }) =>
        data.startsWith('{"jsonrpc":"2.0","id":7,') ? [JSON.parse(data)] : [],
      )
      .map(({ result }) => (result.tools as Array<{ name: string }>).map((tool) => tool.name));
    return { text, listings };
  }

  it("renames the second answer and leaves out what the rules hide, as in the first", async () => {
    const { text, listings } = await listedTwice(0, HIDING);
    expect(listings).toEqual([[DEMO_NAMES["files.read"]], [DEMO_NAMES["files.read"]]]);
    expect(text).not.toContain("secret.admin");
  });

  it("ends a stream that goes on 64 KiB past its listing where rules hide tools: no later answer reaches the client", async () => {
    const logs = captureLogs();
    const { text, listings } = await listedTwice(1, HIDING);
    expect(listings).toEqual([[DEMO_NAMES["files.read"]]]);
    expect(text).not.toContain("secret.admin");
    // What the proxy read past the listing, and no more: the rest of the megabyte never came.
    expect(text.length).toBeGreaterThan(MAX_READ_PAST_LISTINGS);
    expect(text.length).toBeLessThan(256 * 1024);
    expect(logs.events("listing_stream_ended")).toEqual([
      { event: "listing_stream_ended", limit: MAX_READ_PAST_LISTINGS },
    ]);
    logs.restore();
  });

  it("hands the rest of the stream on unread where nothing is hidden", async () => {
    const { text, listings } = await listedTwice(1);
    expect(listings).toEqual([
      [DEMO_NAMES["files.read"], expect.stringMatching(/^secret_admin/)],
      ["files.read", "secret.admin"],
    ]);
    expect(new TextEncoder().encode(text).byteLength).toBeGreaterThan(1_000_000);
  });
});

describe("the event that carries a listing, renamed through the Worker", () => {
  /** `text`'s lines, each with its line end (CRLF, LF or CR; none for a last line cut off). */
  const linesOf = (text: string) => text.match(/[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$/g) ?? [];
  const isData = (line: string) => /^data(?::|$)/.test(line.replace(/[\r\n]+$/, ""));

  it("keeps every line but its data lines as the origin wrote them, in order, its CRLFs too", async () => {
    const tool =
      '{"name":"files.read","inputSchema":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}';
    // A listing's JSON on two `data` lines (joined by LF, it is JSON whitespace), spelled two ways.
    const event = [
      ":  keep   this spacing \r\n",
      "retry:2500\r\n",
      "id:  evt 7\r\n",
      ":no space\r\n",
      "event:message\r\n",
      'data:{"jsonrpc":"2.0","id":1,\r\n',
      "x-unknown-field: kept\r\n",
      `data:  "result":{"tools":[${tool}]}}\r\n`,
      "\r\n",
    ].join("");
    const origin = await scriptedOrigin({
      "tools/list": {
        status: 200,
        headers: [["Content-Type", "text/event-stream"]],
        body: event,
      },
    });
    const response = await postJson(
      viaProxy({ ORIGIN_URL: origin.originUrl }),
      PROXY_URL,
      rpc(1, "tools/list"),
    );
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    const text = new TextDecoder().decode(await response.arrayBuffer());
    expect(linesOf(text).filter((line) => !isData(line))).toEqual(
      linesOf(event).filter((line) => !isData(line)),
    );
    // What a client reads: the listing renamed, and nothing else of it changed.
    const [listing] = clientView(text).filter(isEvent);
    const { name } = JSON.parse((listing as EventSourceMessage).data).result.tools[0];
    expect(name).toMatch(/^files_read_/);
    // Its data lines where the origin wrote them, spelled as it spelled them, each ending in CRLF.
    expect(text).toBe(event.replace('"files.read"', JSON.stringify(name)));
  });
});
