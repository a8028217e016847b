/**
 * The tasks whose creation call analytics read, remembered until their end
 * is written (docs/observability.md, "Tasks"): which tool each runs, what the
 * proxy did to its call, how many calls its outcome stands for, and when it
 * was created. A later request of the same caller that reads the task's end
 * (`tasks/get`, `tasks/result`, `tasks/cancel`) takes it, and writes one
 * point: a task taken is forgotten, so that polling it again, or its end read
 * twice, writes nothing more.
 *
 * Kept per caller (the caller's digest, toolmap/callers.ts, sessions aside:
 * a task outlives the session that created it), and bounded: 8,192 tasks
 * together (the least recently active caller's forgotten first), 32 each
 * caller (a caller's oldest forgotten first), 32 callers each source (its
 * callers active longest ago forgotten first, not another source's: 1,024
 * tasks), a day each, a task's id at most 128 characters (a longer one is
 * not remembered) and a tool's name as a point holds it. Bounded by callers,
 * 256 of them, a client that made up a caller for each call (a cookie the
 * origin ignores) pushed out every other caller's tasks in 256 calls; weighed
 * by tasks alone, one token sent with a query parameter the origin ignores
 * (a caller each) did so in 8,192 tasks (256 batches of 32 calls): now a source
 * spends its own share, as a session's client does (client-info.ts).
 * Requests without credentials are one source with the whole, as there.
 * Isolate memory: a task created through one isolate and ended through
 * another is not written there.
 */
import { BoundedMap, SharedBoundedMap } from "../bounded-map";
import type { CallReport } from "./call-record";
import { bounded, MAX_TOOL_CHARS } from "./data-point";

export const MAX_TASKS = 8_192;
export const MAX_TASKS_PER_CALLER = 32;
/** The callers of one source (toolmap/callers.ts `Caller.source`) whose tasks are remembered. */
export const MAX_CALLERS_PER_SOURCE = 32;
export const TASK_TTL_MS = 24 * 60 * 60 * 1000;
/** A task's id is a UUID or so: one longer is not kept. */
export const MAX_TASK_ID_CHARS = 128;

/** What the point of a task's end says of the call that created it. */
export interface RememberedTask {
  report: CallReport;
  search: boolean;
  /** How many calls the creation's outcome stood for: the end's stands for as many. */
  weight: number;
  /** When its creation was read (ms, the Workers clock). */
  created: number;
}

export class TaskMemory {
  // Each caller weighs the tasks they hold, weighed again as one is taken.
  readonly #callers = new SharedBoundedMap<string, BoundedMap<string, RememberedTask>>(
    MAX_TASKS,
    MAX_CALLERS_PER_SOURCE,
    TASK_TTL_MS,
    { max: MAX_TASKS, weigh: (tasks) => tasks.size },
  );

  /**
   * `caller`'s task `taskId`, whose creation the proxy read: its end not yet
   * written; `source`: where the caller's requests come from.
   */
  remember(caller: string, taskId: string, task: RememberedTask, source: string | undefined): void {
    if (taskId.length > MAX_TASK_ID_CHARS) return;
    const tasks = this.#callers.get(caller) ?? new BoundedMap(MAX_TASKS_PER_CALLER, TASK_TTL_MS);
    const { tool } = task.report;
    const report = {
      ...task.report,
      tool: tool === undefined ? tool : bounded(tool, MAX_TOOL_CHARS),
    };
    tasks.set(taskId, { ...task, report });
    // Set again: the caller's tasks live a day from the last one remembered.
    this.#callers.set(caller, tasks, source);
  }

  /** Whether `caller`'s task `taskId` is remembered, its end not yet written. */
  has(caller: string, taskId: string): boolean {
    return this.#callers.get(caller)?.get(taskId) !== undefined;
  }

  /** `caller`'s task `taskId`, forgotten: its end is written once. */
  take(caller: string, taskId: string): RememberedTask | undefined {
    const tasks = this.#callers.get(caller);
    const task = tasks?.get(taskId);
    if (tasks === undefined || task === undefined) return undefined;
    tasks.delete(taskId);
    if (tasks.size === 0) this.#callers.delete(caller);
    else this.#callers.replace(caller, tasks);
    return task;
  }
}
