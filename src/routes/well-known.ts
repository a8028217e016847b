/**
 * `/.well-known/*` (OAuth protected-resource and authorization-server metadata,
 * among others) is answered by the origin's host, so clients discover the
 * origin's own authorization setup through the proxy.
 */
import type { Context } from "hono";
import { unreadAddressee } from "../protocol/jsonrpc";
import { originRequestHeaders } from "../transport/headers";
import { fetchOrigin, relayResponse, wellKnownTarget } from "../transport/origin";
import type { AppEnv } from "./app-env";

export async function wellKnown(c: Context<AppEnv>): Promise<Response> {
  const request = c.req.raw;
  const target = wellKnownTarget(c.var.config.originUrl, new URL(request.url));
  const hasBody = request.method !== "GET" && request.method !== "HEAD";
  const reply = await fetchOrigin(
    target,
    {
      method: request.method,
      headers: originRequestHeaders(request.headers),
      body: hasBody ? request.body : null,
    },
    c.var.config.originTimeoutMs,
    unreadAddressee(request.headers),
  );
  return reply.kind === "answered" ? relayResponse(reply.response) : reply.response;
}
