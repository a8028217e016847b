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
 * it routes to the Worker; it is never logged.
 */
import type { SignInBindings } from "../config";
import { logEvent } from "../log";
import { AUTHORIZE_PATH, REGISTER_PATH, SIGN_OUT_PATH, TOKEN_PATH } from "./provider";
import { CALLBACK_PATH } from "./upstream";

const LIMITED = new Set([AUTHORIZE_PATH, REGISTER_PATH, TOKEN_PATH, CALLBACK_PATH, SIGN_OUT_PATH]);
const RETRY_AFTER_S = 60;

/** The proxy's 429 for a sign-in request over the limit; `undefined` for any other request. */
export async function signInLimited(
  request: Request,
  auth: SignInBindings,
): Promise<Response | undefined> {
  const path = new URL(request.url).pathname;
  if (!LIMITED.has(path)) return undefined;
  const key = request.headers.get("cf-connecting-ip") ?? "unknown";
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
