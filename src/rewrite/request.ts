/**
 * Client → origin: what a POST body becomes before it is forwarded.
 *
 * Each `tools/call` is repaired (tools-call.ts); a call the proxy answers
 * itself leaves the body, and its answer is given back with the origin's.
 * In search mode (search-mode.ts) `search_tools` is answered here and
 * `call_tool` becomes the call it carries before it is repaired.
 * `tools/list` requests are noted, so their results can be renamed on the way
 * back. A body with nothing to change is forwarded as its original bytes; a
 * changed one is written over the client's text, which it keeps for every
 * message, member and value no call changed (json.ts, `spliceExact`). The
 * proxy's own answers take at most
 * `MAX_LOCAL_ANSWER_BYTES` together (local-answers.ts).
 */
import {
  callRecord,
  forwardedCallRecord,
  listRecord,
  type MessageRecord,
  taskRequestRecord,
} from "../analytics/call-record";
import type { ValidationMode } from "../config";
import { type ExactText, leadingBom, placesOnly, spliceExact, utf8Text } from "../json";
import {
  isRequest,
  type JsonRpcMessage,
  type JsonRpcRequest,
  type RequestId,
} from "../protocol/jsonrpc";
import type { CallHeaders } from "../protocol/mcp-headers";
import type { ToolResolver } from "../toolmap/resolve-tool";
import type { ToolSearch } from "../toolmap/tool-search";
import type { ParsedBody } from "../transport/post-body";
import { PROTOCOL_ERROR, type RefusedAs } from "./call-refusal";
import { LocalAnswers } from "./local-answers";
import { answerSearch, CALL_TOOL, SEARCH_TOOLS, unwrapCall } from "./search-mode";
import { repairToolCall } from "./tools-call";

/**
 * The listing in search mode, for a call named `search_tools` or `call_tool`
 * (`cause`); `undefined` when the profile does not serve the origin in search
 * mode (or the caller may not see its tools), and the call is the origin's.
 */
export type SearchModeLookup = (cause: JsonRpcRequest) => Promise<ToolSearch | undefined>;

const SEARCH_MODE_TOOLS = new Set([SEARCH_TOOLS, CALL_TOOL]);

export interface ForwardPlan {
  kind: "forward";
  /** What to send the origin; `null` when the proxy answers every message itself. */
  body: Uint8Array | string | null;
  /** The `tools/list` requests by id, whose results get model-facing names. */
  listRequests: Map<RequestId, JsonRpcRequest>;
  /** Answers the proxy gives itself, merged with the origin's: `MAX_LOCAL_ANSWER_BYTES` together. */
  localResponses: unknown[];
  /** For a body that is one `tools/call`: the headers the forwarded call implies. */
  callHeaders?: CallHeaders;
}

/** A body whose calls the proxy could not answer within `MAX_LOCAL_ANSWER_BYTES`, even briefly. */
export interface RefusedPlan {
  kind: "refused";
  message: string;
}

/**
 * `records`, when given, gets one record per `tools/call` and `tools/list`
 * for call analytics (analytics/call-record.ts), with the proxy's own answer
 * where it gave one (as `MAX_LOCAL_ANSWER_BYTES` let it be written), and
 * one per request of a task (which may read a call's end).
 */
export async function planForward(
  body: ParsedBody,
  resolveTool: ToolResolver,
  mode: ValidationMode,
  searchMode: SearchModeLookup,
  /** `MAX_LOCAL_ANSWER_BYTES`: what the proxy's own answers to the body may take together. */
  maxLocalBytes: number,
  records?: MessageRecord[],
): Promise<ForwardPlan | RefusedPlan> {
  const answers = LocalAnswers.for(body.messages, body.revision, maxLocalBytes);
  if (!answers) {
    return {
      kind: "refused",
      message: `Invalid Request: the proxy's answers to this request's calls would pass ${maxLocalBytes} bytes (MAX_LOCAL_ANSWER_BYTES) even as short errors; send fewer calls at once, with shorter ids`,
    };
  }
  const listRequests = new Map<RequestId, JsonRpcRequest>();
  const forwarded: JsonRpcMessage[] = [];
  let callHeaders: ForwardPlan["callHeaders"];
  let changed = false;
  // The body's text, and the JSON text calls read back from it: each value written as it came.
  let exact: ExactText | undefined = body.exact;

  for (const message of body.messages) {
    if (!isRequest(message) || message.method !== "tools/call") {
      if (isRequest(message) && message.method === "tools/list") {
        listRequests.set(message.id, message);
        records?.push(listRecord(message.id));
      }
      if (records && isRequest(message)) {
        const ofTask = taskRequestRecord(message);
        if (ofTask) records.push(ofTask);
      }
      forwarded.push(message);
      continue;
    }
    const room = answers.open(message);
    let call = message;
    // How the body, and the JSON text a `call_tool` carried its call in, wrote their values.
    let read = body.exact;
    const name = (message.params as { name?: unknown } | undefined)?.name;
    const search =
      typeof name === "string" && SEARCH_MODE_TOOLS.has(name) && (await searchMode(message));
    if (search) {
      const unwrapped =
        name === SEARCH_TOOLS
          ? { kind: "answer" as const, ...answerSearch(message, search, body.revision, room) }
          : unwrapCall(message, body.revision);
      if (unwrapped.kind === "answer") {
        const kept = answers.add(message, unwrapped.response);
        records?.push(callRecord(message.id, true, unwrapped.report, kept));
        changed = true;
        continue;
      }
      call = unwrapped.message;
      read = placesOnly(read, unwrapped.exact);
      exact = placesOnly(exact, unwrapped.exact);
    }
    // What call_tool carries is its input: refused, the call is answered with its tool error.
    const refusedAs: RefusedAs = search
      ? { kind: "tool_error", revision: body.revision }
      : PROTOCOL_ERROR;
    const outcome = await repairToolCall(call, resolveTool, mode, body.revision, read, refusedAs);
    if (outcome.kind === "answer") {
      const kept = answers.add(message, outcome.response);
      records?.push(callRecord(message.id, Boolean(search), outcome.report, kept));
      changed = true;
      continue;
    }
    records?.push(forwardedCallRecord(outcome.message, Boolean(search), outcome.report));
    changed ||= outcome.message !== message;
    callHeaders = outcome.headers;
    exact = placesOnly(exact, outcome.exact);
    forwarded.push(outcome.message);
  }
  answers.done();

  const plan = {
    kind: "forward" as const,
    listRequests,
    localResponses: answers.responses,
    callHeaders: body.batch ? undefined : callHeaders,
  };
  if (!changed) return { ...plan, body: body.bytes };
  if (forwarded.length === 0) return { ...plan, body: null };
  // Written over the client's text: what no call changed is as the client wrote it. Each value
  // by its place, never by another value's text: the body and the texts its calls carried may
  // write one double two ways (json-exact.ts `placesOnly`). A BOM before it, which the decoder
  // dropped, as the client sent it.
  const text = utf8Text(body.bytes) ?? "";
  const sent = body.batch ? body.messages : body.messages[0];
  return {
    ...plan,
    body:
      leadingBom(body.bytes) +
      spliceExact(text, sent, body.batch ? forwarded : forwarded[0], placesOnly(exact), {
        messages: true,
      }),
  };
}
