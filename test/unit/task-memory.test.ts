/**
 * The tasks call analytics remembers until their end is written
 * (src/analytics/task-memory.ts, docs/observability.md "Tasks"): per caller,
 * taken once, and bounded in tasks, tasks per caller, time and id length.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  MAX_CALLERS_PER_SOURCE,
  MAX_TASK_ID_CHARS,
  MAX_TASKS,
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
    // Each caller here is a source of its own, as a token is.
    const memory = new TaskMemory();
    memory.remember("alice", "t1", task(), "alice");
    expect(memory.has("mallory", "t1")).toBe(false);
    expect(memory.take("mallory", "t1")).toBeUndefined();
    expect(memory.has("alice", "t1")).toBe(true);
    expect(memory.take("alice", "t1")).toEqual(task());
    expect(memory.take("alice", "t1")).toBeUndefined();
  });

  it("are 32 a caller: a caller's oldest goes first, and no other caller's", () => {
    const memory = new TaskMemory();
    memory.remember("bob", "b", task(), "bob");
    for (let i = 0; i <= MAX_TASKS_PER_CALLER; i++)
      memory.remember("alice", `t${i}`, task(), "alice");
    expect(memory.has("alice", "t0")).toBe(false);
    expect(memory.has("alice", "t1")).toBe(true);
    expect(memory.has("alice", `t${MAX_TASKS_PER_CALLER}`)).toBe(true);
    expect(memory.has("bob", "b")).toBe(true);
  });

  it("are 8,192 together: the least recently active caller's go first", () => {
    const memory = new TaskMemory();
    memory.remember("first", "t", task(), "first");
    memory.remember("second", "t", task(), "second");
    for (let i = 0; i < MAX_TASKS - 2; i++)
      memory.remember(`caller ${i}`, "t", task(), `caller ${i}`);
    memory.remember("first", "u", task(), "first");
    memory.remember("newcomer", "t", task(), "newcomer");
    expect(memory.has("second", "t")).toBe(false);
    expect(memory.has("caller 0", "t")).toBe(false);
    expect(memory.has("caller 1", "t")).toBe(true);
    expect(memory.has("first", "t")).toBe(true);
    expect(memory.has("first", "u")).toBe(true);
    expect(memory.has("newcomer", "t")).toBe(true);
  });

  it("count each caller's tasks: 256 callers of 32 hold them all", () => {
    const memory = new TaskMemory();
    const callers = MAX_TASKS / MAX_TASKS_PER_CALLER;
    for (let c = 0; c < callers; c++) {
      for (let t = 0; t < MAX_TASKS_PER_CALLER; t++)
        memory.remember(`caller ${c}`, `t${t}`, task(), `caller ${c}`);
    }
    memory.remember("newcomer", "t", task(), "newcomer");
    expect(memory.has("caller 0", `t${MAX_TASKS_PER_CALLER - 1}`)).toBe(false);
    expect(memory.has("caller 1", "t0")).toBe(true);
    expect(memory.has("newcomer", "t")).toBe(true);
  });

  it("are 32 callers' of one source: its made-up callers push out its own tasks, no other source's", () => {
    const memory = new TaskMemory();
    memory.remember("alice", "a", task(), "alice's token");
    // One token sent with a query parameter the origin ignores is a new caller each time.
    for (let i = 0; i < MAX_TASKS; i++)
      memory.remember(`mallory ?x=${i}`, "t", task(), "mallory's token");
    expect(memory.has("alice", "a")).toBe(true);
    expect(memory.has(`mallory ?x=${MAX_TASKS - 1}`, "t")).toBe(true);
    expect(memory.has("mallory ?x=0", "t")).toBe(false);
    // Her share: 32 callers, of 32 tasks each at most.
    const held = Array.from({ length: MAX_TASKS }, (_, i) => memory.has(`mallory ?x=${i}`, "t"));
    expect(held.filter(Boolean)).toHaveLength(MAX_CALLERS_PER_SOURCE);
  });

  it("weigh no more once taken: a caller's tasks whose ends were written leave room for others", () => {
    const memory = new TaskMemory();
    memory.remember("bob", "b", task(), "bob");
    for (let t = 0; t < MAX_TASKS_PER_CALLER; t++)
      memory.remember("alice", `t${t}`, task(), "alice");
    for (let t = 0; t < MAX_TASKS_PER_CALLER; t++) memory.take("alice", `t${t}`);
    for (let i = 0; i < MAX_TASKS - 1; i++)
      memory.remember(`caller ${i}`, "t", task(), `caller ${i}`);
    expect(memory.has("bob", "b")).toBe(true);
  });

  it("last a day", () => {
    const memory = new TaskMemory();
    const now = Date.now();
    memory.remember("alice", "t", task(), "alice");
    vi.spyOn(Date, "now").mockReturnValue(now + TASK_TTL_MS + 1);
    expect(memory.take("alice", "t")).toBeUndefined();
  });

  it("keep no id longer than 128 characters, and a tool's name as a point holds it", () => {
    const memory = new TaskMemory();
    memory.remember("alice", "x".repeat(MAX_TASK_ID_CHARS + 1), task(), "alice");
    expect(memory.has("alice", "x".repeat(MAX_TASK_ID_CHARS + 1))).toBe(false);
    memory.remember("alice", "x".repeat(MAX_TASK_ID_CHARS), task("t".repeat(10_000)), "alice");
    const kept = memory.take("alice", "x".repeat(MAX_TASK_ID_CHARS));
    expect(kept?.report.tool).toBe(`${"t".repeat(255)}…`);
  });
});
