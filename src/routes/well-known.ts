/**
 * `/.well-known/*`. In relay mode the proxy's own protected-resource metadata
 * (RFC 9728) is answered from the origin's document with `resource` naming the
 * proxy (see auth/protected-resource.ts), and the other sign-in discovery
 * documents (authorization-server metadata on the origin's host, among
 * others) are relayed from the same path on the origin's host, so clients
 * discover the origin's own authorization setup. In broker and gate mode the library
 * answers the OAuth documents before any route runs, and the origin's are
 * never relayed.
 *
 * No other document is the origin's: under `/.well-known/` a host speaks for
 * itself (a CA's domain validation, `acme-challenge` and `pki-validation`;
 * app links; MCP server cards, which would list the tools rules hide), and an
 * origin answering there would speak for the proxy's host.
 */
import type { Context } from "hono";
import { protectedResourceMetadata } from "../auth/protected-resource";
import { endpointOfMetadata, publicUrls } from "../auth/public-url";
import { unreadAddressee } from "../protocol/jsonrpc";
import { originRequestHeaders } from "../transport/headers";
import { cookiesForClient, fetchOrigin, relayResponse, wellKnownTarget } from "../transport/origin";
import type { AppEnv } from "./app-env";

const SIGN_IN_DISCOVERY =
  /^\/\.well-known\/(?:oauth-authorization-server|oauth-protected-resource|openid-configuration)(?:\/|$)/;

export async function wellKnown(c: Context<AppEnv>): Promise<Response> {
  const config = c.get("config");
  const request = c.req.raw;
  const url = new URL(request.url);
  // In broker and gate mode the proxy is the authorization server: the origin's documents
  // would send clients to the origin's.
  if (config.auth.mode !== "relay" || !SIGN_IN_DISCOVERY.test(url.pathname)) {
    return Response.json({ error: "not_found" }, { status: 404 });
  }
  const endpoint = request.method === "GET" ? endpointOfMetadata(url.pathname, config) : undefined;
  if (endpoint !== undefined) {
    return protectedResourceMetadata(
      config,
      publicUrls(config, url, endpoint),
      request.headers,
      c.get("isolate").signIn,
    );
  }
  const hasBody = request.method !== "GET" && request.method !== "HEAD";
  const credentials = c.get("originCredentials");
  const reply = await fetchOrigin(
    wellKnownTarget(config.originUrl, url),
    {
      method: request.method,
      headers: originRequestHeaders(request.headers, credentials),
      body: hasBody ? request.body : null,
    },
    config.originTimeoutMs,
    unreadAddressee(request.headers),
  );
  return reply.kind === "answered"
    ? relayResponse(cookiesForClient(reply.response, credentials))
    : reply.response;
}
