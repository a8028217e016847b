/**
 * How the proxy asks an authorization server or identity provider anything
 * (oauth4webapi's requests, in broker and gate mode): each request's options
 * (a timeout, an answer read within a bound, plain http only on a loopback
 * host), and how a failed step reads, for logs and for the user.
 */
import * as oauth from "oauth4webapi";
import { type Config, isLoopbackHost } from "../config";
import { statusLineOf } from "../transport/origin";
import { readBounded } from "../transport/read-bounded";

/** The timeout, the bound on what is read of an answer, and plain http only on a loopback host. */
export interface RequestOptions {
  signal: () => AbortSignal;
  [oauth.customFetch]: typeof boundedFetch;
  [oauth.allowInsecureRequests]?: boolean;
}

/**
 * The most of an authorization server's or identity provider's answer the
 * proxy reads: metadata, a registration, tokens and keys are a few KiB
 * (a large provider's JWKS some 20). oauth4webapi reads an answer whole,
 * and without `UPSTREAM_ISSUER` the origin names the server, which could
 * answer until the isolate's memory ran out (every request it serves fails).
 */
export const MAX_ANSWER_BYTES = 256 * 1024;

/** An answer past `MAX_ANSWER_BYTES`, unread past it. */
export class AnswerTooLarge extends Error {
  constructor(url: string) {
    super(`${url} answered more than ${MAX_ANSWER_BYTES} bytes`);
    this.name = "AnswerTooLarge";
  }
}

/** `fetch` for oauth4webapi: the answer read within `MAX_ANSWER_BYTES`, or `AnswerTooLarge`. */
async function boundedFetch(url: string, init: RequestInit): Promise<Response> {
  const response = await fetch(url, init);
  if (response.body === null) return response;
  const read = await readBounded(response.body, MAX_ANSWER_BYTES);
  if (read.kind !== "complete") {
    await read.rest.cancel();
    throw new AnswerTooLarge(url);
  }
  return new Response(read.bytes, { ...statusLineOf(response), headers: response.headers });
}

/** A step of signing in at the origin failed: `reason` for logs, `message` for the user, `cause` kept. */
export class UpstreamError extends Error {
  constructor(
    /** A short, stable reason for logs and the error page. */
    readonly reason: string,
    message: string,
    cause?: unknown,
    /** The authorization server's HTTP status, when it answered. */
    readonly status?: number,
  ) {
    super(message, { cause });
  }
}

/** `step`'s result; its failure as an `UpstreamError` with `reason`, `message` and the cause. */
export async function attempt<T>(
  reason: string,
  message: string,
  step: () => Promise<T>,
): Promise<T> {
  try {
    return await step();
  } catch (error) {
    throw error instanceof UpstreamError ? error : new UpstreamError(reason, message, error);
  }
}

export function requestOptions(config: Config, url: URL): RequestOptions {
  return {
    signal: () => AbortSignal.timeout(config.originTimeoutMs),
    [oauth.customFetch]: boundedFetch,
    // OAuth 2.1 wants https; plain http is for a local origin under `wrangler dev` and tests.
    ...(isLoopbackHost(url.hostname) ? { [oauth.allowInsecureRequests]: true } : {}),
  };
}

/**
 * Why a request to an authorization server failed, as an operator reads it:
 * which URL, and whether it could not be reached, did not answer in time or
 * answered what (the runtime's own message for an unreachable host is an
 * opaque `internal error; reference = …`).
 */
export function failureAt(
  url: URL,
  error: unknown,
  timeoutMs: number,
): { reached: boolean; detail: string } {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  const name = error instanceof Error ? error.name : "";
  if (name === "TimeoutError" || name === "AbortError") {
    return { reached: false, detail: `${url.href} did not answer within ${timeoutMs} ms` };
  }
  if (error instanceof AnswerTooLarge) return { reached: true, detail: error.message };
  const cause = error instanceof Error ? error.cause : undefined;
  if (cause instanceof Response) {
    return { reached: true, detail: `${url.href} answered HTTP ${cause.status} (${text})` };
  }
  // oauth4webapi's own errors: an answer that is no usable metadata.
  if (
    error instanceof oauth.OperationProcessingError ||
    error instanceof oauth.ResponseBodyError ||
    error instanceof oauth.UnsupportedOperationError
  ) {
    return { reached: true, detail: `${url.href}: ${text}` };
  }
  return { reached: false, detail: `${url.href} could not be reached (${text})` };
}
