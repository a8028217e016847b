/**
 * The MCP endpoint (`MCP_PATH`): POST carries JSON-RPC messages, GET opens the
 * server's event stream, DELETE ends a session, OPTIONS is a CORS preflight.
 * A POST body is validated before the origin is called, so malformed input is
 * answered here with a specific error and never costs an origin round trip.
 */
import type { Context } from "hono";
import type { AppEnv } from "../app-env";
import { ErrorCode, errorResponse } from "../jsonrpc";
import { originTarget } from "../transport/fetch-origin";
import { addresseeOf, readPostBody } from "../transport/post-body";
import { relayToOrigin } from "../transport/relay";

const ALLOWED_METHODS = "GET, POST, DELETE, OPTIONS";

export async function mcpEndpoint(c: Context<AppEnv>): Promise<Response> {
  const { config } = c.var;
  const request = c.req.raw;
  const target = originTarget(config.originUrl, new URL(request.url));

  switch (request.method) {
    case "POST": {
      const body = await readPostBody(request, config.maxBodyBytes);
      if (!body.ok) return errorResponse(body.status, body.code, body.message);
      return relayToOrigin(target, request, body.bytes, config, addresseeOf(body));
    }
    case "GET":
    case "DELETE":
    case "OPTIONS":
      return relayToOrigin(target, request, null, config);
    default:
      return errorResponse(
        405,
        ErrorCode.InvalidRequest,
        `Method ${request.method} is not allowed on the MCP endpoint; use ${ALLOWED_METHODS}`,
        undefined,
        { Allow: ALLOWED_METHODS },
      );
  }
}
