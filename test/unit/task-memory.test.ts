/**
 * The tasks call analytics remembers until their end is written
 * (src/analytics/task-memory.ts, docs/observability.md "Tasks"): per caller,
 * taken once, and bounded in callers, tasks per caller, time and id length.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  MAX_CALLERS,
  MAX_TASK_ID_CHARS,
  MAX_TASKS_PER_CALLER,
  type RememberedTask,
  TASK_TTL_MS,
  TaskMemory,
} from "../../src/analytics/task-memory";

const task = (tool = "build_report"): RememberedTask => ({
  report: { tool, repairs: { coerced: 1 }, validation: "valid", resolution: "listed" },
  search: false,
  weight: 10,
  created: 1,
});

afterEach(() => {
  vi.restoreAllMocks();
});

describe("the tasks call analytics remembers", () => {
  it("are the caller's alone, and taken once", () => {
    const memory = new TaskMemory();
    memory.remember("alice", "t1", task());
    expect(memory.has("mallory", "t1")).toBe(false);
    expect(memory.take("mallory", "t1")).toBeUndefined();
    expect(memory.has("alice", "t1")).toBe(true);
    expect(memory.take("alice", "t1")).toEqual(task());
    expect(memory.take("alice", "t1")).toBeUndefined();
  });

  it("are 32 a caller: a caller's oldest goes first, and no other caller's", () => {
    const memory = new TaskMemory();
    memory.remember("bob", "b", task());
    for (let i = 0; i <= MAX_TASKS_PER_CALLER; i++) memory.remember("alice", `t${i}`, task());
    expect(memory.has("alice", "t0")).toBe(false);
    expect(memory.has("alice", "t1")).toBe(true);
    expect(memory.has("alice", `t${MAX_TASKS_PER_CALLER}`)).toBe(true);
    expect(memory.has("bob", "b")).toBe(true);
  });

  it("are of 256 callers: the least recently active one's go first", () => {
    const memory = new TaskMemory();
    memory.remember("first", "t", task());
    memory.remember("second", "t", task());
    for (let i = 0; i < MAX_CALLERS - 2; i++) memory.remember(`caller ${i}`, "t", task());
    memory.remember("first", "u", task());
    memory.remember("newcomer", "t", task());
    expect(memory.has("second", "t")).toBe(false);
    expect(memory.has("first", "t")).toBe(true);
    expect(memory.has("newcomer", "t")).toBe(true);
  });

  it("last a day", () => {
    const memory = new TaskMemory();
    const now = Date.now();
    memory.remember("alice", "t", task());
    vi.spyOn(Date, "now").mockReturnValue(now + TASK_TTL_MS + 1);
    expect(memory.take("alice", "t")).toBeUndefined();
  });

  it("keep no id longer than 128 characters, and a tool's name as a point holds it", () => {
    const memory = new TaskMemory();
    memory.remember("alice", "x".repeat(MAX_TASK_ID_CHARS + 1), task());
    expect(memory.has("alice", "x".repeat(MAX_TASK_ID_CHARS + 1))).toBe(false);
    memory.remember("alice", "x".repeat(MAX_TASK_ID_CHARS), task("t".repeat(10_000)));
    const kept = memory.take("alice", "x".repeat(MAX_TASK_ID_CHARS));
    expect(kept?.report.tool).toBe(`${"t".repeat(255)}…`);
  });
});
