/**
 * One reading of a POST's messages and its protocol 2026-07-28 headers
 * (SECURITY.md, One reading of every request): what every reader of the
 * request, a gateway before the proxy, the proxy, and the origin after it,
 * takes it to say, or why it has no such reading, which the proxy refuses
 * before anything else reads it.
 */
import { ErrorCode, type JsonRpcMessage } from "./jsonrpc";
import { batchHeader, headerMismatch } from "./mcp-headers";
import { versionMismatch } from "./revision";

/** Why a request has no one reading: the error the proxy answers it with (HTTP 400, each request's id). */
export interface ReadingRefusal {
  code: number;
  message: string;
}

/**
 * `Mcp-Name` or an `Mcp-Param-*` header beside a message with a method but
 * no `Mcp-Method`; `undefined` when there is none, or `Mcp-Method` is sent.
 * No revision has the one without the other: up to 2025-11-25 none of them
 * exists, and from 2026-07-28 every request names its method in
 * `Mcp-Method`, whose absence the SDK 2.x server refuses (`-32020`). The
 * proxy checks a call's `Mcp-Param-*` and writes it again from the call it
 * forwards only for a client that speaks these headers: the rest were
 * forwarded as sent beside a body the proxy changed (a name restored,
 * arguments repaired), so a gateway before the proxy routed by one value
 * and the origin, or one after it, read the body's. Dropped or written
 * again, they would still have that gateway judge a call the origin does
 * not run.
 */
function mirroredWithoutMethod(headers: Headers, message: JsonRpcMessage | undefined) {
  if (!message || !("method" in message) || headers.has("mcp-method")) return undefined;
  for (const name of headers.keys()) {
    if (name === "mcp-name") return "Mcp-Name";
    if (name.startsWith("mcp-param-")) return "Mcp-Param-*";
  }
  return undefined;
}

/**
 * Why a request's 2026-07-28 headers do not say what its body does, as the
 * origin would refuse them (`-32020`, HeaderMismatch), before the proxy
 * answers anything itself or brings a header in line with the body it
 * forwards; `undefined` when they do. A batch (2025-03-26) carries none of
 * them: each names one request.
 */
function headerRefusal(headers: Headers, batch: boolean, messages: JsonRpcMessage[]) {
  if (batch) {
    const header = batchHeader(headers);
    return (
      header && `Header mismatch: a batch carries no ${header} header, which names one request`
    );
  }
  const [message] = messages;
  const disagrees = (header: string) =>
    `Header mismatch: the ${header} header does not match the request body`;
  const version = versionMismatch(headers, message);
  if (version !== undefined) return disagrees(version);
  const unnamed = mirroredWithoutMethod(headers, message);
  if (unnamed !== undefined) {
    return `Header mismatch: the ${unnamed} header comes without Mcp-Method, which every request that mirrors its body in headers carries (protocol 2026-07-28)`;
  }
  const mismatch = headerMismatch(headers, message);
  return mismatch && disagrees(mismatch);
}

/** Why the proxy refuses a POST of `messages` with `headers` unread by the origin; `undefined`: it reads one way. */
export function readingRefusal(
  headers: Headers,
  { batch, messages }: { batch: boolean; messages: JsonRpcMessage[] },
): ReadingRefusal | undefined {
  const header = headerRefusal(headers, batch, messages);
  return header === undefined ? undefined : { code: ErrorCode.HeaderMismatch, message: header };
}
