/**
 * Protocol 2026-07-28 has no sessions, but `subscriptions/listen` streams must
 * hear about a `catalog.refresh` called on another request. workerd ties a
 * stream to the request that made it, so all 2026 requests meet in one Durable
 * Object, where the SDK's in-memory event bus reaches every open stream.
 */
import { DurableObject } from "cloudflare:workers";
import type { McpHttpHandler } from "@modelcontextprotocol/server";
import { createModernHandler } from "./modern-server";

export class ModernOrigin extends DurableObject<Env> {
  private readonly handlers = new Map<boolean, McpHttpHandler>();

  override fetch(request: Request): Promise<Response> {
    const json = new URL(request.url).searchParams.has("json");
    let handler = this.handlers.get(json);
    if (!handler) {
      handler = createModernHandler(json);
      this.handlers.set(json, handler);
    }
    return handler.fetch(request);
  }
}
