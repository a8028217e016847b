/** The proxy as users run it: wrangler serving wrangler.toml over HTTP on 127.0.0.1. */
import { unstable_startWorker } from "wrangler";
import { BROKER_BINDINGS } from "../broker-bindings";

export async function serveProxy(
  originUrl: string,
  vars: Record<string, string> = {},
): Promise<{ url: URL; dispose(): Promise<void> }> {
  // Hermetic: no Request.cf download, no telemetry.
  process.env.CLOUDFLARE_CF_FETCH_ENABLED = "false";
  process.env.WRANGLER_SEND_METRICS = "false";
  const bindings = Object.fromEntries(
    Object.entries({ ...vars, ORIGIN_URL: originUrl }).map(([name, value]) => [
      name,
      { type: "plain_text" as const, value },
    ]),
  );
  const { kvNamespaces, ratelimits, durableObjects } = BROKER_BINDINGS;
  const broker = {
    ...Object.fromEntries(
      Object.entries(kvNamespaces).map(([name, id]) => [name, { type: "kv_namespace", id }]),
    ),
    ...Object.fromEntries(
      Object.entries(ratelimits).map(([name, limit]) => [name, { type: "ratelimit", ...limit }]),
    ),
    ...Object.fromEntries(
      Object.entries(durableObjects).map(([name, { className }]) => [
        name,
        { type: "durable_object_namespace", class_name: className },
      ]),
    ),
  } as const;
  // Sign-in's bindings only where a tenant has them: the proxy refuses them in relay mode.
  const signIn = (vars.AUTH_MODE ?? "relay") !== "relay";
  const worker = await unstable_startWorker({
    config: "wrangler.toml",
    bindings: { ...(signIn ? broker : {}), ...bindings },
    // Hermetic: no state kept in .wrangler/state between runs. Kept, the sign-in
    // budget's daily count grew with every run on a developer's machine until
    // registrations were refused (503), and each run saw the last one's tool map.
    dev: {
      server: { hostname: "127.0.0.1", port: 0 },
      inspector: false,
      logLevel: "error",
      persist: false,
    },
  });
  await worker.ready;
  return { url: new URL("/mcp", await worker.url), dispose: () => worker.dispose() };
}
