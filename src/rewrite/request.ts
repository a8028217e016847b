/**
 * Client → origin: what a POST body becomes before it is forwarded.
 *
 * Each `tools/call` is repaired (tools-call.ts); a call the proxy answers
 * itself leaves the body, and its answer is given back with the origin's.
 * `tools/list` requests are noted, so their results can be renamed on the way
 * back. A body with nothing to change is forwarded as its original bytes; a
 * changed one keeps the client's own text for every value it did not change
 * (json.ts, `stringifyExact`).
 */
import type { ValidationMode } from "../config";
import { stringifyExact } from "../json";
import { isRequest, type JsonRpcMessage, type RequestId } from "../protocol/jsonrpc";
import type { CallHeaders } from "../protocol/mcp-headers";
import type { ToolResolver } from "../toolmap/resolve-tool";
import type { ParsedBody } from "../transport/post-body";
import { repairToolCall } from "./tools-call";

export interface ForwardPlan {
  /** What to send the origin; `null` when the proxy answers every message itself. */
  body: Uint8Array | string | null;
  /** Ids of the `tools/list` requests, whose results get model-facing names. */
  listIds: Set<RequestId>;
  /** Answers the proxy gives itself, merged with the origin's. */
  localResponses: unknown[];
  /** For a body that is one `tools/call`: the headers the forwarded call implies. */
  callHeaders?: CallHeaders;
}

export async function planForward(
  body: ParsedBody,
  resolveTool: ToolResolver,
  mode: ValidationMode,
): Promise<ForwardPlan> {
  const listIds = new Set<RequestId>();
  const localResponses: unknown[] = [];
  const forwarded: JsonRpcMessage[] = [];
  let callHeaders: ForwardPlan["callHeaders"];
  let changed = false;

  for (const message of body.messages) {
    if (!isRequest(message) || message.method !== "tools/call") {
      if (isRequest(message) && message.method === "tools/list") listIds.add(message.id);
      forwarded.push(message);
      continue;
    }
    const outcome = await repairToolCall(message, resolveTool, mode, body.revision);
    if (outcome.kind === "answer") {
      localResponses.push(outcome.response);
      changed = true;
      continue;
    }
    changed ||= outcome.message !== message;
    callHeaders = outcome.headers;
    forwarded.push(outcome.message);
  }

  const plan = { listIds, localResponses, callHeaders: body.batch ? undefined : callHeaders };
  if (!changed) return { ...plan, body: body.bytes };
  if (forwarded.length === 0) return { ...plan, body: null };
  return { ...plan, body: stringifyExact(body.batch ? forwarded : forwarded[0], body.exact) };
}
