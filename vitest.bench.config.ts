import { defineConfig } from "vitest/config";

// The pure core (names, args, SSE framing) has no I/O, so it is measured in
// plain Node, away from workerd's startup and the integration tests' origins.
export default defineConfig({
  test: {
    include: [],
    benchmark: { include: ["bench/**/*.bench.ts"] },
  },
});
