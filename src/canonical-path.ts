/**
 * One reading of a request's path, decided before anything routes it
 * (SECURITY.md, "One reading of every request"). Hono routes on a path it
 * percent-decodes, workers-oauth-provider decides what it protects from the
 * raw `URL.pathname`: given `/%6dcp`, one saw the MCP endpoint and the other
 * an unprotected path. So the proxy rewrites every request to its canonical
 * path first, and routes match that exact string, never a decoding of it.
 *
 * The canonical path has every escape of an unreserved character (RFC 3986
 * §2.3: letters, digits, `-._~`) decoded and every other escape in upper
 * case. A path with no canonical form is refused: an encoded `/` or `\`, an
 * encoded `%` (double encoding), a backslash, a malformed escape, a `.` or
 * `..` segment (also encoded, or with a `;` parameter: `..;x`), or an empty
 * segment (`//`).
 */

export type CanonicalPath =
  | { kind: "canonical"; path: string }
  | { kind: "refused"; reason: string };

const ESCAPE = /%([0-9A-Fa-f]{2})/g;
const UNRESERVED = /^[A-Za-z0-9\-._~]$/;
/** Escapes whose decoding would change how the path splits or is decoded again: `/`, `\`, `%`. */
const STRUCTURAL = /%(2f|5c|25)/i;

/**
 * A `.` or `..` segment as some server reads it: Tomcat, Jetty and Spring take
 * a `;` and what follows for a path parameter and drop it (some after decoding
 * `%3B`), so `..;x` is `..` to them, and a path the proxy relays under
 * `/.well-known/` would reach another on the origin's host.
 */
function isDotSegment(segment: string): boolean {
  const bare = segment.split(/;|%3B/, 1)[0];
  return bare === "." || bare === "..";
}

export function canonicalPath(raw: string): CanonicalPath {
  if (raw.includes("\\")) return { kind: "refused", reason: "a backslash" };
  if (/%(?![0-9A-Fa-f]{2})/.test(raw)) return { kind: "refused", reason: "a malformed %-escape" };
  if (STRUCTURAL.test(raw)) return { kind: "refused", reason: "an encoded /, \\ or %" };
  const path = raw.replace(ESCAPE, (encoded, hex: string) => {
    const char = String.fromCharCode(Number.parseInt(hex, 16));
    return UNRESERVED.test(char) ? char : encoded.toUpperCase();
  });
  if (!path.startsWith("/")) return { kind: "refused", reason: "no leading /" };
  const segments = path.slice(1).split("/");
  if (segments.some(isDotSegment)) {
    return { kind: "refused", reason: "a . or .. segment" };
  }
  if (segments.slice(0, -1).includes(""))
    return { kind: "refused", reason: "an empty segment (//)" };
  return { kind: "canonical", path };
}

/** The path of a URL as written, neither decoded nor normalized. */
export function rawPathOf(url: string): string {
  const afterScheme = url.indexOf("://") + 3;
  const authorityEnd = url.slice(afterScheme).search(/[/?#]/);
  if (authorityEnd === -1 || url[afterScheme + authorityEnd] !== "/") return "/";
  const start = afterScheme + authorityEnd;
  const end = url.slice(start).search(/[?#]/);
  return end === -1 ? url.slice(start) : url.slice(start, start + end);
}

/** `request` at its canonical path; the reason when it has none. */
export function canonicalRequest(
  request: Request,
): { kind: "canonical"; request: Request } | { kind: "refused"; reason: string } {
  const raw = rawPathOf(request.url);
  const canonical = canonicalPath(raw);
  if (canonical.kind === "refused") return canonical;
  if (canonical.path === raw) return { kind: "canonical", request };
  const url = new URL(request.url);
  return {
    kind: "canonical",
    request: new Request(`${url.origin}${canonical.path}${url.search}`, request),
  };
}
