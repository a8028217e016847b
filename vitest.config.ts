import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";
import { BROKER_BINDINGS } from "./test/broker-bindings.ts";

// The suite's processes (vitest's workers, and the wrangler, tsx and npm the node tests run as an
// operator does) load the same large bundles again and again: Node keeps their compiled code here.
process.env.NODE_COMPILE_CACHE ??= join(tmpdir(), "mcp-edge-rewriter-compile-cache");

export default defineConfig({
  test: {
    // Vitest leaves a core free, which on a 2-core machine is one file at a time and one core idle
    // while a test waits on the processes or servers it started.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // Structured log lines are part of the behavior, but only worth reading when a test fails.
    silent: "passed-only",
    // The origins the tests talk to, started once for both projects. Here, not in the workers
    // project: that project's Vite runs everything it loads through its workerd transforms, which
    // for this file (wrangler, the SDKs, express) took 25 s of CPU before the first test.
    globalSetup: ["test/global-setup.ts"],
    projects: [
      {
        // The proxy inside workerd, with real local KV, against the demo origin.
        plugins: [
          cloudflareTest(({ inject }) => ({
            wrangler: { configPath: "./wrangler.toml" },
            miniflare: {
              // Tests address the proxy as proxy.test; the host check has tests of its own.
              // Every file shares one runtime, and so one day's budget of sign-in writes: the
              // suite's sign-ins together passed the 125 registrations a budget of 250 allows,
              // and a broker test failed in whichever file came last. The budget's own tests
              // (e2e/sign-in-budget.test.ts) set theirs, each in a day of its own.
              bindings: {
                ORIGIN_URL: `${inject("demoOrigin")}/mcp`,
                ALLOWED_HOSTS: "",
                SIGN_IN_DAILY_WRITES: "1000000",
              },
              // Broker mode's bindings, which wrangler.toml's top level (relay mode) leaves
              // to the tenants that use them: tests switch to broker mode with AUTH_MODE. The
              // proxy refuses them and SIGN_IN_DAILY_WRITES in relay mode, so a relay test's env
              // leaves them out (test/helpers/proxy.ts, tenantEnv).
              ...BROKER_BINDINGS,
            },
          })),
        ],
        test: {
          name: "workers",
          // One runtime for every file: starting workerd and loading the SDKs for each file cost
          // three times the tests themselves. Each file sets up the state it reads (its own
          // origin, KV scope or tenant), so no file leans on another's.
          isolate: false,
          // Two files at a time on two cores: a test's 5 s default is a slow test, not a hung one.
          testTimeout: 30_000,
          include: ["test/{unit,worker,e2e}/**/*.test.ts"],
          setupFiles: ["test/setup/file-boundary.ts"],
        },
      },
      {
        // Tools that must run as processes against the proxy served over HTTP.
        test: {
          name: "node",
          isolate: false,
          environment: "node",
          // Says so when the browser test is skipped for want of a browser.
          globalSetup: ["test/node/system-chromium.ts"],
          // And the bench's own check that what it times still runs (bench/*.test.ts).
          include: ["test/node/**/*.test.ts", "bench/**/*.test.ts"],
          testTimeout: 300_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
