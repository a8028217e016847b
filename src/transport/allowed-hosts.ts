/**
 * DNS-rebinding and cross-site protection for a proxy on a developer's
 * machine (MCP transport spec, "Security Warning"): it must answer only
 * requests addressed to it by a name it expects, or a web page could resolve
 * its own domain to 127.0.0.1 and talk to the proxy, and through it to the
 * origin. With `ALLOWED_HOSTS` set:
 *
 * - the request's host (the `Host` header) must be an allowed host;
 * - a browser's `Origin`, when it sent one, must be one too, on the port the
 *   entry names, or, for an entry without a port, on the proxy's own port (a
 *   page of another local app is another origin); the opaque `Origin: null`
 *   of a sandboxed frame or a file is refused.
 *
 * A deployed Worker needs no list: Cloudflare routes only the Worker's own
 * hostnames to it. POSTs must be JSON (transport/post-body.ts), so a page
 * cannot send one without a CORS preflight.
 */
import type { AllowedHost } from "../config";

const DEFAULT_PORTS: Record<string, string> = { "http:": "80", "https:": "443" };

const portOf = (url: URL) => url.port || (DEFAULT_PORTS[url.protocol] ?? "");

export function refusedHost(request: Request, allowed: readonly AllowedHost[]): string | undefined {
  if (allowed.length === 0) return undefined;
  const url = new URL(request.url);
  const port = portOf(url);
  const isAllowed = (hostname: string, onPort: string) =>
    allowed.some((entry) => entry.hostname === hostname && (entry.port ?? port) === onPort);
  if (!isAllowed(url.hostname, port)) return `host ${url.hostname}`;
  const origin = request.headers.get("origin");
  if (origin === null) return undefined;
  const from = URL.canParse(origin) ? new URL(origin) : undefined;
  return from && from.origin !== "null" && isAllowed(from.hostname, portOf(from))
    ? undefined
    : `origin ${origin}`;
}
