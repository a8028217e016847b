/**
 * The URLs clients know the proxy by. The MCP URL a client connects to is the
 * proxy's own, so the protected-resource metadata (RFC 9728) the proxy hands
 * out must name it, and challenges must point at the proxy's metadata.
 *
 * The origin is `PUBLIC_URL` when set (behind another proxy), else the origin
 * of the request URL. That one is trusted: a deployed Worker only receives its
 * own routes, and under `ALLOWED_HOSTS` the host was checked before any route
 * ran. `Forwarded` and `X-Forwarded-*` are never read: a client could send them.
 */
import { type Config, profileAt } from "../config";

const METADATA_PATH = "/.well-known/oauth-protected-resource";

export interface PublicUrls {
  /** The MCP endpoint as clients address it: the protected resource. */
  mcp: string;
  /** Where its protected-resource metadata is (RFC 9728 path insertion). */
  metadata: string;
}

/** Where RFC 9728 puts the metadata of a resource at `resourcePath`. */
export function metadataPath(resourcePath: string): string {
  return resourcePath === "/" ? METADATA_PATH : `${METADATA_PATH}${resourcePath}`;
}

/** The URLs of the MCP endpoint at `endpointPath` (`MCP_PATH` unless a profile's). */
export function publicUrls(
  config: Config,
  requestUrl: URL,
  endpointPath = config.mcpPath,
): PublicUrls {
  const origin = config.publicOrigin ?? requestUrl.origin;
  return {
    mcp: `${origin}${endpointPath}`,
    metadata: `${origin}${metadataPath(endpointPath)}`,
  };
}

/**
 * The MCP endpoint whose metadata `path` asks for: the locations clients try,
 * path insertion for each endpoint (`MCP_PATH`, `MCP_PATH/<profile>`), then
 * the root (the default endpoint); `undefined` for any other path.
 */
export function endpointOfMetadata(path: string, config: Config): string | undefined {
  if (path === METADATA_PATH) return config.mcpPath;
  if (!path.startsWith(`${METADATA_PATH}/`)) return undefined;
  const endpoint = path.slice(METADATA_PATH.length);
  return profileAt(config, endpoint) ? endpoint : undefined;
}

/** The locations of the origin's own metadata, in the order RFC 9728 clients try them. */
export function originMetadataUrls(originUrl: URL): string[] {
  const insertion = `${originUrl.origin}${metadataPath(originUrl.pathname)}`;
  const root = `${originUrl.origin}${METADATA_PATH}`;
  return insertion === root ? [root] : [insertion, root];
}
