/**
 * Sends one request to the origin and relays the answer, streamed: the origin's
 * body is handed to the client as a stream, never read here. An origin that
 * cannot be reached or does not answer in time gets the proxy's own JSON-RPC
 * error (502 / 504) addressed to the requests that were waiting for it; any
 * answer the origin does give, 401 and 404 included, reaches the client as is.
 */
import type { Config } from "../config";
import { type ErrorAddressee, ErrorCode, errorResponse } from "../jsonrpc";
import { logEvent } from "../log";
import { fetchOrigin } from "./fetch-origin";
import { clientResponseHeaders, originRequestHeaders } from "./headers";

export function relayResponse(origin: Response): Response {
  return new Response(origin.body, {
    status: origin.status,
    statusText: origin.statusText,
    headers: clientResponseHeaders(origin.headers),
  });
}

export async function relayToOrigin(
  target: URL,
  request: Request,
  body: BodyInit | null,
  config: Config,
  addressee?: ErrorAddressee,
): Promise<Response> {
  const result = await fetchOrigin(
    target,
    { method: request.method, headers: originRequestHeaders(request.headers), body },
    config.originTimeoutMs,
  );
  if (result.ok) return relayResponse(result.response);

  const host = target.host;
  logEvent(`origin_${result.failure}`, {
    origin: host,
    method: request.method,
    detail: result.detail,
  });
  return result.failure === "timeout"
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
}
