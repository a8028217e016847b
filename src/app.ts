/**
 * The proxy as a Hono app. One middleware admits a request (the configuration
 * is valid, the host is allowed) and hands the routes what they need; each
 * route lives in routes/. One app per isolate: `toolMapMemory` is what the
 * isolate remembers of tool names between requests (tests make a fresh one to
 * play a cold isolate).
 */
import { Hono } from "hono";
import { configOf } from "./config";
import { logEvent } from "./log";
import { ErrorCode, errorResponse, unreadAddressee } from "./protocol/jsonrpc";
import type { AppEnv } from "./routes/app-env";
import { healthz } from "./routes/healthz";
import { mcpEndpoint } from "./routes/mcp-endpoint";
import { wellKnown } from "./routes/well-known";
import { ToolMapMemory } from "./toolmap/tool-map";
import { refusedHost } from "./transport/allowed-hosts";

export function createApp(toolMapMemory = new ToolMapMemory()): Hono<AppEnv> {
  const app = new Hono<AppEnv>();

  app.use(async (c, next) => {
    const result = configOf(c.env);
    if (result.kind === "invalid") {
      logEvent("config_invalid", { setting: result.setting, problem: result.problem });
      return errorResponse(
        500,
        ErrorCode.InternalError,
        `Proxy misconfigured: ${result.setting} ${result.problem}`,
        unreadAddressee(c.req.raw.headers),
      );
    }
    const refused = refusedHost(c.req.raw, result.config.allowedHosts);
    if (refused !== undefined) {
      logEvent("host_refused", { refused });
      return errorResponse(
        403,
        ErrorCode.InvalidRequest,
        `Forbidden: ${refused} is not in ALLOWED_HOSTS`,
        unreadAddressee(c.req.raw.headers),
      );
    }
    c.set("config", result.config);
    c.set("toolMapMemory", toolMapMemory);
    await next();
  });

  app.get("/healthz", healthz);
  app.all("/.well-known/*", wellKnown);
  app.all("*", async (c) => {
    if (c.req.path === c.var.config.mcpPath) return mcpEndpoint(c);
    return Response.json(
      { error: `Not found: the MCP endpoint is ${c.var.config.mcpPath}` },
      { status: 404 },
    );
  });

  app.onError((error, c) => {
    logEvent("internal_error", { error: error instanceof Error ? error.message : String(error) });
    return errorResponse(
      500,
      ErrorCode.InternalError,
      "Internal error in the proxy",
      unreadAddressee(c.req.raw.headers),
    );
  });

  return app;
}
