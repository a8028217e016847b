/**
 * Who a request lists and calls tools for, as the origin tells callers
 * apart: by what reaches it (the `Authorization` and `Cookie` the proxy
 * sends, the query of the URL it asks, and for a listing's own state the
 * `Mcp-Session-Id`). Relay mode: the client's own credentials. Broker mode:
 * the grant's user (an id the sign-in made, kept across refreshes), or, in a
 * grant made before it was kept, the origin's token. Gate mode: the origin's
 * key (one per user where users have their own) and the user's email where
 * the origin is told it. Requests that carry none are one caller
 * (SECURITY.md, "What the proxy answers itself").
 *
 * Kept only as SHA-256 digests, made when a request first needs them.
 */
import { sha256 } from "../digest";
import type { OriginCredentials } from "../transport/headers";

export interface Caller {
  /** The caller and session whose own listing state a request reads and writes (caller-listings.ts). */
  listing(): Promise<string>;
  /** The caller whose definition pins a request compares against (caller-pins.ts): sessions aside. */
  pins(): Promise<string>;
}

/** The headers that tell callers apart wherever they are sent. */
const CREDENTIALS = ["authorization", "cookie"];

/**
 * What the origin sees of a request to `url` with `headers` (what the proxy
 * sends it), and what the proxy set there (`credentials`): the other headers
 * that carry who the caller is (gate mode's `ORIGIN_AUTH_HEADER` and
 * `ORIGIN_USER_HEADER`), or broker mode's grant's user, which a refresh of
 * the origin's token does not change.
 */
export function callerOf(
  headers: Headers,
  url: URL,
  credentials: OriginCredentials = { kind: "client" },
): Caller {
  const proxy = credentials.kind === "proxy" ? credentials : undefined;
  const also = (proxy?.headers ?? []).map(([name]) => name);
  const names = [...CREDENTIALS, ...also.filter((name) => !CREDENTIALS.includes(name))];
  const credentialsSeen =
    proxy?.caller === undefined
      ? [...names.map((name) => headers.get(name)), url.search].join("\n")
      : `grant\n${proxy.caller}\n${url.search}`;
  const session = headers.get("mcp-session-id");
  let pins: Promise<string> | undefined;
  let listing: Promise<string> | undefined;
  return {
    pins: () => {
      pins ??= sha256(credentialsSeen);
      return pins;
    },
    listing: () => {
      listing ??= sha256(`${credentialsSeen}\n${session}`);
      return listing;
    },
  };
}

/** One caller for every request: what a tool map used outside a request (tests, benchmarks) is for. */
export const ONE_CALLER: Caller = {
  listing: () => Promise.resolve("one caller"),
  pins: () => Promise.resolve("one caller"),
};
