/**
 * The Worker. Every request is first read one way (its canonical path,
 * canonical-path.ts) and admitted (the configuration is valid, the
 * host is allowed); then, in relay mode, it goes to the routes, and in broker
 * and gate mode to the proxy's authorization server (auth/provider.ts, with
 * auth/broker.ts or auth/gate.ts), which serves sign-in and hands MCP
 * requests carrying a valid token of the proxy's to the routes with what the
 * origin gets. The routes match the canonical path as it is, never a
 * decoding of it, so they and the authorization server always agree on
 * which route a request is. One app per isolate: `isolate` is what the isolate
 * remembers of tool names between requests (tests make a fresh one to play a
 * cold isolate).
 */
import { Hono } from "hono";
import { createBroker } from "./auth/broker";
import { tokenClientIdRefused } from "./auth/client-ids";
import { createGate } from "./auth/gate";
import { withRedirectsRefused } from "./auth/library-fetch";
import { signInEnv } from "./auth/oauth-kv";
import { originCredentials } from "./auth/origin-credentials";
import {
  AUTHORIZE_PATH,
  perPublicUrl,
  type Routes,
  SIGN_OUT_PATH,
  type SignInServer,
} from "./auth/provider";
import { type PublicUrls, publicUrls } from "./auth/public-url";
import { boundedSignInForm } from "./auth/sign-in-body";
import { signInLimited } from "./auth/sign-in-limit";
import { CALLBACK_PATH, CLIENT_METADATA_PATH } from "./auth/upstream";
import { canonicalRequest, rawPathOf } from "./canonical-path";
import { type Config, type ConfigProblem, configOf, profileAt } from "./config";
import { logEvent, withLogBudget } from "./log";
import { ErrorCode, errorResponse, unreadAddressee } from "./protocol/jsonrpc";
import { type AppEnv, type IsolateState, newIsolateState } from "./routes/app-env";
import {
  clientMetadataDocument,
  decideConsent,
  finishSignIn,
  showConsent,
} from "./routes/authorize";
import { healthz } from "./routes/healthz";
import { mcpEndpoint } from "./routes/mcp-endpoint";
import { readyz } from "./routes/readyz";
import { signOut } from "./routes/sign-out";
import { wellKnown } from "./routes/well-known";
import { refusedHost } from "./transport/allowed-hosts";
import { withoutOriginPath } from "./transport/origin";

export type Worker = ExportedHandler<Env> & Pick<Required<ExportedHandler<Env>>, "fetch">;

/** `config`: where it was read, so that the line names the origin by its host alone. */
function internalError(error: unknown, request: Request, config?: Config): Response {
  const message = error instanceof Error ? error.message : String(error);
  logEvent("internal_error", {
    error: config ? withoutOriginPath(message, config.originUrl) : message,
  });
  return errorResponse(
    500,
    ErrorCode.InternalError,
    "Internal error in the proxy",
    unreadAddressee(request.headers),
  );
}

/**
 * What the 500 for `problems` tells any client: the proxy's settings by name, never what they
 * hold or why (a problem's words may quote what the operator wrote, a tool's name); a name it
 * does not read, only counted: that is the operator's text, which may be a value (a secret put
 * with its value for a name).
 */
function misconfigured(problems: readonly ConfigProblem[]): string {
  const settings = [...new Set(problems.flatMap((p) => (p.unread ? [] : [p.setting])))];
  const unread = problems.filter((problem) => problem.unread).length;
  const told = [
    ...(settings.length === 0
      ? []
      : [`${settings.join(", ")} ${settings.length === 1 ? "is" : "are"} invalid`]),
    ...(unread === 0
      ? []
      : [
          `${unread} ${unread === 1 ? "name it does not read is" : "names it does not read are"} set`,
        ]),
  ];
  return `Proxy misconfigured: ${told.join("; ")} (the config_invalid log line says why)`;
}

/** The configuration, when it is valid and the request's host is allowed; else the proxy's refusal. */
function admit(request: Request, env: Env): Config | Response {
  const result = configOf(env);
  if (result.kind === "invalid") {
    const { problems } = result;
    logEvent("config_invalid", {
      problems: problems.map(({ path, problem }) => ({ setting: path, problem })),
    });
    return errorResponse(
      500,
      ErrorCode.InternalError,
      misconfigured(problems),
      unreadAddressee(request.headers),
    );
  }
  const refused = refusedHost(request, result.config.allowedHosts);
  if (refused !== undefined) {
    logEvent("host_refused", { refused });
    return errorResponse(
      403,
      ErrorCode.InvalidRequest,
      `Forbidden: ${refused} is not in ALLOWED_HOSTS`,
      unreadAddressee(request.headers),
    );
  }
  return result.config;
}

