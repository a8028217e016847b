/** Raw MCP over Streamable HTTP, for tests that look at the wire itself. */
import { type EventSourceMessage, EventSourceParserStream } from "eventsource-parser/stream";
import type { Fetch } from "./proxy";

export const PROTOCOL_VERSION = "2025-11-25";

export const ACCEPT_BOTH = "application/json, text/event-stream";

export function rpc(id: number | string, method: string, params?: Record<string, unknown>) {
  return { jsonrpc: "2.0", id, method, ...(params ? { params } : {}) };
}

export function postJson(
  fetch: Fetch,
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: ACCEPT_BOTH, ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

/** An `initialize` request, as a client with `capabilities` sends it. */
export function initialize(id: number | string = 0, capabilities: Record<string, unknown> = {}) {
  return rpc(id, "initialize", {
    protocolVersion: PROTOCOL_VERSION,
    capabilities,
    clientInfo: { name: "edge-rewriter-tests", version: "1.0.0" },
  });
}

/** Initializes a session and returns the headers every later request must carry. */
export async function openSession(
  fetch: Fetch,
  url: string,
  headers: Record<string, string> = {},
): Promise<Record<string, string>> {
  const response = await postJson(fetch, url, initialize(0, { elicitation: {} }), headers);
  if (response.status !== 200) throw new Error(`initialize: ${response.status}`);
  await response.body?.cancel();
  const sessionHeaders = {
    ...headers,
    "mcp-session-id": response.headers.get("mcp-session-id") ?? "",
    "mcp-protocol-version": PROTOCOL_VERSION,
  };
  const initialized = await postJson(
    fetch,
    url,
    { jsonrpc: "2.0", method: "notifications/initialized" },
    sessionHeaders,
  );
  await initialized.body?.cancel();
  return sessionHeaders;
}

/** The events of an SSE response, one at a time as they arrive. */
export function sseEvents(response: Response): ReadableStreamDefaultReader<EventSourceMessage> {
  if (!response.body) throw new Error("no body");
  return response.body
    .pipeThrough(new TextDecoderStream())
    .pipeThrough(new EventSourceParserStream())
    .getReader();
}

export async function nextMessage(
  events: ReadableStreamDefaultReader<EventSourceMessage>,
): Promise<Record<string, unknown>> {
  for (;;) {
    const { done, value } = await events.read();
    if (done) throw new Error("stream ended");
    if (value.data) return JSON.parse(value.data);
  }
}

/** The JSON-RPC messages of a response, whether the origin chose JSON or SSE. */
export async function messagesOf(response: Response): Promise<Record<string, unknown>[]> {
  // Type and subtype are case-insensitive (RFC 9110 §8.3.1): read as the Python SDK reads them.
  if (!(response.headers.get("content-type") ?? "").toLowerCase().includes("text/event-stream")) {
    const body = await response.json();
    return Array.isArray(body) ? body : [body as Record<string, unknown>];
  }
  const events = sseEvents(response);
  const messages: Record<string, unknown>[] = [];
  for (;;) {
    const { done, value } = await events.read();
    if (done) return messages;
    if (value.data) messages.push(JSON.parse(value.data));
  }
}

/** The `_meta` envelope a 2026-07-28 request carries (SEP-2575), as a client without capabilities writes it. */
export const ENVELOPE_2026 = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
  "io.modelcontextprotocol/clientInfo": { name: "edge-rewriter-tests", version: "1.0.0" },
};

/** Asks one request of an exchange, and gets the messages of its answer. */
export type Ask = (
  id: number | string,
  method: string,
  params?: Record<string, unknown>,
) => Promise<Record<string, unknown>[]>;

/** A wire's single request, as a client writes it outside a session: its body and MCP headers. */
export interface WireRequest {
  body: Record<string, unknown>;
  headers: Record<string, string>;
}

/**
 * One request as a client of `revision` writes it with no session: a
 * 2025-11-25 client's after `initialize` with a stateless server (the
 * `MCP-Protocol-Version` header), or a 2026-07-28 client's (the `_meta`
 * envelope, `Mcp-Method` and a call's `Mcp-Name`).
 */
export function wireRequest(
  revision: "2025-11-25" | "2026-07-28",
  id: number | string,
  method: string,
  params: Record<string, unknown> = {},
): WireRequest {
  if (revision === PROTOCOL_VERSION) {
    return { body: rpc(id, method, params), headers: { "mcp-protocol-version": revision } };
  }
  const headers: Record<string, string> = {
    "mcp-protocol-version": revision,
    "mcp-method": method,
  };
  if (method === "tools/call" && typeof params.name === "string") headers["mcp-name"] = params.name;
  return { body: rpc(id, method, { ...params, _meta: ENVELOPE_2026 }), headers };
}

/**
 * Raw requests to `url` as a client of `revision` writes them, for tests that
 * write the wire themselves on each: a 2025-11-25 session (`initialize`
 * first, its headers on every request), or 2026-07-28 requests (no session;
 * see `wireRequest`).
 */
export async function rawExchange(
  revision: "2025-11-25" | "2026-07-28",
  fetch: Fetch,
  url: string,
): Promise<Ask> {
  if (revision === PROTOCOL_VERSION) {
    const session = await openSession(fetch, url);
    return async (id, method, params) =>
      messagesOf(await postJson(fetch, url, rpc(id, method, params), session));
  }
  return async (id, method, params) => {
    const { body, headers } = wireRequest(revision, id, method, params);
    return messagesOf(await postJson(fetch, url, body, headers));
  };
}
