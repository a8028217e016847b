/**
 * One `tools/call` or `tools/list` as the proxy saw it, for call analytics
 * (docs/observability.md): what the rewrite did with it, then how its answer
 * ended. planForward (rewrite/request.ts) makes one per message, the answer
 * settles it (call-answers.ts), and data-point.ts writes it. A request that
 * asks of a task (`tasks/get`, `tasks/result`, `tasks/cancel`) gets one too,
 * written only where it reads the end of a task a call of the same caller
 * created (task-memory.ts). A record holds names, kinds and counts: never
 * an argument value, a task's id, and never the name of a tool the
 * operator's rules may hide.
 */
import { isPlainObject, own } from "../json";
import { ErrorCode, type JsonRpcRequest, type RequestId } from "../protocol/jsonrpc";
import { CLIENT_CAPABILITIES, metaOf } from "../protocol/revision";
import { TASK_REQUESTS } from "./layout";

/** How a call or listing ended, as the client got it. */
export type Outcome =
  /** A result (a listing, or a tool result without `isError`). */
  | "ok"
  /** The origin's tool result with `isError: true`. */
  | "tool_error"
  /** No tool result yet: the origin asks the client for input first (2026-07-28), and the client retries the call with it. */
  | "input_required"
  /**
   * No tool result yet: the origin created a task for the call, whose end the client reads
   * later (`tasks/result` in 2025-11-25, `tasks/get` in 2026-07-28's tasks extension), a point of
   * its own.
   */
  | "task_created"
  /** A task's end: it failed, and said no more (2025-11-25's `tasks/get`: a tool error or a JSON-RPC error). */
  | "task_failed"
  /** A task's end: it was cancelled before its tool answered. */
  | "task_cancelled"
  /** The origin's JSON-RPC error. */
  | "rpc_error"
  /**
   * The proxy's refusal (`-32602`, or `call_tool`'s tool error for the call it carries): arguments
   * that are no object or read two ways, no name, a name the listing lacks, or rules it could not check.
   */
  | "refused"
  /** The proxy's refusal of a tool whose changed definition `TOOL_CHANGES=hold` holds back. */
  | "held"
  /** The proxy's refusal of a tool the operator's rules hide. */
  | "hidden"
  /** The proxy's own fix-it result (`ARGUMENT_VALIDATION=enforce`, or its own two tools called without what they need). */
  | "invalid_arguments"
  /** The proxy's 502: the origin could not be reached. */
  | "origin_unreachable"
  /** The proxy's 504: the origin did not answer in time. */
  | "origin_timeout"
  /** An HTTP error status instead of an answer: the origin's, or the proxy's own (a listing it could not read, 503 when busy). */
  | "http_error"
  /** The answer ended without a response to the request. */
  | "unanswered"
  /** The answer could not be judged: an encoding the runtime did not decode, another media type, or a large answer that may hold an error or a task's creation. */
  | "unread"
  /** The answer was not read: `CALLS_ANSWER_SAMPLING_RATE` reads those of a share of requests. */
  | "unsampled";

/** What the proxy did to a call's arguments, each kind once in `repairs` (docs/observability.md). */
export type RepairKind =
  /** The arguments were found elsewhere than in `params.arguments` as an object (args/recover.ts). */
  | `recovered_${"json_string" | "inline" | "args" | "empty"}`
  | "aliased"
  | "coalesced"
  | "coerced"
  /** A string made the `enum` or `const` member it names in another case (args/enum-case.ts). */
  | "enum_cased"
  | "dropped"
  | "from_text"
  | "strict_undone"
  | "fixed"
  | "defaulted";

/** How many of each repair a call got. */
export type Repairs = Partial<Record<RepairKind, number>>;

/**
 * What the view's way back and the operator's rules do to every call they
 * apply to, as opposed to what the model got wrong: not counted in a call's
 * number of repairs.
 */
const EXPECTED: ReadonlySet<RepairKind> = new Set([
  "from_text",
  "strict_undone",
  "fixed",
  "defaulted",
]);

/** The kinds of repair a call got, sorted, separated by commas: `coalesced,coerced`. */
export function repairList(repairs: Repairs): string {
  return Object.keys(repairs).sort().join(",");
}

/** How many repairs the model's arguments needed: every key, value and envelope fixed. */
export function repairCount(repairs: Repairs): number {
  let count = 0;
  for (const [kind, times] of Object.entries(repairs)) {
    if (!EXPECTED.has(kind as RepairKind)) count += times;
  }
  return count;
}

/** How a call named its tool: a name the proxy listed, the tool's own, another spelling of either, or one no listing has. */
export type Resolution = "listed" | "original" | "repaired" | "unknown";

/** What the proxy made of one call before it went on or was answered (rewrite/tools-call.ts). */
export interface CallReport {
  /** The original name; `undefined` where there is none, or where the operator's rules may hide it. */
  tool?: string;
  resolution?: Resolution;
  /** Why the proxy answered the call itself, as `tool_call_refused` logs it. */
  refused?: string;
  validation?: "valid" | "invalid" | "skipped";
  repairs: Repairs;
}

type TaskRequest = (typeof TASK_REQUESTS)[number];

