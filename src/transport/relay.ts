/**
 * Sends one request to the origin and hands back its answer, unread: the
 * origin's body stays a stream. An origin that cannot be reached or does not
 * answer in time gets the proxy's own JSON-RPC error (502 / 504) addressed to
 * the requests that were waiting for it; any answer the origin does give, 401
 * and 404 included, is the origin's.
 */
import type { Config } from "../config";
import { type ErrorAddressee, ErrorCode, errorResponse } from "../jsonrpc";
import { logEvent } from "../log";
import { fetchOrigin } from "./fetch-origin";
import { clientResponseHeaders } from "./headers";

/** The origin's response for the client: its status and end-to-end headers, and `body` (its own by default). */
export function relayResponse(
  origin: Response,
  body: ReadableStream | null = origin.body,
): Response {
  const headers = clientResponseHeaders(origin.headers);
  if (body !== origin.body) headers.delete("content-length");
  return new Response(body, { status: origin.status, statusText: origin.statusText, headers });
}

export type OriginAnswer = { ok: true; response: Response } | { ok: false; response: Response };

export async function callOrigin(
  target: URL,
  init: { method: string; headers: Headers; body: BodyInit | null },
  config: Config,
  addressee?: ErrorAddressee,
): Promise<OriginAnswer> {
  const result = await fetchOrigin(target, init, config.originTimeoutMs);
  if (result.ok) return { ok: true, response: result.response };

  const host = target.host;
  logEvent(`origin_${result.failure}`, {
    origin: host,
    method: init.method,
    detail: result.detail,
  });
  const response =
    result.failure === "timeout"
      ? errorResponse(
          504,
          ErrorCode.OriginTimeout,
          `Origin timeout: ${host} did not answer within ${config.originTimeoutMs} ms`,
          addressee,
        )
      : errorResponse(
          502,
          ErrorCode.OriginUnreachable,
          `Origin unreachable: ${host} could not be reached`,
          addressee,
        );
  return { ok: false, response };
}
