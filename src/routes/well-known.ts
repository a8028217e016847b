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
import { cookiesForClient, fetchOrigin, logOriginError, relayResponse } from "../transport/origin";
import { wellKnownTarget } from "../transport/origin-target";
import type { AppEnv } from "./app-env";

/** Its group is the document's name, one of three, for a 5xx's line: the path is the client's to write. */
const SIGN_IN_DISCOVERY =
  /^\/\.well-known\/(oauth-authorization-server|oauth-protected-resource|openid-configuration)(?:\/|$)/;

export async function wellKnown(c: Context<AppEnv>): Promise<Response> {
  const config = c.get("config");
  const request = c.req.raw;
  const url = new URL(request.url);
  // In broker and gate mode the proxy is the authorization server: the origin's documents
  // would send clients to the origin's.
  const document = SIGN_IN_DISCOVERY.exec(url.pathname)?.[1];
  if (config.auth.mode !== "relay" || document === undefined) {
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
  const target = wellKnownTarget(config.originUrl, url);
  const sent = {
    method: request.method,
    headers: originRequestHeaders(request.headers, credentials),
    body: hasBody ? request.body : null,
  };
  const reply = await fetchOrigin(
    target,
    sent,
    config.originTimeoutMs,
    unreadAddressee(request.headers),
  );
  if (reply.kind === "failed") return reply.response;
  // A 5xx logged as on the MCP endpoint: an origin whose metadata fails is a sign-in that fails.
  logOriginError(reply.response, target, sent, document);
  return relayResponse(cookiesForClient(reply.response, credentials));
}
