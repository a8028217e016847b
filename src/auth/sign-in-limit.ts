/**
 * Broker and gate mode's sign-in routes write to `OAUTH_KV` for anyone who asks (a
 * client registration, a consent transaction, a grant, tokens), and a Free
 * plan allows 1,000 KV writes a day. So each client address gets at most the
 * `SIGN_IN_RATE_LIMIT` binding's limit of sign-in requests per period (30 a
 * minute in wrangler.toml; one sign-in takes about five), counted per
 * Cloudflare location, as Workers Rate Limiting counts. A tenant with more
 * traffic than that adds a WAF rate-limiting rule in front (docs/sign-in.md, "Broker
 * mode").
 *
 * The address is `CF-Connecting-IP`, which Cloudflare sets on every request
 * it routes to the Worker; it is never logged. An IPv6 address is counted by
 * its /64 (`limitKeyOf`).
 */
import type { SignInBindings } from "../config";
import { logEvent } from "../log";
import { AUTHORIZE_PATH, REGISTER_PATH, SIGN_OUT_PATH, TOKEN_PATH } from "./provider";
import { CALLBACK_PATH } from "./upstream";

const LIMITED = new Set([AUTHORIZE_PATH, REGISTER_PATH, TOKEN_PATH, CALLBACK_PATH, SIGN_OUT_PATH]);
const RETRY_AFTER_S = 60;

/**
 * What an address is counted under: an IPv6 address's first 64 bits, written one way. A /64 is
 * one network, the least a subscriber is given (RFC 6177), whose 2^64 addresses a client may take
 * each in turn at no cost; counted one by one, the limit held no one back. Anything else is
 * counted as it is.
 */
export function limitKeyOf(address: string): string {
  // An IPv4 address, also one written in IPv6 (`::ffff:192.0.2.1`), whose network is its own.
  if (!address.includes(":") || address.includes(".")) return address;
  const [head = "", tail] = address.toLowerCase().split("::", 2);
  const groups = head === "" ? [] : head.split(":");
  // Where `::` comes within the first 64 bits, the groups after it up to them are zeros.
  if (tail !== undefined) {
    const after = tail === "" ? 0 : tail.split(":").length;
    while (groups.length < 8 - after) groups.push("0");
  }
  const network = groups.slice(0, 4);
  if (network.length < 4 || !network.every((group) => /^[0-9a-f]{1,4}$/.test(group))) {
    return address;
  }
  return `${network.map((group) => Number.parseInt(group, 16).toString(16)).join(":")}::/64`;
}

/** The proxy's 429 for a sign-in request over the limit; `undefined` for any other request. */
export async function signInLimited(
  request: Request,
  auth: SignInBindings,
): Promise<Response | undefined> {
  const path = new URL(request.url).pathname;
  if (!LIMITED.has(path)) return undefined;
  const key = limitKeyOf(request.headers.get("cf-connecting-ip") ?? "unknown");
  const { success } = await auth.signInRateLimit.limit({ key });
  if (success) return undefined;
  logEvent("sign_in_rate_limited", { path });
  return Response.json(
    {
      error: "temporarily_unavailable",
      error_description: "Too many sign-in requests from this address; try again in a minute",
    },
    { status: 429, headers: { "retry-after": String(RETRY_AFTER_S) } },
  );
}
