/**
 * DNS-rebinding protection (MCP transport spec, "Security Warning"): a proxy
 * served on a developer's machine must answer only requests addressed to it by
 * a name it expects, or a web page could resolve its own domain to 127.0.0.1
 * and talk to the proxy, and through it to the origin. With `ALLOWED_HOSTS`
 * set, the request's host (the `Host` header) and, when a browser sent one, its
 * `Origin` must both name an allowed host.
 *
 * A deployed Worker needs no list: Cloudflare routes only the Worker's own
 * hostnames to it.
 */
export function refusedHost(request: Request, allowed: readonly string[]): string | undefined {
  if (allowed.length === 0) return undefined;
  const host = new URL(request.url).hostname;
  if (!allowed.includes(host)) return `host ${host}`;
  const origin = request.headers.get("origin");
  if (origin === null || origin === "null") return undefined;
  const originHost = URL.canParse(origin) ? new URL(origin).hostname : origin;
  return allowed.includes(originHost) ? undefined : `origin ${origin}`;
}
