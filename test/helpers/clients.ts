/**
 * The official SDK clients, one per protocol revision, behind one small face so
 * the same end-to-end tests run against every revision:
 *
 * - 2026-07-28: `@modelcontextprotocol/client` 2.x, pinned to that revision
 *   (`server/discover`, the `_meta` envelope, `input_required` retries,
 *   `subscriptions/listen`).
 * - 2025-03-26, 2025-06-18, 2025-11-25: `@modelcontextprotocol/sdk` 1.x. Its
 *   client always asks for 2025-11-25 in `initialize`, and the origin answers
 *   with the revision asked for; `askingFor` makes it ask for an older one, and
 *   for 2025-03-26 (before the `MCP-Protocol-Version` header existed) keeps the
 *   header off its requests, as a client of that revision sends them.
 */
import {
  Client as ModernClient,
  type OAuthClientProvider as ModernOAuthClientProvider,
  StreamableHTTPClientTransport as ModernTransport,
} from "@modelcontextprotocol/client";
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  ElicitRequestSchema,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker";
import { afterEach } from "vitest";
import { type Fetch, PROXY_URL } from "./proxy";

export const REVISIONS = ["2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"] as const;
export type Revision = (typeof REVISIONS)[number];

/** A client's OAuth memory, which either SDK signs in with on a 401 (test/helpers/oauth-client.ts). */
export type AuthProvider = OAuthClientProvider & ModernOAuthClientProvider;

/**
 * A revision of each wire, for the tests of features that touch it: a
 * 2025-era session (SDK 1.x, `initialize` first) and 2026-07-28 (SDK 2.x,
 * no session, the `_meta` envelope on every request).
 */
export const EACH_WIRE = ["2025-11-25", "2026-07-28"] as const satisfies readonly Revision[];
export type Wire = (typeof EACH_WIRE)[number];

export interface ToolResult {
  content: Array<{ type: string; text?: string }>;
  structuredContent?: unknown;
  isError?: boolean;
}

export interface Progress {
  progress: number;
  total?: number;
}

/** What a test does with a client, whichever SDK and revision is behind it. */
export interface TestClient {
  revision: Revision;
  /** The revision the connection settled on. */
  negotiated(): string | undefined;
  listTools(): Promise<Array<{ name: string } & Record<string, unknown>>>;
  callTool(
    name: string,
    args: Record<string, unknown>,
    onprogress?: (progress: Progress) => void,
  ): Promise<ToolResult>;
  /** Calls `onChanged` on `notifications/tools/list_changed`, opening a listen stream where the revision needs one. */
  watchToolsChanged(onChanged: () => void): Promise<void>;
  close(): Promise<void>;
}

/** Every elicitation is accepted with `{ confirm: true }`. */
const CONFIRMED = { action: "accept", content: { confirm: true } } as const;

/** A fetch that makes the 1.x client ask for `revision` and send the headers that revision's clients send. */
function askingFor(revision: Revision, fetch: Fetch): Fetch {
  return (input, init) => {
    const headers = new Headers(init?.headers);
    if (revision === "2025-03-26") headers.delete("mcp-protocol-version");
    let body = init?.body;
    if (typeof body === "string" && body.includes('"initialize"')) {
      const message = JSON.parse(body);
      if (message.method === "initialize") message.params.protocolVersion = revision;
      body = JSON.stringify(message);
    }
    return fetch(input, { ...init, headers, body });
  };
}

async function connectLegacy(
  revision: Revision,
  url: string,
  fetch: Fetch,
  authProvider?: AuthProvider,
): Promise<TestClient> {
  const client = new Client(
    { name: "edge-rewriter-e2e", version: "1.0.0" },
    {
      capabilities: { elicitation: {} },
      // The SDK's default validator (Ajv) compiles code at runtime; workerd forbids that.
      jsonSchemaValidator: new CfWorkerJsonSchemaValidator(),
    },
  );
  client.setRequestHandler(ElicitRequestSchema, () => CONFIRMED);
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    fetch: askingFor(revision, fetch),
    authProvider,
  });
  await client.connect(transport);
  return {
    revision,
    negotiated: () => transport.protocolVersion,
    listTools: async () => (await client.listTools()).tools,
    callTool: (name, args, onprogress) =>
      client.callTool(
        { name, arguments: args },
        undefined,
        onprogress ? { onprogress } : {},
      ) as Promise<ToolResult>,
    watchToolsChanged: async (onChanged) => {
      client.setNotificationHandler(ToolListChangedNotificationSchema, onChanged);
    },
    close: () => client.close(),
  };
}

async function connectStateless(
  url: string,
  fetch: Fetch,
  authProvider?: AuthProvider,
): Promise<TestClient> {
  const client = new ModernClient(
    { name: "edge-rewriter-e2e", version: "1.0.0" },
    {
      capabilities: { elicitation: {} },
      versionNegotiation: { mode: { pin: "2026-07-28" } },
    },
  );
  client.setRequestHandler("elicitation/create", () => CONFIRMED);
  const subscriptions: Array<{ close(): Promise<void> }> = [];
  await client.connect(new ModernTransport(new URL(url), { fetch, authProvider }));
  return {
    revision: "2026-07-28",
    negotiated: () => client.getNegotiatedProtocolVersion(),
    listTools: async () => (await client.listTools()).tools,
    callTool: (name, args, onprogress) =>
      client.callTool(
        { name, arguments: args },
        onprogress ? { onprogress } : {},
      ) as Promise<ToolResult>,
    watchToolsChanged: async (onChanged) => {
      client.setNotificationHandler("notifications/tools/list_changed", onChanged);
      subscriptions.push(await client.listen({ toolsListChanged: true }));
    },
    close: async () => {
      await Promise.all(subscriptions.map((subscription) => subscription.close()));
      await client.close();
    },
  };
}

/**
 * A real SDK client speaking `revision` to `url` through `fetch`; with
 * `authProvider`, its tokens on every request, and a 401 starts its sign-in.
 */
export function connectClient(
  revision: Revision,
  url: string,
  fetch: Fetch,
  authProvider?: AuthProvider,
): Promise<TestClient> {
  return revision === "2026-07-28"
    ? connectStateless(url, fetch, authProvider)
    : connectLegacy(revision, url, fetch, authProvider);
}

/**
 * `connect` for one test file: a real SDK client speaking `revision` to `url`
 * (the proxy's by default) through `fetch`, closed after the test that made it.
 */
export function clientsOfEachTest(): (
  revision: Revision,
  fetch: Fetch,
  url?: string,
) => Promise<TestClient> {
  const clients: TestClient[] = [];
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close()));
  });
  return async (revision, fetch, url = PROXY_URL) => {
    const client = await connectClient(revision, url, fetch);
    clients.push(client);
    return client;
  };
}
