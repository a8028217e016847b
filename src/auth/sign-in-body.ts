/**
 * The bodies broker and gate mode's sign-in routes read whole: the consent
 * page's answer (`POST /authorize`, routes/authorize.ts) and the token
 * endpoint's requests (`POST /oauth/token`, read by workers-oauth-provider),
 * both with `formData()`, which reads any length; and a registration
 * (`POST /oauth/register`), which the library reads to 1 MiB and stores as
 * it came. Requests an isolate serves at once share its 128 MB, so a client
 * that streamed a form without end would end every one of them; and a
 * registration is kept in `OAUTH_KV` for 90 days, where a Free plan's account
 * holds 1 GB in all: the day's budget counts registrations (sign-in-budget.ts),
 * not their bytes, and 125 a day of 1 MiB each filled it in eight days,
 * after which no write of the account's (the tool map's too) went through.
 * Each is read here to its bound first, past which it is refused `413`
 * unread. (No other sign-in route reads a body.)
 */
import { logEvent } from "../log";
import { readBounded } from "../transport/read-bounded";
import { AUTHORIZE_PATH, REGISTER_PATH, TOKEN_PATH } from "./provider";

/**
 * The most of a sign-in form the proxy reads: a consent answer is some
 * hundred bytes, a token request a few hundred, or some 16 KiB with a
 * client assertion (the library's bound for one).
 */
export const MAX_SIGN_IN_FORM_BYTES = 64 * 1024;

/**
 * The most of a registration the proxy reads: a client's metadata, as a
 * Client ID Metadata Document holds the same and the library reads one to
 * 5 KiB; clients register with a few hundred bytes. At the day's budget
 * (125 registrations at the default), 90 days of them hold some 90 MB.
 */
export const MAX_REGISTRATION_BYTES = 8 * 1024;

const READ_WHOLE = new Map([
  [AUTHORIZE_PATH, MAX_SIGN_IN_FORM_BYTES],
  [TOKEN_PATH, MAX_SIGN_IN_FORM_BYTES],
  [REGISTER_PATH, MAX_REGISTRATION_BYTES],
]);

function tooLarge(path: string, limit: number): Response {
  logEvent("sign_in_body_too_large", { path, limit });
  return Response.json(
    {
      error: "invalid_request",
      error_description: `The request's body is larger than ${limit} bytes, the most this sign-in request may be`,
    },
    { status: 413, headers: { "cache-control": "no-store" } },
  );
}

/** `request` with its body read within its route's bound, or the proxy's `413`; any other request as it came. */
export async function boundedSignInForm(request: Request): Promise<Request | Response> {
  const path = new URL(request.url).pathname;
  const limit = READ_WHOLE.get(path);
  if (request.method !== "POST" || request.body === null || limit === undefined) return request;
  const declared = Number(request.headers.get("content-length") ?? Number.NaN);
  if (declared > limit) {
    await request.body.cancel();
    return tooLarge(path, limit);
  }
  const read = await readBounded(request.body, limit);
  if (read.kind !== "complete") {
    await read.rest.cancel();
    return tooLarge(path, limit);
  }
  return new Request(request, { body: read.bytes });
}
