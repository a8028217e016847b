/**
 * Talking to the origin: the only place the proxy uses the network.
 *
 * - Every target URL is built from `ORIGIN_URL` (origin-target.ts): nothing
 *   in a request can change the host.
 * - `fetchOrigin` sends one request. Redirects are handed back, not followed;
 *   on the MCP endpoint, `redirectRefused` answers one itself.
 *   The timeout covers the wait for the response headers only: once the
 *   origin has answered, a stream may stay open as long as it likes, or until
 *   the client goes away (`clientLeft`; for a read the proxy makes for
 *   itself, also its time is up): then the origin's request is aborted,
 *   and its stream ends at once for whatever reads it. An
 *   origin that cannot be reached, does not answer in time, or answers with
 *   a status no response may carry (600, say) gets the proxy's own JSON-RPC
 *   error (502 / 504), addressed to the requests that were waiting; any answer the origin does give, 401 and 404 included, is the
 *   origin's, its body unread. On the MCP endpoint and for a relayed
 *   `/.well-known/` document, a 5xx of the origin's is logged too
 *   (`logOriginError`).
 * - `relayResponse` hands an origin's response to the client with its
 *   end-to-end headers; `cookiesForClient`, the cookies the origin sets as a
 *   client may have them.
 */
import { logEvent } from "../log";
import { type ErrorAddressee, ErrorCode, errorResponse } from "../protocol/jsonrpc";
import { clientResponseHeaders, type OriginCredentials, responseHeadersToDrop } from "./headers";

export type OriginFailure = "timeout" | "unreachable";

export type OriginReply =
  | { kind: "answered"; response: Response }
  /** `response` is the proxy's own 502 or 504, ready for the client. */
  | { kind: "failed"; failure: OriginFailure; response: Response };

export interface OriginRequest {
  method: string;
  headers: Headers;
  body: BodyInit | null;
  /**
   * Aborted when the client goes away (the incoming request's `signal`, under
   * the `enable_request_signal` compatibility flag). Without it, an answer the
   * proxy reads in JavaScript (a copy for call analytics, a pump that rewrites
   * a listing) would keep the origin's stream open while the origin sends
   * nothing: the runtime tells a stream that its reader left only when more
   * is written to it. For a read the proxy makes for itself (its own listing,
   * `/readyz`), aborted too when that read's time is up.
   */
  clientLeft?: AbortSignal;
  /**
   * What the request asks, for the line of its failure: a lone message's
   * method and, for a call, its tool (as forwarded), named as the call's
   * data point names them (docs/observability.md), so that the timeouts of
   * one tool are found by its name.
   */
  about?: { "mcp.method.name": string; "gen_ai.tool.name"?: string };
}

/**
 * A URL as text writes it: a scheme, `://`, and what follows up to a space, a
 * quote or a bracket, but for the punctuation that ends a sentence. A scheme
 * of 32 characters at most: unbounded, a long run of them (`a.a.a.…`) was
 * read again from each of its dots.
 */
