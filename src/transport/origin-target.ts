/**
 * Where a client's request goes at the origin: every target URL is built
 * from `ORIGIN_URL` (`originTarget`, `wellKnownTarget`), so nothing in a
 * request can change the host, and no query parameter of the client's may
 * stand in for one `ORIGIN_URL` sets (`paramOriginUrlSets`). Pure.
 */
import { foldedKey } from "../json";

/**
 * A query parameter's name as some origin reads it: case aside (ASP.NET),
 * `[…]` aside (PHP, Rails and Express read `a[]` and `a[0]` as `a`), spaces
 * around it aside and `.` or a space within it as `_` (PHP), and a `[` that
 * no `]` closes as `_` (PHP reads `a[b` as `a_b`): each reading, as the
 * names `ORIGIN_URL` sets are read.
 */
function paramKeys(name: string): string[] {
  const read = (key: string) => foldedKey(key.trim()).replace(/[. ]/g, "_");
  const bracket = name.indexOf("[");
  if (bracket === -1) return [read(name)];
  const base = name.slice(0, bracket);
  if (name.includes("]", bracket)) return [read(base)];
  return [read(base), read(`${base}_${name.slice(bracket + 1)}`)];
}

/**
 * The first of the client's query parameters that an origin may read as one
 * `ORIGIN_URL` sets; `undefined` when there is none. Origins read a parameter
 * given twice as its first value, its last, or both, so the client's would
 * change the operator's (a tenant, a user, a set of tools).
 */
export function paramOriginUrlSets(originUrl: URL, clientUrl: URL): string | undefined {
  if (originUrl.search === "" || clientUrl.search === "") return undefined;
  const operators = new Set(Array.from(originUrl.searchParams.keys(), paramKeys).flat());
  for (const name of clientUrl.searchParams.keys()) {
    if (paramKeys(name).some((key) => operators.has(key))) return name;
  }
  return undefined;
}

/**
 * The origin URL for a request to the MCP endpoint: `ORIGIN_URL` with the
 * client's query added after its own (no parameter of it one `ORIGIN_URL`
 * sets: `paramOriginUrlSets`), both as they were written; `ORIGIN_URL`'s own
 * URL when there is none (a target is never changed after this). Not through
 * `searchParams`, which writes the whole query again as a form: `%20` as
 * `+`, `flag` as `flag=`, `/` and `~` escaped, and `%E9` (no UTF-8) as
 * `%EF%BF%BD`, so a signature over the query, or a value in another
 * encoding, would not reach the origin as it was sent. But a `;` is sent
 * escaped (`%3B`): to some origins it separates parameters.
 */
export function originTarget(originUrl: URL, clientUrl: URL): URL {
  if (clientUrl.search === "") return originUrl;
  const target = new URL(originUrl);
  // `;` aside: older parsers (Python before 3.9.2, Go before 1.17) split on it as on `&`, and
  // would read in `x=1;tenant=b` a parameter that `paramOriginUrlSets`, splitting on `&`, does not.
  const query = clientUrl.search.slice(1).replaceAll(";", "%3B");
  target.search = originUrl.search === "" ? query : `${originUrl.search.slice(1)}&${query}`;
  return target;
}

/** The origin URL for `/.well-known/*`: the same path and query on the origin's host. */
export function wellKnownTarget(originUrl: URL, clientUrl: URL): URL {
  const target = new URL(originUrl.origin);
  target.pathname = clientUrl.pathname;
  target.search = clientUrl.search;
  return target;
}
