/**
 * Which headers cross the proxy. End-to-end headers (Authorization,
 * Mcp-Session-Id, MCP-Protocol-Version, Last-Event-ID, Accept,
 * WWW-Authenticate, …) pass both ways; hop-by-hop headers (RFC 9110 §7.6.1),
 * and any the peer lists in `Connection`, describe one connection and stop here.
 */
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-authenticate",
  "proxy-authorization",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
]);

function endToEnd(headers: Headers, alsoDrop: readonly string[]): Headers {
  const named = (headers.get("connection") ?? "")
    .split(",")
    .map((token) => token.trim().toLowerCase())
    .filter(Boolean);
  const drop = new Set([...HOP_BY_HOP, ...named, ...alsoDrop]);
  const result = new Headers();
  for (const [name, value] of headers) {
    if (!drop.has(name)) result.append(name, value);
  }
  return result;
}

/** Headers for the request to the origin. `Host` and `Content-Length` are set by fetch itself. */
export function originRequestHeaders(clientHeaders: Headers): Headers {
  return endToEnd(clientHeaders, ["host", "content-length"]);
}

/**
 * Headers for the response to the client. An event stream goes out without
 * `Content-Encoding`: the runtime has already decoded the origin's body, and
 * re-compressing an event stream would hold events back in the encoder.
 */
export function clientResponseHeaders(originHeaders: Headers): Headers {
  const isEventStream = (originHeaders.get("content-type") ?? "").includes("text/event-stream");
  return endToEnd(originHeaders, isEventStream ? ["content-encoding", "content-length"] : []);
}
