/**
 * Starts the origins the integration tests talk to, on 127.0.0.1:
 * the demo MCP server as a real Worker (wrangler, the same config `npm run dev`
 * uses), a gateway in front of it (see origin-gateway.ts), OAuth-protected
 * origins (oauth-origin.ts: one for relay mode, one for broker mode's sign-in,
 * whose switches no test flips, and one for each file that flips them: its
 * sign-in when a step at the authorization server fails, its calls, its
 * refresh tests, its step-up tests, and two for the tests of a grant whose
 * origin names another authorization server; vitest runs files at once, so
 * those switches and counts are each file's alone),
 * origins that publish their OAuth metadata in
 * different places (metadata-origins.ts), an SDK 2.x origin that checks
 * `Mcp-Param-*` headers (header-origin.ts), an SDK 2.x origin with as many
 * tools as a test asks for (catalog-origin.ts), an SDK 2.x origin that lists
 * each caller their own tools (caller-origin.ts), an SDK 2.x origin of protocol
 * 2026-07-28 with prompts, resources, completion and `subscriptions/listen`
 * beside its tools (surface-origin.ts), an SDK 1.x origin of protocol
 * 2025-11-25 with a tool that runs as a task (task-origin.ts), an identity provider for
 * gate mode (identity-provider.ts: OpenID Connect, and GitHub's OAuth and user
 * API), and an address nothing can listen on, for the unreachable-origin case.
 */
import type { TestProject } from "vitest/node";
import { unstable_startWorker } from "wrangler";
import { startCallerOrigin } from "./fixtures/node/caller-origin";
import { startCatalogOrigin } from "./fixtures/node/catalog-origin";
import { startHeaderOrigin } from "./fixtures/node/header-origin";
import { startIdentityProvider } from "./fixtures/node/identity-provider";
import { startListingOrigin } from "./fixtures/node/listing-origin";
import { startMetadataOrigins } from "./fixtures/node/metadata-origins";
import { startOAuthOrigin } from "./fixtures/node/oauth-origin";
import { startOriginGateway } from "./fixtures/node/origin-gateway";
import { startSurfaceOrigin } from "./fixtures/node/surface-origin";
import { startTaskOrigin } from "./fixtures/node/task-origin";

export default async function setup(project: TestProject) {
  // Tests are hermetic: no Request.cf download, no telemetry.
  process.env.CLOUDFLARE_CF_FETCH_ENABLED = "false";
  process.env.WRANGLER_SEND_METRICS = "false";

  const demo = await unstable_startWorker({
    config: "demo/wrangler.toml",
    dev: {
      server: { hostname: "127.0.0.1", port: 0 },
      inspector: false,
      logLevel: "warn",
      persist: false,
    },
  });
  await demo.ready;
  const demoUrl = await demo.url;
  const gateway = await startOriginGateway(demoUrl);
  const oauth = await startOAuthOrigin();
  const brokered = await startOAuthOrigin();
  const breaking = await startOAuthOrigin();
  const calling = await startOAuthOrigin();
  const refreshing = await startOAuthOrigin();
  const steppingUp = await startOAuthOrigin();
  const switching = await startOAuthOrigin();
  const otherIssuer = await startOAuthOrigin();
  const metadata = await startMetadataOrigins();
  const headers = await startHeaderOrigin();
  const catalog = await startCatalogOrigin();
  const callers = await startCallerOrigin();
  const surface = await startSurfaceOrigin();
  const tasks = await startTaskOrigin();
  const listing = await startListingOrigin();
  const idp = await startIdentityProvider();

  project.provide("demoOrigin", demoUrl.origin);
  project.provide("gatewayOrigin", gateway.url.origin);
  // Unreachable by construction: nothing can listen on port 0, so a connection is always refused
  // (a port closed after use can be taken by another process while the tests run).
  project.provide("closedOrigin", "http://127.0.0.1:0");
  project.provide("headerOrigin", headers.url.href);
  project.provide("catalogOrigin", catalog.url.origin);
  project.provide("callerOrigin", callers.url.origin);
  project.provide("surfaceOrigin", surface.url.origin);
  project.provide("taskOrigin", tasks.url.origin);
  project.provide("listingOrigin", listing.url.origin);
  project.provide("identityProvider", idp.url.origin);
  project.provide("metadataOrigins", metadata.urls);
  for (const [key, origin] of [
    ["oauthOrigin", oauth],
    ["brokeredOrigin", brokered],
    ["breakingOrigin", breaking],
    ["callingOrigin", calling],
    ["refreshingOrigin", refreshing],
    ["stepUpOrigin", steppingUp],
    ["switchingOrigin", switching],
    ["otherIssuerOrigin", otherIssuer],
  ] as const) {
    project.provide(key, {
      authorizationServer: origin.authorizationServer.href,
      lenient: origin.lenient.href,
      strict: origin.strict.href,
      claimant: origin.claimant.href,
    });
  }

  return async () => {
    oauth.close();
    brokered.close();
    breaking.close();
    calling.close();
    refreshing.close();
    steppingUp.close();
    switching.close();
    otherIssuer.close();
    metadata.close();
    headers.close();
    catalog.close();
    callers.close();
    surface.close();
    tasks.close();
    listing.close();
    idp.close();
    gateway.close();
    await demo.dispose();
  };
}
