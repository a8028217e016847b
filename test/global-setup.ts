/**
 * Starts the origins the integration tests talk to, on 127.0.0.1:
 * the demo MCP server as a real Worker (wrangler, the same config `npm run dev`
 * uses), a gateway in front of it (see origin-gateway.ts), an OAuth-protected
 * origin (oauth-origin.ts), origins that publish their OAuth metadata in
 * different places (metadata-origins.ts), and a port with nothing listening, for the
 * unreachable-origin case.
 */
import { createServer } from "node:net";
import type { TestProject } from "vitest/node";
import { unstable_startWorker } from "wrangler";
import { startMetadataOrigins } from "./fixtures/node/metadata-origins";
import { startOAuthOrigin } from "./fixtures/node/oauth-origin";
import { startOriginGateway } from "./fixtures/node/origin-gateway";

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}

export default async function setup(project: TestProject) {
  // Tests are hermetic: no Request.cf download, no telemetry.
  process.env.CLOUDFLARE_CF_FETCH_ENABLED = "false";
  process.env.WRANGLER_SEND_METRICS = "false";

  const demo = await unstable_startWorker({
    config: "demo/wrangler.toml",
    dev: { server: { hostname: "127.0.0.1", port: 0 }, inspector: false, logLevel: "warn" },
  });
  await demo.ready;
  const demoUrl = await demo.url;
  const gateway = await startOriginGateway(demoUrl);
  const oauth = await startOAuthOrigin();
  const brokered = await startOAuthOrigin();
  const metadata = await startMetadataOrigins();

  project.provide("demoOrigin", demoUrl.origin);
  project.provide("gatewayOrigin", gateway.url.origin);
  project.provide("closedOrigin", `http://127.0.0.1:${await closedPort()}`);
  project.provide("metadataOrigins", metadata.urls);
  for (const [key, origin] of [
    ["oauthOrigin", oauth],
    ["brokeredOrigin", brokered],
  ] as const) {
    project.provide(key, {
      authorizationServer: origin.authorizationServer.href,
      lenient: origin.lenient.href,
      strict: origin.strict.href,
    });
  }

  return async () => {
    oauth.close();
    brokered.close();
    metadata.close();
    gateway.close();
    await demo.dispose();
  };
}
