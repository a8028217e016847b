/**
 * The workers project runs its files one after another in one runtime
 * (vitest.config.ts, `isolate: false`), so a file leaves it as it found it:
 * no spy, fake clock or stubbed global a file made outlives it. Its own
 * `afterAll`s run first (vitest runs after-hooks as a stack).
 */
import { afterAll, vi } from "vitest";

afterAll(() => {
  vi.restoreAllMocks();
  vi.useRealTimers();
  vi.unstubAllGlobals();
});
