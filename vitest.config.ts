import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

export default defineConfig({
  plugins: [
    cloudflareTest(({ inject }) => ({
      wrangler: { configPath: "./wrangler.toml" },
      miniflare: {
        bindings: { ORIGIN_URL: `${inject("demoOrigin")}/mcp` },
      },
    })),
  ],
  test: {
    globalSetup: ["test/global-setup.ts"],
    include: ["test/**/*.test.ts"],
    // Structured log lines are part of the behavior, but only worth reading when a test fails.
    silent: "passed-only",
  },
});
