/**
 * The origin every benchmark measures against: an official-SDK MCP server
 * (low-level `Server`, stateful Streamable HTTP) on 127.0.0.1, from plain
 * `node:http`, so the origin itself costs as little as an SDK server can.
 *
 * Tools: `bench.echo` answers at once with its arguments (the request
 * overhead workload); `bench.tick` sends `count` progress notifications
 * `interval_ms` apart and notes when it sent each (the event latency
 * workload); and a realistic listing of 48 more (support/listing.ts).
 * A session opened with `?json` answers in JSON bodies, otherwise in event streams.
 *
 * `?firehose_mb=N` on any POST answers with an N MB event stream of progress
 * notifications instead (test/fixtures/firehose.ts), written as fast as the
 * reader takes it: the long stream of the memory benchmark. With
 * `&firehose_listing`, the stream opens with the answer to a `tools/list`
 * of id 1 (the bench's own tools), as a batch's answers may come.
 */

import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  ListToolsRequestSchema,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { nameRules } from "../../src/names/profiles";
import { sanitizeName } from "../../src/names/sanitize";
import { firehose } from "../../support/firehose";
import { realisticListing } from "../../support/listing";

export const ECHO_TOOL = "bench.echo";
export const TICK_TOOL = "bench.tick";

/** A tool's name as a client of the proxy's default profile sees it (docs/names.md). */
export const proxiedName = (original: string) => sanitizeName(original, nameRules("openai")).name;

const tools: Tool[] = [
  {
    name: ECHO_TOOL,
    description: "Answers at once with the arguments it received.",
    inputSchema: {
      type: "object",
      properties: { text: { type: "string" }, count: { type: "integer", minimum: 0 } },
      required: ["text"],
    },
  },
  {
    name: TICK_TOOL,
    description: "Sends progress notifications at a fixed interval, then answers.",
    inputSchema: {
      type: "object",
      properties: {
        count: { type: "integer", minimum: 1 },
        interval_ms: { type: "integer", minimum: 1 },
      },
      required: ["count", "interval_ms"],
    },
  },
  ...realisticListing(48).tools,
];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** When each progress notification left the origin, by `<progressToken>:<progress>`, in `performance.now()` ms. */
export type EmissionTimes = Map<string, number>;

function createBenchServer(emitted: EmissionTimes): Server {
  const server = new Server(
    { name: "bench-origin", version: "1.0.0" },
    { capabilities: { tools: {} } },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }));
  server.setRequestHandler(
    CallToolRequestSchema,
    async (request, extra): Promise<CallToolResult> => {
      const args = request.params.arguments ?? {};
      if (request.params.name === TICK_TOOL) {
        const token = request.params._meta?.progressToken;
        for (let progress = 1; progress <= Number(args.count); progress++) {
          await sleep(Number(args.interval_ms));
          if (token === undefined) continue;
          emitted.set(`${token}:${progress}`, performance.now());
          await extra.sendNotification({
            method: "notifications/progress",
            params: { progressToken: token, progress },
          });
        }
      }
      return { content: [{ type: "text", text: JSON.stringify(args) }] };
    },
  );
  return server;
}

async function sendFirehose(
  response: ServerResponse,
  megabytes: number,
  listingFirst: boolean,
): Promise<void> {
  response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  if (listingFirst) {
    const answer = { jsonrpc: "2.0", id: 1, result: { tools } };
    response.write(`event: message\ndata: ${JSON.stringify(answer)}\n\n`);
  }
  await pipeline(Readable.from(firehose(megabytes)), response).catch(() => {
    // The reader went away; nothing to clean up.
  });
}

export interface BenchOrigin {
  url: URL;
  emitted: EmissionTimes;
  close(): void;
}

export async function startBenchOrigin(): Promise<BenchOrigin> {
  const emitted: EmissionTimes = new Map();
  const sessions = new Map<string, StreamableHTTPServerTransport>();

  async function handle(request: IncomingMessage, response: ServerResponse) {
    const url = new URL(request.url ?? "/", "http://origin");
    const firehoseMb = url.searchParams.get("firehose_mb");
    if (request.method === "POST" && firehoseMb !== null) {
      request.resume();
      return sendFirehose(response, Number(firehoseMb), url.searchParams.has("firehose_listing"));
    }
    const sessionId = request.headers["mcp-session-id"];
    let transport = typeof sessionId === "string" ? sessions.get(sessionId) : undefined;
    if (!transport) {
      if (sessionId !== undefined) {
        response.writeHead(404).end();
        return;
      }
      const created = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => crypto.randomUUID(),
        enableJsonResponse: url.searchParams.has("json"),
        onsessioninitialized: (id) => {
          sessions.set(id, created);
        },
        onsessionclosed: (id) => {
          sessions.delete(id);
        },
      });
      await createBenchServer(emitted).connect(created);
      transport = created;
    }
    await transport.handleRequest(request, response);
  }

  const server = createServer((request, response) => {
    handle(request, response).catch((error) => {
      if (!response.headersSent) response.writeHead(500);
      response.end(String(error));
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: new URL(`http://127.0.0.1:${port}/mcp`),
    emitted,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}
