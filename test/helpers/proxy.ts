/**
 * Drives the proxy from tests: the Worker's own fetch handler, with the real
 * local KV from wrangler.toml and any vars a test overrides.
 */
import { createExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { inject } from "vitest";
import worker from "../../src/index";

export const DEMO_ORIGIN = inject("demoOrigin");
export const GATEWAY_ORIGIN = inject("gatewayOrigin");
export const CLOSED_ORIGIN = inject("closedOrigin");

/** The proxy's public URL in tests; its host is never the origin's. */
export const PROXY_URL = "http://proxy.test/mcp";

export type Fetch = (input: RequestInfo | URL, init?: RequestInit) => Promise<Response>;

/** A fetch that goes through the proxy, with `vars` set on top of wrangler.toml's. */
export function viaProxy(vars: Record<string, string | undefined> = {}): Fetch {
  const testEnv = { ...env, ...vars } as Env;
  return (input, init) =>
    Promise.resolve(worker.fetch(new Request(input, init), testEnv, createExecutionContext()));
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
