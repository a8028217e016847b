/** What global-setup.ts hands to the tests (vitest `provide` / `inject`). */
import "vitest";

interface OAuthOriginUrls {
  authorizationServer: string;
  lenient: string;
  strict: string;
  claimant: string;
}

declare module "vitest" {
  export interface ProvidedContext {
    /** The demo MCP server, as a Worker on 127.0.0.1. */
    demoOrigin: string;
    /** The gateway in front of it (test/fixtures/node/origin-gateway.ts). */
    gatewayOrigin: string;
    /** A 127.0.0.1 origin nothing can listen on (port 0): unreachable. */
    closedOrigin: string;
    /** The SDK 2.x origin that checks `Mcp-Param-*` headers (test/fixtures/node/header-origin.ts): its MCP URL. */
    headerOrigin: string;
    /** The SDK 2.x origin with `?tools=N` tools made from the schema corpus (test/fixtures/node/catalog-origin.ts). */
    catalogOrigin: string;
    /** The SDK 2.x origin that lists each bearer token its own tools (test/fixtures/node/caller-origin.ts). */
    callerOrigin: string;
    /** The SDK 2.x origin of protocol 2026-07-28 with one of each thing its client asks for (test/fixtures/node/surface-origin.ts). */
    surfaceOrigin: string;
    /** The SDK 1.x origin of protocol 2025-11-25 whose tool runs as a task (test/fixtures/node/task-origin.ts). */
    taskOrigin: string;
    /** The SDK 1.x origin that lists whatever tools a test sets, as written (test/fixtures/node/listing-origin.ts). */
    listingOrigin: string;
    /** Gate mode's identity provider (test/fixtures/node/identity-provider.ts): its issuer; GitHub's under `/github`. */
    identityProvider: string;
    /** Origins publishing OAuth metadata in different places (test/fixtures/node/metadata-origins.ts). */
    metadataOrigins: Record<
      | "insertion"
      | "root"
      | "foreign"
      | "none"
      | "scheme"
      | "doubled"
      | "oversized"
      | "failing"
      | "advertised"
      | "tenants"
      | "stalled",
      string
    >;
    /** The OAuth-protected origin (test/fixtures/node/oauth-origin.ts): its MCP endpoints. */
    oauthOrigin: OAuthOriginUrls;
    /** Another one, for broker mode's sign-in tests in every file: no test flips its switches. */
    brokeredOrigin: OAuthOriginUrls;
    /** An eighth, whose authorization server test/e2e/broker-upstream.test.ts takes down or turns hostile. */
    breakingOrigin: OAuthOriginUrls;
    /** A third, for broker mode's calls on each wire (test/e2e/broker-calls.test.ts), which expire and revoke its tokens. */
    callingOrigin: OAuthOriginUrls;
    /** A fourth, for broker mode's refresh tests (test/e2e/broker-refresh.test.ts), which count its refreshes. */
    refreshingOrigin: OAuthOriginUrls;
    /** A fifth, whose metadata test/e2e/broker-issuer.test.ts turns to name another authorization server. */
    switchingOrigin: OAuthOriginUrls;
    /** A sixth, the authorization server the fifth then names: it counts what reaches it. */
    otherIssuerOrigin: OAuthOriginUrls;
    /** A seventh, for broker mode's step-up tests (test/e2e/broker-step-up.test.ts), which require scopes of its tokens. */
    stepUpOrigin: OAuthOriginUrls;
  }
}
