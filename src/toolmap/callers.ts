/**
 * Who a request lists and calls tools for, as the origin tells callers
 * apart: by what reaches it (the credential headers the proxy sends, the
 * query of the URL it asks, and for a listing's own state the
 * `Mcp-Session-Id`). Relay mode: the client's own credentials. Broker mode:
 * the grant's user (an id the sign-in made, kept across refreshes), or, in a
 * grant made before it was kept, the origin's token; and the credentials
 * `PASS_HEADERS` lets through (an `X-API-Key`). Gate mode: the origin's
 * key (one per user where users have their own) and the user's email where
 * the origin is told it. Requests that carry none are one caller
 * (SECURITY.md, "What the proxy answers itself"), and so, to the origin, are
 * those that carry only what every request carries (gate mode's shared key).
 *
 * Kept only as SHA-256 digests, made when a request first needs them.
 */
import { sha256 } from "../digest";
import { headerKind } from "../protocol/header-names";
import type { OriginCredentials } from "../transport/headers";

export interface Caller {
  /** The caller and session whose own listing state a request reads and writes (caller-listings.ts). */
  listing(): Promise<string>;
  /**
   * The caller sessions aside: whose definition pins a request compares
   * against (caller-pins.ts), and whose tasks call analytics remembers
   * (analytics/task-memory.ts: a task outlives the session that created it).
   */
  pins(): Promise<string>;
  /**
   * Where the request comes from: its credentials alone, the query and
   * session aside, which a client varies for free (a parameter the origin
   * ignores, a new `Mcp-Session-Id`), while a credential is one the origin
   * gave. What the isolate keeps or asks the origin for on callers' behalf,
   * one source spends a share of (caller-listings.ts, profile-names.ts):
   * callers made up from one token spend that token's. In gate mode, the
   * user the gate signed in, and in broker mode the grant's user, whatever
   * the origin is sent (gate mode's shared key is every user's; a header the
   * client passes, one it varies). `undefined`:
   * no credential, or only one every caller's requests carry alike, and no
   * user; such requests share the isolate-wide bounds alone, as one source.
   */
  source(): Promise<string | undefined>;
  /**
   * `true`: a user broker or gate mode signed in (a grant's user, who signed
   * in at the gate), whom no client can make up as it can credentials relay
   * mode passes on unchecked: their source has a share of its own of the
   * re-lists before the origin listed them in an isolate
   * (profile-names.ts `MAX_UNPROVEN_RELISTS`).
   */
  readonly signedIn?: boolean;
  /**
   * `true`: the request carries nothing the origin tells callers apart by:
   * no credential, no grant's user, no query of the client's (the
   * `ORIGIN_URL`'s own is every request's), or only a credential every
   * caller's requests carry alike (gate mode's shared `ORIGIN_SECRET`
   * without `ORIGIN_USER_HEADER`: `sameForEveryCaller`). What the origin
   * lists it, it lists every such request, but by session. Its own state
   * (`listing`, `pins`) is still keyed by what it carries.
   */
  readonly anonymous?: boolean;
}

/**
 * What the origin sees of a request to `url` with `headers` (what the proxy
 * sends it), and what the proxy set there (`credentials`): every header the
 * header table calls a credential (protocol/header-names.ts: `Authorization`,
 * `Cookie`, `X-API-Key`, Access's service token, …), the other headers that
 * carry who the caller is (gate mode's `ORIGIN_AUTH_HEADER` and
 * `ORIGIN_USER_HEADER`), with broker mode's grant's user in place of the
 * origin's token, which a refresh replaces. `originUrl`: the `ORIGIN_URL`,
 * whose query is every request's (without it, any query may be the client's).
 */
export function callerOf(
  headers: Headers,
  url: URL,
  credentials: OriginCredentials = { kind: "client" },
  originUrl?: URL,
): Caller {
  const proxy = credentials.kind === "proxy" ? credentials : undefined;
  const { names, named, others } = seen(headers, proxy?.headers ?? []);
  // What the proxy sets alike on every caller's request tells the origin no caller from another.
  const everyones = new Set(proxy?.sameForEveryCaller ? proxy.headers?.map(([name]) => name) : []);
  // A grant's user in place of the origin's token (a refresh replaces it), beside the credentials
  // the client passed (`PASS_HEADERS`), which the origin also tells callers apart by.
  const credentialLines =
    proxy?.caller === undefined ? [...named, ...others] : ["grant", proxy.caller, ...others];
  const credentialsSeen = [...credentialLines, url.search].join("\n");
  // No session is written as none, as origins read an empty id: `${null}` was the session `null`.
  const session = headers.get("mcp-session-id") ?? "";
  let pins: Promise<string> | undefined;
  let listing: Promise<string> | undefined;
  let source: Promise<string | undefined> | undefined;
  const uncredentialed =
    proxy?.caller === undefined &&
    named.every((value, at) => value === null || everyones.has(names[at] ?? "")) &&
    others.length === 0;
  const anonymous = uncredentialed && url.search === (originUrl?.search ?? "");
  return {
    anonymous,
    signedIn: proxy?.user !== undefined || proxy?.caller !== undefined,
    source: () => {
      // Written apart from the digests above ("source"): no source is any caller's listing or pins.
      // The user the proxy signed in, whatever the origin is sent: gate mode's shared key is every
      // user's, and a header a client passes beside a grant (`PASS_HEADERS`) is one it can vary.
      source ??=
        proxy?.user !== undefined
          ? sha256(["source", "user", proxy.user].join("\n"))
          : proxy?.caller !== undefined
            ? sha256(["source", "grant", proxy.caller].join("\n"))
            : uncredentialed
              ? Promise.resolve(undefined)
              : sha256(["source", ...credentialLines].join("\n"));
      return source;
    },
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

/**
 * The values of the headers that tell callers apart, in an order that does
 * not depend on the request. `Authorization`, `Cookie` and the proxy's own
 * headers come as values alone (`named`), as callers' digests were made
 * before other credentials counted, so that a caller who sends none of those
 * keeps the state (pins, holds) it had; any other credential is `name: value`
 * (`others`: in broker and gate mode, those the client passed).
 */
function seen(
  headers: Headers,
  proxyHeaders: ReadonlyArray<readonly [string, string]>,
): { names: string[]; named: Array<string | null>; others: string[] } {
  const names = ["authorization", "cookie"];
  for (const [name] of proxyHeaders) if (!names.includes(name)) names.push(name);
  const others = [...headers.keys()].filter(
    (name) => headerKind(name) === "credential" && !names.includes(name),
  );
  return {
    names,
    named: names.map((name) => headers.get(name)),
    others: others.sort().map((name) => `${name}: ${headers.get(name)}`),
  };
}

/** One caller for every request: what a tool map used outside a request (tests, benchmarks) is for. */
export const ONE_CALLER: Caller = {
  anonymous: true,
  source: () => Promise.resolve(undefined),
  listing: () => Promise.resolve("one caller"),
  pins: () => Promise.resolve("one caller"),
};
/**
 * The caller whose listing state is `listing` and whose pins are `pins`, from
 * the source of that name: what tests and benchmarks that tell callers apart
 * by hand make each of theirs.
 */
export const callerNamed = (listing: string, pins = listing): Caller => ({
  source: () => Promise.resolve(`source of ${pins}`),
  listing: () => Promise.resolve(listing),
  pins: () => Promise.resolve(pins),
});
