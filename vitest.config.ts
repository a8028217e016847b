import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";
import { BROKER_BINDINGS } from "./test/broker-bindings.ts";

export default defineConfig({
  test: {
    // Structured log lines are part of the behavior, but only worth reading when a test fails.
    silent: "passed-only",
    projects: [
      {
        // The proxy inside workerd, with real local KV, against the demo origin.
        plugins: [
          cloudflareTest(({ inject }) => ({
            wrangler: { configPath: "./wrangler.toml" },
            miniflare: {
              // Tests address the proxy as proxy.test; the host check has tests of its own.
              bindings: { ORIGIN_URL: `${inject("demoOrigin")}/mcp`, ALLOWED_HOSTS: "" },
              // Broker mode's bindings, which wrangler.toml's top level (relay mode) leaves
              // to the tenants that use them: tests switch to broker mode with AUTH_MODE.
              ...BROKER_BINDINGS,
            },
          })),
        ],
        test: {
          name: "workers",
          globalSetup: ["test/global-setup.ts"],
          include: ["test/{unit,worker,e2e}/**/*.test.ts"],
        },
      },
      {
        // Tools that must run as processes against the proxy served over HTTP.
        test: {
          name: "node",
          environment: "node",
          // Says so when the browser test is skipped for want of a browser.
          globalSetup: ["test/node/system-chromium.ts"],
          include: ["test/node/**/*.test.ts"],
          testTimeout: 300_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
