/**
 * Drives the proxy from tests: the Worker's own fetch handler, with the real
 * local KV from wrangler.toml and any vars a test overrides.
 */
import { createExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { inject } from "vitest";
import type { Worker } from "../../src/app";
import { SIGN_IN_ONLY } from "../../src/config";
import worker from "../../src/index";
import type { Fetch } from "./fetch";
import { ACCEPT_BOTH } from "./mcp";

export const DEMO_ORIGIN = inject("demoOrigin");
export const GATEWAY_ORIGIN = inject("gatewayOrigin");
export const CLOSED_ORIGIN = inject("closedOrigin");
export const OAUTH_ORIGIN = inject("oauthOrigin");
export const BROKERED_ORIGIN = inject("brokeredOrigin");
export const BREAKING_ORIGIN = inject("breakingOrigin");
export const CALLING_ORIGIN = inject("callingOrigin");
export const REFRESHING_ORIGIN = inject("refreshingOrigin");
export const STEP_UP_ORIGIN = inject("stepUpOrigin");
export const SWITCHING_ORIGIN = inject("switchingOrigin");
export const OTHER_ISSUER_ORIGIN = inject("otherIssuerOrigin");
export const METADATA_ORIGINS = inject("metadataOrigins");
export const HEADER_ORIGIN = inject("headerOrigin");
export const CATALOG_ORIGIN = inject("catalogOrigin");
export const CALLER_ORIGIN = inject("callerOrigin");
export const SURFACE_ORIGIN = inject("surfaceOrigin");
export const TASK_ORIGIN = inject("taskOrigin");
export const LISTING_ORIGIN = inject("listingOrigin");
export const IDENTITY_PROVIDER = inject("identityProvider");

/** The proxy's public URL in tests; its host is never the origin's. */
export const PROXY_URL = "http://proxy.test/mcp";

export type { Fetch };

export interface ProxyOptions {
  /** The app to drive; `createApp()` plays a fresh isolate. Default: the Worker's own. */
  app?: Worker;
  /** Replaces the `TOOL_MAP` binding. */
  kv?: KVNamespace;
  /** Replaces other bindings, or adds one wrangler.toml leaves commented (`CALLS`). */
  bindings?: Partial<Env> & { CALLS?: AnalyticsEngineDataset; CALLS_ANSWER_SAMPLING_RATE?: string };
  /** Receives each request's execution context, to wait for its background work. */
  contexts?: ExecutionContext[];
}

/**
 * The runtime's `env` as a tenant set with `vars` has it, `vars` on top. The
 * one runtime every file shares binds sign-in's bindings and budget for every
 * mode (vitest.config.ts), which the proxy refuses in relay mode: a relay
 * tenant has none, so relay mode's `env` leaves them out (unless `vars` sets one).
 */
export function tenantEnv(vars: Record<string, unknown> = {}): Env {
  const relay = (vars.AUTH_MODE ?? "relay") === "relay";
  const runtime = Object.entries(env).filter(([name]) => !(relay && SIGN_IN_ONLY.includes(name)));
  return { ...Object.fromEntries(runtime), ...vars } as Env;
}

/**
 * A fetch that goes through the proxy, with `vars` set on top of wrangler.toml's.
 * Each one is a client of its own: Cloudflare's `CF-Connecting-IP` is a fresh
 * address (sign-in is rate-limited per address), unless a request sets one.
 */
export function viaProxy(
  vars: Record<string, string | undefined> = {},
  { app = worker, kv, bindings, contexts }: ProxyOptions = {},
): Fetch {
  const testEnv = tenantEnv({ ...bindings, ...(kv ? { TOOL_MAP: kv } : {}), ...vars });
  // Each proxy a /64 of its own: the sign-in limit counts an IPv6 address's /64 (auth/sign-in-limit.ts).
  const address = `2001:db8:${crypto.randomUUID().slice(0, 4)}:${crypto.randomUUID().slice(0, 4)}::1`;
  return (input, init) => {
    const ctx = createExecutionContext();
    contexts?.push(ctx);
    const request = new Request(input, init) as Parameters<Worker["fetch"]>[0];
    if (!request.headers.has("cf-connecting-ip")) request.headers.set("cf-connecting-ip", address);
    return Promise.resolve(app.fetch(request, testEnv, ctx));
  };
}

/**
 * The network as a client of the proxy sees it: the proxy's own origin (that
 * of `proxyUrl`, or of each of `proxyUrl`'s, a Worker reached at several
 * hosts) is served by `proxy`, every other host (an authorization server,
 * say) by the network.
 */
export function clientNetwork(
  proxy: Fetch,
  proxyUrl: string | readonly string[] = PROXY_URL,
): Fetch {
  const origins = new Set([proxyUrl].flat().map((at) => new URL(at).origin));
  return (input, init) => {
    const url = new URL(input instanceof Request ? input.url : input);
    return origins.has(url.origin) ? proxy(input, init) : fetch(input, init);
  };
}

/** An origin URL that no earlier test has used, so its tool map starts empty in memory and KV. */
export function freshOrigin(origin = DEMO_ORIGIN, query = ""): string {
  return `${origin}/mcp?map=${crypto.randomUUID()}${query}`;
}

/** A fresh id for one test's requests, sent as `?trace=` and read back from the gateway. */
export function newTrace(): string {
  return crypto.randomUUID();
}

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
}

/** What reached the origin behind the gateway for requests carrying `?trace=<trace>`. */
export async function receivedByOrigin(trace: string): Promise<ReceivedRequest[]> {
  const response = await fetch(`${GATEWAY_ORIGIN}/__received?trace=${trace}`);
  return response.json();
}

export interface HeldStreams {
  opened: number;
  closed: number;
}

/** How many of the gateway's held streams (`/held/mcp?trace=<trace>`) opened, and how many of their connections closed. */
export async function heldByOrigin(trace: string): Promise<HeldStreams> {
  const response = await fetch(`${GATEWAY_ORIGIN}/__held?trace=${trace}`);
  return response.json();
}

/** `heldByOrigin` once every connection it counted has closed, or after 100 looks. */
export async function heldOnceClosed(trace: string): Promise<HeldStreams> {
  let held = await heldByOrigin(trace);
  for (let look = 0; look < 100 && held.closed < held.opened; look++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    held = await heldByOrigin(trace);
  }
  return held;
}

/**
 * Sends `body` (a GET without one) through `proxy` to `url` as a client that
 * will go away: its answer's first chunk, read, and `goAway`, which does as
 * the runtime tells the proxy under `enable_request_signal` (the request's
 * signal aborted) and lets the answer's body go.
 */
export async function leavingClient(
  proxy: Fetch,
  url: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ first: string; goAway(): Promise<void> }> {
  const left = new AbortController();
  const response = await proxy(url, {
    method: body === undefined ? "GET" : "POST",
    headers: { "content-type": "application/json", accept: ACCEPT_BOTH, ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: left.signal,
  });
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const first = new TextDecoder().decode((await reader.read()).value);
  return {
    first,
    goAway: async () => {
      left.abort();
      await reader.cancel();
    },
  };
}
