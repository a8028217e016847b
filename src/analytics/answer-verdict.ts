/**
 * How one response to a call, a listing or a request of a task is judged
 * (call-answers.ts reads the answers; this is what it makes of each): by its
 * members where it was parsed (`verdictOf`), and, for one too long to parse,
 * by the markers its text may mention. Pure: no I/O.
 */
import { isPlainObject, own } from "../json";
import {
  INPUT_REQUIRED,
  type MessageRecord,
  OK,
  type Outcome,
  TASK_CANCELLED,
  TASK_CREATED,
  TASK_FAILED,
  type Verdict,
} from "./call-record";

/** What a response mentions. */
export const RESULT = '"result"';
export const ERROR = '"error"';
const IS_ERROR = '"isError"';
const INPUT_REQUIRED_TYPE = '"input_required"';
/** A task's creation: 2025-11-25's `task` member, 2026-07-28's `resultType: "task"`. */
export const TASK = '"task"';
export const RESPONSE = [RESULT, ERROR];
/** What a response that is no plain `ok` mentions. */
export const NOT_OK = [ERROR, IS_ERROR, INPUT_REQUIRED_TYPE];
/** What a long answer's text is searched for as it passes (call-answers.ts). */
export const SKIP_MARKERS = [RESULT, ...NOT_OK, TASK];

/**
 * A call's result that is a task's creation (`CreateTaskResult`), whose tool
 * runs on, with the task's id: 2025-11-25's (experimental tasks) holds the
 * `task`, a Task (its `taskId` and `status`); that of 2026-07-28's tasks
 * extension (`io.modelcontextprotocol/tasks`) is the Task itself, of
 * `resultType` `task`. `undefined` for any other result.
 */
function createdTask(result: Record<string, unknown>): Verdict | undefined {
  const task = own(result, "resultType") === "task" ? result : own(result, "task");
  if (!isPlainObject(task)) return undefined;
  const taskId = own(task, "taskId");
  if (task === result)
    return typeof taskId === "string" ? { ...TASK_CREATED, taskId } : TASK_CREATED;
  return typeof taskId === "string" && typeof own(task, "status") === "string"
    ? { ...TASK_CREATED, taskId }
    : undefined;
}

/** A JSON-RPC error's verdict: its code the `error.type`. */
function errorVerdict(error: unknown): Verdict {
  const code = isPlainObject(error) ? own(error, "code") : undefined;
  return { outcome: "rpc_error", errorType: Number.isInteger(code) ? String(code) : "rpc_error" };
}

/** A tool's result (a call's, or a task's end): `tool_error` with `isError: true`, else `ok`. */
const toolResultVerdict = (result: Record<string, unknown>): Verdict =>
  own(result, "isError") === true ? { outcome: "tool_error", errorType: "tool_error" } : OK;

/** An answer of a task that tells no end: as at its creation, the tool runs on. Never written. */
const RUNS_ON = TASK_CREATED;

/** The outcomes of a task's end: what its call would have been answered, or the task's own end. */
const TASK_ENDS: ReadonlySet<Outcome> = new Set<Outcome>([
  "ok",
  "tool_error",
  "rpc_error",
  "task_failed",
  "task_cancelled",
]);

/** Whether `verdict`, of a request of a task, is the task's end (any other is no point). */
export const endsTask = (verdict: Verdict) => TASK_ENDS.has(verdict.outcome);

/**
 * What the answer to a `tasks/get` or `tasks/cancel` says of its task, by
 * its status: `completed` with the result inline (2026-07-28's extension) is
 * that result's verdict; `completed` without (2025-11-25, whose
 * `tasks/result` reads it) runs on; `failed` is the JSON-RPC error it holds
 * (the extension), or `task_failed` (2025-11-25 says no more: a tool error or
 * a JSON-RPC error); `cancelled` is `task_cancelled`. An error answers the
 * request, not the call (a task unknown, expired): it runs on.
 */
function taskStatusVerdict(message: Record<string, unknown>): Verdict {
  const task = own(message, "result");
  if (!isPlainObject(task)) return RUNS_ON;
  switch (own(task, "status")) {
    case "completed": {
      const result = own(task, "result");
      return isPlainObject(result) ? toolResultVerdict(result) : RUNS_ON;
    }
    case "failed":
      return Object.hasOwn(task, "error") ? errorVerdict(own(task, "error")) : TASK_FAILED;
    case "cancelled":
      return TASK_CANCELLED;
    default:
      return RUNS_ON;
  }
}

/**
 * A response's verdict; `undefined` for a listing's result, which its rewrite
 * judges, and for a message that is no response. `tasks/result` answers what
 * its task's call would have been answered, result or error (2025-11-25).
 */
export function verdictOf(
  message: Record<string, unknown>,
  record: MessageRecord,
): Verdict | undefined {
  const isError = Object.hasOwn(message, "error");
  if (!isError && !Object.hasOwn(message, "result")) return undefined;
  if (record.method === "tasks/get" || record.method === "tasks/cancel") {
    return taskStatusVerdict(message);
  }
  if (isError) return errorVerdict(own(message, "error"));
  if (record.method === "tools/list") return OK;
  const result = own(message, "result");
  if (!isPlainObject(result)) return OK;
  if (own(result, "isError") === true || record.method === "tasks/result") {
    return toolResultVerdict(result);
  }
  if (own(result, "resultType") === "input_required") return INPUT_REQUIRED;
  return createdTask(result) ?? OK;
}
