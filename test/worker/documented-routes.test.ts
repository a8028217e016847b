/// <reference types="vite/client" />
/**
 * Each route README and docs/ send an operator or a client to, with its
 * method (`GET /readyz`, `POST /oauth/token`, `https://<proxy host>/oauth/callback`),
 * is one the proxy serves: in relay, broker or gate mode, it answers neither
 * 404 (no such route, or not in that mode) nor 405 nor 500. What each route
 * answers is tested where its topic is (readyz, sign-in, gate, …).
 */
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { gateVars } from "../helpers/gate";
import { BROKERED_ORIGIN, type Fetch, OAUTH_ORIGIN, viaProxy } from "../helpers/proxy";

const DOCUMENTS = import.meta.glob<string>(
  ["../../README.md", "../../SECURITY.md", "../../ARCHITECTURE.md", "../../docs/*.md"],
  { query: "?raw", import: "default", eager: true },
);

/** The routes the documents name: `METHOD /path`, and a page of the proxy's URL (`https://<proxy>/path`), which a browser GETs. */
function documentedRoutes(): string[] {
  const routes = new Set<string>();
  for (const text of Object.values(DOCUMENTS)) {
    for (const [, method, path] of text.matchAll(
      /\b(GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS) (\/[\w.-][\w./-]*)/g,
    ))
      routes.add(`${method} ${path}`);
    for (const [, path] of text.matchAll(/https:\/\/<proxy[^>]*>(\/[\w.-][\w./-]*)/g))
      routes.add(`GET ${path}`);
  }
  return [...routes].sort();
}

/** The proxy in each mode, on a loopback host (sign-in takes plain http only there). */
const MODES: Record<string, () => Fetch> = {
  // In front of an origin with sign-in, whose metadata the proxy's own stands for.
  relay: () => viaProxy({ ORIGIN_URL: OAUTH_ORIGIN.strict }, { app: createApp() }),
  broker: () =>
    viaProxy({ ORIGIN_URL: BROKERED_ORIGIN.strict, AUTH_MODE: "broker" }, { app: createApp() }),
  gate: () => viaProxy(gateVars(), { app: createApp() }),
};

/** The modes in which the proxy answers `route` as a route of its own (a request without a body or credentials). */
async function servedIn(route: string): Promise<string[]> {
  const [method = "", path = ""] = route.split(" ");
  const served: string[] = [];
  for (const [mode, proxy] of Object.entries(MODES)) {
    const response = await proxy()(`http://localhost${path}`, { method });
    await response.body?.cancel();
    // A 404 is no route, or a route of another mode (relay mode's `/authorize`); a 500, a proxy
    // that serves nothing (its settings, or a bug).
    if (![404, 405, 500].includes(response.status)) served.push(mode);
  }
  return served;
}

describe("the routes README and docs/ name", () => {
  it("are read from the documents", () => {
    const routes = documentedRoutes();
    // Not vacuous: health, readiness, sign-in, its callback, tokens, registration, sign-out.
    expect(routes).toEqual(
      expect.arrayContaining([
        "GET /healthz",
        "GET /readyz",
        "GET /authorize",
        "POST /authorize",
        "GET /oauth/callback",
        "POST /oauth/token",
        "POST /oauth/register",
        "POST /oauth/sign-out",
      ]),
    );
  });

  it("are each served by the proxy, in some mode", async () => {
    const unserved: string[] = [];
    for (const route of documentedRoutes()) {
      if ((await servedIn(route)).length === 0) unserved.push(route);
    }
    expect(unserved).toEqual([]);
  });

  it("a path that is no route is told apart", async () => {
    expect(await servedIn("GET /oauth/sign-in")).toEqual([]);
    expect(await servedIn("GET /healthz")).toEqual(["relay", "broker", "gate"]);
  });
});
