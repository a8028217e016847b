/**
 * The forms broker and gate mode's sign-in routes read whole: the consent
 * page's answer (`POST /authorize`, routes/authorize.ts) and the token
 * endpoint's requests (`POST /oauth/token`, read by workers-oauth-provider),
 * both with `formData()`, which reads any length. Requests an isolate serves
 * at once share its 128 MB, so a client that streamed one of these without
 * end would end every one of them; each is read here to a bound first, past
 * which it is refused `413` unread. (Registrations the library reads to its
 * own bound, 1 MiB; no other sign-in route reads a body.)
 */
import { logEvent } from "../log";
import { readBounded } from "../transport/read-bounded";
import { AUTHORIZE_PATH, TOKEN_PATH } from "./provider";

/**
 * The most of a sign-in form the proxy reads: a consent answer is some
 * hundred bytes, a token request a few hundred, or some 16 KiB with a
 * client assertion (the library's bound for one).
 */
export const MAX_SIGN_IN_FORM_BYTES = 64 * 1024;

const READ_WHOLE = new Set([AUTHORIZE_PATH, TOKEN_PATH]);

function tooLarge(path: string): Response {
  logEvent("sign_in_body_too_large", { path, limit: MAX_SIGN_IN_FORM_BYTES });
  return Response.json(
    {
      error: "invalid_request",
      error_description: `The request's body is larger than ${MAX_SIGN_IN_FORM_BYTES} bytes, the most a sign-in form may be`,
    },
    { status: 413, headers: { "cache-control": "no-store" } },
  );
}

/** `request` with its form read within `MAX_SIGN_IN_FORM_BYTES`, or the proxy's `413`; any other request as it came. */
export async function boundedSignInForm(request: Request): Promise<Request | Response> {
  const path = new URL(request.url).pathname;
  if (request.method !== "POST" || request.body === null || !READ_WHOLE.has(path)) return request;
  const declared = Number(request.headers.get("content-length") ?? Number.NaN);
  if (declared > MAX_SIGN_IN_FORM_BYTES) {
    await request.body.cancel();
    return tooLarge(path);
  }
  const read = await readBounded(request.body, MAX_SIGN_IN_FORM_BYTES);
  if (read.kind !== "complete") {
    await read.rest.cancel();
    return tooLarge(path);
  }
  return new Request(request, { body: read.bytes });
}
