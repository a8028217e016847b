/**
 * `OAUTH_KV` as broker and gate mode's authorization server reads it
 * (workers-oauth-provider, provider.ts): a key KV cannot hold is one it does
 * not have. The library makes keys of what a client sends, before it knows
 * them to be its own (`token:<user>:<grant>:…` of a bearer token, a refresh
 * token or a code; `grant:<user>:<grant>`; `client:<client_id>`), and KV
 * throws for a key over 512 bytes: a client that sent a long one got the
 * proxy's 500. Read as absent, it gets the library's answer for an unknown
 * token, grant or client. Nothing the proxy or the library issues comes near
 * the bound (a token is some 115 characters).
 */

/** KV's longest key, in bytes of UTF-8. */
const MAX_KEY_BYTES = 512;

const encoder = new TextEncoder();

/** Whether KV can hold `key` at all. */
function holdable(key: unknown): boolean {
  if (typeof key !== "string") return true;
  // A UTF-8 byte is at least a UTF-16 unit, and at most three are one: most keys need no count.
  return key.length * 3 <= MAX_KEY_BYTES || encoder.encode(key).byteLength <= MAX_KEY_BYTES;
}

/** `kv`, where reading, listing or deleting a key it cannot hold finds nothing. */
function withUnholdableKeysAbsent(kv: KVNamespace): KVNamespace {
  const absent: Partial<Record<keyof KVNamespace, (...args: never[]) => Promise<unknown>>> = {
    get: async () => null,
    getWithMetadata: async () => ({ value: null, metadata: null, cacheStatus: null }),
    list: async () => ({ keys: [], list_complete: true, cacheStatus: null }),
    delete: async () => undefined,
  };
  return new Proxy(kv, {
    get(target, name) {
      const value = Reflect.get(target, name);
      if (typeof value !== "function") return value;
      const instead = absent[name as keyof KVNamespace];
      return (...args: unknown[]) => {
        const key =
          name === "list" ? (args[0] as KVNamespaceListOptions | undefined)?.prefix : args[0];
        return instead && !holdable(key) ? instead() : value.apply(target, args);
      };
    },
  });
}

/** Per authorization server, the `env` it is handed for each `env` the runtime hands the Worker. */
const envs = new WeakMap<object, WeakMap<Env, Env>>();

/**
 * `env` as `server`, one authorization server of the proxy's (one per public
 * URL, provider.ts `perPublicUrl`), gets it: `OAUTH_KV` read as above. One
 * object per `env` and server: workerd hands one `env` to every request of
 * an isolate, and what is kept per `env` is then kept once per server. Not
 * one for every server: the library keeps the helpers the sign-in routes use
 * in it (`OAUTH_PROVIDER`), made by the first server that serves a route and
 * never made again, so a Worker reached at two hosts signed clients in at
 * the second with the first one's helpers, which refused the second's
 * resource (`invalid_target`).
 */
export function signInEnv(env: Env, server: object): Env {
  const kv = (env as { OAUTH_KV?: KVNamespace }).OAUTH_KV;
  if (kv === undefined) return env;
  let ofServer = envs.get(server);
  if (!ofServer) {
    ofServer = new WeakMap();
    envs.set(server, ofServer);
  }
  let wrapped = ofServer.get(env);
  if (!wrapped) {
    wrapped = { ...env, OAUTH_KV: withUnholdableKeysAbsent(kv) };
    ofServer.set(env, wrapped);
  }
  return wrapped;
}
