/**
 * `/.well-known/*` (OAuth protected-resource and authorization-server metadata,
 * among others) is answered by the origin's host, so clients discover the
 * origin's own authorization setup through the proxy.
 */
import type { Context } from "hono";
import type { AppEnv } from "../app-env";
import { wellKnownTarget } from "../transport/fetch-origin";
import { relayToOrigin } from "../transport/relay";

export function wellKnown(c: Context<AppEnv>): Promise<Response> {
  const request = c.req.raw;
  const target = wellKnownTarget(c.var.config.originUrl, new URL(request.url));
  const body = request.method === "GET" || request.method === "HEAD" ? null : request.body;
  return relayToOrigin(target, request, body, c.var.config);
}