const URL_IN_TEXT = /\b[a-z][a-z\d+.-]{0,31}:\/\/(?:[^\s"'`<>()[\]]*[^\s"'`<>()[\].,;:!?])?/gi;

/** What `withoutOriginPath` reads of a text at most, besides the target's path and query. */
const SCRUBBED_CHARS = 1024;

/** `text` decoded as a URL's path decodes, where it holds an escape; else `undefined`. */
function decoded(text: string): string | undefined {
  try {
    const read = decodeURI(text);
    return read === text ? undefined : read;
  } catch {
    return undefined;
  }
}

/**
 * `text` (what a runtime's error says, for a log line) with every URL in it
 * written as its scheme and host alone, and `target`'s path and query
 * nowhere: a message may quote the URL it was given, built from
 * `ORIGIN_URL`, whose path or query may hold a key (docs/transport.md), and
 * the log names the origin by its host (`origin`). Scrubbed before the log
 * cuts it: a URL the log cut would hide from the scrub.
 */
export function withoutOriginPath(text: string, target: URL): string {
  const { pathname, search } = target;
  const parts = [pathname + search, search, pathname, decoded(pathname)].filter(
    (part): part is string => part !== undefined && part.length > 1,
  );
  // A log line keeps 256 characters of a string: a longer text is read only so far, so the scrub
  // costs no more than that, with no part of the target's left at its end half written, where
  // the scrub would not find it (a URL with its scheme is found cut too).
  let said =
    text.length > SCRUBBED_CHARS ? withoutPartEnding(text.slice(0, SCRUBBED_CHARS), parts) : text;
  said = said.replace(URL_IN_TEXT, (url) => {
    if (!URL.canParse(url)) return "…";
    const { protocol, host } = new URL(url);
    return `${protocol}//${host}/…`;
  });
  for (const part of parts) said = said.replaceAll(part, "…");
  return said;
}

/** The runtime's message of `error`, thrown while `target` was asked, scrubbed (`withoutOriginPath`). */
export const errorDetail = (error: unknown, target: URL): string =>
  withoutOriginPath(error instanceof Error ? error.message : String(error), target);

/** `text` without what it ends in that begins one of `parts` (read no further than a cut). */
function withoutPartEnding(text: string, parts: readonly string[]): string {
  let cut = text;
  for (let changed = true; changed; ) {
    changed = false;
    for (const part of parts) {
      for (let k = Math.min(part.length - 1, cut.length); k > 0; k--) {
        if (cut.endsWith(part.slice(0, k))) {
          cut = cut.slice(0, -k);
          changed = true;
          break;
        }
      }
    }
  }
  return cut;
}

export async function fetchOrigin(
  target: URL,
  request: OriginRequest,
  timeoutMs: number,
  addressee: ErrorAddressee,
): Promise<OriginReply> {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  const { clientLeft, about, ...init } = request;
  try {
    const response = await fetch(target, {
      ...init,
      redirect: "manual",
      signal: controller.signal,
    });
    // A status no response may carry (the runtime's fetch hands on any three digits): rebuilt to
    // leave out a header, or passed on, it was the proxy's own 500.
    if (response.status < 200 || response.status > 599) {
      await response.body?.cancel();
      const status = `HTTP ${response.status}`;
      return failed(
        "unreachable",
        target,
        request,
        `answered with ${status}`,
        errorResponse(
          502,
          ErrorCode.OriginUnreachable,
          `Bad gateway: ${target.host} answered with ${status}, a status no HTTP response may carry (200 to 599)`,
          addressee,
        ),
      );
    }
    // Only once answered: an abort before would read as an origin that could not be reached
    // (a 502 and its log line); the wait for the answer has its timeout.
    if (clientLeft?.aborted) controller.abort();
    else clientLeft?.addEventListener("abort", () => controller.abort(), { once: true });
    return { kind: "answered", response };
  } catch (error) {
    const failure = timedOut ? "timeout" : "unreachable";
    // The abort's own message ("The operation was aborted") would say nothing of why.
    const detail = timedOut ? `no answer within ${timeoutMs} ms` : errorDetail(error, target);
    const response = failureResponse(failure, target, timeoutMs, addressee);
    return failed(failure, target, request, detail, response);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * An answer whose body was not read whole: past `timeoutMs` of the request
 * (`timedOut`; `fetchOrigin`'s timeout covers the headers alone, and an
 * origin that sends them and then trickles its body, or never ends it, held
 * the client's request for as long as the client waited), or broken off
 * (`error`), logged as `fetchOrigin`'s failures are.
 */
export function answerUnread(
  target: URL,
  request: OriginRequest,
  timeoutMs: number,
  addressee: ErrorAddressee,
  { timedOut, error }: { timedOut: boolean; error: unknown },
): OriginReply {
  const failure = timedOut ? "timeout" : "unreachable";
  const detail = timedOut
    ? `the answer was not read whole within ${timeoutMs} ms`
    : errorDetail(error, target);
  return failed(
    failure,
    target,
    request,
    detail,
    failureResponse(failure, target, timeoutMs, addressee),
  );
}

/** A request to the origin that failed, logged: `response` is the proxy's answer in its place. */
function failed(
  failure: OriginFailure,
  target: URL,
  { method, about }: OriginRequest,
  detail: string,
  response: Response,
): OriginReply {
  logEvent(failure === "timeout" ? "origin_timeout" : "origin_unreachable", {
    origin: target.host,
    method,
    ...about,
    detail,
  });
  return { kind: "failed", failure, response };
}

/**
 * An origin's own 5xx answer to a request to the MCP endpoint, or for a
 * `/.well-known/` document the proxy relays (`document`, its name), logged
 * (`origin_error`), as its failure to answer is (`failed`): relayed as it
 * came, it left the engineer without call analytics the runtime's status
 * alone, and no tool, or no word of why clients could not sign in. Its
 * status and what the request asked (`about`); never its body, which is not
 * read (it streams to the client unchanged), nor a header's value. A 4xx is
 * the origin's word on the request (a session it no longer has, a client
 * over its rate), for the client to act on, and a client sends as many as
 * it likes: no line.
 */
export function logOriginError(
  response: Response,
  target: URL,
  { method, about }: Pick<OriginRequest, "method" | "about">,
  document?: string,
): void {
  if (response.status < 500) return;
  logEvent("origin_error", {
    origin: target.host,
    method,
    status: response.status,
    ...about,
    ...(document === undefined ? {} : { document }),
  });
}

function failureResponse(
  failure: OriginFailure,
  target: URL,
  timeoutMs: number,
  addressee: ErrorAddressee,
): Response {
  return failure === "timeout"
    ? errorResponse(
        504,
        ErrorCode.OriginTimeout,
        `Origin timeout: ${target.host} did not answer within ${timeoutMs} ms`,
        addressee,
      )
    : errorResponse(
        502,
        ErrorCode.OriginUnreachable,
        `Origin unreachable: ${target.host} could not be reached`,
        addressee,
      );
}

/**
 * The proxy's 502 for an origin that answered a request to `target` (its
 * MCP endpoint, `ORIGIN_URL`) with a redirect; `undefined` for any other
 * answer. Its `Location` would tell the client `ORIGIN_URL` and what it
 * holds (a key in its query or path, which the origin writes back as it
 * was asked: Starlette's redirect to a trailing slash, for one), and a
 * client that follows it talks to the origin past the proxy and the
 * operator's rules; nor does the proxy follow it, with the credentials
 * the request carries. Where it points goes to the log as a host alone.
 */
export async function redirectRefused(
  origin: Response,
  target: URL,
  addressee: ErrorAddressee,
): Promise<Response | undefined> {
  const location = origin.headers.get("location");
  if (origin.status < 300 || origin.status > 399 || location === null) return undefined;
  await origin.body?.cancel();
  const to = URL.canParse(location, target) ? new URL(location, target).host : "not a URL";
  logEvent("origin_redirected", { origin: target.host, status: origin.status, to });
  return errorResponse(
    502,
    ErrorCode.OriginUnreachable,
    `Bad gateway: the origin answered with a redirect (HTTP ${origin.status}), which the proxy neither follows nor passes on: ORIGIN_URL must be the URL the origin serves MCP at (the origin_redirected log line says which host it named)`,
    addressee,
  );
}

/**
 * The origin's status line, as a response the proxy builds anew from the
 * origin's carries it. `Response` refuses a tab in its `statusText`, which a
 * reason phrase may hold (RFC 9112 §4) and the runtime's fetch hands on: an
 * origin's `200 All<TAB>good` was the proxy's own 500, and to a `HEAD`, which
 * Hono answers with the GET's answer made anew, a throw of the Worker's. It
 * goes as a space.
 */
export function statusLineOf(origin: Response): { status: number; statusText: string } {
  return { status: origin.status, statusText: origin.statusText.replaceAll("\t", " ") };
}

/**
 * The origin's response for the client: its status and end-to-end headers,
 * and `body` (its own by default; its own bytes, read, keep its
 * `Content-Length`; a new stream loses it). With its own body, no header to
 * leave out and a status line `Response` takes, it is the origin's response
 * itself: nothing rebuilt.
 */
export function relayResponse(
  origin: Response,
  body: ReadableStream | Uint8Array | null = origin.body,
): Response {
  const drop = responseHeadersToDrop(origin.headers);
  const line = statusLineOf(origin);
  if (body === origin.body && drop.length === 0 && line.statusText === origin.statusText) {
    return origin;
  }
  const headers = clientResponseHeaders(origin.headers, drop);
  if (body instanceof ReadableStream && body !== origin.body) headers.delete("content-length");
  return new Response(body, { ...line, headers });
}

/**
 * The origin's response with the cookies a client may have from it. In
 * broker mode none: a cookie the origin sets is a credential there, and the
 * client holds none of the origin's (with one it could call the origin past
 * the proxy and the operator's rules; nor would it serve, as a client's own
 * cookies never reach the origin in broker mode). In relay mode each for the
 * proxy's host alone, as it was for the origin's: with its `Domain`, a cookie
 * from the proxy's host would reach every host of the operator's domain.
 */
export function cookiesForClient(origin: Response, credentials: OriginCredentials): Response {
  // Most answers set none: no list of them is made.
  if (!origin.headers.has("set-cookie")) return origin;
  const cookies = origin.headers.getSetCookie();
  const kept = credentials.kind === "proxy" ? [] : cookies.map(withoutDomain);
  if (kept.length === cookies.length && kept.every((cookie, i) => cookie === cookies[i])) {
    return origin;
  }
  const headers = new Headers(origin.headers);
  headers.delete("set-cookie");
  for (const cookie of kept) headers.append("set-cookie", cookie);
  return new Response(origin.body, { ...statusLineOf(origin), headers });
}

/** A `Set-Cookie` value without its `Domain` attributes (RFC 6265 §5.2): the cookie of one host. */
const withoutDomain = (cookie: string) =>
  cookie
    .split(";")
    .filter((part, index) => index === 0 || !/^\s*domain\s*=/i.test(part))
    .join(";");
