/**
 * The demo origin's entry: `/mcp` is routed to the session's Durable Object,
 * by `Mcp-Session-Id`, or to a new one for a request without it (initialize).
 * An id that names no live session gets the 404 the MCP transport prescribes,
 * so clients start a new session.
 */
import { sessionNotFound } from "./session";

export { McpSession } from "./session";

const MCP_PATH = "/mcp";

function sessionStub(env: Env, sessionId: string | null): DurableObjectStub | undefined {
  if (sessionId === null) return env.SESSIONS.get(env.SESSIONS.newUniqueId());
  try {
    return env.SESSIONS.get(env.SESSIONS.idFromString(sessionId));
  } catch {
    return undefined;
  }
}

export default {
  async fetch(request, env): Promise<Response> {
    const url = new URL(request.url);
    if (url.pathname !== MCP_PATH) {
      return Response.json(
        { error: `Not found; the MCP endpoint is ${MCP_PATH}` },
        { status: 404 },
      );
    }
    const stub = sessionStub(env, request.headers.get("mcp-session-id"));
    return stub ? stub.fetch(request) : sessionNotFound();
  },
} satisfies ExportedHandler<Env>;