function createRoutes(isolate: IsolateState): Hono<AppEnv> {
  // The canonical path as it is: Hono's default would decode it again.
  const app = new Hono<AppEnv>({ getPath: (request) => rawPathOf(request.url) });
  app.use(async (c, next) => {
    // Admitted before any route runs, so the configuration is valid here.
    const result = configOf(c.env);
    if (result.kind === "invalid") throw new Error("routes reached with an invalid configuration");
    c.set("config", result.config);
    c.set("isolate", isolate);
    c.set("originCredentials", originCredentials(result.config, c.executionCtx));
    await next();
  });

  app.get("/healthz", healthz);
  app.get("/readyz", readyz);
  app.all("/.well-known/*", wellKnown);
  app.get(AUTHORIZE_PATH, showConsent);
  app.post(AUTHORIZE_PATH, decideConsent);
  app.get(CALLBACK_PATH, finishSignIn);
  app.get(CLIENT_METADATA_PATH, clientMetadataDocument);
  app.post(SIGN_OUT_PATH, signOut);
  app.all("*", async (c) => {
    const profile = profileAt(c.get("config"), c.req.path);
    if (profile) return mcpEndpoint(c, profile);
    // The setting, never its value: an operator may keep the endpoint's path to those they give it.
    return Response.json(
      { error: "Not found: neither the MCP endpoint (MCP_PATH) nor a route of the proxy" },
      { status: 404 },
    );
  });
  app.onError((error, c) => internalError(error, c.req.raw, c.get("config") as Config | undefined));
  return app;
}

/** `request` as addressed to the proxy's public origin, where that differs from the one it arrived for. */
function atPublicOrigin(request: Request, config: Config): Request {
  const url = new URL(request.url);
  if (!config.publicOrigin || url.origin === config.publicOrigin) return request;
  return new Request(`${config.publicOrigin}${url.pathname}${url.search}`, request);
}

/** The authorization server of the mode `config` is in (broker or gate), for the proxy at `urls`. */
function signInServer(routes: Routes, isolate: IsolateState) {
  return (config: Config, urls: PublicUrls): SignInServer => {
    const { auth } = config;
    if (auth.mode === "gate") return createGate(config, auth, urls, routes, isolate.signIn);
    if (auth.mode === "broker") return createBroker(config, auth, urls, routes, isolate.signIn);
    throw new Error("relay mode has no authorization server");
  };
}

export function createApp(isolate: IsolateState = newIsolateState()): Worker {
  const routes = createRoutes(isolate);
  const serverFor = perPublicUrl(signInServer(routes, isolate));
  async function handle(received: Request, env: Env, ctx: ExecutionContext): Promise<Response> {
    const canonical = canonicalRequest(received);
    if (canonical.kind === "refused") {
      logEvent("path_refused", { reason: canonical.reason });
      return errorResponse(
        400,
        ErrorCode.InvalidRequest,
        `Bad request path: it has ${canonical.reason}, which has no single reading`,
        unreadAddressee(received.headers),
      );
    }
    const { request } = canonical;
    const admitted = admit(request, env);
    if (admitted instanceof Response) return admitted;
    if (admitted.auth.mode === "relay") return routes.fetch(request, env, ctx);
    try {
      const limited = await signInLimited(request, admitted.auth);
      if (limited) return limited;
      const bounded = await boundedSignInForm(request);
      if (bounded instanceof Response) return bounded;
      const refused = await tokenClientIdRefused(bounded);
      if (refused) return refused;
      const seen = atPublicOrigin(bounded, admitted);
      const server = serverFor(admitted, publicUrls(admitted, new URL(seen.url)));
      return await server.fetch(seen, signInEnv(env, server), ctx);
    } catch (error) {
      return internalError(error, request, admitted);
    }
  }
  // Every line a request writes, those of work it leaves running included, shares one budget; a
  // library's request that says nothing of redirects follows none (auth/library-fetch.ts).
  return {
    fetch: (received, env, ctx) =>
      withLogBudget(() => withRedirectsRefused(() => handle(received, env, ctx))),
  };
}
