/**
 * Client → origin: what a POST body becomes before it is forwarded.
 *
 * `tools/call` gets back the tool's original name. `tools/list` requests are
 * noted, so their results can be renamed on the way back. A body with nothing
 * to change is forwarded as its original bytes.
 */
import { isRequest, type JsonRpcMessage, type RequestId } from "../jsonrpc";
import { logEvent } from "../log";
import type { ToolResolver } from "../toolmap/resolve-tool";

export interface ForwardPlan {
  body: Uint8Array | string;
  /** Ids of the `tools/list` requests, whose results get model-facing names. */
  listIds: Set<RequestId>;
  /** The original name of a lone `tools/call` whose name was restored (for `Mcp-Name`). */
  restoredName?: string;
}

interface ParsedBody {
  bytes: Uint8Array;
  messages: JsonRpcMessage[];
  batch: boolean;
}

async function restoreName(
  message: JsonRpcMessage,
  resolveTool: ToolResolver,
): Promise<JsonRpcMessage | undefined> {
  const params = (message as { params?: unknown }).params;
  const name = (params as { name?: unknown } | undefined)?.name;
  if (typeof name !== "string") return undefined;
  const resolved = await resolveTool(name);
  if (!resolved) {
    logEvent("tool_unknown", { name });
    return undefined;
  }
  const { original } = resolved.entry;
  if (original === name) return undefined;
  logEvent("tool_call_restored", { from: name, to: original, source: resolved.source });
  return { ...message, params: { ...(params as object), name: original } };
}

export async function planForward(
  body: ParsedBody,
  resolveTool: ToolResolver,
): Promise<ForwardPlan> {
  const listIds = new Set<RequestId>();
  let restoredName: string | undefined;
  let changed = false;
  const messages: JsonRpcMessage[] = [];
  for (const message of body.messages) {
    if (isRequest(message) && message.method === "tools/list") listIds.add(message.id);
    const restored =
      isRequest(message) && message.method === "tools/call"
        ? await restoreName(message, resolveTool)
        : undefined;
    if (restored) {
      changed = true;
      restoredName = (restored.params as { name: string }).name;
    }
    messages.push(restored ?? message);
  }
  if (!changed) return { body: body.bytes, listIds };
  return {
    body: JSON.stringify(body.batch ? messages : messages[0]),
    listIds,
    restoredName: body.batch ? undefined : restoredName,
  };
}