/** One `tools/call`, `tools/list` or request of a task of a request. */
export interface MessageRecord {
  method: "tools/call" | "tools/list" | TaskRequest;
  id: RequestId;
  /** A call of `search_tools` or `call_tool`, or a listing answered in search mode. */
  search: boolean;
  /** A call's. */
  report?: CallReport;
  /** The tools a listing lists (a search mode listing: those a search finds), or a search found. */
  tools?: number;
  /** The proxy's own answer, when it answered the message itself. */
  local?: unknown;
  /** A call the origin may answer with a task's creation: it asked for a task, or may be given one. */
  mayCreateTask?: boolean;
  /** A request of a task: the task it asks of (its `params.taskId`). */
  taskId?: string;
  /** The end of a task: when the proxy read its creation (ms, the Workers clock). */
  taskCreated?: number;
  /**
   * Set once, when the answer is known: `weight`, how many calls its outcome
   * stands for (1; 1 ÷ the sampling rate for one read from a sampled
   * answer; 0 for one unsampled).
   */
  settled?: Verdict & { at: number; answerBytes: number; weight: number };
}

/** How a message ended, and its OTel `error.type` (empty when it did not fail). */
export interface Verdict {
  outcome: Outcome;
  errorType: string;
  /** A task's creation: the task's id, as the origin wrote it. */
  taskId?: string;
}

/** The OTel `error.type` of the proxy's own `-32602`. */
const INVALID_PARAMS = String(ErrorCode.InvalidParams);

export const listRecord = (id: RequestId): MessageRecord => ({
  method: "tools/list",
  id,
  search: false,
});

/** The record of a call the proxy answered itself, with `local`. */
export function callRecord(
  id: RequestId,
  search: boolean,
  report: CallReport,
  local: unknown,
): MessageRecord {
  const record: MessageRecord = { method: "tools/call", id, search, report, local };
  // `search_tools` answers with the tools it found.
  const found = (local as { result?: { structuredContent?: { tools?: unknown } } }).result
    ?.structuredContent?.tools;
  if (Array.isArray(found)) record.tools = found.length;
  return record;
}

/** The record of a call sent on to the origin as `call`. */
export function forwardedCallRecord(
  call: JsonRpcRequest,
  search: boolean,
  report: CallReport,
): MessageRecord {
  return { method: "tools/call", id: call.id, search, report, mayCreateTask: mayCreateTask(call) };
}

/** The record of `request` when it asks of a task by its id (`params.taskId`); else none. */
export function taskRequestRecord(request: JsonRpcRequest): MessageRecord | undefined {
  const method = TASK_REQUESTS.find((asked) => asked === request.method);
  const taskId = isPlainObject(request.params) ? own(request.params, "taskId") : undefined;
  if (method === undefined || typeof taskId !== "string") return undefined;
  return { method, id: request.id, search: false, taskId };
}

/** The extension of 2026-07-28 by which a client lets a server answer a call with a task. */
const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";

/**
 * Whether the origin may answer `call` with a task's creation: in 2025-11-25
 * (experimental tasks), a call whose `params.task` asks for one; in
 * 2026-07-28, one whose client declares the tasks extension in its
 * capabilities, where the server decides (it must not without it).
 */
function mayCreateTask(call: JsonRpcRequest): boolean {
  if (isPlainObject(call.params) && Object.hasOwn(call.params, "task")) return true;
  const capabilities = own(metaOf(call) ?? {}, CLIENT_CAPABILITIES);
  const extensions = isPlainObject(capabilities) ? own(capabilities, "extensions") : undefined;
  return isPlainObject(extensions) && Object.hasOwn(extensions, TASKS_EXTENSION);
}

/**
 * How a message the proxy answered itself ended: its refusal, or its own tool
 * result. A refusal's `error.type` is what the client got: a direct call's
 * `-32602`, or the tool error `call_tool` answers for the call it carries
 * (rewrite/tools-call.ts `RefusedAs`).
 */
export function localVerdict({ report, local }: MessageRecord): Verdict {
  const isError = (local as { result?: { isError?: unknown } }).result?.isError === true;
  const refused = report?.refused;
  if (refused !== undefined) {
    const outcome = refused === "hidden" || refused === "held" ? refused : "refused";
    return { outcome, errorType: isError ? "tool_error" : INVALID_PARAMS };
  }
  // The proxy's own tool results that are errors all say what the arguments lack.
  return isError ? { outcome: "invalid_arguments", errorType: "tool_error" } : OK;
}

export const OK: Verdict = { outcome: "ok", errorType: "" };
export const INPUT_REQUIRED: Verdict = { outcome: "input_required", errorType: "" };
export const TASK_CREATED: Verdict = { outcome: "task_created", errorType: "" };
export const TASK_FAILED: Verdict = { outcome: "task_failed", errorType: "task_failed" };
export const TASK_CANCELLED: Verdict = { outcome: "task_cancelled", errorType: "" };
export const UNREAD: Verdict = { outcome: "unread", errorType: "" };
export const UNANSWERED: Verdict = { outcome: "unanswered", errorType: "" };
export const UNSAMPLED: Verdict = { outcome: "unsampled", errorType: "" };
