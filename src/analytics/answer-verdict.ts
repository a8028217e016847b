/**
 * How one response to a call or a listing is judged (call-answers.ts reads
 * the answers; this is what it makes of each): by its members where it was
 * parsed (`verdictOf`), and, for one too long to parse, by the markers its
 * text may mention. Pure: no I/O.
 */
import { isPlainObject, own } from "../json";
import { INPUT_REQUIRED, type MessageRecord, OK, TASK_CREATED, type Verdict } from "./call-record";

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
 * Whether a call's result is a task's creation (`CreateTaskResult`), whose
 * tool runs on: 2025-11-25's (experimental tasks) holds the `task`, a Task
 * (its `taskId` and `status`); that of 2026-07-28's tasks extension
 * (`io.modelcontextprotocol/tasks`) is the Task itself, of `resultType` `task`.
 */
function createsTask(result: Record<string, unknown>): boolean {
  if (own(result, "resultType") === "task") return true;
  const task = own(result, "task");
  return (
    isPlainObject(task) &&
    typeof own(task, "taskId") === "string" &&
    typeof own(task, "status") === "string"
  );
}

/** A response's verdict; `undefined` for a listing's result, which its rewrite judges. */
export function verdictOf(
  message: Record<string, unknown>,
  record: MessageRecord,
): Verdict | undefined {
  if (Object.hasOwn(message, "error")) {
    const error = own(message, "error");
    const code = isPlainObject(error) ? own(error, "code") : undefined;
    const errorType = Number.isInteger(code) ? String(code) : "rpc_error";
    return { outcome: "rpc_error", errorType };
  }
  if (!Object.hasOwn(message, "result")) return undefined;
  if (record.method === "tools/list") return OK;
  const result = own(message, "result");
  if (!isPlainObject(result)) return OK;
  if (own(result, "isError") === true) return { outcome: "tool_error", errorType: "tool_error" };
  if (own(result, "resultType") === "input_required") return INPUT_REQUIRED;
  return createsTask(result) ? TASK_CREATED : OK;
}
