/**
 * What a test reads of V8's heap once garbage is collected: run in Node, where
 * a test can collect garbage and read the heap; workerd runs the same V8, so
 * what a structure keeps alive here, it keeps in an isolate.
 */
import v8 from "node:v8";
import vm from "node:vm";

v8.setFlagsFromString("--expose-gc");
/** V8's full collection, as `--expose-gc` gives it. */
export const collectGarbage = vm.runInNewContext("gc") as () => void;

/** The heap in use once garbage is collected. */
export function heapUsed(): number {
  collectGarbage();
  return v8.getHeapStatistics().used_heap_size;
}
