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

export interface Caller {
  /** The caller and session whose own listing state a request reads and writes (caller-listings.ts). */
  listing(): Promise<string>;
  /** The caller whose definition pins a request compares against (caller-pins.ts): sessions aside. */
  pins(): Promise<string>;
}

/** The headers that tell callers apart wherever they are sent. */
const CREDENTIALS = ["authorization", "cookie"];

/** Who the proxy itself says the caller is, beside what the client sent. */
export interface ProxyCredentials {
  /** The other headers that carry who the caller is (gate mode's `ORIGIN_AUTH_HEADER` and `ORIGIN_USER_HEADER`). */
  readonly headers?: readonly string[];
  /** Broker mode's grant's user, which a refresh of the origin's token does not change. */
  readonly grantCaller?: string;
}

/** What the origin sees of a request to `url` with `headers` (what the proxy sends it). */
export function callerOf(headers: Headers, url: URL, proxy: ProxyCredentials = {}): Caller {
  const { headers: also = [], grantCaller } = proxy;
  const names = [...CREDENTIALS, ...also.filter((name) => !CREDENTIALS.includes(name))];
  const credentials =
    grantCaller === undefined
      ? [...names.map((name) => headers.get(name)), url.search].join("\n")
      : `grant\n${grantCaller}\n${url.search}`;
  const session = headers.get("mcp-session-id");
  let pins: Promise<string> | undefined;
  let listing: Promise<string> | undefined;
  return {
    pins: () => {
      pins ??= sha256(credentials);
      return pins;
    },
    listing: () => {
      listing ??= sha256(`${credentials}\n${session}`);
      return listing;
    },
  };
}

/** One caller for every request: what a tool map used outside a request (tests, benchmarks) is for. */
export const ONE_CALLER: Caller = {
  listing: () => Promise.resolve("one caller"),
  pins: () => Promise.resolve("one caller"),
};
