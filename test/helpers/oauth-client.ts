/**
 * The official SDK client signing in as a desktop MCP client does: it meets a
 * 401, discovers the protected resource and its authorization server,
 * registers itself (RFC 7591), and sends the user to authorize (authorization
 * code + PKCE). Here the "user" is `approve`, which is handed the
 * authorization URL and returns the code the redirect brought back. The
 * sign-in is the same on both wires; the client that signs in is the SDK of
 * the revision asked for (test/helpers/clients.ts): SDK 1.x in a 2025-11-25
 * session, or SDK 2.x on 2026-07-28, whose first request is `server/discover`.
 */

import {
  StreamableHTTPClientTransport as ModernTransport,
  UnauthorizedError as ModernUnauthorizedError,
  type OAuthDiscoveryState,
} from "@modelcontextprotocol/client";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import { type AuthProvider, connectClient, type TestClient, type Wire } from "./clients";
import { REDIRECT_URL } from "./consent";
import type { Fetch } from "./proxy";

export { REDIRECT_URL };

/** What a desktop client keeps between runs, in memory. */
export class MemoryOAuthClient implements AuthProvider {
  information: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = "";
  /** Where it signs in, kept with the verifier: SDK 2.x checks the callback's `iss` against it (RFC 9207). */
  discovery: OAuthDiscoveryState | undefined;
  authorizationUrl: URL | undefined;

  get redirectUrl() {
    return REDIRECT_URL;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: "Edge Rewriter Test Client",
      redirect_uris: [REDIRECT_URL],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }

  clientInformation() {
    return this.information;
  }
  saveClientInformation(information: OAuthClientInformationMixed) {
    this.information = information;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
  saveDiscoveryState(state: OAuthDiscoveryState) {
    this.discovery = state;
  }
  discoveryState() {
    return this.discovery;
  }
  /** What the SDK calls when a credential stops working (a revoked grant: `tokens`). */
  invalidateCredentials(scope: "all" | "client" | "tokens" | "verifier" | "discovery") {
    if (scope === "all" || scope === "client") this.information = undefined;
    if (scope === "all" || scope === "tokens") this.saved = undefined;
    if (scope === "all" || scope === "verifier") this.verifier = "";
    if (scope === "all" || scope === "discovery") this.discovery = undefined;
  }
}

/** The user approves at once: follow the authorization server's redirects to the client's redirect URI. */
export function followRedirects(fetch: Fetch) {
  return async (authorizationUrl: URL): Promise<URL> => {
    let url = authorizationUrl;
    for (let hop = 0; hop < 10; hop++) {
      if (url.href.startsWith(REDIRECT_URL)) return url;
      const response = await fetch(url, { redirect: "manual" });
      await response.body?.cancel();
      const location = response.headers.get("location");
      if (location === null) throw new Error(`no redirect from ${url.origin}: ${response.status}`);
      url = new URL(location, url);
    }
    throw new Error("too many redirects");
  };
}

export interface SignedIn {
  client: TestClient;
  provider: MemoryOAuthClient;
}

export interface SignInOptions {
  /** The wire the client speaks once signed in; 2025-11-25 unless said. */
  revision?: Wire;
  /** The user: takes the authorization URL, returns the URL the browser was sent back to. */
  approve?: (authorizationUrl: URL) => Promise<URL>;
  /** The client's own (one with a `clientMetadataUrl` identifies with a Client ID Metadata Document where the server accepts one). */
  provider?: MemoryOAuthClient;
}

/**
 * Connects to `serverUrl`, signing in on the 401 (the user approves at once
 * unless `approve` says otherwise). Rejects with what the client meets after
 * signing in, if it cannot connect.
 */
export async function signInAndConnect(
  serverUrl: string,
  fetch: Fetch,
  {
    revision = "2025-11-25",
    approve = followRedirects(fetch),
    provider = new MemoryOAuthClient(),
  }: SignInOptions = {},
): Promise<SignedIn> {
  const connect = async () => ({
    client: await connectClient(revision, serverUrl, fetch, provider),
    provider,
  });
  try {
    return await connect();
  } catch (error) {
    const unauthorized =
      error instanceof UnauthorizedError || error instanceof ModernUnauthorizedError;
    if (!unauthorized || !provider.authorizationUrl) throw error;
  }
  const callback = await approve(provider.authorizationUrl);
  const code = callback.searchParams.get("code");
  if (code === null) throw new Error(`no code: ${callback.search}`);
  const url = new URL(serverUrl);
  if (revision === "2026-07-28") {
    // As SDK 2.x asks: the callback's parameters, its `iss` checked (RFC 9207) before the code is redeemed.
    await new ModernTransport(url, { authProvider: provider, fetch }).finishAuth(
      callback.searchParams,
    );
  } else {
    await new StreamableHTTPClientTransport(url, { authProvider: provider, fetch }).finishAuth(
      code,
    );
  }
  return connect();
}

/** The PKCE verifier of hand-built clients' requests. */
export const HAND_BUILT_VERIFIER = "a-verifier-of-the-hand-built-client-0123456789-abcdefghij";

/** The S256 code challenge of `verifier` (RFC 7636 §4.2), as a client sends it. */
export async function pkceChallenge(verifier: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier));
  return btoa(String.fromCharCode(...new Uint8Array(digest)))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");
}

export interface HandBuiltClient {
  clientId: string;
  /** Its authorization request, as the SDK would build it. */
  url: URL;
  verifier: string;
}

/**
 * A client registered at the proxy (RFC 7591) as the SDK would register,
 * and its authorization request for `resource`, with PKCE (S256) and the
 * state `client-state`.
 */
export async function handBuiltClient(fetch: Fetch, resource: string): Promise<HandBuiltClient> {
  const origin = new URL(resource).origin;
  const registered = await fetch(`${origin}/oauth/register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      client_name: "Hand-built client",
      redirect_uris: [REDIRECT_URL],
      token_endpoint_auth_method: "none",
    }),
  }).then((response) => response.json<{ client_id: string }>());
  const url = new URL(`${origin}/authorize`);
  url.search = new URLSearchParams({
    response_type: "code",
    client_id: registered.client_id,
    redirect_uri: REDIRECT_URL,
    code_challenge: await pkceChallenge(HAND_BUILT_VERIFIER),
    code_challenge_method: "S256",
    state: "client-state",
    resource,
  }).toString();
  return { clientId: registered.client_id, url, verifier: HAND_BUILT_VERIFIER };
}
