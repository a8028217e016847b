/**
 * A session with the demo origin (demo/src/tools.ts) through the proxy, behind
 * the recording gateway in front of it; its tools' names are demo-names.ts.
 */
import { createApp } from "../../src/app";
import { openSession } from "./mcp";
import {
  freshOrigin,
  GATEWAY_ORIGIN,
  PROXY_URL,
  type ProxyOptions,
  receivedByOrigin,
  viaProxy,
} from "./proxy";

export interface DemoSessionOptions extends ProxyOptions {
  /** Settings on top of wrangler.toml's. */
  vars?: Record<string, string>;
  /** More of the demo's query (`&page_size=5`, `&json`). */
  query?: string;
}

/**
 * A session with the demo origin through the proxy, as a fresh isolate (its
 * own app) in front of a fresh map (its own origin URL), behind the recording
 * gateway: `received()` is what reached the origin.
 */
export async function demoSession({
  vars = {},
  query = "",
  app,
  ...options
}: DemoSessionOptions = {}) {
  const trace = crypto.randomUUID();
  const origin = freshOrigin(GATEWAY_ORIGIN, `&trace=${trace}${query}`);
  const proxy = viaProxy({ ORIGIN_URL: origin, ...vars }, { app: app ?? createApp(), ...options });
  const session = await openSession(proxy, PROXY_URL);
  return { trace, origin, proxy, session, received: () => receivedByOrigin(trace) };
}
