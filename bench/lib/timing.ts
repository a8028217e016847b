/** How the core section times the proxy's code in this process: tinybench's latencies, and the fresh memory a call maps. */
import { Bench } from "tinybench";

export interface Timing {
  p50: number;
  p99: number;
}

/** What is timed, and what is done before each run but not timed. */
export type Timed = [name: string, fn: () => unknown, beforeEach?: () => void];

export async function time(tasks: Timed[], options: { time: number; iterations: number }) {
  const bench = new Bench({ ...options, warmupTime: 100, warmupIterations: 3 });
  for (const [name, fn, beforeEach] of tasks) bench.add(name, fn, { beforeEach });
  await bench.run();
  const timings = new Map<string, Timing>();
  for (const task of bench.tasks) {
    const result = task.result;
    if (result.state !== "completed") throw new Error(`${task.name}: ${result.state}`);
    timings.set(task.name, { p50: result.latency.p50, p99: result.latency.p99 });
  }
  return timings;
}

/**
 * Minor page faults of this process per call of `fn`, over `runs` calls: the
 * fresh memory a call makes the kernel map, 4 KiB a fault (V8's heap, its
 * large strings and buffers, and what the garbage collector gives back).
 * `beforeEach` runs before each call, its faults not counted.
 */
export async function faultsPer(
  fn: () => unknown,
  runs: number,
  beforeEach?: () => void,
): Promise<number> {
  let faults = 0;
  for (let i = 0; i < runs; i++) {
    beforeEach?.();
    const before = process.resourceUsage().minorPageFault;
    await fn();
    faults += process.resourceUsage().minorPageFault - before;
  }
  return faults / runs;
}

/**
 * What one fresh page costs on this machine, in ms: 16 MiB written once as
 * freshly mapped memory, less the same memory written again, per fault. On
 * a virtual machine a fault can cost a hundred times what it does on bare
 * metal, so the share of a listing's time it takes is worth knowing.
 */
export function freshPageCost(): number {
  const costs: number[] = [];
  for (let round = 0; costs.length < 5 && round < 20; round++) {
    const faults = process.resourceUsage().minorPageFault;
    let started = performance.now();
    const memory = new Uint8Array(16 * 1024 * 1024);
    memory.fill(1);
    const fresh = performance.now() - started;
    const mapped = process.resourceUsage().minorPageFault - faults;
    started = performance.now();
    memory.fill(2);
    // An allocator that hands back memory still mapped makes no faults to count.
    if (mapped > 1_000) costs.push((fresh - (performance.now() - started)) / mapped);
  }
  return costs.sort((a, b) => a - b)[costs.length >> 1] ?? 0;
}
