/**
 * `npm run client -- … --sign-in`: the official SDK's OAuth flow (discovery,
 * dynamic registration, authorization code with PKCE, the token exchange,
 * the RFC 9207 `iss` check are all the SDK's), with what a command on the
 * operator's machine adds: a redirect URI on 127.0.0.1 at a port of its own,
 * the authorization URL printed for the user to open (no browser is
 * assumed), and a one-shot HTTP server that catches the code.
 *
 * Bounded: the server listens on 127.0.0.1 alone, takes the one callback
 * whose `state` is this sign-in's (any other is answered 400 and changes
 * nothing), then closes; so it does, unanswered, after the timeout. One
 * sign-in a run: a server that asks for a second is refused. Tokens, the
 * code and the PKCE verifier live in this object's memory, never on disk,
 * and are hidden from whatever the command prints (`Secrets`).
 */
import { randomBytes, timingSafeEqual } from "node:crypto";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type {
  OAuthClientMetadata,
  OAuthClientProvider,
  OAuthDiscoveryState,
  StoredOAuthClientInformation,
  StoredOAuthTokens,
} from "@modelcontextprotocol/client";
import type { Secrets } from "./client-credentials";
import { refuse } from "./command";
import { printable } from "./terminal";

const CALLBACK_PATH = "/callback";

/** What a browser is shown at the callback: nothing it loads, nothing it sends on. */
function page(response: ServerResponse, status: number, text: string, last = false): void {
  response.writeHead(status, {
    ...(last ? { connection: "close" } : {}),
    "content-type": "text/html; charset=utf-8",
    "cache-control": "no-store",
    "referrer-policy": "no-referrer",
    "content-security-policy": "default-src 'none'",
    "x-frame-options": "DENY",
  });
  response.end(`<!doctype html><title>npm run client</title><p>${text}</p>`);
}

const sameText = (a: string, b: string) => {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
};

/** The SDK's provider for one sign-in, in memory. */
class LoopbackProvider implements OAuthClientProvider {
  private information: StoredOAuthClientInformation | undefined;
  private saved: StoredOAuthTokens | undefined;
  private verifier = "";
  private discovery: OAuthDiscoveryState | undefined;
  /** This sign-in's `state`, once the SDK asked for one. */
  expectedState: string | undefined;
  /** Whether the user was sent to sign in. */
  sent = false;

  constructor(
    readonly redirectUrl: string,
    private readonly secrets: Secrets,
    private readonly timeoutSeconds: number,
  ) {}

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: "npm run client (mcp-edge-rewriter)",
      redirect_uris: [this.redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }

  state(): string {
    this.expectedState = randomBytes(32).toString("base64url");
    return this.expectedState;
  }

  clientInformation() {
    return this.information;
  }

  saveClientInformation(information: StoredOAuthClientInformation) {
    this.secrets.add(information.client_secret);
    this.information = information;
  }

  tokens() {
    return this.saved;
  }

  saveTokens(tokens: StoredOAuthTokens) {
    this.secrets.add(tokens.access_token);
    this.secrets.add(tokens.refresh_token);
    this.secrets.add(tokens.id_token);
    this.saved = tokens;
  }

  redirectToAuthorization(authorizationUrl: URL) {
    // The callback server takes one sign-in; a server that asks again after it would ask forever.
    if (this.sent) refuse("The server asked to sign in again after the sign-in: not signed in.");
    this.sent = true;
    console.error(
      `Sign in: open this address in a browser. It comes back to ${this.redirectUrl}, which waits ${this.timeoutSeconds} s (--sign-in-timeout).\n${printable(authorizationUrl.href)}`,
    );
  }

  saveCodeVerifier(verifier: string) {
    this.secrets.add(verifier);
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

  invalidateCredentials(scope: "all" | "client" | "tokens" | "verifier" | "discovery") {
    if (scope === "all" || scope === "client") this.information = undefined;
    if (scope === "all" || scope === "tokens") this.saved = undefined;
    if (scope === "all" || scope === "verifier") this.verifier = "";
    if (scope === "all" || scope === "discovery") this.discovery = undefined;
  }
}

export interface LoopbackSignIn {
  provider: OAuthClientProvider;
  /** Whether the SDK sent the user to sign in (the address was printed). */
  readonly started: boolean;
  /** The one callback's query, `code` (or `error`) and `iss`; refused once the timeout passed. */
  callback(): Promise<URLSearchParams>;
  /** Stops listening, if it still does. */
  close(): void;
}

/** Listens on 127.0.0.1 for the sign-in's callback, for `timeoutSeconds` at most. */
export async function loopbackSignIn(
  secrets: Secrets,
  timeoutSeconds: number,
): Promise<LoopbackSignIn> {
  let answered = false;
  let settle: { resolve(query: URLSearchParams): void; reject(error: Error): void } | undefined;
  const arrived = new Promise<URLSearchParams>((resolve, reject) => {
    settle = { resolve, reject };
  });
  // Awaited only once the user was sent to sign in; a run that needs no sign-in leaves it.
  arrived.catch(() => {});
  let provider: LoopbackProvider | undefined;
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://127.0.0.1");
    if (request.method !== "GET") return page(response, 405, "Only the sign-in comes here.");
    if (url.pathname !== CALLBACK_PATH || answered) {
      return page(response, 404, "Nothing here.");
    }
    const state = url.searchParams.get("state");
    const expected = provider?.expectedState;
    if (state === null || expected === undefined || !sameText(state, expected)) {
      return page(response, 400, "This is not the sign-in this command started; nothing changed.");
    }
    answered = true;
    secrets.add(url.searchParams.get("code") ?? undefined);
    page(response, 200, "Signed in. You can close this tab and go back to the terminal.", true);
    // No connection more: the answer ends its own, and the command closes any other one at its end.
    server.close();
    clearTimeout(timer);
    settle?.resolve(url.searchParams);
  });
  // A browser's request is small and quick; a connection held open holds no more than this.
  server.headersTimeout = 10_000;
  server.requestTimeout = 10_000;
  server.maxHeadersCount = 64;
  await new Promise<void>((listening, failed) => {
    server.once("error", failed);
    server.listen(0, "127.0.0.1", listening);
  });
  const { port } = server.address() as AddressInfo;
  provider = new LoopbackProvider(
    `http://127.0.0.1:${port}${CALLBACK_PATH}`,
    secrets,
    timeoutSeconds,
  );
  const timer = setTimeout(() => {
    stop();
    settle?.reject(
      new Error(
        `No sign-in came back within ${timeoutSeconds} s (--sign-in-timeout): not signed in.`,
      ),
    );
  }, timeoutSeconds * 1000);
  function stop() {
    clearTimeout(timer);
    server.close();
    server.closeAllConnections();
  }
  const signingIn = provider;
  return {
    provider: signingIn,
    get started() {
      return signingIn.sent;
    },
    callback: () => arrived,
    close: stop,
  };
}
