/**
 * The demo origin's entry, one endpoint for every protocol era:
 * - 2026-07-28 requests (the `_meta` envelope on every request) go to the one
 *   `ModernOrigin` object, served by the official SDK 2.x;
 * - 2025-era requests go to their session's Durable Object, served by the
 *   official SDK 1.x: by `Mcp-Session-Id`, or a new one for a request without
 *   it (initialize). An id that names no live session gets the 404 the MCP
 *   transport prescribes, so clients start a new session.
 */
import { isLegacyRequest } from "@modelcontextprotocol/server";
import { sessionNotFound } from "./session";

export { ModernOrigin } from "./modern";
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
    if (!(await isLegacyRequest(request))) {
      return env.MODERN.get(env.MODERN.idFromName("modern")).fetch(request);
    }
    const stub = sessionStub(env, request.headers.get("mcp-session-id"));
    return stub ? stub.fetch(request) : sessionNotFound();
  },
} satisfies ExportedHandler<Env>;
