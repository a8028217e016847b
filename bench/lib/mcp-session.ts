/** Just enough of an MCP client to open sessions and send one message at a time. */

export const MCP_HEADERS = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  "mcp-protocol-version": "2025-11-25",
};

export type ResponseMode = "json" | "sse";

/** Opens a session directly at the origin; its answers come as JSON bodies or as event streams. */
export async function openSession(originUrl: URL, mode: ResponseMode): Promise<string> {
  const url = new URL(originUrl);
  if (mode === "json") url.searchParams.set("json", "");
  const initialize = await fetch(url, {
    method: "POST",
    headers: MCP_HEADERS,
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "mcp-edge-rewriter-bench", version: "1" },
      },
    }),
  });
  await initialize.body?.cancel();
  const sessionId = initialize.headers.get("mcp-session-id");
  if (!initialize.ok || !sessionId) throw new Error(`initialize failed: ${initialize.status}`);
  const initialized = await send(originUrl, sessionId, {
    jsonrpc: "2.0",
    method: "notifications/initialized",
  });
  await initialized.body?.cancel();
  return sessionId;
}

export function send(url: URL, sessionId: string, message: unknown): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: { ...MCP_HEADERS, "mcp-session-id": sessionId },
    body: JSON.stringify(message),
  });
}

/** The body of an answer, from a JSON body or from the last `data:` of an event stream. */
export async function answerText(response: Response): Promise<string> {
  const text = await response.text();
  if (!response.headers.get("content-type")?.includes("text/event-stream")) return text;
  const data = text.split("\n").filter((line) => line.startsWith("data:"));
  return data.at(-1)?.slice(5).trim() ?? "";
}
