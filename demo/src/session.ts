/**
 * One MCP session = one Durable Object. Streams in workerd belong to the request
 * that created them, so a plain Worker cannot answer an elicitation on one POST
 * while the tool call waits on another; a Durable Object serves all of a
 * session's requests in one place, which is what the SDK's stateful transport
 * expects. The session id is the object's id.
 */
import { DurableObject } from "cloudflare:workers";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { SessionEventStore } from "./event-store";
import { createDemoServer } from "./server";

export function sessionNotFound(): Response {
  return Response.json(
    { jsonrpc: "2.0", id: null, error: { code: -32001, message: "Session not found" } },
    { status: 404 },
  );
}

export class McpSession extends DurableObject<Env> {
  private transport: WebStandardStreamableHTTPServerTransport | undefined;

  override async fetch(request: Request): Promise<Response> {
    if (!this.transport) {
      // A session id reaching an object without a transport names a session that
      // was deleted or evicted: the client must initialize again.
      if (request.headers.has("mcp-session-id")) return sessionNotFound();
      // On the initialize request: `?page_size=N` splits tools/list into pages,
      // `?json` answers with JSON bodies instead of event streams.
      const options = new URL(request.url).searchParams;
      const transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => this.ctx.id.toString(),
        enableJsonResponse: options.has("json"),
        // Resumable streams: a client that reconnects with Last-Event-ID gets what it missed.
        eventStore: new SessionEventStore(),
        onsessionclosed: () => {
          this.transport = undefined;
        },
      });
      const pageSize = Number(options.get("page_size")) || undefined;
      await createDemoServer({ pageSize }).connect(transport);
      this.transport = transport;
    }
    return this.transport.handleRequest(request);
  }
}
