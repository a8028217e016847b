/**
 * Relay mode: some of the proxy's own answers tell of the origin's tools
 * (under `ARGUMENT_VALIDATION=enforce` the fix-it answer to an invalid call
 * names the tool's declared arguments; in search mode `search_tools` answers
 * with tools), and they come from a tool map every caller shares. So the
 * proxy gives those only to a caller the origin has itself shown its tools
 * to: one whose credentials (`Authorization`, `Cookie` and the query string,
 * which reach the origin as sent) got a `tools/list` result from it on this
 * isolate in the last `TTL_MS`. Anyone else's invalid call goes to the origin
 * as under `warn`, and their search waits for the origin to list its tools
 * for them: the origin decides (SECURITY.md, "What the proxy answers itself").
 *
 * Credentials are kept only as SHA-256 digests, in isolate memory, at most
 * `MAX_CALLERS` of them (the oldest goes first). The same digest, with the
 * session, keys the listings the proxy asks for itself (`sessionKey`), in
 * either mode: with the credentials the origin sees.
 */
import { BoundedMap } from "../bounded-map";
import { sha256 } from "../digest";

const TTL_MS = 10 * 60_000;
const MAX_CALLERS = 1_000;

/** What identifies a caller to the origin. */
const callerParts = (headers: Headers, url: URL) => [
  headers.get("authorization"),
  headers.get("cookie"),
  url.search,
];

/** A digest of what identifies a caller to the origin. */
export const callerKey = (headers: Headers, url: URL): Promise<string> =>
  sha256(callerParts(headers, url).join("\n"));

/**
 * A digest of what identifies a caller and its session to the origin: a
 * server may list other tools to another session of the same caller.
 */
export const sessionKey = (headers: Headers, url: URL): Promise<string> =>
  sha256([...callerParts(headers, url), headers.get("mcp-session-id")].join("\n"));

export class ListingCallers {
  private readonly seen = new BoundedMap<string, true>(MAX_CALLERS, TTL_MS);

  /** The origin answered a `tools/list` from the caller with `key`. */
  remember(key: string): void {
    this.seen.set(key, true);
  }

  /** Whether the origin showed its tools to the caller with `key` lately. */
  has(key: string): boolean {
    return this.seen.get(key) === true;
  }
}

/** What this request may be answered with, and how to note that the origin listed for its caller. */
export interface CallerStanding {
  /** Whether the proxy may answer from what the origin listed (an invalid call under `enforce`, a search). */
  mayAnswerLocally: boolean;
  /** The origin answered this caller's `tools/list`. */
  listed(): void;
}

const TRUSTED: CallerStanding = { mayAnswerLocally: true, listed: () => {} };

/**
 * The standing of the caller of one request, `needed` only in relay mode
 * (broker mode's callers passed the proxy's token check) and for a request
 * that lists tools or calls one where the proxy may answer itself: otherwise
 * no digest is computed.
 */
export async function callerStanding(
  callers: ListingCallers,
  needed: boolean,
  headers: Headers,
  url: URL,
): Promise<CallerStanding> {
  if (!needed) return TRUSTED;
  const key = await callerKey(headers, url);
  return { mayAnswerLocally: callers.has(key), listed: () => callers.remember(key) };
}
