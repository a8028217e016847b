/**
 * The only place the proxy talks to the network. The target URL is always
 * built from `ORIGIN_URL` (see `originTarget`), redirects are handed back to
 * the client rather than followed, and the timeout covers the wait for the
 * response headers only: once the origin has answered, a stream may stay open
 * as long as it likes.
 */
export type OriginResult =
  | { ok: true; response: Response }
  | { ok: false; failure: "timeout" | "unreachable"; detail: string };

export async function fetchOrigin(
  url: URL,
  init: { method: string; headers: Headers; body?: BodyInit | null },
  timeoutMs: number,
): Promise<OriginResult> {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  try {
    const response = await fetch(url, { ...init, redirect: "manual", signal: controller.signal });
    return { ok: true, response };
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    return { ok: false, failure: timedOut ? "timeout" : "unreachable", detail };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The origin URL for a request to the MCP endpoint: `ORIGIN_URL` with the
 * client's query parameters added. Nothing in the request can change the host.
 */
export function originTarget(originUrl: URL, clientUrl: URL): URL {
  const target = new URL(originUrl);
  for (const [name, value] of clientUrl.searchParams) target.searchParams.append(name, value);
  return target;
}

/** The origin URL for `/.well-known/*`: the same path and query on the origin's host. */
export function wellKnownTarget(originUrl: URL, clientUrl: URL): URL {
  const target = new URL(originUrl.origin);
  target.pathname = clientUrl.pathname;
  target.search = clientUrl.search;
  return target;
}
